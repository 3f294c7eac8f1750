/*
 * tally report --html's model, between reading the runs (report_html.c)
 * and writing the page (report_html_page.c): one run, or a base and a new
 * run overlaid, each reduced to per-frame sums of the plotted counters and
 * its top commands, so the page's size is bounded whatever the rows.
 */
#ifndef TALLY_REPORT_HTML_H
#define TALLY_REPORT_HTML_H

#include <stdio.h>

#include "report_reader.h"
#include "run_aggregate.h"
#include "run_compare.h"
#include "top_commands.h"

enum { HTML_MAX_PLOTTED = 8 };

struct html_run {
    const char *path;
    report_reader *reader; /* kept open for its metadata */
    run_aggregate *aggregate;
    top_commands *top; /* by the time, plotted[0] */
};

struct html_report {
    struct html_run runs[2]; /* one; or base then new */
    size_t run_count;
    /* The counters plotted per frame; [0] is the time the commands rank by.
     * Up to TOP_SHOWN of the rest are shown beside each top command. */
    const char *plotted[HTML_MAX_PLOTTED];
    size_t plotted_count;
    size_t top;        /* commands in the table */
    const char *trace; /* the run's trace, linked; or NULL */
    /* diff mode: the two runs compared, for the biggest movers */
    struct run_comparison comparison;
    bool compared;
};

/* Writes the whole page; false when writing failed. */
bool html_report_write(const struct html_report *report, FILE *out);

#endif
