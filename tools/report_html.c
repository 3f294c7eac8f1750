/*
 * tally report --html OUT.html [--base BASE] REPORT [TRACE]: one
 * self-contained page of a run, or of two runs overlaid (docs/report.md).
 * This file reads the runs and decides what is plotted; report_html_page.c
 * writes the page.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "report_html.h"
#include "run_digest.h"
#include "tally_cli.h"

static void usage(FILE *out)
{
    fputs("usage: tally report --html OUT.html [OPTIONS] REPORT [TRACE]\n"
          "       tally report --html OUT.html [OPTIONS] --base BASE REPORT\n"
          "\n"
          "  --html FILE      write the page to FILE: plots, top commands, metadata;\n"
          "                   self-contained, it opens offline\n"
          "  --base BASE      overlay BASE's run, and list the biggest movers\n"
          "  --counter X      plot X per frame (repeatable; default GpuTime and two\n"
          "                   exact counters)\n"
          "  --top N          commands in the table (20)\n"
          "\n"
          "REPORT, BASE: a CSV (with its .meta.csv beside it) or JSON report of tally run.\n"
          "TRACE: the run's trace, linked from the page.\n"
          "Exit status: 0, or 2 for bad arguments or input.\n",
          out);
}

struct options {
    const char *html, *base, *report, *trace;
    const char *counters[HTML_MAX_PLOTTED];
    size_t counter_count;
    size_t top;
};

/* 0: parsed; 1: help was asked for; 2: a usage error, said. */
static int parse_options(int argc, char **argv, struct options *o)
{
    o->top = 20;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes_value = strcmp(a, "--html") == 0 || strcmp(a, "--base") == 0 ||
                           strcmp(a, "--counter") == 0 || strcmp(a, "--top") == 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (takes_value && !value) {
            fprintf(stderr, "tally report: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--html") == 0) {
            o->html = value;
        } else if (strcmp(a, "--base") == 0) {
            o->base = value;
        } else if (strcmp(a, "--counter") == 0) {
            /* slot 0 of the plotted counters is the time's */
            if (o->counter_count == HTML_MAX_PLOTTED - 1) {
                fprintf(stderr, "tally report: at most %d --counter\n", HTML_MAX_PLOTTED - 1);
                return 2;
            }
            o->counters[o->counter_count++] = value;
        } else if (strcmp(a, "--top") == 0) {
            char *end;
            errno = 0;
            unsigned long n = strtoul(value, &end, 10);
            if (errno || end == value || *end || value[0] == '-' || n > 1000) {
                fprintf(stderr, "tally report: --top %s: a count up to 1000\n", value);
                return 2;
            }
            o->top = n;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tally report: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (!o->report) {
            o->report = a;
            continue;
        } else if (!o->trace) {
            o->trace = a;
            continue;
        } else {
            fprintf(stderr, "tally report: one REPORT and at most one TRACE\n");
            return 2;
        }
        i++;
    }
    if (!o->html || !o->report) {
        fprintf(stderr, "tally report: %s\n",
                !o->html ? "--html OUT.html is needed" : "no report given");
        usage(stderr);
        return 2;
    }
    if (o->base && o->trace) {
        fprintf(stderr, "tally report: a TRACE goes with one run, not with --base\n");
        return 2;
    }
    return 0;
}

static int reader_counter(const report_reader *r, const char *symbol)
{
    for (size_t i = 0; i < report_reader_counter_count(r); i++)
        if (strcmp(report_reader_counter(r, i)->symbol, symbol) == 0)
            return (int)i;
    return -1;
}

/* A row's value of a counter, read by the report's own index; duration_ns
 * stands in for GpuTime in a report without it, as in tally summary. */
static double row_value(int index, const struct report_row *row)
{
    struct counter_value v;
    if (index >= 0)
        return counter_value_double(&row->values[index]);
    if (counter_value_parse(row->identity[REPORT_DURATION_NS], &v))
        return counter_value_double(&v);
    return NAN;
}

/* The counters plotted: the time first, then those asked for or, by
 * default, two exact counters that say how much work a frame gave. */
static bool choose_plotted(struct html_report *h, const struct options *o)
{
    const report_reader *r = h->runs[h->run_count - 1].reader;
    h->plotted[0] = reader_counter(r, "GpuTime") >= 0 ? "GpuTime" : aggregate_duration_counter;
    h->plotted_count = 1;
    for (size_t c = 0; c < o->counter_count; c++) {
        if (reader_counter(r, o->counters[c]) < 0) {
            fprintf(stderr, "tally report: --counter %s: %s has no such counter\n", o->counters[c],
                    report_reader_path(r));
            return false;
        }
        bool taken = false;
        for (size_t p = 0; p < h->plotted_count; p++)
            taken |= strcmp(h->plotted[p], o->counters[c]) == 0;
        if (!taken)
            h->plotted[h->plotted_count++] = o->counters[c];
    }
    if (o->counter_count)
        return true;
    static const char *const preferred[] = {"DrawCalls", "IaVertices", "IaPrimitives",
                                            "FsInvocations", "CsInvocations"};
    for (size_t p = 0; p < sizeof preferred / sizeof *preferred && h->plotted_count < 3; p++) {
        int i = reader_counter(r, preferred[p]);
        if (i >= 0 && report_reader_counter(r, (size_t)i)->exactness == EXACTNESS_EXACT)
            h->plotted[h->plotted_count++] = preferred[p];
    }
    for (size_t i = 0; i < report_reader_counter_count(r) && h->plotted_count < 3; i++) {
        const struct report_counter *c = report_reader_counter(r, i);
        bool taken = false;
        for (size_t p = 0; p < h->plotted_count; p++)
            taken |= strcmp(h->plotted[p], c->symbol) == 0;
        if (!taken && c->exactness == EXACTNESS_EXACT)
            h->plotted[h->plotted_count++] = c->symbol;
    }
    return true;
}

/* Reads a run's rows: its per-frame sums of the plotted counters, its
 * totals and groups, and its top commands by time. */
static bool read_run(const struct html_report *h, struct html_run *run, char *error, size_t size)
{
    run->aggregate = run_aggregate_create();
    run->top = top_commands_create(h->top);
    if (!run->aggregate || !run->top) {
        snprintf(error, size, "out of memory");
        return false;
    }
    int number = run_aggregate_add_report(run->aggregate, run->reader, error, size);
    if (number < 0)
        return false;
    size_t known = run_aggregate_counter_count(run->aggregate);
    bool *tracked = calloc(known ? known : 1, sizeof *tracked);
    if (!tracked) {
        snprintf(error, size, "out of memory");
        return false;
    }
    for (size_t p = 0; p < h->plotted_count; p++) {
        int k = run_aggregate_find(run->aggregate, h->plotted[p]);
        if (k >= 0)
            tracked[k] = true;
    }
    bool ok = run_aggregate_begin(run->aggregate, tracked, error, size);
    free(tracked);
    int time = reader_counter(run->reader, h->plotted[0]);
    int shown[TOP_SHOWN];
    for (size_t s = 0; s < TOP_SHOWN; s++)
        shown[s] = s + 1 < h->plotted_count ? reader_counter(run->reader, h->plotted[s + 1]) : -1;
    struct report_row row;
    int got = 0;
    while (ok && (got = report_reader_next(run->reader, &row, error, size)) > 0) {
        ok = run_aggregate_add_row(run->aggregate, number, &row, error, size);
        double values[TOP_SHOWN];
        for (size_t s = 0; s < TOP_SHOWN; s++)
            values[s] = shown[s] >= 0 ? counter_value_double(&row.values[shown[s]]) : NAN;
        if (ok && !top_commands_offer(run->top, row_value(time, &row), values, 0, &row, 0)) {
            snprintf(error, size, "out of memory");
            ok = false;
        }
    }
    ok = ok && got == 0 && run_aggregate_end_report(run->aggregate, number, run->reader);
    if (ok)
        run_aggregate_end(run->aggregate);
    return ok;
}

/* diff mode: the two runs' digests compared under tally diff's default
 * rules, for the biggest movers. */
static bool compare_runs(struct html_report *h, struct run_digest **digests, char *error,
                         size_t size)
{
    struct gate_rules rules;
    gate_rules_init(&rules, true, GATE_DEFAULT_TOLERANCE_PERCENT);
    digests[0] = run_digest_of(h->runs[0].aggregate);
    digests[1] = run_digest_of(h->runs[1].aggregate);
    bool ok =
        digests[0] && digests[1] && run_compare(digests[0], digests[1], &rules, &h->comparison);
    gate_rules_free(&rules);
    if (!ok)
        snprintf(error, size, "out of memory");
    h->compared = ok;
    return ok;
}

static bool write_page(const struct html_report *h, const char *path, char *error, size_t size)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(error, size, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = html_report_write(h, out);
    ok = !ferror(out) && ok;
    if (fclose(out) != 0)
        ok = false;
    if (!ok) {
        snprintf(error, size, "%s: cannot write: %s", path, strerror(errno));
        remove(path);
    }
    return ok;
}

static int report(const struct options *o)
{
    struct html_report h = {.top = o->top, .trace = o->trace};
    const char *paths[2] = {o->base ? o->base : o->report, o->report};
    h.run_count = o->base ? 2 : 1;
    char error[600] = "";
    bool ok = true;
    for (size_t r = 0; ok && r < h.run_count; r++) {
        h.runs[r].path = paths[r];
        ok = (h.runs[r].reader = report_reader_open(paths[r], error, sizeof error)) != NULL;
    }
    /* choose_plotted says its own error */
    bool said = ok && !choose_plotted(&h, o);
    ok = ok && !said;
    for (size_t r = 0; ok && r < h.run_count; r++)
        ok = read_run(&h, &h.runs[r], error, sizeof error);
    struct run_digest *digests[2] = {NULL, NULL};
    if (ok && h.run_count == 2)
        ok = compare_runs(&h, digests, error, sizeof error);
    ok = ok && write_page(&h, o->html, error, sizeof error);
    if (!ok && !said)
        fprintf(stderr, "tally report: %s\n", error);
    if (h.compared)
        run_comparison_free(&h.comparison);
    for (int d = 0; d < 2; d++)
        run_digest_free(digests[d]);
    for (size_t r = 0; r < h.run_count; r++) {
        report_reader_close(h.runs[r].reader);
        run_aggregate_free(h.runs[r].aggregate);
        top_commands_free(h.runs[r].top);
    }
    return ok ? 0 : 2;
}

int tally_cli_report(int argc, char **argv)
{
    struct options o = {0};
    int parsed = parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed == 1 ? 0 : 2;
    return report(&o);
}
