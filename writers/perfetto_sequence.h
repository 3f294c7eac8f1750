/*
 * A Perfetto packet sequence of tally's trace: the TracePackets one writer
 * emits under one trusted_packet_sequence_id, with their own interned data
 * and their own clock. Times are the engine's nanoseconds; the sequence
 * declares that clock in a ClockSnapshot beside CLOCK_MONOTONIC and
 * CLOCK_BOOTTIME, so trace_processor puts them on the system's time line,
 * and writes each packet's time as the step from the one before (an
 * incremental clock: a byte or two instead of eight). Internal to libtally.
 */
#ifndef TALLY_PERFETTO_SEQUENCE_H
#define TALLY_PERFETTO_SEQUENCE_H

#include "perfetto_proto.h"

struct perfetto_sequence {
    uint32_t id;               /* trusted_packet_sequence_id */
    const uint64_t *origin_ns; /* CLOCK_MONOTONIC at the engine's time 0 (the writer's) */
    bool started;              /* the packet clearing its incremental state is written */
    bool clocked;              /* its ClockSnapshot is written */
    uint64_t last_ns;          /* the incremental clock's reading: the latest time */
};

void perfetto_sequence_init(struct perfetto_sequence *s, uint32_t id, const uint64_t *origin_ns);

/* A TracePacket of the sequence, open for its content, without a time or
 * at ns. Returns what perfetto_packet_close takes. */
size_t perfetto_packet_open(struct proto_buffer *out, struct perfetto_sequence *s);
size_t perfetto_packet_open_at(struct proto_buffer *out, struct perfetto_sequence *s, uint64_t ns);
void perfetto_packet_close(struct proto_buffer *out, size_t packet);

#endif
