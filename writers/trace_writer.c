/*
 * Owns the timeline file: Chrome trace-event JSON with one process (pid 1),
 * a thread per track (tid = track + 1) and counter tracks on tid 0.
 * Timestamps are microseconds with exactly three decimals, computed from the
 * integer nanoseconds so they are exact.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "atomic_file.h"
#include "report_text.h"
#include "tally/report.h"

struct tally_trace {
    struct atomic_file file;
};

static FILE *stream(tally_trace *trace)
{
    return atomic_file_stream(&trace->file);
}

/* Every event after the first (process_name, written at open) follows a comma. */
static void put_event_head(tally_trace *trace, const char *phase, uint64_t tid, const char *name)
{
    fprintf(stream(trace), ",\n{\"ph\":\"%s\",\"pid\":1,\"tid\":%" PRIu64 ",\"name\":", phase, tid);
    report_put_json_string(trace->file.stream, name);
}

static void put_microseconds(tally_trace *trace, const char *key, uint64_t ns)
{
    fprintf(stream(trace), ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

/* JSON has no NaN or infinity: a non-finite value is written as 0. */
static void put_f64(tally_trace *trace, double v)
{
    char text[REPORT_F64_SIZE];
    report_format_f64(isfinite(v) ? v : 0.0, text);
    fputs(text, stream(trace));
}

static bool args_valid(const tally_trace_arg *args, uint32_t count)
{
    if (count && !args)
        return false;
    for (uint32_t i = 0; i < count; i++) {
        if (!args[i].key)
            return false;
        if (args[i].type == TALLY_TRACE_ARG_STRING && !args[i].value.string)
            return false;
        if (args[i].type != TALLY_TRACE_ARG_U64 && args[i].type != TALLY_TRACE_ARG_F64 &&
            args[i].type != TALLY_TRACE_ARG_STRING)
            return false;
    }
    return true;
}

static void put_arg_value(tally_trace *trace, const tally_trace_arg *arg)
{
    switch (arg->type) {
    case TALLY_TRACE_ARG_U64: fprintf(stream(trace), "%" PRIu64, arg->value.u64); return;
    case TALLY_TRACE_ARG_F64: put_f64(trace, arg->value.f64); return;
    case TALLY_TRACE_ARG_STRING:
    default: report_put_json_string(trace->file.stream, arg->value.string); return;
    }
}

/* Closes the event, with its args object when there are any. */
static void put_args_and_end(tally_trace *trace, const tally_trace_arg *args, uint32_t count)
{
    FILE *out = stream(trace);
    if (count) {
        fputs(",\"args\":{", out);
        for (uint32_t i = 0; i < count; i++) {
            if (i)
                putc(',', out);
            report_put_json_string(trace->file.stream, args[i].key);
            putc(':', out);
            put_arg_value(trace, &args[i]);
        }
        putc('}', out);
    }
    putc('}', out);
}

static void put_name_args_and_end(tally_trace *trace, const char *name)
{
    fputs(",\"args\":{\"name\":", stream(trace));
    report_put_json_string(trace->file.stream, name);
    fputs("}}", stream(trace));
}

static tally_status status_of(tally_trace *trace)
{
    return atomic_file_failed(&trace->file) ? TALLY_ERROR_IO : TALLY_OK;
}

tally_status tally_trace_open(const char *path, const char *process_name, tally_trace **out)
{
    if (out)
        *out = NULL;
    if (!path || !process_name || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_trace *trace = calloc(1, sizeof *trace);
    if (!trace)
        return TALLY_ERROR_OUT_OF_MEMORY;
    tally_status status = atomic_file_open(&trace->file, path);
    if (status != TALLY_OK) {
        free(trace);
        return status;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
          "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\"",
          stream(trace));
    put_name_args_and_end(trace, process_name);
    if (atomic_file_failed(&trace->file)) {
        atomic_file_abort(&trace->file);
        free(trace);
        return TALLY_ERROR_IO;
    }
    *out = trace;
    return TALLY_OK;
}

tally_status tally_trace_name_track(tally_trace *trace, uint32_t track, const char *name)
{
    if (!trace || !name)
        return TALLY_ERROR_INVALID_ARGUMENT;
    put_event_head(trace, "M", (uint64_t)track + 1, "thread_name");
    put_name_args_and_end(trace, name);
    return status_of(trace);
}

tally_status tally_trace_slice(tally_trace *trace, uint32_t track, const char *name,
                               uint64_t begin_ns, uint64_t end_ns, const tally_trace_arg *args,
                               uint32_t arg_count)
{
    if (!trace || !name || end_ns < begin_ns || !args_valid(args, arg_count))
        return TALLY_ERROR_INVALID_ARGUMENT;
    put_event_head(trace, "X", (uint64_t)track + 1, name);
    put_microseconds(trace, "ts", begin_ns);
    put_microseconds(trace, "dur", end_ns - begin_ns);
    put_args_and_end(trace, args, arg_count);
    return status_of(trace);
}

tally_status tally_trace_instant(tally_trace *trace, uint32_t track, const char *name,
                                 uint64_t timestamp_ns, const tally_trace_arg *args,
                                 uint32_t arg_count)
{
    if (!trace || !name || !args_valid(args, arg_count))
        return TALLY_ERROR_INVALID_ARGUMENT;
    put_event_head(trace, "i", (uint64_t)track + 1, name);
    fputs(",\"s\":\"t\"", stream(trace));
    put_microseconds(trace, "ts", timestamp_ns);
    put_args_and_end(trace, args, arg_count);
    return status_of(trace);
}

tally_status tally_trace_counter(tally_trace *trace, const char *name, uint64_t timestamp_ns,
                                 double value)
{
    if (!trace || !name)
        return TALLY_ERROR_INVALID_ARGUMENT;
    put_event_head(trace, "C", 0, name);
    put_microseconds(trace, "ts", timestamp_ns);
    fputs(",\"args\":{\"value\":", stream(trace));
    put_f64(trace, value);
    fputs("}}", stream(trace));
    return status_of(trace);
}

tally_status tally_trace_close(tally_trace *trace)
{
    if (!trace)
        return TALLY_ERROR_INVALID_ARGUMENT;
    fputs("\n]}\n", stream(trace));
    tally_status status = atomic_file_commit(&trace->file);
    free(trace);
    return status;
}
