/*
 * tally summary REPORT...: what a run's reports add up to, in one pass
 * over each: totals, frames and their percentiles, the most expensive
 * commands, and totals by label, API command and pipeline (docs/summary.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frame_stats.h"
#include "report_reader.h"
#include "summary.h"
#include "tally_cli.h"

static void usage(FILE *out)
{
    fputs("usage: tally summary [OPTIONS] REPORT...\n"
          "\n"
          "  --top N          the N most expensive commands, and N names per group (10)\n"
          "  --by COUNTER     rank commands and groups by COUNTER (GpuTime, else duration_ns)\n"
          "  --counter X      per-frame percentiles of X too (repeatable)\n"
          "  --format F       table (default), markdown, json or csv\n"
          "  --side-by-side   one column per report instead of their sum\n"
          "\n"
          "REPORT: a CSV (with its .meta.csv beside it) or JSON report of tally run.\n"
          "Exit status: 0, or 2 for bad arguments or input.\n",
          out);
}

/* How to read one counter's value off a report's rows. */
struct row_pick {
    int index;     /* the report's counter, or -1 */
    bool duration; /* the duration_ns column, standing in for GpuTime */
};

static struct row_pick pick(const report_reader *r, const char *symbol)
{
    struct row_pick p = {.index = -1};
    for (size_t i = 0; i < report_reader_counter_count(r); i++)
        if (strcmp(report_reader_counter(r, i)->symbol, symbol) == 0)
            p.index = (int)i;
    p.duration = p.index < 0 && strcmp(symbol, aggregate_duration_counter) == 0;
    return p;
}

static double picked(const struct row_pick *p, const struct report_row *row)
{
    struct counter_value v;
    if (p->index >= 0)
        return counter_value_double(&row->values[p->index]);
    if (p->duration && counter_value_parse(row->identity[REPORT_DURATION_NS], &v))
        return counter_value_double(&v);
    return NAN;
}

struct options {
    struct summary summary;
    bool side_by_side;
    char **reports;
    size_t report_count;
};

static bool parse_count(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v > 100000)
        return false;
    *out = (size_t)v;
    return true;
}

static bool parse_format(const char *text, enum summary_format *out)
{
    static const char *const names[] = {"table", "markdown", "json", "csv"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = (enum summary_format)i;
            return true;
        }
    }
    return false;
}

/* 0: parsed; 1: help was asked for; 2: a usage error, said. */
static int parse_options(int argc, char **argv, struct options *o)
{
    o->summary.top = 10;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes_value = strcmp(a, "--top") == 0 || strcmp(a, "--by") == 0 ||
                           strcmp(a, "--counter") == 0 || strcmp(a, "--format") == 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (takes_value && !value) {
            fprintf(stderr, "tally summary: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--top") == 0) {
            if (!parse_count(value, &o->summary.top)) {
                fprintf(stderr, "tally summary: --top %s: not a count up to 100000\n", value);
                return 2;
            }
        } else if (strcmp(a, "--by") == 0) {
            o->summary.by = value;
        } else if (strcmp(a, "--counter") == 0) {
            if (o->summary.frame_counter_count == 15) {
                fprintf(stderr, "tally summary: at most 15 --counter\n");
                return 2;
            }
            /* slot 0 is the time counter's, filled later */
            o->summary.frame_counters[++o->summary.frame_counter_count] = value;
        } else if (strcmp(a, "--format") == 0) {
            if (!parse_format(value, &o->summary.format)) {
                fprintf(stderr, "tally summary: --format %s: table, markdown, json or csv\n",
                        value);
                return 2;
            }
        } else if (strcmp(a, "--side-by-side") == 0) {
            o->side_by_side = true;
            continue;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tally summary: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else {
            o->reports[o->report_count++] = argv[i];
            continue;
        }
        i++;
    }
    if (o->report_count == 0) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* The run's name: its reports' paths joined. */
static char *run_name(char **paths, size_t count)
{
    size_t length = 1;
    for (size_t i = 0; i < count; i++)
        length += strlen(paths[i]) + 3;
    char *name = malloc(length);
    if (!name)
        return NULL;
    name[0] = '\0';
    for (size_t i = 0; i < count; i++) {
        if (i)
            strcat(name, " + ");
        strcat(name, paths[i]);
    }
    return name;
}

/* Reads a run's reports into its aggregate and top commands. */
static bool read_run(struct summary *s, struct summary_run *run, report_reader **readers,
                     size_t count, char *error, size_t size)
{
    run->aggregate = run_aggregate_create();
    run->top = top_commands_create(s->top);
    if (!run->aggregate || !run->top) {
        snprintf(error, size, "out of memory");
        return false;
    }
    int *numbers = calloc(count, sizeof *numbers);
    if (!numbers) {
        snprintf(error, size, "out of memory");
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < count; i++)
        ok = (numbers[i] = run_aggregate_add_report(run->aggregate, readers[i], error, size)) >= 0;
    /* Per frame: the time, the ranking counter and the --counter ones. */
    size_t known = run_aggregate_counter_count(run->aggregate);
    bool *tracked = calloc(known ? known : 1, sizeof *tracked);
    ok = ok && tracked;
    for (size_t k = 0; ok && k < known; k++) {
        const char *symbol = run_aggregate_counter(run->aggregate, k)->symbol;
        tracked[k] = strcmp(symbol, "GpuTime") == 0 || (s->by && strcmp(symbol, s->by) == 0);
        for (size_t c = 1; c <= s->frame_counter_count; c++)
            tracked[k] |= strcmp(symbol, s->frame_counters[c]) == 0;
    }
    ok = ok && run_aggregate_begin(run->aggregate, tracked, error, size);
    free(tracked);
    if (ok) {
        run->time = run_aggregate_find(run->aggregate, "GpuTime");
        if (run->time < 0)
            run->time = run_aggregate_find(run->aggregate, aggregate_duration_counter);
        run->by = run_aggregate_find(run->aggregate, s->by);
    }
    for (size_t i = 0; ok && i < count; i++) {
        struct row_pick by = pick(readers[i], s->by);
        struct row_pick time =
            pick(readers[i], run_aggregate_counter(run->aggregate, (size_t)run->time)->symbol);
        struct report_row row;
        int got;
        while (ok && (got = report_reader_next(readers[i], &row, error, size)) > 0) {
            ok = run_aggregate_add_row(run->aggregate, numbers[i], &row, error, size);
            double shown[TOP_SHOWN] = {[SHOWN_TIME] = picked(&time, &row)};
            if (ok && !top_commands_offer(run->top, picked(&by, &row), shown, (size_t)numbers[i],
                                          &row, 0)) {
                snprintf(error, size, "out of memory");
                ok = false;
            }
        }
        ok = ok && got == 0 && run_aggregate_end_report(run->aggregate, numbers[i], readers[i]);
    }
    if (ok)
        run_aggregate_end(run->aggregate);
    free(numbers);
    return ok;
}

/* Every counter asked for by name must be some run's. */
static bool check_named(const struct summary *s, const char *symbol, const char *option)
{
    for (size_t r = 0; r < s->run_count; r++)
        if (run_aggregate_find(s->runs[r].aggregate, symbol) >= 0)
            return true;
    fprintf(stderr, "tally summary: %s %s: no report has that counter\n", option, symbol);
    return false;
}

static void free_runs(struct summary *s)
{
    for (size_t r = 0; r < s->run_count; r++) {
        free(s->runs[r].name);
        run_aggregate_free(s->runs[r].aggregate);
        top_commands_free(s->runs[r].top);
    }
    free(s->runs);
}

static int summarize(struct options *o, report_reader **readers)
{
    struct summary *s = &o->summary;
    s->run_count = o->side_by_side ? o->report_count : 1;
    s->runs = calloc(s->run_count, sizeof *s->runs);
    if (!s->runs) {
        fprintf(stderr, "tally summary: out of memory\n");
        return 2;
    }
    /* The default ranking: GpuTime where any report has it. */
    bool any_gpu_time = false;
    for (size_t i = 0; i < o->report_count; i++)
        any_gpu_time |= pick(readers[i], "GpuTime").index >= 0;
    const char *time = any_gpu_time ? "GpuTime" : aggregate_duration_counter;
    if (!s->by)
        s->by = time;
    s->frame_counters[0] = time;
    int status = 0;
    char error[512] = "";
    for (size_t r = 0; r < s->run_count && status == 0; r++) {
        size_t first = o->side_by_side ? r : 0, count = o->side_by_side ? 1 : o->report_count;
        s->runs[r].name = run_name(o->reports + first, count);
        if (!s->runs[r].name ||
            !read_run(s, &s->runs[r], readers + first, count, error, sizeof error)) {
            fprintf(stderr, "tally summary: %s\n", error[0] ? error : "out of memory");
            status = 2;
        }
    }
    if (status == 0 && !check_named(s, s->by, "--by"))
        status = 2;
    for (size_t c = 1; status == 0 && c <= s->frame_counter_count; c++)
        if (!check_named(s, s->frame_counters[c], "--counter"))
            status = 2;
    s->frame_counter_count++; /* the time's slot */
    if (status == 0 && (!summary_print(s, stdout) || fflush(stdout) != 0)) {
        fprintf(stderr, "tally summary: cannot write the summary: %s\n", strerror(errno));
        status = 2;
    }
    free_runs(s);
    return status;
}

int tally_cli_summary(int argc, char **argv)
{
    struct options o = {0};
    o.reports = calloc((size_t)argc, sizeof *o.reports);
    if (!o.reports)
        return 2;
    int parsed = parse_options(argc, argv, &o);
    if (parsed != 0) {
        free(o.reports);
        return parsed == 1 ? 0 : 2;
    }
    report_reader **readers = calloc(o.report_count, sizeof *readers);
    int status = readers ? 0 : 2;
    char error[512];
    for (size_t i = 0; status == 0 && i < o.report_count; i++) {
        readers[i] = report_reader_open(o.reports[i], error, sizeof error);
        if (!readers[i]) {
            fprintf(stderr, "tally summary: %s\n", error);
            status = 2;
        }
    }
    if (status == 0)
        status = summarize(&o, readers);
    for (size_t i = 0; readers && i < o.report_count; i++)
        report_reader_close(readers[i]);
    free(readers);
    free(o.reports);
    return status;
}
