/* Owns the reduction of a run to its comparable values (run_digest.h). */
#include "run_digest.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const digest_scope_names[SCOPE_COUNT] = {
    [SCOPE_TOTAL] = "total",       [SCOPE_FRAME] = "frame",  [SCOPE_LABEL] = "label",
    [SCOPE_PIPELINE] = "pipeline", [SCOPE_API] = "api_name",
};

struct run_digest *run_digest_new(void)
{
    struct run_digest *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->backend = strdup("");
    d->device = strdup("");
    d->clock = strdup("");
    if (!d->backend || !d->device || !d->clock) {
        run_digest_free(d);
        return NULL;
    }
    return d;
}

void run_digest_free(struct run_digest *d)
{
    if (!d)
        return;
    for (size_t k = 0; k < d->counter_count; k++) {
        free(d->counters[k].symbol);
        free(d->counters[k].unit);
    }
    free(d->counters);
    for (size_t i = 0; i < d->row_count; i++) {
        free(d->rows[i].name);
        free(d->rows[i].values);
    }
    free(d->rows);
    free(d->backend);
    free(d->device);
    free(d->clock);
    free(d);
}

bool run_digest_add_counter(struct run_digest *d, const char *symbol, const char *unit,
                            enum counter_exactness exactness, bool averaged)
{
    struct digest_counter *counters =
        realloc(d->counters, (d->counter_count + 1) * sizeof *counters);
    if (!counters)
        return false;
    d->counters = counters;
    struct digest_counter *c = &counters[d->counter_count];
    c->symbol = strdup(symbol);
    c->unit = strdup(unit);
    c->exactness = exactness;
    c->averaged = averaged;
    if (!c->symbol || !c->unit) {
        free(c->symbol);
        free(c->unit);
        return false;
    }
    d->counter_count++;
    return true;
}

struct digest_row *run_digest_add_row(struct run_digest *d, enum digest_scope scope,
                                      const char *name)
{
    if (d->row_count == d->row_capacity) {
        size_t capacity = d->row_capacity ? 2 * d->row_capacity : 64;
        struct digest_row *rows = realloc(d->rows, capacity * sizeof *rows);
        if (!rows)
            return NULL;
        d->rows = rows;
        d->row_capacity = capacity;
    }
    struct digest_row *row = &d->rows[d->row_count];
    memset(row, 0, sizeof *row);
    row->scope = scope;
    row->name = strdup(name);
    row->values = calloc(d->counter_count ? d->counter_count : 1, sizeof *row->values);
    if (!row->name || !row->values) {
        free(row->name);
        free(row->values);
        return NULL;
    }
    if (scope == SCOPE_FRAME)
        row->frame = strtoull(name, NULL, 10);
    d->row_count++;
    return row;
}

int run_digest_find_counter(const struct run_digest *d, const char *symbol)
{
    for (size_t k = 0; k < d->counter_count; k++)
        if (strcmp(d->counters[k].symbol, symbol) == 0)
            return (int)k;
    return -1;
}

void digest_value_text(const struct counter_value *v, char *out, size_t size)
{
    if (!v->decimal)
        snprintf(out, size, "%" PRId64, v->integer);
    else if (isnan(v->real))
        snprintf(out, size, "nan");
    else if (isinf(v->real))
        snprintf(out, size, v->real > 0 ? "inf" : "-inf");
    else
        snprintf(out, size, "%.3f", v->real);
}

/* The value a baseline would hold: read back from the text it would
 * write, so that a digest made from a report and one read from a baseline
 * of it are equal to the bit. */
static struct counter_value shown_value(const run_aggregate *a, size_t k,
                                        const struct counter_sum *sum, uint64_t commands)
{
    struct counter_value v = {0};
    if (!run_aggregate_counter(a, k)->averaged && !sum->decimal && sum->real == 0) {
        v.integer = sum->integer;
        return v;
    }
    v.decimal = true;
    v.real = aggregate_shown(a, k, sum, commands);
    char text[64];
    digest_value_text(&v, text, sizeof text);
    counter_value_parse(text, &v);
    return v;
}

/* Where in the aggregate a digest row's sums are. */
struct sums_at {
    enum digest_scope scope;
    enum aggregate_grouping grouping; /* of a group row */
    size_t index;                     /* the frame, or the name's index */
};

static const struct counter_sum *sum_at(const run_aggregate *a, const struct sums_at *at, size_t k)
{
    switch (at->scope) {
    case SCOPE_TOTAL: return run_aggregate_total(a, k);
    case SCOPE_FRAME: return run_aggregate_frame_sum(a, at->index, k);
    default: return run_aggregate_group_sum(a, at->grouping, at->index, k);
    }
}

static bool add_row(struct run_digest *d, const run_aggregate *a, const struct sums_at *at,
                    const char *name, uint64_t commands)
{
    struct digest_row *row = run_digest_add_row(d, at->scope, name);
    if (!row)
        return false;
    row->commands = commands;
    for (size_t k = 0; k < d->counter_count; k++) {
        const struct counter_sum *sum = sum_at(a, at, k);
        row->values[k] = sum ? shown_value(a, k, sum, commands) : (struct counter_value){0};
    }
    return true;
}

bool run_digest_set_text(char **field, const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return false;
    free(*field);
    *field = copy;
    return true;
}

struct run_digest *run_digest_of(const run_aggregate *a)
{
    struct run_digest *d = run_digest_new();
    if (!d)
        return NULL;
    bool ok = run_aggregate_report_count(a) == 0 ||
              (run_digest_set_text(&d->backend, run_aggregate_metadata(a, 0, META_BACKEND)) &&
               run_digest_set_text(&d->device, run_aggregate_metadata(a, 0, META_DEVICE)) &&
               run_digest_set_text(&d->clock, run_aggregate_metadata(a, 0, META_CLOCK)));
    for (size_t k = 0; ok && k < run_aggregate_counter_count(a); k++) {
        const struct aggregate_counter *c = run_aggregate_counter(a, k);
        ok = run_digest_add_counter(d, c->symbol, c->unit, c->exactness, c->averaged);
    }
    struct sums_at at = {.scope = SCOPE_TOTAL};
    ok = ok && add_row(d, a, &at, "", run_aggregate_commands(a));
    at.scope = SCOPE_FRAME;
    for (at.index = 0; ok && at.index < run_aggregate_frame_limit(a); at.index++) {
        uint64_t commands = run_aggregate_frame_commands(a, at.index);
        char name[24];
        snprintf(name, sizeof name, "%zu", at.index);
        if (commands)
            ok = add_row(d, a, &at, name, commands);
    }
    static const struct sums_at groupings[] = {{SCOPE_LABEL, GROUP_LABEL, 0},
                                               {SCOPE_PIPELINE, GROUP_PIPELINE, 0},
                                               {SCOPE_API, GROUP_API, 0}};
    for (size_t g = 0; ok && g < 3; g++) {
        at = groupings[g];
        if (at.grouping == GROUP_PIPELINE && !run_aggregate_has_pipeline(a))
            continue;
        for (; ok && at.index < run_aggregate_group_count(a, at.grouping); at.index++)
            ok = add_row(d, a, &at, run_aggregate_group_name(a, at.grouping, at.index),
                         run_aggregate_group_commands(a, at.grouping, at.index));
    }
    const struct digest_row *duplicate;
    if (!ok || !run_digest_sort(d, &duplicate)) {
        run_digest_free(d);
        return NULL;
    }
    return d;
}

int digest_row_order(const struct digest_row *a, const struct digest_row *b)
{
    if (a->scope != b->scope)
        return a->scope < b->scope ? -1 : 1;
    if (a->scope == SCOPE_FRAME)
        return (a->frame > b->frame) - (a->frame < b->frame);
    return strcmp(a->name, b->name);
}

static int row_order(const void *a, const void *b)
{
    return digest_row_order(a, b);
}

bool run_digest_sort(struct run_digest *d, const struct digest_row **duplicate)
{
    qsort(d->rows, d->row_count, sizeof *d->rows, row_order);
    for (size_t i = 1; i < d->row_count; i++) {
        if (digest_row_order(&d->rows[i - 1], &d->rows[i]) == 0) {
            *duplicate = &d->rows[i];
            return false;
        }
    }
    return true;
}
