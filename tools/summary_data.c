/* Owns tally summary's output for machines: JSON and a long-format CSV
 * (summary.h, docs/summary.md), with the numbers summary_text.c shows. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "frame_stats.h"
#include "summary.h"
#include "value_text.h"

bool summary_print_data(const struct summary *s, FILE *out);

/* A number as JSON: an integer where it is whole, else three decimals. */
static json_object *number(double value, bool averaged)
{
    if (!averaged && value == floor(value) && fabs(value) < 9.2e18)
        return json_object_new_int64((int64_t)value);
    if (!isfinite(value))
        return NULL; /* JSON has no NaN */
    char text[64];
    value_text(value, true, text, sizeof text);
    return json_object_new_double_s(value, text);
}

static void add(json_object *object, const char *key, json_object *value)
{
    json_object_object_add(object, key, value);
}

static json_object *counters_json(const run_aggregate *a)
{
    json_object *list = json_object_new_array();
    for (size_t k = 0; k < run_aggregate_counter_count(a); k++) {
        const struct aggregate_counter *c = run_aggregate_counter(a, k);
        json_object *o = json_object_new_object();
        add(o, "symbol", json_object_new_string(c->symbol));
        add(o, "unit", json_object_new_string(c->unit));
        add(o, "exactness", json_object_new_string(counter_exactness_name(c->exactness)));
        add(o, "aggregate", json_object_new_string(c->averaged ? "mean" : "sum"));
        add(o, "value",
            number(aggregate_shown(a, k, run_aggregate_total(a, k), run_aggregate_commands(a)),
                   c->averaged));
        json_object_array_add(list, o);
    }
    return list;
}

static json_object *frames_json(const struct summary *s, const struct summary_run *run)
{
    const run_aggregate *a = run->aggregate;
    json_object *list = json_object_new_array();
    for (size_t f = 0; f < s->frame_counter_count; f++) {
        int k = f == 0 ? run->time : run_aggregate_find(a, s->frame_counters[f]);
        struct frame_stats stats;
        if (k < 0 || !frame_stats_of(a, (size_t)k, &stats))
            continue;
        bool averaged = run_aggregate_counter(a, (size_t)k)->averaged;
        json_object *o = json_object_new_object();
        add(o, "symbol", json_object_new_string(run_aggregate_counter(a, (size_t)k)->symbol));
        add(o, "frames", json_object_new_int64((int64_t)stats.frames));
        add(o, "p50", number(stats.p50, averaged));
        add(o, "p90", number(stats.p90, averaged));
        add(o, "p99", number(stats.p99, averaged));
        add(o, "max", number(stats.max, averaged));
        json_object_array_add(list, o);
    }
    return list;
}

static json_object *top_json(const struct summary_run *run)
{
    const run_aggregate *a = run->aggregate;
    json_object *list = json_object_new_array();
    const struct top_command *top;
    size_t n = top_commands_sorted(run->top, &top);
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        add(o, "rank", json_object_new_int64((int64_t)i + 1));
        add(o, "report", json_object_new_string(run_aggregate_report_path(a, top[i].report)));
        add(o, "frame", json_object_new_int64((int64_t)top[i].frame));
        add(o, "sequence", json_object_new_int64((int64_t)top[i].sequence));
        add(o, "kind", json_object_new_string(top[i].kind));
        add(o, "api_name", json_object_new_string(top[i].api_name));
        add(o, "label", json_object_new_string(top[i].label));
        add(o, "pipeline", json_object_new_string(top[i].pipeline));
        add(o, "value", number(top[i].value, false));
        if (run->time >= 0)
            add(o, run_aggregate_counter(a, (size_t)run->time)->symbol,
                number(top[i].shown[SHOWN_TIME], false));
        json_object_array_add(list, o);
    }
    return list;
}

static json_object *groups_json(const run_aggregate *a, enum aggregate_grouping g)
{
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < run_aggregate_group_count(a, g); i++) {
        uint64_t commands = run_aggregate_group_commands(a, g, i);
        json_object *o = json_object_new_object(), *values = json_object_new_object();
        add(o, "name", json_object_new_string(run_aggregate_group_name(a, g, i)));
        add(o, "commands", json_object_new_int64((int64_t)commands));
        for (size_t k = 0; k < run_aggregate_counter_count(a); k++) {
            const struct aggregate_counter *c = run_aggregate_counter(a, k);
            add(values, c->symbol,
                number(aggregate_shown(a, k, run_aggregate_group_sum(a, g, i, k), commands),
                       c->averaged));
        }
        add(o, "values", values);
        json_object_array_add(list, o);
    }
    return list;
}

static json_object *run_json(const struct summary *s, const struct summary_run *run)
{
    const run_aggregate *a = run->aggregate;
    json_object *o = json_object_new_object(), *reports = json_object_new_array();
    add(o, "name", json_object_new_string(run->name));
    for (size_t i = 0; i < run_aggregate_report_count(a); i++) {
        json_object *r = json_object_new_object();
        add(r, "path", json_object_new_string(run_aggregate_report_path(a, i)));
        for (int m = 0; m < META_COUNT; m++)
            add(r, aggregate_metadata_keys[m],
                json_object_new_string(run_aggregate_metadata(a, i, (enum aggregate_metadata)m)));
        json_object_array_add(reports, r);
    }
    add(o, "reports", reports);
    add(o, "commands", json_object_new_int64((int64_t)run_aggregate_commands(a)));
    add(o, "counters", counters_json(a));
    add(o, "frames", frames_json(s, run));
    add(o, "top", top_json(run));
    json_object *groups = json_object_new_object();
    for (int g = 0; g < GROUP_COUNT; g++)
        if (g != GROUP_PIPELINE || run_aggregate_has_pipeline(a))
            add(groups, aggregate_grouping_names[g], groups_json(a, (enum aggregate_grouping)g));
    add(o, "groups", groups);
    return o;
}

static bool print_json(const struct summary *s, FILE *out)
{
    json_object *root = json_object_new_object(), *runs = json_object_new_array();
    add(root, "schema", json_object_new_string("tally summary 1"));
    add(root, "by", json_object_new_string(s->by));
    for (size_t r = 0; r < s->run_count; r++)
        json_object_array_add(runs, run_json(s, &s->runs[r]));
    add(root, "runs", runs);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    bool ok = text && fputs(text, out) >= 0 && fputc('\n', out) != EOF;
    json_object_put(root);
    return ok;
}

/* CSV: one value per row, every row the same columns. */
static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

struct csv_row {
    const char *run, *section, *group, *api_name, *label, *pipeline, *counter, *statistic;
    char rank[24], frame[24], sequence[24], value[64];
};

static void csv_put(FILE *out, const struct csv_row *r)
{
    const char *fields[] = {r->run,      r->section,  r->group,     r->rank,
                            r->frame,    r->sequence, r->api_name,  r->label,
                            r->pipeline, r->counter,  r->statistic, r->value};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        if (i)
            fputc(',', out);
        csv_field(out, fields[i] ? fields[i] : "");
    }
    fputc('\n', out);
}

static void csv_groups(FILE *out, const struct summary_run *run, enum aggregate_grouping g)
{
    const run_aggregate *a = run->aggregate;
    struct csv_row row = {.run = run->name, .section = aggregate_grouping_names[g]};
    for (size_t i = 0; i < run_aggregate_group_count(a, g); i++) {
        uint64_t commands = run_aggregate_group_commands(a, g, i);
        row.group = run_aggregate_group_name(a, g, i);
        row.counter = "commands";
        row.statistic = "count";
        snprintf(row.value, sizeof row.value, "%" PRIu64, commands);
        csv_put(out, &row);
        for (size_t k = 0; k < run_aggregate_counter_count(a); k++) {
            const struct aggregate_counter *c = run_aggregate_counter(a, k);
            row.counter = c->symbol;
            row.statistic = c->averaged ? "mean" : "sum";
            value_text(aggregate_shown(a, k, run_aggregate_group_sum(a, g, i, k), commands),
                       c->averaged, row.value, sizeof row.value);
            csv_put(out, &row);
        }
    }
}

static void csv_run(FILE *out, const struct summary *s, const struct summary_run *run)
{
    const run_aggregate *a = run->aggregate;
    struct csv_row row = {
        .run = run->name, .section = "total", .counter = "commands", .statistic = "count"};
    snprintf(row.value, sizeof row.value, "%" PRIu64, run_aggregate_commands(a));
    csv_put(out, &row);
    for (size_t k = 0; k < run_aggregate_counter_count(a); k++) {
        const struct aggregate_counter *c = run_aggregate_counter(a, k);
        row.counter = c->symbol;
        row.statistic = c->averaged ? "mean" : "sum";
        value_text(aggregate_shown(a, k, run_aggregate_total(a, k), run_aggregate_commands(a)),
                   c->averaged, row.value, sizeof row.value);
        csv_put(out, &row);
    }
    row.section = "frames";
    for (size_t f = 0; f < s->frame_counter_count; f++) {
        int k = f == 0 ? run->time : run_aggregate_find(a, s->frame_counters[f]);
        struct frame_stats stats;
        if (k < 0 || !frame_stats_of(a, (size_t)k, &stats))
            continue;
        bool averaged = run_aggregate_counter(a, (size_t)k)->averaged;
        row.counter = run_aggregate_counter(a, (size_t)k)->symbol;
        const char *names[] = {"frames", "p50", "p90", "p99", "max"};
        double values[] = {(double)stats.frames, stats.p50, stats.p90, stats.p99, stats.max};
        for (size_t v = 0; v < 5; v++) {
            row.statistic = names[v];
            value_text(values[v], v > 0 && averaged, row.value, sizeof row.value);
            csv_put(out, &row);
        }
    }
    const struct top_command *top;
    size_t n = top_commands_sorted(run->top, &top);
    for (size_t i = 0; i < n; i++) {
        struct csv_row t = {.run = run->name,
                            .section = "top",
                            .api_name = top[i].api_name,
                            .label = top[i].label,
                            .pipeline = top[i].pipeline,
                            .counter = s->by,
                            .statistic = "value"};
        snprintf(t.rank, sizeof t.rank, "%zu", i + 1);
        snprintf(t.frame, sizeof t.frame, "%" PRIu64, top[i].frame);
        snprintf(t.sequence, sizeof t.sequence, "%" PRIu64, top[i].sequence);
        value_text(top[i].value, false, t.value, sizeof t.value);
        csv_put(out, &t);
    }
    for (int g = 0; g < GROUP_COUNT; g++)
        if (g != GROUP_PIPELINE || run_aggregate_has_pipeline(a))
            csv_groups(out, run, (enum aggregate_grouping)g);
}

bool summary_print_data(const struct summary *s, FILE *out)
{
    if (s->format == SUMMARY_JSON)
        return print_json(s, out);
    fputs("run,section,group,rank,frame,sequence,api_name,label,pipeline,counter,statistic,value\n",
          out);
    for (size_t r = 0; r < s->run_count; r++)
        csv_run(out, s, &s->runs[r]);
    return !ferror(out);
}
