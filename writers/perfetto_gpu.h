/*
 * The GPU's side of tally's Perfetto trace, written as a GPU producer writes
 * it (Mesa's pps: gpu.counters.*, gpu.renderstages.*), so that Perfetto's UI
 * and Android GPU Inspector show a GPU: its own packet sequence of
 *   - GpuCounterEvents: a GpuCounterDescriptor in the first (each counter's
 *     id, name, description, units, groups, and the catalogue's blocks),
 *     then the counters' values;
 *   - GpuRenderStageEvents, one per command (draw, dispatch, transfer), on
 *     one hardware queue, named for the command and its label, carrying the
 *     report row's keys; queue, stages and graphics contexts interned.
 * Internal to libtally.
 */
#ifndef TALLY_PERFETTO_GPU_H
#define TALLY_PERFETTO_GPU_H

#include "perfetto_proto.h"
#include "tally/report.h"

struct perfetto_gpu;

/* queue_name names the hardware queue's track; counters (catalogue
 * indices) are copied. origin_ns: see perfetto_sequence.h. NULL when out
 * of memory. */
struct perfetto_gpu *perfetto_gpu_open(uint32_t sequence_id, const uint64_t *origin_ns,
                                       const char *queue_name, const tally_catalogue *catalogue,
                                       const uint32_t *counters, uint32_t count);
/* values: one per counter, in order. */
void perfetto_gpu_command(struct perfetto_gpu *gpu, struct proto_buffer *out,
                          const tally_command_record *record, const tally_value *values);
/* The counters' latest values, held until a command changes them, are
 * written; call once, after the last command. */
void perfetto_gpu_finish(struct perfetto_gpu *gpu, struct proto_buffer *out);
/* Frees it; false if an allocation had failed and events were lost. */
bool perfetto_gpu_close(struct perfetto_gpu *gpu);

#endif
