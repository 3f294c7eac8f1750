/*
 * The timeline as Perfetto's native trace: a protobuf `Trace` of
 * `TracePacket`s (field numbers from Perfetto's protos/perfetto/trace/), in
 * two packet sequences:
 *   - the GPU, as a GPU producer writes it (perfetto_gpu.h): counters and
 *     render stages, one per command;
 *   - the application's process (its pid and name): a track per thread
 *     that made API calls (tally_trace_call), a track per timeline track
 *     (the queue's submissions), a counter track per tally_trace_counter
 *     name, as TrackEvents with interned names.
 * Both put their times on CLOCK_MONOTONIC and CLOCK_BOOTTIME through clock
 * snapshots (perfetto_sequence.h), so trace_processor merges the trace with
 * a system trace; sequence ids and track uuids are drawn from the pid, so
 * the traces of several processes merge too. Internal to libtally:
 * trace_writer.c picks it by the file's extension.
 */
#ifndef TALLY_PERFETTO_WRITER_H
#define TALLY_PERFETTO_WRITER_H

#include <stdio.h>

#include "tally/report.h"

typedef struct perfetto_writer perfetto_writer;

/* Writes through out, which stays the caller's. device_name names the
 * GPU's queue. */
perfetto_writer *perfetto_open(FILE *out, const char *device_name);
/* Before any event (tally_trace_describe_gpu). */
void perfetto_describe_gpu(perfetto_writer *w, const tally_trace_gpu *gpu);
void perfetto_name_track(perfetto_writer *w, uint32_t track, const char *name);
void perfetto_begin(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                    const tally_trace_arg *args, uint32_t arg_count);
void perfetto_end(perfetto_writer *w, uint32_t track, uint64_t ns);
void perfetto_instant(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                      const tally_trace_arg *args, uint32_t arg_count);
/* An instant on the thread tid's own track. */
void perfetto_call(perfetto_writer *w, uint32_t tid, const char *name, uint64_t ns,
                   const tally_trace_arg *args, uint32_t arg_count);
void perfetto_counter(perfetto_writer *w, const char *name, uint64_t ns, double value);
void perfetto_command(perfetto_writer *w, const tally_command_record *record,
                      const tally_value *values);
/* Whole packets written so far reach out; false once a write failed. */
bool perfetto_flush(perfetto_writer *w);
/* Writes what is buffered and frees the writer; false if out of memory lost events. */
bool perfetto_close(perfetto_writer *w);

#endif
