/* Owns the sums of one pass over a run's reports (run_aggregate.h). */
#include "run_aggregate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "name_table.h"

const char *const aggregate_grouping_names[GROUP_COUNT] = {
    [GROUP_LABEL] = "label", [GROUP_API] = "api_name", [GROUP_PIPELINE] = "pipeline"};

const char aggregate_duration_counter[] = "duration_ns";

const char *const aggregate_metadata_keys[META_COUNT] = {
    [META_BACKEND] = "backend",
    [META_DEVICE] = "device",
    [META_CLOCK] = "clock",
    [META_PROGRAM] = "program",
    [META_ARGUMENTS] = "arguments",
    [META_PID] = "pid",
    [META_TALLY_VERSION] = "tally_version",
};

/* A grouping's names and, per name, its commands and its sums. */
struct grouping {
    name_table *names;
    uint64_t *commands;
    struct counter_sum *sums; /* [name][counter] */
    size_t capacity;          /* names the arrays hold */
};

struct report_source {
    char *path;
    int *counter_of; /* the aggregate's counter of each report counter */
    size_t counter_count;
    bool duration_stands_in; /* the aggregate's duration_ns comes from this report's rows */
    char *metadata[META_COUNT];
};

struct run_aggregate {
    struct aggregate_counter counters[AGGREGATE_MAX_COUNTERS];
    size_t counter_count;
    int duration_counter; /* the duration_ns stand-in's index, or -1 */
    struct report_source *reports;
    size_t report_count;
    uint64_t commands;
    struct counter_sum *totals;
    /* Frames: dense by number. */
    int *frame_slot; /* per counter: its slot in a frame's sums, or -1 */
    size_t frame_width;
    uint64_t frame_limit, frame_capacity;
    uint64_t *frame_commands;
    struct counter_sum *frame_sums;
    struct grouping groups[GROUP_COUNT];
    bool has_pipeline;
};

run_aggregate *run_aggregate_create(void)
{
    run_aggregate *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->duration_counter = -1;
    for (int g = 0; g < GROUP_COUNT; g++) {
        if (!(a->groups[g].names = name_table_create())) {
            run_aggregate_free(a);
            return NULL;
        }
    }
    return a;
}

void run_aggregate_free(run_aggregate *a)
{
    if (!a)
        return;
    for (size_t k = 0; k < a->counter_count; k++) {
        free(a->counters[k].symbol);
        free(a->counters[k].unit);
    }
    for (size_t i = 0; i < a->report_count; i++) {
        free(a->reports[i].path);
        free(a->reports[i].counter_of);
        for (int m = 0; m < META_COUNT; m++)
            free(a->reports[i].metadata[m]);
    }
    free(a->reports);
    free(a->totals);
    free(a->frame_slot);
    free(a->frame_commands);
    free(a->frame_sums);
    for (int g = 0; g < GROUP_COUNT; g++) {
        name_table_free(a->groups[g].names);
        free(a->groups[g].commands);
        free(a->groups[g].sums);
    }
    free(a);
}

int run_aggregate_find(const run_aggregate *a, const char *symbol)
{
    for (size_t k = 0; k < a->counter_count; k++)
        if (strcmp(a->counters[k].symbol, symbol) == 0)
            return (int)k;
    return -1;
}

/* The counter's index, added if new; -1 when there are too many. */
static int join_counter(run_aggregate *a, const char *symbol, const char *unit,
                        enum counter_exactness exactness, bool derived)
{
    int k = run_aggregate_find(a, symbol);
    if (k >= 0) {
        /* Reports that disagree about a counter's exactness: the weaker
         * word holds for the sum (exact < conditional < modeled < measured). */
        if (exactness > a->counters[k].exactness)
            a->counters[k].exactness = exactness;
        return k;
    }
    if (a->counter_count == AGGREGATE_MAX_COUNTERS)
        return -1;
    struct aggregate_counter *c = &a->counters[a->counter_count];
    c->symbol = strdup(symbol);
    c->unit = strdup(unit);
    if (!c->symbol || !c->unit) {
        free(c->symbol);
        free(c->unit);
        return -1;
    }
    c->exactness = exactness;
    c->derived = derived;
    return (int)a->counter_count++;
}

int run_aggregate_add_report(run_aggregate *a, const report_reader *reader, char *error,
                             size_t size)
{
    struct report_source *reports = realloc(a->reports, (a->report_count + 1) * sizeof *reports);
    if (!reports) {
        snprintf(error, size, "out of memory");
        return -1;
    }
    a->reports = reports;
    struct report_source *r = &reports[a->report_count];
    memset(r, 0, sizeof *r);
    r->counter_count = report_reader_counter_count(reader);
    r->path = strdup(report_reader_path(reader));
    r->counter_of = calloc(r->counter_count ? r->counter_count : 1, sizeof *r->counter_of);
    if (!r->path || !r->counter_of) {
        free(r->path);
        free(r->counter_of);
        snprintf(error, size, "out of memory");
        return -1;
    }
    a->report_count++;
    for (size_t i = 0; i < r->counter_count; i++) {
        const struct report_counter *c = report_reader_counter(reader, i);
        r->counter_of[i] = join_counter(a, c->symbol, c->unit, c->exactness, c->derived);
        if (r->counter_of[i] < 0) {
            snprintf(error, size, "%s: more than %d counters, or out of memory", r->path,
                     AGGREGATE_MAX_COUNTERS);
            return -1;
        }
    }
    return (int)a->report_count - 1;
}

bool run_aggregate_begin(run_aggregate *a, const bool *frame_tracked, char *error, size_t size)
{
    size_t asked = a->counter_count; /* frame_tracked's length */
    if (run_aggregate_find(a, "GpuTime") < 0) {
        a->duration_counter =
            join_counter(a, aggregate_duration_counter, "ns", EXACTNESS_MEASURED, false);
        if (a->duration_counter < 0) {
            snprintf(error, size, "too many counters, or out of memory");
            return false;
        }
        for (size_t i = 0; i < a->report_count; i++)
            a->reports[i].duration_stands_in = true;
    }
    size_t n = a->counter_count ? a->counter_count : 1;
    a->totals = calloc(n, sizeof *a->totals);
    a->frame_slot = calloc(n, sizeof *a->frame_slot);
    if (!a->totals || !a->frame_slot) {
        snprintf(error, size, "out of memory");
        return false;
    }
    for (size_t k = 0; k < a->counter_count; k++) {
        /* duration_ns is tracked wherever it stands in for GpuTime */
        bool tracked =
            !frame_tracked || (k < asked && frame_tracked[k]) || (int)k == a->duration_counter;
        a->frame_slot[k] = tracked ? (int)a->frame_width++ : -1;
    }
    return true;
}

static bool grow_frames(run_aggregate *a, uint64_t frame)
{
    uint64_t capacity = a->frame_capacity ? a->frame_capacity : 64;
    while (capacity <= frame)
        capacity *= 2;
    uint64_t *commands = realloc(a->frame_commands, capacity * sizeof *commands);
    if (!commands)
        return false;
    a->frame_commands = commands;
    size_t width = a->frame_width ? a->frame_width : 1;
    struct counter_sum *sums = realloc(a->frame_sums, capacity * width * sizeof *sums);
    if (!sums)
        return false;
    a->frame_sums = sums;
    memset(commands + a->frame_capacity, 0, (capacity - a->frame_capacity) * sizeof *commands);
    memset(sums + a->frame_capacity * width, 0,
           (capacity - a->frame_capacity) * width * sizeof *sums);
    a->frame_capacity = capacity;
    return true;
}

/* The name's index in the grouping, its arrays grown to hold it. */
static bool group_index(run_aggregate *a, struct grouping *g, const char *name, uint32_t *index)
{
    *index = name_table_intern(g->names, name);
    if (*index == UINT32_MAX)
        return false;
    if (*index < g->capacity)
        return true;
    size_t capacity = g->capacity ? 2 * g->capacity : 16;
    size_t width = a->counter_count ? a->counter_count : 1;
    uint64_t *commands = realloc(g->commands, capacity * sizeof *commands);
    if (!commands)
        return false;
    g->commands = commands;
    struct counter_sum *sums = realloc(g->sums, capacity * width * sizeof *sums);
    if (!sums)
        return false;
    g->sums = sums;
    memset(commands + g->capacity, 0, (capacity - g->capacity) * sizeof *commands);
    memset(sums + g->capacity * width, 0, (capacity - g->capacity) * width * sizeof *sums);
    g->capacity = capacity;
    return true;
}

bool run_aggregate_add_row(run_aggregate *a, int report, const struct report_row *row, char *error,
                           size_t size)
{
    const struct report_source *r = &a->reports[report];
    if (row->frame >= AGGREGATE_MAX_FRAME) {
        snprintf(error, size,
                 "%s: sequence %llu: frame %llu is beyond the %llu frames a run may have", r->path,
                 (unsigned long long)row->sequence, (unsigned long long)row->frame,
                 (unsigned long long)AGGREGATE_MAX_FRAME);
        return false;
    }
    if (row->frame >= a->frame_capacity && !grow_frames(a, row->frame)) {
        snprintf(error, size, "out of memory");
        return false;
    }
    if (row->frame >= a->frame_limit)
        a->frame_limit = row->frame + 1;
    const char *names[GROUP_COUNT] = {[GROUP_LABEL] = row->identity[REPORT_LABEL],
                                      [GROUP_API] = row->identity[REPORT_API_NAME],
                                      [GROUP_PIPELINE] = row->pipeline};
    a->has_pipeline |= row->pipeline[0] != '\0';
    struct counter_sum *sums[GROUP_COUNT];
    size_t width = a->counter_count;
    for (int g = 0; g < GROUP_COUNT; g++) {
        uint32_t i;
        if (!group_index(a, &a->groups[g], names[g], &i)) {
            snprintf(error, size, "out of memory");
            return false;
        }
        a->groups[g].commands[i]++;
        sums[g] = a->groups[g].sums + (size_t)i * width;
    }
    a->commands++;
    a->frame_commands[row->frame]++;
    struct counter_sum *frame = a->frame_sums + row->frame * a->frame_width;
    for (size_t i = 0; i < r->counter_count; i++) {
        const struct counter_value *v = &row->values[i];
        int k = r->counter_of[i];
        counter_sum_add(&a->totals[k], v);
        if (a->frame_slot[k] >= 0)
            counter_sum_add(&frame[a->frame_slot[k]], v);
        for (int g = 0; g < GROUP_COUNT; g++)
            counter_sum_add(&sums[g][k], v);
    }
    if (r->duration_stands_in) {
        struct counter_value v;
        if (!counter_value_parse(row->identity[REPORT_DURATION_NS], &v)) {
            snprintf(error, size, "%s: sequence %llu: duration_ns is not a number", r->path,
                     (unsigned long long)row->sequence);
            return false;
        }
        int k = a->duration_counter;
        counter_sum_add(&a->totals[k], &v);
        counter_sum_add(&frame[a->frame_slot[k]], &v);
        for (int g = 0; g < GROUP_COUNT; g++)
            counter_sum_add(&sums[g][k], &v);
    }
    return true;
}

bool run_aggregate_end_report(run_aggregate *a, int report, const report_reader *reader)
{
    struct report_source *r = &a->reports[report];
    const struct report_metadata *m = report_reader_metadata(reader);
    for (int i = 0; i < META_COUNT; i++) {
        const char *value = report_metadata_get(m, aggregate_metadata_keys[i]);
        free(r->metadata[i]);
        r->metadata[i] = strdup(value ? value : "");
        if (!r->metadata[i])
            return false;
    }
    return true;
}

void run_aggregate_end(run_aggregate *a)
{
    for (size_t k = 0; k < a->counter_count; k++)
        a->counters[k].averaged = a->totals[k].decimal;
}

size_t run_aggregate_counter_count(const run_aggregate *a)
{
    return a->counter_count;
}

const struct aggregate_counter *run_aggregate_counter(const run_aggregate *a, size_t k)
{
    return &a->counters[k];
}

uint64_t run_aggregate_commands(const run_aggregate *a)
{
    return a->commands;
}

const struct counter_sum *run_aggregate_total(const run_aggregate *a, size_t k)
{
    return &a->totals[k];
}

uint64_t run_aggregate_frame_limit(const run_aggregate *a)
{
    return a->frame_limit;
}

uint64_t run_aggregate_frame_commands(const run_aggregate *a, uint64_t frame)
{
    return a->frame_commands[frame];
}

const struct counter_sum *run_aggregate_frame_sum(const run_aggregate *a, uint64_t frame, size_t k)
{
    if (a->frame_slot[k] < 0)
        return NULL;
    return &a->frame_sums[frame * a->frame_width + (size_t)a->frame_slot[k]];
}

bool run_aggregate_has_pipeline(const run_aggregate *a)
{
    return a->has_pipeline;
}

size_t run_aggregate_group_count(const run_aggregate *a, enum aggregate_grouping g)
{
    return name_table_count(a->groups[g].names);
}

const char *run_aggregate_group_name(const run_aggregate *a, enum aggregate_grouping g, size_t i)
{
    return name_table_name(a->groups[g].names, (uint32_t)i);
}

uint64_t run_aggregate_group_commands(const run_aggregate *a, enum aggregate_grouping g, size_t i)
{
    return a->groups[g].commands[i];
}

const struct counter_sum *run_aggregate_group_sum(const run_aggregate *a, enum aggregate_grouping g,
                                                  size_t i, size_t k)
{
    return &a->groups[g].sums[i * a->counter_count + k];
}

const char *run_aggregate_metadata(const run_aggregate *a, size_t report,
                                   enum aggregate_metadata key)
{
    const char *value = a->reports[report].metadata[key];
    return value ? value : "";
}

size_t run_aggregate_report_count(const run_aggregate *a)
{
    return a->report_count;
}

const char *run_aggregate_report_path(const run_aggregate *a, size_t report)
{
    return a->reports[report].path;
}

double aggregate_shown(const run_aggregate *a, size_t k, const struct counter_sum *sum,
                       uint64_t commands)
{
    double total = counter_sum_double(sum);
    if (a->counters[k].averaged)
        return commands ? total / (double)commands : 0;
    return total;
}
