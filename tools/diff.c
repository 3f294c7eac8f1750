/*
 * tally diff: compares two runs, gates on the rules, and writes and reads
 * baselines (docs/diff.md).
 *   tally diff [OPTIONS] BASE NEW             two reports (or baselines)
 *   tally diff [OPTIONS] --baseline FILE REPORT...
 *   tally diff --write-baseline FILE REPORT...
 * Exit status: 0 when no rule broke, 1 when one did, 2 for bad input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "baseline.h"
#include "diff.h"
#include "report_reader.h"
#include "tally_cli.h"

static void usage(FILE *out)
{
    fputs("usage: tally diff [OPTIONS] BASE NEW\n"
          "       tally diff [OPTIONS] --baseline FILE REPORT...\n"
          "       tally diff --write-baseline FILE REPORT...\n"
          "\n"
          "  --fail-on RULE         fail when RULE breaks, e.g. 'IaVertices>0%',\n"
          "                         'GpuTime>+5%', 'label:FsInvocations<-10%' (repeatable)\n"
          "  --tolerance PERCENT    the default rule's tolerance for modeled counters (1)\n"
          "  --no-default-rules     gate only on the --fail-on rules\n"
          "  --top N                biggest movers per counter (5)\n"
          "  --format F             table (default), markdown or json\n"
          "  --junit FILE           also write the checks as JUnit XML\n"
          "  --baseline FILE        compare the reports with a baseline file\n"
          "  --write-baseline FILE  write the reports' baseline (with --baseline too: gate\n"
          "                         on the old one and write the new one)\n"
          "\n"
          "Defaults: exact counters and command counts must not change; conditional,\n"
          "modeled and unknown ones may move by the tolerance; measured ones never gate.\n"
          "Exit status: 0 passed, 1 a rule broke, 2 bad arguments or input.\n",
          out);
}

struct options {
    struct gate_rules rules;
    bool no_defaults;
    double tolerance;
    size_t top;
    enum diff_format format;
    const char *junit, *baseline, *write_baseline;
    const char **paths;
    size_t path_count;
    struct gate_rule *user_rules;
    size_t user_rule_count;
};

static bool parse_number(const char *text, double *out)
{
    char *end;
    *out = strtod(text, &end);
    return end != text && (*end == '\0' || (end[0] == '%' && end[1] == '\0')) && *out >= 0 &&
           *out < 1e12;
}

/* 0 parsed, 1 help, 2 usage error (said). */
static int parse_options(int argc, char **argv, struct options *o)
{
    o->tolerance = GATE_DEFAULT_TOLERANCE_PERCENT;
    o->top = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        static const char *const valued[] = {"--fail-on",       "--tolerance", "--top",
                                             "--format",        "--junit",     "--baseline",
                                             "--write-baseline"};
        bool takes_value = false;
        for (size_t v = 0; v < sizeof valued / sizeof *valued; v++)
            takes_value |= strcmp(a, valued[v]) == 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (takes_value && !value) {
            fprintf(stderr, "tally diff: %s needs a value\n", a);
            return 2;
        }
        char error[300];
        double number;
        if (strcmp(a, "--fail-on") == 0) {
            struct gate_rule rule;
            if (!gate_rule_parse(value, &rule, error, sizeof error)) {
                fprintf(stderr, "tally diff: %s\n", error);
                return 2;
            }
            struct gate_rule *rules =
                realloc(o->user_rules, (o->user_rule_count + 1) * sizeof *rules);
            if (!rules)
                return 2;
            o->user_rules = rules;
            rules[o->user_rule_count++] = rule;
        } else if (strcmp(a, "--tolerance") == 0) {
            if (!parse_number(value, &o->tolerance)) {
                fprintf(stderr, "tally diff: --tolerance %s: a percentage, e.g. 1 or 2.5\n", value);
                return 2;
            }
        } else if (strcmp(a, "--top") == 0) {
            if (!parse_number(value, &number) || number != (double)(size_t)number ||
                number > 10000) {
                fprintf(stderr, "tally diff: --top %s: a count up to 10000\n", value);
                return 2;
            }
            o->top = (size_t)number;
        } else if (strcmp(a, "--format") == 0) {
            if (strcmp(value, "table") == 0)
                o->format = DIFF_TABLE;
            else if (strcmp(value, "markdown") == 0)
                o->format = DIFF_MARKDOWN;
            else if (strcmp(value, "json") == 0)
                o->format = DIFF_JSON;
            else {
                fprintf(stderr, "tally diff: --format %s: table, markdown or json\n", value);
                return 2;
            }
        } else if (strcmp(a, "--junit") == 0) {
            o->junit = value;
        } else if (strcmp(a, "--baseline") == 0) {
            o->baseline = value;
        } else if (strcmp(a, "--write-baseline") == 0) {
            o->write_baseline = value;
        } else if (strcmp(a, "--no-default-rules") == 0) {
            o->no_defaults = true;
            continue;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tally diff: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else {
            o->paths[o->path_count++] = a;
            continue;
        }
        i++;
    }
    bool comparing = !o->write_baseline || o->baseline;
    if (o->path_count == 0 || (comparing && !o->baseline && o->path_count != 2)) {
        fprintf(stderr, o->path_count == 0 ? "tally diff: no report given\n"
                                           : "tally diff: give two runs, BASE and NEW, or "
                                             "--baseline FILE and the reports\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

/* The paths joined, for a side's name. */
static char *joined(const char **paths, size_t count)
{
    size_t length = 1;
    for (size_t i = 0; i < count; i++)
        length += strlen(paths[i]) + 3;
    char *text = calloc(1, length);
    for (size_t i = 0; text && i < count; i++) {
        if (i)
            strcat(text, " + ");
        strcat(text, paths[i]);
    }
    return text;
}

/* Reads reports into an aggregate (all summed); with two readers and a
 * second aggregate, matches their commands instead. */
static bool read_reports(report_reader **readers, size_t count, run_aggregate *aggregate,
                         char *error, size_t size)
{
    int *numbers = calloc(count, sizeof *numbers);
    bool ok = numbers != NULL;
    for (size_t i = 0; ok && i < count; i++)
        ok = (numbers[i] = run_aggregate_add_report(aggregate, readers[i], error, size)) >= 0;
    ok = ok && run_aggregate_begin(aggregate, NULL, error, size);
    for (size_t i = 0; ok && i < count; i++) {
        struct report_row row;
        int got;
        while (ok && (got = report_reader_next(readers[i], &row, error, size)) > 0)
            ok = run_aggregate_add_row(aggregate, numbers[i], &row, error, size);
        ok = ok && got == 0 && run_aggregate_end_report(aggregate, numbers[i], readers[i]);
    }
    if (ok)
        run_aggregate_end(aggregate);
    free(numbers);
    return ok;
}

static report_reader **open_reports(const char **paths, size_t count, char *error, size_t size)
{
    report_reader **readers = calloc(count, sizeof *readers);
    for (size_t i = 0; readers && i < count; i++) {
        readers[i] = report_reader_open(paths[i], error, size);
        if (!readers[i]) {
            for (size_t j = 0; j < i; j++)
                report_reader_close(readers[j]);
            free(readers);
            return NULL;
        }
    }
    return readers;
}

static void close_reports(report_reader **readers, size_t count)
{
    for (size_t i = 0; readers && i < count; i++)
        report_reader_close(readers[i]);
    free(readers);
}

/* A side from reports summed, or from a baseline file. */
static bool load_side(struct diff_side *side, const char **paths, size_t count, char *error,
                      size_t size)
{
    side->name = joined(paths, count);
    if (count == 1 && baseline_is(paths[0])) {
        side->baseline = true;
        side->digest = baseline_read(paths[0], error, size);
        return side->digest != NULL;
    }
    report_reader **readers = open_reports(paths, count, error, size);
    run_aggregate *aggregate = readers ? run_aggregate_create() : NULL;
    bool ok = aggregate && read_reports(readers, count, aggregate, error, size);
    if (ok && !(side->digest = run_digest_of(aggregate))) {
        snprintf(error, size, "out of memory");
        ok = false;
    }
    run_aggregate_free(aggregate);
    close_reports(readers, count);
    return ok;
}

/* Two reports read together, their commands matched. */
static bool load_matched(struct diff *d, const char *base, const char *new_path, char *error,
                         size_t size)
{
    const char *paths[] = {base, new_path};
    report_reader **readers = open_reports(paths, 2, error, size);
    run_aggregate *aggregates[2] = {run_aggregate_create(), run_aggregate_create()};
    int numbers[2];
    bool ok = readers && aggregates[0] && aggregates[1];
    for (int s = 0; ok && s < 2; s++)
        ok = (numbers[s] = run_aggregate_add_report(aggregates[s], readers[s], error, size)) >= 0 &&
             run_aggregate_begin(aggregates[s], NULL, error, size);
    if (ok) {
        ok = command_match_run(&d->matching, d->top, readers[0], aggregates[0], numbers[0],
                               readers[1], aggregates[1], numbers[1], error, size);
        d->matched = true; /* what it holds is freed with the diff */
    }
    struct diff_side *sides[] = {&d->base, &d->new_run};
    for (int s = 0; ok && s < 2; s++) {
        ok = run_aggregate_end_report(aggregates[s], numbers[s], readers[s]);
        run_aggregate_end(aggregates[s]);
        sides[s]->name = strdup(paths[s]);
        sides[s]->digest = ok ? run_digest_of(aggregates[s]) : NULL;
        if (!sides[s]->digest || !sides[s]->name) {
            snprintf(error, size, "out of memory");
            ok = false;
        }
    }
    for (int s = 0; s < 2; s++)
        run_aggregate_free(aggregates[s]);
    close_reports(readers, 2);
    return ok;
}

static int write_baseline(const struct options *o, char *error, size_t size)
{
    struct diff_side side = {0};
    bool ok = load_side(&side, o->paths, o->path_count, error, size) &&
              baseline_write(side.digest, o->write_baseline, error, size);
    if (ok)
        fprintf(stderr, "tally diff: baseline of %s written to %s (%zu rows)\n", side.name,
                o->write_baseline, side.digest->row_count);
    free(side.name);
    run_digest_free(side.digest);
    return ok ? 0 : 2;
}

static int compare(struct options *o, char *error, size_t size)
{
    struct diff d = {.rules = &o->rules, .top = o->top};
    bool ok;
    if (o->baseline) {
        ok = load_side(&d.base, &o->baseline, 1, error, size) &&
             load_side(&d.new_run, o->paths, o->path_count, error, size);
    } else if (!baseline_is(o->paths[0]) && !baseline_is(o->paths[1])) {
        ok = load_matched(&d, o->paths[0], o->paths[1], error, size);
    } else {
        ok = load_side(&d.base, o->paths, 1, error, size) &&
             load_side(&d.new_run, o->paths + 1, 1, error, size);
    }
    if (ok && !run_compare(d.base.digest, d.new_run.digest, d.rules, &d.comparison)) {
        snprintf(error, size, "out of memory");
        ok = false;
    }
    /* --baseline with --write-baseline: the reports' new baseline too */
    if (ok && o->write_baseline) {
        ok = baseline_write(d.new_run.digest, o->write_baseline, error, size);
        if (ok)
            fprintf(stderr, "tally diff: baseline of %s written to %s (%zu rows)\n", d.new_run.name,
                    o->write_baseline, d.new_run.digest->row_count);
    }
    int status = 2;
    if (ok) {
        bool printed = o->format == DIFF_JSON
                           ? diff_print_json(&d, stdout)
                           : diff_print_text(&d, stdout, o->format == DIFF_MARKDOWN);
        if (!printed || fflush(stdout) != 0)
            snprintf(error, size, "cannot write the comparison: %s", strerror(errno));
        else if (o->junit && !diff_write_junit(&d, o->junit, error, size))
            printed = false;
        if (printed)
            status = d.comparison.broken_count ? 1 : 0;
    }
    if (d.matched)
        command_matching_free(&d.matching);
    run_comparison_free(&d.comparison);
    free(d.base.name);
    free(d.new_run.name);
    run_digest_free(d.base.digest);
    run_digest_free(d.new_run.digest);
    return status;
}

int tally_cli_diff(int argc, char **argv)
{
    struct options o = {0};
    o.paths = calloc((size_t)argc, sizeof *o.paths);
    if (!o.paths)
        return 2;
    int parsed = parse_options(argc, argv, &o);
    int status = parsed == 1 ? 0 : 2;
    char error[600] = "";
    if (parsed == 0) {
        gate_rules_init(&o.rules, !o.no_defaults, o.tolerance);
        bool ok = true;
        for (size_t i = 0; ok && i < o.user_rule_count; i++)
            ok = gate_rules_add(&o.rules, &o.user_rules[i]);
        status = ok ? 0 : 2;
        if (ok && o.write_baseline && !o.baseline) {
            status = write_baseline(&o, error, sizeof error);
        } else if (ok) {
            status = compare(&o, error, sizeof error);
        }
        if (status == 2)
            fprintf(stderr, "tally diff: %s\n", error[0] ? error : "out of memory");
        gate_rules_free(&o.rules);
    }
    free(o.user_rules);
    free(o.paths);
    return status;
}
