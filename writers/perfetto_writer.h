/*
 * The timeline as Perfetto's native trace: a protobuf `Trace` of
 * `TracePacket`s carrying TrackDescriptors and TrackEvents (field numbers
 * from Perfetto's protos/perfetto/trace/). One process track, a child track
 * per timeline track, a counter track per counter name; event and argument
 * names interned. Several times smaller than the Chrome JSON of the same
 * events and cheaper to write. Internal to libtally: trace_writer.c picks it
 * by the file's extension.
 */
#ifndef TALLY_PERFETTO_WRITER_H
#define TALLY_PERFETTO_WRITER_H

#include <stdio.h>

#include "tally/report.h"

typedef struct perfetto_writer perfetto_writer;

/* Writes through out, which stays the caller's. */
perfetto_writer *perfetto_open(FILE *out, const char *process_name);
void perfetto_name_track(perfetto_writer *w, uint32_t track, const char *name);
void perfetto_begin(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                    const tally_trace_arg *args, uint32_t arg_count);
void perfetto_end(perfetto_writer *w, uint32_t track, uint64_t ns);
void perfetto_instant(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                      const tally_trace_arg *args, uint32_t arg_count);
void perfetto_counter(perfetto_writer *w, const char *name, uint64_t ns, double value);
/* The packets encoded so far, to the stream (whole packets only). */
bool perfetto_flush(perfetto_writer *w);
/* Writes what is buffered and frees the writer; false if out of memory lost events. */
bool perfetto_close(perfetto_writer *w);

#endif
