/*
 * How the catalogue's counters are described to Perfetto: the
 * GpuCounterDescriptor that a GPU producer sends once, in its first
 * GpuCounterEvent, naming each counter (its symbol), describing it, and
 * giving its units (Perfetto's MeasureUnit), its group and the catalogue's
 * blocks with their capacity per pass. Internal to libtally.
 */
#ifndef TALLY_PERFETTO_COUNTER_DESCRIPTOR_H
#define TALLY_PERFETTO_COUNTER_DESCRIPTOR_H

#include "perfetto_proto.h"
#include "tally/catalogue.h"

/* A counter's id in the trace: its column (its place in the counters
 * described, as in the report), from 1. */
static inline uint32_t perfetto_counter_id(uint32_t column)
{
    return column + 1;
}

/* The descriptor of counters (catalogue indices), as field `field` of the
 * message being written. */
void perfetto_put_counter_descriptor(struct proto_buffer *out, uint32_t field,
                                     const tally_catalogue *catalogue, const uint32_t *counters,
                                     uint32_t count);

#endif
