/*
 * Owns the timeline file. Chrome trace-event JSON: one process (pid 1), a
 * thread per track (tid = track + 1) and counter tracks on tid 0, timestamps
 * in microseconds with exactly three decimals, computed from the integer
 * nanoseconds so they are exact. A command is one slice, named for its
 * command and label with its report row's keys as arguments, and one
 * counter event holding all its counters' values: the values are not
 * repeated per slice, and a command costs two events whatever the number
 * of counters. Or, by the file's extension, Perfetto's protobuf trace
 * (perfetto_writer.c).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output_file.h"
#include "perfetto_writer.h"
#include "report_text.h"
#include "tally/report.h"
#include "trace_command.h"

/* JSON: the begins of slices still open, per track; they nest on a track,
 * and one past the eighth is counted but not written. */
enum { JSON_DEPTH = 8 };
struct json_stack {
    uint32_t depth;
    uint64_t begin[JSON_DEPTH];
};

/* JSON: the described counters, whose values each command's counter
 * event carries, and where the latest command ended (its values hold
 * until then, and drop to 0 there if the GPU goes idle). */
struct json_counters {
    const tally_counter_info **info;
    uint32_t count;
    bool holding; /* a command's values are the counters' latest */
    uint64_t boundary_ns;
};

/* The counter event's name: JSON readers name its tracks "GPU <counter>". */
#define JSON_COUNTERS_NAME "GPU"

struct tally_trace {
    struct output_file file;
    perfetto_writer *perfetto; /* NULL: JSON */
    struct json_stack *stacks;
    uint32_t stack_count;
    struct json_counters counters;
    uint32_t counter_count; /* the values a command carries */
    bool written;           /* an event was: the GPU can no longer be described */
};

tally_trace_format tally_trace_format_for_path(const char *path)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    const char *dot = path ? strrchr(base ? base : path, '.') : NULL;
    if (dot && (strcasecmp(dot, ".perfetto-trace") == 0 || strcasecmp(dot, ".pftrace") == 0))
        return TALLY_TRACE_PERFETTO;
    return TALLY_TRACE_JSON;
}

static FILE *stream(tally_trace *trace)
{
    return output_file_stream(&trace->file);
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
    return output_file_failed(&trace->file) ? TALLY_ERROR_IO : TALLY_OK;
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
    /* A Perfetto trace is valid up to its last whole packet, so it is
     * written live; JSON parses only whole. */
    bool perfetto = tally_trace_format_for_path(path) == TALLY_TRACE_PERFETTO;
    tally_status status =
        output_file_open(&trace->file, path, perfetto ? OUTPUT_FILE_LIVE : OUTPUT_FILE_WHOLE);
    if (status != TALLY_OK) {
        free(trace);
        return status;
    }
    if (perfetto) {
        if (!(trace->perfetto = perfetto_open(stream(trace), process_name))) {
            output_file_abort(&trace->file);
            free(trace);
            return TALLY_ERROR_OUT_OF_MEMORY;
        }
        *out = trace;
        return TALLY_OK;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
          "{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\"",
          stream(trace));
    put_name_args_and_end(trace, process_name);
    if (output_file_failed(&trace->file)) {
        output_file_abort(&trace->file);
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
    if (trace->perfetto) {
        perfetto_name_track(trace->perfetto, track, name);
        return status_of(trace);
    }
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
    trace->written = true;
    if (trace->perfetto) {
        perfetto_begin(trace->perfetto, track, name, begin_ns, args, arg_count);
        perfetto_end(trace->perfetto, track, end_ns);
        return status_of(trace);
    }
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
    trace->written = true;
    if (trace->perfetto) {
        perfetto_instant(trace->perfetto, track, name, timestamp_ns, args, arg_count);
        return status_of(trace);
    }
    put_event_head(trace, "i", (uint64_t)track + 1, name);
    fputs(",\"s\":\"t\"", stream(trace));
    put_microseconds(trace, "ts", timestamp_ns);
    put_args_and_end(trace, args, arg_count);
    return status_of(trace);
}

tally_status tally_trace_call(tally_trace *trace, uint32_t track, uint32_t tid, const char *name,
                              uint64_t timestamp_ns, const tally_trace_arg *args,
                              uint32_t arg_count)
{
    if (trace && trace->perfetto && tid && name && args_valid(args, arg_count)) {
        trace->written = true;
        perfetto_call(trace->perfetto, tid, name, timestamp_ns, args, arg_count);
        return status_of(trace);
    }
    return tally_trace_instant(trace, track, name, timestamp_ns, args, arg_count);
}

tally_status tally_trace_counter(tally_trace *trace, const char *name, uint64_t timestamp_ns,
                                 double value)
{
    if (!trace || !name)
        return TALLY_ERROR_INVALID_ARGUMENT;
    trace->written = true;
    if (trace->perfetto) {
        perfetto_counter(trace->perfetto, name, timestamp_ns, value);
        return status_of(trace);
    }
    put_event_head(trace, "C", 0, name);
    put_microseconds(trace, "ts", timestamp_ns);
    fputs(",\"args\":{\"value\":", stream(trace));
    put_f64(trace, value);
    fputs("}}", stream(trace));
    return status_of(trace);
}

/* JSON: the track's stack of open slices, or NULL if it cannot be had. */
static struct json_stack *stack_of(tally_trace *trace, uint32_t track)
{
    if (track >= trace->stack_count) {
        uint32_t count = track + 8;
        struct json_stack *grown = realloc(trace->stacks, count * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + trace->stack_count, 0, (count - trace->stack_count) * sizeof *grown);
        trace->stacks = grown;
        trace->stack_count = count;
    }
    return &trace->stacks[track];
}

tally_status tally_trace_begin(tally_trace *trace, uint32_t track, const char *name,
                               uint64_t timestamp_ns, const tally_trace_arg *args,
                               uint32_t arg_count)
{
    if (!trace || !name || !args_valid(args, arg_count))
        return TALLY_ERROR_INVALID_ARGUMENT;
    trace->written = true;
    if (trace->perfetto) {
        perfetto_begin(trace->perfetto, track, name, timestamp_ns, args, arg_count);
        return status_of(trace);
    }
    struct json_stack *stack = stack_of(trace, track);
    if (!stack)
        return TALLY_ERROR_OUT_OF_MEMORY;
    if (stack->depth < JSON_DEPTH)
        stack->begin[stack->depth] = timestamp_ns;
    stack->depth++;
    return TALLY_OK;
}

tally_status tally_trace_end(tally_trace *trace, uint32_t track, const char *name,
                             uint64_t timestamp_ns, const tally_trace_arg *args, uint32_t arg_count)
{
    if (!trace || !name || !args_valid(args, arg_count))
        return TALLY_ERROR_INVALID_ARGUMENT;
    trace->written = true;
    if (trace->perfetto) {
        perfetto_end(trace->perfetto, track, timestamp_ns);
        return status_of(trace);
    }
    struct json_stack *stack = stack_of(trace, track);
    if (!stack || !stack->depth)
        return stack ? TALLY_ERROR_INVALID_STATE : TALLY_ERROR_OUT_OF_MEMORY;
    if (--stack->depth >= JSON_DEPTH)
        return TALLY_OK;
    return tally_trace_slice(trace, track, name, stack->begin[stack->depth], timestamp_ns, args,
                             arg_count);
}

static bool gpu_valid(const tally_trace_gpu *gpu)
{
    if (!gpu || (gpu->counter_count && (!gpu->catalogue || !gpu->counters)))
        return false;
    for (uint32_t i = 0; i < gpu->counter_count; i++)
        if (!tally_catalogue_counter(gpu->catalogue, gpu->counters[i]))
            return false;
    return true;
}

/* JSON: the counters' descriptions, for the counter events' keys and
 * value types. */
static tally_status describe_json_counters(tally_trace *trace, const tally_trace_gpu *gpu)
{
    struct json_counters *c = &trace->counters;
    const tally_counter_info **info = malloc((gpu->counter_count + 1) * sizeof *info);
    if (!info)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < gpu->counter_count; i++)
        info[i] = tally_catalogue_counter(gpu->catalogue, gpu->counters[i]);
    free(c->info);
    c->info = info;
    c->count = gpu->counter_count;
    return TALLY_OK;
}

tally_status tally_trace_describe_gpu(tally_trace *trace, const tally_trace_gpu *gpu)
{
    if (!trace || !gpu_valid(gpu))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (trace->written)
        return TALLY_ERROR_INVALID_STATE;
    trace->counter_count = gpu->counter_count;
    if (trace->perfetto) {
        perfetto_describe_gpu(trace->perfetto, gpu);
        return status_of(trace);
    }
    return describe_json_counters(trace, gpu);
}

/* JSON: one counter event with every counter's value; values NULL: all 0. */
static void put_counter_values(tally_trace *trace, uint64_t ns, const tally_value *values)
{
    const struct json_counters *c = &trace->counters;
    FILE *out = stream(trace);
    put_event_head(trace, "C", 0, JSON_COUNTERS_NAME);
    put_microseconds(trace, "ts", ns);
    fputs(",\"args\":{", out);
    for (uint32_t i = 0; i < c->count; i++) {
        if (i)
            putc(',', out);
        report_put_json_string(out, c->info[i]->symbol);
        putc(':', out);
        tally_storage storage = c->info[i]->storage;
        if (!values)
            putc('0', out);
        else if (storage == TALLY_STORAGE_FLOAT32 || storage == TALLY_STORAGE_FLOAT64)
            put_f64(trace, values[i].f64);
        else
            fprintf(out, "%" PRIu64, values[i].u64);
    }
    fputs("}}", out);
}

/* JSON: the latest command's values end where it ended, when nothing
 * follows it at once. */
static void end_counter_values(tally_trace *trace, uint64_t next_begin_ns)
{
    struct json_counters *c = &trace->counters;
    if (c->count && c->holding && next_begin_ns > c->boundary_ns) {
        put_counter_values(trace, c->boundary_ns, NULL);
        c->holding = false;
    }
}

static void put_json_command(tally_trace *trace, uint32_t track, const tally_command_record *r,
                             const tally_value *values)
{
    char name[TRACE_COMMAND_NAME_SIZE];
    struct json_counters *c = &trace->counters;
    end_counter_values(trace, r->begin_ns);
    put_event_head(trace, "X", (uint64_t)track + 1, trace_command_name(r, name, sizeof name));
    put_microseconds(trace, "ts", r->begin_ns);
    put_microseconds(trace, "dur", r->end_ns - r->begin_ns);
    fprintf(stream(trace), ",\"args\":{\"frame\":%" PRIu64 ",\"sequence\":%" PRIu64 "}}", r->frame,
            r->sequence);
    if (c->count)
        put_counter_values(trace, r->begin_ns, values);
    c->holding = true;
    if (r->end_ns > c->boundary_ns)
        c->boundary_ns = r->end_ns;
}

tally_status tally_trace_command(tally_trace *trace, uint32_t track,
                                 const tally_command_record *record, const tally_value *values)
{
    if (!trace || !record || record->end_ns < record->begin_ns || (!values && trace->counter_count))
        return TALLY_ERROR_INVALID_ARGUMENT;
    trace->written = true;
    /* Only the times are required; what is missing is empty. */
    tally_command_record r = *record;
    r.kind = r.kind ? r.kind : "";
    r.api_name = r.api_name ? r.api_name : r.kind;
    r.context_api = r.context_api ? r.context_api : "";
    r.label = r.label ? r.label : "";
    if (trace->perfetto)
        perfetto_command(trace->perfetto, &r, values);
    else
        put_json_command(trace, track, &r, values);
    return status_of(trace);
}

tally_status tally_trace_flush(tally_trace *trace)
{
    if (!trace)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (trace->perfetto && !perfetto_flush(trace->perfetto))
        return TALLY_ERROR_IO;
    return output_file_flush(&trace->file);
}

tally_status tally_trace_close(tally_trace *trace)
{
    if (!trace)
        return TALLY_ERROR_INVALID_ARGUMENT;
    bool encoded = true;
    if (trace->perfetto) {
        encoded = perfetto_close(trace->perfetto);
    } else {
        end_counter_values(trace, UINT64_MAX);
        fputs("\n]}\n", stream(trace));
    }
    tally_status status = output_file_commit(&trace->file);
    free(trace->counters.info);
    free(trace->stacks);
    free(trace);
    return status == TALLY_OK && !encoded ? TALLY_ERROR_IO : status;
}
