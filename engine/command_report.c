/*
 * The device's own outputs: the per-command report (TALLY_OUTPUT) and the
 * trace file (TALLY_TRACE), with the counters TALLY_COUNTERS names. Every
 * draw, dispatch and transfer is one automatic scope.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine.h"

static const char default_counters[] =
    "GpuTime,IaVertices,IaPrimitives,VsInvocations,ClipperPrimitives,RasterizedPixels,"
    "FsInvocations,CsInvocations,ShaderAluInstructions,L2CacheMisses,DramReadBytes,"
    "DramWriteBytes";

/* Parses a comma-separated list of symbols ("all": every counter); unknown
 * symbols are logged once and skipped (quietly in the default list, which
 * names counters a measuring backend may not offer). */
static tally_status parse_counters(struct tally_device *d, const char *list, bool quiet)
{
    const tally_catalogue *cat = d->catalogue;
    d->report_counters = malloc(cat->counter_count * sizeof(uint32_t));
    if (!d->report_counters)
        return TALLY_ERROR_OUT_OF_MEMORY;
    if (strcmp(list, "all") == 0) {
        for (uint32_t i = 0; i < cat->counter_count; i++)
            d->report_counters[i] = i;
        d->report_counter_count = cat->counter_count;
        return TALLY_OK;
    }
    char *copy = strdup(list), *save = NULL;
    if (!copy)
        return TALLY_ERROR_OUT_OF_MEMORY;
    for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        uint32_t index;
        if (tally_catalogue_find(cat, tok, &index) != TALLY_OK) {
            if (!quiet)
                tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS: no counter named \"%s\"; skipped", tok);
        } else if (d->report_counter_count < cat->counter_count)
            d->report_counters[d->report_counter_count++] = index;
    }
    free(copy);
    return TALLY_OK;
}

static void name_tracks(struct tally_device *d)
{
    uint32_t tracks = tally_timeline_track_count(d);
    for (uint32_t t = 0; t < tracks; t++)
        tally_trace_name_track(d->trace, t, tally_timeline_track_name(d, t));
}

tally_status tally_command_report_open(struct tally_device *d, const tally_device_options *o)
{
    if (!o->report_path && !o->trace_path)
        return TALLY_OK;
    tally_status s = parse_counters(d, o->report_counters ? o->report_counters : default_counters,
                                    !o->report_counters);
    if (s == TALLY_OK &&
        !(d->exec.report_values = calloc(d->report_counter_count + 1, sizeof(tally_value))))
        s = TALLY_ERROR_OUT_OF_MEMORY;
    if (s == TALLY_OK && o->report_path)
        s = tally_report_open(o->report_path, tally_report_format_for_path(o->report_path),
                              d->catalogue, d->report_counters, d->report_counter_count,
                              &d->report);
    if (s == TALLY_OK && o->trace_path) {
        char process[64];
        snprintf(process, sizeof(process), "%s (pid %d)", d->info.name, (int)getpid());
        s = tally_trace_open(o->trace_path, process, &d->trace);
        if (s == TALLY_OK &&
            !(d->trace_stacks = tally_trace_stacks_create(tally_timeline_track_count(d))))
            s = TALLY_ERROR_OUT_OF_MEMORY;
        if (s == TALLY_OK)
            name_tracks(d);
        tally_timeline_update_active(d);
    }
    return s;
}

static const char *kind_name(uint32_t type)
{
    return type == TALLY_CMD_DRAW ? "draw" : type == TALLY_CMD_DISPATCH ? "dispatch" : "transfer";
}

/* The context's label stack joined by '/'. */
static const char *label_path(const struct tally_context *ctx, char *buffer, size_t size)
{
    size_t used = 0;
    buffer[0] = '\0';
    for (uint32_t i = 0; i < ctx->label_depth && used < size; i++)
        used += (size_t)snprintf(buffer + used, size - used, "%s%s", i ? "/" : "", ctx->labels[i]);
    return buffer;
}

static void trace_counters(struct tally_device *d, uint64_t begin, uint64_t end)
{
    pthread_mutex_lock(&d->listeners_lock);
    for (uint32_t i = 0; i < d->report_counter_count; i++) {
        const tally_counter_info *c = &d->catalogue->counters[d->report_counters[i]];
        tally_value v = d->exec.report_values[i];
        bool floating = c->storage == TALLY_STORAGE_FLOAT32 || c->storage == TALLY_STORAGE_FLOAT64;
        tally_trace_counter(d->trace, c->symbol, begin, floating ? v.f64 : (double)v.u64);
        tally_trace_counter(d->trace, c->symbol, end, 0.0);
    }
    pthread_mutex_unlock(&d->listeners_lock);
}

void tally_command_report_write(struct tally_device *d, const struct tally_command *command,
                                const struct tally_context *ctx, uint64_t stream_id,
                                uint64_t begin_ns, uint64_t end_ns)
{
    struct tally_executor *e = &d->exec;
    for (uint32_t i = 0; i < d->report_counter_count; i++)
        tally_catalogue_evaluate(d->catalogue, d->report_counters[i], e->delta, d->constants,
                                 &e->report_values[i]);
    if (d->trace)
        trace_counters(d, begin_ns, end_ns);
    if (!d->report)
        return;
    char label[512];
    tally_command_record record = {
        .sequence = e->command_sequence,
        .api_name = command->u.draw.api_name ? command->u.draw.api_name : kind_name(command->type),
        .kind = kind_name(command->type),
        .context = ctx->id,
        .context_api = ctx->api_name,
        .frame = ctx->frame,
        .submission = e->submission,
        .stream = stream_id,
        .label = label_path(ctx, label, sizeof(label)),
        .begin_ns = begin_ns,
        .end_ns = end_ns,
    };
    if (tally_report_write(d->report, &record, e->report_values) != TALLY_OK) {
        tally_log(TALLY_LOG_ERROR, "writing the report failed; no more records are written");
        tally_report_close(d->report);
        d->report = NULL;
    }
}

void tally_command_report_close(struct tally_device *d)
{
    if (d->report && tally_report_close(d->report) != TALLY_OK)
        tally_log(TALLY_LOG_ERROR, "the report could not be written");
    d->report = NULL;
    pthread_mutex_lock(&d->listeners_lock);
    if (d->trace && tally_trace_close(d->trace) != TALLY_OK)
        tally_log(TALLY_LOG_ERROR, "the trace could not be written");
    d->trace = NULL;
    tally_timeline_update_active(d);
    pthread_mutex_unlock(&d->listeners_lock);
    free(d->trace_stacks);
    d->trace_stacks = NULL;
    free(d->report_counters);
    d->report_counters = NULL;
}
