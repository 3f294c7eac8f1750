/* Owns tally summary's output for people: terminal tables and Markdown
 * (summary.h); summary_data.c prints the same numbers for machines. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frame_stats.h"
#include "name_table.h"
#include "summary.h"
#include "text_table.h"
#include "value_text.h"

bool summary_print_data(const struct summary *s, FILE *out);

static uint64_t frames_of(const run_aggregate *a)
{
    uint64_t frames = 0;
    for (uint64_t f = 0; f < run_aggregate_frame_limit(a); f++)
        frames += run_aggregate_frame_commands(a, f) != 0;
    return frames;
}

static void shown_text(const run_aggregate *a, int k, const struct counter_sum *sum,
                       uint64_t commands, char *out, size_t size)
{
    if (k < 0 || !sum) {
        snprintf(out, size, "-");
        return;
    }
    value_text(aggregate_shown(a, (size_t)k, sum, commands),
               run_aggregate_counter(a, (size_t)k)->averaged, out, size);
}

static void share_text(double part, double whole, char *out, size_t size)
{
    if (whole > 0 && isfinite(part))
        snprintf(out, size, "%.1f %%", 100 * part / whole);
    else
        snprintf(out, size, "-");
}

static void print_runs(const struct summary *s, FILE *out, enum table_style style)
{
    text_table *t = text_table_new("", 6);
    if (!t)
        return;
    const char *headings[] = {"report", "backend", "device", "clock", "commands", "frames"};
    for (size_t c = 0; c < 6; c++)
        text_table_heading(t, c, headings[c], c >= 4);
    for (size_t r = 0; r < s->run_count; r++) {
        const run_aggregate *a = s->runs[r].aggregate;
        text_table_row(t);
        text_table_cell(t, "%s", s->runs[r].name);
        text_table_cell(t, "%s", run_aggregate_metadata(a, 0, META_BACKEND));
        text_table_cell(t, "%s", run_aggregate_metadata(a, 0, META_DEVICE));
        text_table_cell(t, "%s", run_aggregate_metadata(a, 0, META_CLOCK));
        text_table_cell(t, "%" PRIu64, run_aggregate_commands(a));
        text_table_cell(t, "%" PRIu64, frames_of(a));
    }
    text_table_print(t, out, style);
    text_table_free(t);
}

/* The counters of every run, by symbol, in the order first seen. */
static name_table *counter_union(const struct summary *s)
{
    name_table *symbols = name_table_create();
    for (size_t r = 0; symbols && r < s->run_count; r++) {
        const run_aggregate *a = s->runs[r].aggregate;
        for (size_t k = 0; k < run_aggregate_counter_count(a); k++)
            name_table_intern(symbols, run_aggregate_counter(a, k)->symbol);
    }
    return symbols;
}

/* The first run's description of a counter that some run has. */
static const struct aggregate_counter *describe(const struct summary *s, const char *symbol)
{
    for (size_t r = 0; r < s->run_count; r++) {
        int k = run_aggregate_find(s->runs[r].aggregate, symbol);
        if (k >= 0)
            return run_aggregate_counter(s->runs[r].aggregate, (size_t)k);
    }
    return NULL;
}

static void print_totals(const struct summary *s, FILE *out, enum table_style style)
{
    name_table *symbols = counter_union(s);
    text_table *t = symbols ? text_table_new("totals", 4 + s->run_count) : NULL;
    if (!t) {
        name_table_free(symbols);
        return;
    }
    text_table_heading(t, 0, "counter", false);
    for (size_t r = 0; r < s->run_count; r++)
        text_table_heading(t, 1 + r, s->run_count > 1 ? s->runs[r].name : "total", true);
    text_table_heading(t, 1 + s->run_count, "unit", false);
    text_table_heading(t, 2 + s->run_count, "exactness", false);
    text_table_heading(t, 3 + s->run_count, "aggregate", false);
    for (size_t i = 0; i < name_table_count(symbols); i++) {
        const char *symbol = name_table_name(symbols, (uint32_t)i);
        const struct aggregate_counter *c = describe(s, symbol);
        text_table_row(t);
        text_table_cell(t, "%s", symbol);
        for (size_t r = 0; r < s->run_count; r++) {
            const run_aggregate *a = s->runs[r].aggregate;
            int k = run_aggregate_find(a, symbol);
            char text[64];
            shown_text(a, k, k < 0 ? NULL : run_aggregate_total(a, (size_t)k),
                       run_aggregate_commands(a), text, sizeof text);
            text_table_cell(t, "%s", text);
        }
        text_table_cell(t, "%s", c->unit);
        text_table_cell(t, "%s", counter_exactness_name(c->exactness));
        text_table_cell(t, "%s", c->averaged ? "mean of commands" : "sum");
    }
    text_table_print(t, out, style);
    text_table_free(t);
    name_table_free(symbols);
}

static void print_frames(const struct summary *s, FILE *out, enum table_style style)
{
    bool several = s->run_count > 1;
    size_t columns = several ? 7 : 6;
    text_table *t = text_table_new("frames (each frame's sum; nearest-rank percentiles)", columns);
    if (!t)
        return;
    const char *headings[] = {"counter", "report", "frames", "p50", "p90", "p99", "max"};
    for (size_t c = 0, h = 0; c < columns; c++, h++) {
        h += !several && h == 1;
        text_table_heading(t, c, headings[h], h >= 2);
    }
    for (size_t f = 0; f < s->frame_counter_count; f++) {
        for (size_t r = 0; r < s->run_count; r++) {
            const run_aggregate *a = s->runs[r].aggregate;
            int k = run_aggregate_find(a, s->frame_counters[f]);
            if (f == 0 && s->runs[r].time >= 0)
                k = s->runs[r].time;
            struct frame_stats stats;
            if (k < 0 || !frame_stats_of(a, (size_t)k, &stats))
                continue;
            bool averaged = run_aggregate_counter(a, (size_t)k)->averaged;
            double values[] = {stats.p50, stats.p90, stats.p99, stats.max};
            text_table_row(t);
            text_table_cell(t, "%s", run_aggregate_counter(a, (size_t)k)->symbol);
            if (several)
                text_table_cell(t, "%s", s->runs[r].name);
            text_table_cell(t, "%" PRIu64, stats.frames);
            for (size_t v = 0; v < 4; v++) {
                char text[64];
                value_text(values[v], averaged, text, sizeof text);
                text_table_cell(t, "%s", text);
            }
        }
    }
    text_table_print(t, out, style);
    text_table_free(t);
}

static void print_top(const struct summary *s, const struct summary_run *run, FILE *out,
                      enum table_style style)
{
    const run_aggregate *a = run->aggregate;
    if (run->by < 0 || s->top == 0)
        return;
    bool pipeline = run_aggregate_has_pipeline(a);
    bool reports = run_aggregate_report_count(a) > 1;
    bool time = run->time >= 0 && run->time != run->by;
    char title[600];
    snprintf(title, sizeof title, "top %zu commands by %s%s%s", s->top, s->by,
             s->run_count > 1 ? " in " : "", s->run_count > 1 ? run->name : "");
    text_table *t = text_table_new(title, 7 + reports + pipeline + time);
    if (!t)
        return;
    size_t c = 0;
    text_table_heading(t, c++, "#", true);
    if (reports)
        text_table_heading(t, c++, "report", false);
    text_table_heading(t, c++, "frame", true);
    text_table_heading(t, c++, "sequence", true);
    text_table_heading(t, c++, "api_name", false);
    text_table_heading(t, c++, "label", false);
    if (pipeline)
        text_table_heading(t, c++, "pipeline", false);
    text_table_heading(t, c++, s->by, true);
    text_table_heading(t, c++, "share", true);
    if (time)
        text_table_heading(t, c++, run_aggregate_counter(a, (size_t)run->time)->symbol, true);
    const struct top_command *top;
    size_t n = top_commands_sorted(run->top, &top);
    double whole = counter_sum_double(run_aggregate_total(a, (size_t)run->by));
    bool averaged = run_aggregate_counter(a, (size_t)run->by)->averaged;
    for (size_t i = 0; i < n; i++) {
        char value[64], share[32];
        value_text(top[i].value, false, value, sizeof value);
        share_text(top[i].value, averaged ? 0 : whole, share, sizeof share);
        text_table_row(t);
        text_table_cell(t, "%zu", i + 1);
        if (reports)
            text_table_cell(t, "%s", run_aggregate_report_path(a, top[i].report));
        text_table_cell(t, "%" PRIu64, top[i].frame);
        text_table_cell(t, "%" PRIu64, top[i].sequence);
        text_table_cell(t, "%s", top[i].api_name);
        text_table_cell(t, "%s", top[i].label);
        if (pipeline)
            text_table_cell(t, "%s", top[i].pipeline);
        text_table_cell(t, "%s", value);
        text_table_cell(t, "%s", share);
        if (time) {
            value_text(top[i].shown[SHOWN_TIME], false, value, sizeof value);
            text_table_cell(t, "%s", value);
        }
    }
    text_table_print(t, out, style);
    text_table_free(t);
}

/* A group's ranking value in a run, for sorting. */
struct group_entry {
    const char *name;
    double rank; /* the first run that has it: its by value */
    long *index; /* per run: the group's index, or -1 */
};

static int by_rank(const void *a, const void *b)
{
    const struct group_entry *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank > y->rank ? -1 : 1;
    return strcmp(x->name, y->name);
}

static double group_value(const struct summary_run *run, enum aggregate_grouping g, long i)
{
    if (run->by < 0 || i < 0)
        return NAN;
    const run_aggregate *a = run->aggregate;
    return aggregate_shown(a, (size_t)run->by,
                           run_aggregate_group_sum(a, g, (size_t)i, (size_t)run->by),
                           run_aggregate_group_commands(a, g, (size_t)i));
}

/* The names of a grouping over every run, ranked by the first run's value. */
static struct group_entry *group_union(const struct summary *s, enum aggregate_grouping g,
                                       size_t *count, long **indices)
{
    name_table *names = name_table_create();
    size_t most = 0;
    for (size_t r = 0; r < s->run_count; r++)
        most += run_aggregate_group_count(s->runs[r].aggregate, g);
    struct group_entry *entries = calloc(most ? most : 1, sizeof *entries);
    *indices = malloc((most ? most : 1) * s->run_count * sizeof **indices);
    if (!names || !entries || !*indices) {
        name_table_free(names);
        free(entries);
        free(*indices);
        return NULL;
    }
    for (size_t i = 0; i < most * s->run_count; i++)
        (*indices)[i] = -1;
    for (size_t r = 0; r < s->run_count; r++) {
        const run_aggregate *a = s->runs[r].aggregate;
        for (size_t i = 0; i < run_aggregate_group_count(a, g); i++) {
            const char *name = run_aggregate_group_name(a, g, i);
            uint32_t u = name_table_intern(names, name);
            /* past the table's limit, names would share an entry: left out */
            if (u == UINT32_MAX || strcmp(name_table_name(names, u), name) != 0)
                continue;
            struct group_entry *e = &entries[u];
            if (!e->index) {
                e->name = name;
                e->index = *indices + (size_t)u * s->run_count;
                e->rank = group_value(&s->runs[r], g, (long)i);
                if (isnan(e->rank))
                    e->rank = -INFINITY;
            }
            e->index[r] = (long)i;
        }
    }
    *count = name_table_count(names);
    name_table_free(names);
    qsort(entries, *count, sizeof *entries, by_rank);
    return entries;
}

static void print_group(const struct summary *s, enum aggregate_grouping g, FILE *out,
                        enum table_style style)
{
    size_t count;
    long *indices;
    struct group_entry *entries = group_union(s, g, &count, &indices);
    if (!entries)
        return;
    char title[160];
    snprintf(title, sizeof title, "by %s (%zu), by %s", aggregate_grouping_names[g], count, s->by);
    bool several = s->run_count > 1;
    text_table *t = text_table_new(title, 1 + 3 * s->run_count);
    if (!t) {
        free(entries);
        free(indices);
        return;
    }
    text_table_heading(t, 0, aggregate_grouping_names[g], false);
    for (size_t r = 0; r < s->run_count; r++) {
        char heading[600];
        snprintf(heading, sizeof heading, "commands%s%s", several ? " " : "",
                 several ? s->runs[r].name : "");
        text_table_heading(t, 1 + 3 * r, heading, true);
        text_table_heading(t, 2 + 3 * r, s->by, true);
        text_table_heading(t, 3 + 3 * r, "share", true);
    }
    size_t shown = count < s->top ? count : s->top;
    for (size_t i = 0; i < shown; i++) {
        text_table_row(t);
        text_table_cell(t, "%s", entries[i].name[0] ? entries[i].name : "(none)");
        for (size_t r = 0; r < s->run_count; r++) {
            const struct summary_run *run = &s->runs[r];
            long index = entries[i].index[r];
            if (index < 0 || run->by < 0) {
                text_table_cell(t, "%s", index < 0 ? "-" : "");
                text_table_cell(t, "-");
                text_table_cell(t, "-");
                continue;
            }
            const run_aggregate *a = run->aggregate;
            char value[64], share[32];
            double v = group_value(run, g, index);
            value_text(v, run_aggregate_counter(a, (size_t)run->by)->averaged, value, sizeof value);
            share_text(v,
                       run_aggregate_counter(a, (size_t)run->by)->averaged
                           ? 0
                           : counter_sum_double(run_aggregate_total(a, (size_t)run->by)),
                       share, sizeof share);
            text_table_cell(t, "%" PRIu64, run_aggregate_group_commands(a, g, (size_t)index));
            text_table_cell(t, "%s", value);
            text_table_cell(t, "%s", share);
        }
    }
    if (count > shown) {
        char note[120];
        snprintf(note, sizeof note, "(%zu more: --top N shows more, --format json all)",
                 count - shown);
        text_table_note(t, note);
    }
    text_table_print(t, out, style);
    text_table_free(t);
    free(entries);
    free(indices);
}

static bool any_pipeline(const struct summary *s)
{
    for (size_t r = 0; r < s->run_count; r++)
        if (run_aggregate_has_pipeline(s->runs[r].aggregate))
            return true;
    return false;
}

bool summary_print(const struct summary *s, FILE *out)
{
    if (s->format == SUMMARY_JSON || s->format == SUMMARY_CSV)
        return summary_print_data(s, out);
    enum table_style style = s->format == SUMMARY_MARKDOWN ? TABLE_MARKDOWN : TABLE_TERMINAL;
    if (style == TABLE_MARKDOWN)
        fputs("### tally summary\n\n", out);
    print_runs(s, out, style);
    print_totals(s, out, style);
    print_frames(s, out, style);
    for (size_t r = 0; r < s->run_count; r++)
        print_top(s, &s->runs[r], out, style);
    print_group(s, GROUP_LABEL, out, style);
    print_group(s, GROUP_API, out, style);
    if (any_pipeline(s))
        print_group(s, GROUP_PIPELINE, out, style);
    return !ferror(out);
}
