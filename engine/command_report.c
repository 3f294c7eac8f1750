/*
 * The device's own outputs: the per-command report (TALLY_OUTPUT) and the
 * trace file (TALLY_TRACE), with the counters TALLY_COUNTERS names. Every
 * draw, dispatch and transfer is one automatic scope.
 *
 * The queue thread computes only the selected counters of each command and
 * hands the row to the report's writer thread through a bounded ring
 * (report_ring.h, which says what happens when the writer falls behind);
 * formatting and writing happen there, through tally/report.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"
#include "report_ring.h"

enum { MEMO_INPUTS = 4 };
#define TRACE_LATENCY_NS (250ull * 1000 * 1000)

/* A derived counter's latest inputs and value: its expression depends only
 * on them and on the device's constants, so when the next command gives the
 * same inputs (similar draws in a row, as a frame has) the value is the
 * same and the evaluator does not run. */
struct derived_memo {
    uint32_t inputs;             /* raw slots read; 0: not memoized (too many) */
    uint32_t slots[MEMO_INPUTS]; /* which */
    uint64_t last[MEMO_INPUTS];  /* their values when `value` was evaluated */
    bool valid;
    tally_value value;
};

/* What the queue thread keeps for the rows it hands over. */
struct command_report_rows {
    report_ring *ring;
    /* Per report counter: its raw slot when its value is that slot as it is
     * (most are), else TALLY_NOT_RAW and the evaluator runs. */
    uint32_t *plain_raw;
    struct derived_memo *memos; /* per report counter, for the derived ones */
    uint32_t derived_count;
    uint32_t *derived_column; /* the derived ones' columns, derived_count */
    /* Per report counter, where its value is once the derived ones are
     * evaluated: its slot in the executor's delta (allocated once, before
     * the report opens) or its memo's value. */
    const uint64_t **sources;
    /* The trace got a command's events since its last flush, and when the
     * queue thread first saw that (0: not yet). */
    bool trace_written;
    uint64_t trace_unflushed_since_ns;
    /* Per report counter (the first 64): what it is made from needs
     * measured (tally_measure_bits), for the row's unmeasured columns. */
    uint32_t *column_measures;
    /* The label column of the latest row, and what it was made from. */
    uint32_t label_context;
    uint64_t label_changes;
    char label[512];
};

/* The tracks the trace gets events on: the units' activity is in their
 * counters (the *BusyCycles), which the trace carries per command. */
static void name_tracks(struct tally_device *d)
{
    for (uint32_t t = 0; t < TALLY_TRACK_FIRST_UNIT; t++)
        tally_trace_name_track(d->trace, t, tally_timeline_track_name(d, t));
}

/* The counters each command carries in the trace, and its clock: the
 * engine's nanoseconds count from the device's open on CLOCK_MONOTONIC. */
static void describe_trace_gpu(struct tally_device *d)
{
    tally_trace_gpu gpu = {.catalogue = d->catalogue,
                           .counters = d->report_counters,
                           .counter_count = d->report_counter_count,
                           .monotonic_origin_ns = d->epoch_cpu_ns};
    tally_trace_describe_gpu(d->trace, &gpu);
}

/* One file, one writer: a trace into the report's file would replace it at
 * close (or interleave with it, on a FIFO). The report is kept. */
static const char *trace_path_apart(const char *report_path, const char *trace_path)
{
    if (report_path && trace_path && tally_output_same_file(report_path, trace_path)) {
        tally_log(TALLY_LOG_ERROR,
                  "TALLY_TRACE names the same file as TALLY_OUTPUT (%s); no trace is written",
                  trace_path);
        return NULL;
    }
    return trace_path;
}

/* The path of this process's file: "%p" is its process id, so that the
 * processes of one run never write over each other's files. */
static const char *path_for_process(const char *pattern, char *out, size_t size)
{
    if (!pattern || tally_output_path_for_process(pattern, out, size))
        return pattern ? out : NULL;
    tally_log(TALLY_LOG_ERROR, "the output path %s is too long; it is not written", pattern);
    return NULL;
}

static tally_status open_report(struct tally_device *d, const char *path, char *error,
                                size_t error_size)
{
    tally_status s = tally_report_open(path, tally_report_format_for_path(path), d->catalogue,
                                       d->report_counters, d->report_counter_count, &d->report);
    if (s == TALLY_ERROR_IO)
        tally_copy_error(error, error_size, "cannot create the per-command report %s: %s", path,
                         tally_output_strerror(errno));
    else if (s == TALLY_OK && !(d->report_path = strdup(path)))
        s = TALLY_ERROR_OUT_OF_MEMORY;
    if (s == TALLY_OK && tally_run_metadata_describe(d, d->report) != TALLY_OK)
        tally_log(TALLY_LOG_WARN, "the metadata of %s could not be written: %s", path,
                  tally_output_strerror(errno));
    return s;
}

static tally_status open_trace(struct tally_device *d, const char *path, char *error,
                               size_t error_size)
{
    char process[64];
    snprintf(process, sizeof(process), "%s (pid %d)", d->info.name, (int)getpid());
    tally_status s = tally_trace_open(path, process, &d->trace);
    if (s == TALLY_ERROR_IO)
        tally_copy_error(error, error_size, "cannot create the trace %s: %s", path,
                         tally_output_strerror(errno));
    if (s == TALLY_OK && !(d->trace_path = strdup(path)))
        s = TALLY_ERROR_OUT_OF_MEMORY;
    if (s == TALLY_OK) {
        describe_trace_gpu(d);
        name_tracks(d);
    }
    tally_timeline_update_active(d);
    return s;
}

/* Writer thread: the first failed write is said, once (the ring stops
 * calling after it). */
static tally_status said_failed(struct tally_device *d, tally_status s)
{
    if (s != TALLY_OK) {
        tally_log(TALLY_LOG_ERROR,
                  "writing the per-command report to %s failed: %s; no more records are written",
                  d->report_path, tally_output_strerror(errno));
        d->report_failed = true; /* read at close, after the writer thread ended */
    }
    return s;
}

/* Writer thread: a row into the report file. */
static tally_status write_row(void *user, const tally_command_record *record,
                              const tally_value *values)
{
    struct tally_device *d = user;
    return said_failed(d, tally_report_write(d->report, record, values));
}

/* Writer thread, caught up: the rows reach the file. */
static tally_status flush_rows(void *user)
{
    struct tally_device *d = user;
    return said_failed(d, tally_report_flush(d->report));
}

static tally_status open_rows(struct tally_device *d)
{
    struct command_report_rows *rows = calloc(1, sizeof *rows);
    if (!rows)
        return TALLY_ERROR_OUT_OF_MEMORY;
    d->report_rows = rows;
    rows->label_context = UINT32_MAX;
    rows->plain_raw = malloc((d->report_counter_count + 1) * sizeof(uint32_t));
    rows->memos = calloc(d->report_counter_count + 1, sizeof *rows->memos);
    rows->derived_column = malloc((d->report_counter_count + 1) * sizeof(uint32_t));
    rows->sources = malloc((d->report_counter_count + 1) * sizeof *rows->sources);
    rows->column_measures = malloc((d->report_counter_count + 1) * sizeof(uint32_t));
    if (!rows->plain_raw || !rows->memos || !rows->derived_column || !rows->sources ||
        !rows->column_measures)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < d->report_counter_count; i++) {
        rows->column_measures[i] = tally_device_measures_of(d, &d->report_counters[i], 1);
        if (tally_counter_is_plain_raw(d->catalogue, d->report_counters[i], &rows->plain_raw[i])) {
            rows->sources[i] = &d->exec.delta[rows->plain_raw[i]];
            continue;
        }
        rows->plain_raw[i] = TALLY_NOT_RAW;
        rows->derived_column[rows->derived_count++] = i;
        rows->sources[i] = &rows->memos[i].value.u64;
        struct derived_memo *m = &rows->memos[i];
        uint32_t n = tally_catalogue_counter_raw_inputs(d->catalogue, d->report_counters[i],
                                                        m->slots, MEMO_INPUTS);
        m->inputs = n <= MEMO_INPUTS ? n : 0;
    }
    if (!d->report)
        return TALLY_OK;
    report_ring_sink sink = {.row = write_row, .flush = flush_rows, .user = d};
    return report_ring_open(d->report_counter_count, &sink, NULL, &rows->ring);
}

tally_status tally_command_report_open(struct tally_device *d, const tally_device_options *o,
                                       char *error, size_t error_size)
{
    if (!o->report_path && !o->trace_path) {
        tally_listening_update(d); /* listeners without files, known at open */
        return TALLY_OK;
    }
    char report_buffer[PATH_MAX], trace_buffer[PATH_MAX];
    const char *report_path = path_for_process(o->report_path, report_buffer, sizeof report_buffer);
    const char *trace_path = trace_path_apart(
        report_path, path_for_process(o->trace_path, trace_buffer, sizeof trace_buffer));
    tally_status s = tally_counter_list_parse(d->catalogue, o->report_counters, &d->report_counters,
                                              &d->report_counter_count);
    if (s == TALLY_OK &&
        !(d->exec.report_values = calloc(d->report_counter_count + 1, sizeof(tally_value))))
        s = TALLY_ERROR_OUT_OF_MEMORY;
    if (s == TALLY_OK && report_path)
        s = open_report(d, report_path, error, error_size);
    tally_listening_update(d); /* the device is not shared yet */
    if (s == TALLY_OK)
        s = open_rows(d);
    if (s == TALLY_OK && trace_path)
        s = open_trace(d, trace_path, error, error_size);
    return s;
}

static const char *kind_name(uint32_t type)
{
    return type == TALLY_CMD_DRAW ? "draw" : type == TALLY_CMD_DISPATCH ? "dispatch" : "transfer";
}

/* The context's label stack joined by '/', rebuilt only when it changed. */
static const char *label_path(struct command_report_rows *rows, const struct tally_context *ctx)
{
    if (ctx->id == rows->label_context && ctx->label_changes == rows->label_changes)
        return rows->label;
    rows->label_context = ctx->id;
    rows->label_changes = ctx->label_changes;
    size_t used = 0, size = sizeof rows->label;
    rows->label[0] = '\0';
    for (uint32_t i = 0; i < ctx->label_depth && used < size; i++)
        used +=
            (size_t)snprintf(rows->label + used, size - used, "%s%s", i ? "/" : "", ctx->labels[i]);
    return rows->label;
}

/* A derived counter: the memo's value when its inputs are unchanged. */
static tally_value evaluate_derived(struct tally_device *d, uint32_t i, struct derived_memo *m)
{
    const uint64_t *delta = d->exec.delta;
    uint32_t inputs = m->valid ? m->inputs : 0;
    bool same = inputs > 0;
    for (uint32_t k = 0; k < inputs; k++)
        same &= delta[m->slots[k]] == m->last[k];
    if (same)
        return m->value;
    tally_catalogue_evaluate(d->catalogue, d->report_counters[i], delta, d->constants, &m->value);
    for (uint32_t k = 0; k < m->inputs; k++)
        m->last[k] = delta[m->slots[k]];
    m->valid = true;
    return m->value;
}

/* Only the selected counters, into the executor's report_values, most of
 * them a copy of a raw slot: the derived ones into their memos, then every
 * value from where it is. */
static const tally_value *selected_values(struct tally_device *d)
{
    struct command_report_rows *rows = d->report_rows;
    tally_value *values = d->exec.report_values;
    const uint32_t derived = rows->derived_count, count = d->report_counter_count;
    for (uint32_t k = 0; k < derived; k++) {
        uint32_t i = rows->derived_column[k];
        evaluate_derived(d, i, &rows->memos[i]);
    }
    const uint64_t *const *sources = rows->sources;
    for (uint32_t i = 0; i < count; i++)
        values[i].u64 = *sources[i];
    return values;
}

/* The columns whose counter is made from something the command's own
 * measurement lacked. */
static uint64_t unmeasured_columns(const struct tally_device *d)
{
    uint32_t unknown = d->exec.unknown_measures;
    if (!unknown)
        return 0;
    const uint32_t *needs = d->report_rows->column_measures;
    uint32_t count = d->report_counter_count < 64 ? d->report_counter_count : 64;
    uint64_t columns = 0;
    for (uint32_t i = 0; i < count; i++)
        if (needs[i] & unknown)
            columns |= 1ull << i;
    return columns;
}

void tally_command_report_write(struct tally_device *d, const struct tally_command *command,
                                const struct tally_context *ctx, uint64_t stream_id,
                                uint64_t begin_ns, uint64_t end_ns)
{
    const struct tally_executor *e = &d->exec;
    struct command_report_rows *rows = d->report_rows;
    if (!e->captured || !tally_capture_takes(d, ctx->frame))
        return; /* outside the capture window */
    const tally_value *selected = selected_values(d);
    /* A transfer runs with no pipeline, whatever is bound. */
    struct tally_program *bound = command->type == TALLY_CMD_TRANSFER ? NULL : e->bound;
    tally_command_record record = {
        .sequence = e->command_sequence,
        .api_name = command->u.draw.api_name ? command->u.draw.api_name : kind_name(command->type),
        .kind = kind_name(command->type),
        .context = ctx->id,
        .context_api = ctx->api_name,
        .frame = ctx->frame,
        .submission = e->submission,
        .stream = stream_id,
        .label = label_path(rows, ctx),
        .tid = e->submitting_thread,
        .pipeline = bound ? e->program_id : 0,
        .pipeline_name = bound ? tally_program_report_name(bound) : "",
        .shader_hash = bound ? e->program->shader_hash : 0,
        .target_width = command->type == TALLY_CMD_DRAW ? e->render.width : 0,
        .target_height = command->type == TALLY_CMD_DRAW ? e->render.height : 0,
        .begin_ns = begin_ns,
        .end_ns = end_ns,
        .unmeasured = unmeasured_columns(d),
    };
    if (d->trace) {
        pthread_mutex_lock(&d->listeners_lock);
        tally_trace_command(d->trace, TALLY_TRACK_QUEUE, &record, selected);
        pthread_mutex_unlock(&d->listeners_lock);
        rows->trace_written = true;
    }
    if (!rows->ring)
        return;
    tally_value *values = report_ring_append(rows->ring, &record);
    if (values)
        memcpy(values, selected, d->report_counter_count * sizeof(tally_value));
}

/* The trace's events reach its file on the report's latency: traces are
 * written on the queue thread, under the listeners' lock. */
static uint64_t trace_flush_due(struct tally_device *d, uint64_t now_ns)
{
    struct command_report_rows *rows = d->report_rows;
    if (!d->trace || !rows->trace_written)
        return UINT64_MAX;
    if (!rows->trace_unflushed_since_ns) {
        rows->trace_unflushed_since_ns = now_ns;
        return now_ns + TRACE_LATENCY_NS;
    }
    uint64_t due = rows->trace_unflushed_since_ns + TRACE_LATENCY_NS;
    if (now_ns < due)
        return due;
    pthread_mutex_lock(&d->listeners_lock);
    if (d->trace)
        tally_trace_flush(d->trace); /* a failed write is said at close */
    pthread_mutex_unlock(&d->listeners_lock);
    rows->trace_unflushed_since_ns = 0;
    rows->trace_written = false;
    return UINT64_MAX;
}

uint64_t tally_command_report_tick(struct tally_device *d, uint64_t now_ns)
{
    struct command_report_rows *rows = d->report_rows;
    if (!rows)
        return UINT64_MAX;
    uint64_t report = rows->ring ? report_ring_hand_over_due(rows->ring, now_ns) : UINT64_MAX;
    uint64_t trace = trace_flush_due(d, now_ns);
    return report < trace ? report : trace;
}

/* Every row handed to the writer thread written, and the thread ended; a
 * row that failed set report_failed. */
static void close_rows(struct tally_device *d)
{
    struct command_report_rows *rows = d->report_rows;
    if (!rows)
        return;
    if (rows->ring)
        report_ring_close(rows->ring);
    free(rows->plain_raw);
    free(rows->memos);
    free(rows->derived_column);
    free(rows->sources);
    free(rows->column_measures);
    free(rows);
    d->report_rows = NULL;
}

/* A file that could not be written is said once, with its path and why. */
static tally_status said(tally_status s, const char *what, const char *path)
{
    if (s != TALLY_OK)
        tally_log(TALLY_LOG_ERROR, "the %s could not be written to %s: %s", what, path ? path : "?",
                  tally_output_strerror(errno));
    return s;
}

tally_status tally_command_report_close(struct tally_device *d)
{
    tally_status report = TALLY_OK, trace = TALLY_OK;
    close_rows(d);
    if (d->report && !d->report_failed)
        tally_run_metadata_describe(d, d->report); /* with the drivers seen since the open */
    if (d->report && d->report_failed)
        tally_report_close(d->report); /* already said when the write failed */
    else if (d->report)
        report = said(tally_report_close(d->report), "per-command report", d->report_path);
    d->report = NULL;
    pthread_mutex_lock(&d->listeners_lock);
    if (d->trace)
        trace = said(tally_trace_close(d->trace), "trace", d->trace_path);
    d->trace = NULL;
    tally_timeline_update_active(d);
    pthread_mutex_unlock(&d->listeners_lock);
    free(d->report_counters);
    d->report_counters = NULL;
    free(d->report_path);
    free(d->trace_path);
    d->report_path = d->trace_path = NULL;
    if (d->report_failed)
        report = TALLY_ERROR_IO;
    d->report_failed = false;
    return report != TALLY_OK ? report : trace;
}
