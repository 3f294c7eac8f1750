/*
 * Writes tally report --html's page: one file with its CSS, its plots (as
 * inline SVG) and its small sorting script inside, so that it opens from
 * disk with no network. Every text that came from a report goes through
 * html_escape.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "html_svg.h"
#include "report_html.h"
#include "value_text.h"

/* Points per plot at most: beyond it, each point is the largest of a
 * bucket of frames, which keeps the page small and peaks visible. */
enum { HTML_PLOT_POINTS = 1000, HTML_MOVERS = 10 };

static const char *const run_colours[2] = {"#2b6cb0", "#d0542c"};

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1a202c;max-width:1100px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px}h3{font-size:15px;margin:16px 0 4px}"
    "table{border-collapse:collapse;margin:8px 0}"
    "th,td{border:1px solid #cbd5e0;padding:3px 8px;text-align:left}"
    "td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "th{background:#edf2f7}table.sortable th{cursor:pointer}"
    "th[aria-sort=ascending]::after{content:' \\25B2'}"
    "th[aria-sort=descending]::after{content:' \\25BC'}"
    "svg.plot{width:100%;height:auto;background:#fafafa;border:1px solid #e2e8f0}"
    "svg.plot text{font-size:12px;fill:#4a5568}svg.plot .grid{stroke:#e2e8f0}"
    ".key{display:inline-block;width:14px;height:4px;margin:0 4px 3px 12px}";

/* Sorts a table.sortable on a header click, numerically where cells carry
 * data-v; and once on load by the column marked data-initial, so that the
 * DOM says the script ran (aria-sort). */
static const char script[] =
    "function tallySort(t,c,dir){var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);"
    "var num=rows.every(function(r){return r.cells[c].hasAttribute('data-v')});"
    "rows.sort(function(x,y){var a=x.cells[c],z=y.cells[c];"
    "var d=num?parseFloat(a.getAttribute('data-v'))-parseFloat(z.getAttribute('data-v'))"
    ":a.textContent.localeCompare(z.textContent);return dir==='ascending'?d:-d});"
    "rows.forEach(function(r){b.appendChild(r)});"
    "Array.prototype.forEach.call(t.tHead.rows[0].cells,function(h,i){"
    "if(i===c)h.setAttribute('aria-sort',dir);else h.removeAttribute('aria-sort')})}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){"
    "Array.prototype.forEach.call(t.tHead.rows[0].cells,function(h,i){"
    "h.addEventListener('click',function(){tallySort(t,i,"
    "h.getAttribute('aria-sort')==='descending'?'ascending':'descending')})});"
    "var c=t.getAttribute('data-initial');if(c!==null)tallySort(t,+c,'descending')});\n";

static void element(FILE *out, const char *tag, const char *text)
{
    fprintf(out, "<%s>", tag);
    html_escape(out, text);
    fprintf(out, "</%s>", tag);
}

/* A numeric cell: shown as the answers print it, sorted by its value. */
static void number_cell(FILE *out, double value, bool averaged)
{
    if (isnan(value)) {
        fputs("<td class=\"num\" data-v=\"0\"></td>", out);
        return;
    }
    char text[64];
    value_text(value, averaged, text, sizeof text);
    fprintf(out, "<td class=\"num\" data-v=\"%.17g\">%s</td>", value, text);
}

static const struct html_run *shown_run(const struct html_report *h)
{
    return &h->runs[h->run_count - 1];
}

static void write_head(const struct html_report *h, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
    fputs("tally report: ", out);
    html_escape(out, shown_run(h)->path);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>tally report: ", style);
    if (h->run_count == 2) {
        html_escape(out, h->runs[0].path);
        fputs(" &#8594; ", out);
    }
    html_escape(out, shown_run(h)->path);
    fputs("</h1>\n", out);
    for (size_t r = 0; r < h->run_count; r++) {
        const run_aggregate *a = h->runs[r].aggregate;
        uint64_t frames = 0;
        for (uint64_t f = 0; f < run_aggregate_frame_limit(a); f++)
            frames += run_aggregate_frame_commands(a, f) != 0;
        fputs("<p>", out);
        if (h->run_count == 2)
            fprintf(out, "<span class=\"key\" style=\"background:%s\"></span>%s ", run_colours[r],
                    r ? "new" : "base");
        html_escape(out, h->runs[r].path);
        fprintf(out, ": <span class=\"commands\">%llu</span> commands in %llu frames</p>\n",
                (unsigned long long)run_aggregate_commands(a), (unsigned long long)frames);
    }
}

/* The per-frame values of counter `symbol` of a run, one per point. */
static double *frame_series(const run_aggregate *a, const char *symbol, size_t points,
                            uint64_t frames_per_point)
{
    double *values = malloc((points ? points : 1) * sizeof *values);
    if (!values)
        return NULL;
    for (size_t i = 0; i < points; i++)
        values[i] = NAN;
    int k = run_aggregate_find(a, symbol);
    for (uint64_t f = 0; k >= 0 && f < run_aggregate_frame_limit(a); f++) {
        uint64_t commands = run_aggregate_frame_commands(a, f);
        const struct counter_sum *sum = run_aggregate_frame_sum(a, f, (size_t)k);
        if (!commands || !sum)
            continue;
        double v = aggregate_shown(a, (size_t)k, sum, commands);
        size_t i = (size_t)(f / frames_per_point);
        if (isnan(values[i]) || v > values[i])
            values[i] = v;
    }
    return values;
}

static bool write_plots(const struct html_report *h, FILE *out)
{
    uint64_t limit = 0;
    for (size_t r = 0; r < h->run_count; r++)
        if (run_aggregate_frame_limit(h->runs[r].aggregate) > limit)
            limit = run_aggregate_frame_limit(h->runs[r].aggregate);
    uint64_t per_point =
        limit > HTML_PLOT_POINTS ? (limit + HTML_PLOT_POINTS - 1) / HTML_PLOT_POINTS : 1;
    size_t points = (size_t)((limit + per_point - 1) / per_point);
    fputs("<h2>Per frame</h2>\n", out);
    if (per_point > 1)
        fprintf(out, "<p>Each point is the largest frame of %llu in a row.</p>\n",
                (unsigned long long)per_point);
    bool ok = true;
    for (size_t p = 0; ok && p < h->plotted_count; p++) {
        const run_aggregate *a = shown_run(h)->aggregate;
        int k = run_aggregate_find(a, h->plotted[p]);
        const struct aggregate_counter *c = k >= 0 ? run_aggregate_counter(a, (size_t)k) : NULL;
        char title[300];
        snprintf(title, sizeof title, "%s per frame (%s%s%s)", h->plotted[p],
                 c && c->unit[0] ? c->unit : "", c && c->unit[0] ? ", " : "",
                 c ? counter_exactness_name(c->exactness) : "unknown");
        element(out, "h3", title);
        fputc('\n', out);
        struct plot_series series[2];
        for (size_t r = 0; r < h->run_count; r++) {
            series[r] = (struct plot_series){
                .name = h->run_count == 2 ? (r ? "new" : "base") : h->plotted[p],
                .colour = run_colours[h->run_count == 2 ? r : 0],
                .values = frame_series(h->runs[r].aggregate, h->plotted[p], points, per_point),
                .count = points};
            ok = ok && series[r].values;
        }
        struct plot plot = {.title = title, .frames_per_point = per_point};
        if (ok)
            svg_line_plot(out, &plot, series, h->run_count);
        for (size_t r = 0; r < h->run_count; r++)
            free((double *)series[r].values);
    }
    return ok;
}

static void write_top(const struct html_report *h, FILE *out)
{
    const struct html_run *run = shown_run(h);
    const struct top_command *top;
    size_t count = top_commands_sorted(run->top, &top);
    bool pipeline = run_aggregate_has_pipeline(run->aggregate);
    size_t shown = h->plotted_count - 1 < TOP_SHOWN ? h->plotted_count - 1 : TOP_SHOWN;
    fprintf(out, "<h2>Top %zu commands by ", count);
    html_escape(out, h->plotted[0]);
    fputs("</h2>\n<table class=\"sortable\" id=\"top-commands\" data-initial=\"", out);
    size_t time_column = pipeline ? 7 : 6;
    fprintf(out,
            "%zu\">\n<thead><tr><th>#</th><th>frame</th><th>sequence</th><th>kind</th>"
            "<th>API command</th><th>label</th>",
            time_column);
    if (pipeline)
        fputs("<th>pipeline</th>", out);
    element(out, "th", h->plotted[0]);
    for (size_t s = 0; s < shown; s++)
        element(out, "th", h->plotted[s + 1]);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i < count; i++) {
        const struct top_command *t = &top[i];
        fprintf(out, "<tr><td class=\"num\" data-v=\"%zu\">%zu</td>", i + 1, i + 1);
        number_cell(out, (double)t->frame, false);
        number_cell(out, (double)t->sequence, false);
        element(out, "td", t->kind);
        element(out, "td", t->api_name);
        element(out, "td", t->label);
        if (pipeline)
            element(out, "td", t->pipeline);
        number_cell(out, t->value, false);
        for (size_t s = 0; s < shown; s++)
            number_cell(out, t->shown[s], false);
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* One run's counters: unit, exactness and the run's total. */
static void write_totals(const struct html_report *h, FILE *out)
{
    const run_aggregate *a = shown_run(h)->aggregate;
    fputs("<h2>Totals</h2>\n<table class=\"sortable\" id=\"totals\">\n<thead><tr><th>counter</th>"
          "<th>total</th><th>unit</th><th>exactness</th><th>aggregate</th></tr></thead>\n<tbody>\n",
          out);
    for (size_t k = 0; k < run_aggregate_counter_count(a); k++) {
        const struct aggregate_counter *c = run_aggregate_counter(a, k);
        fputs("<tr data-counter=\"", out);
        html_escape(out, c->symbol);
        fputs("\">", out);
        element(out, "td", c->symbol);
        number_cell(out,
                    aggregate_shown(a, k, run_aggregate_total(a, k), run_aggregate_commands(a)),
                    c->averaged);
        element(out, "td", c->unit);
        element(out, "td", counter_exactness_name(c->exactness));
        element(out, "td", c->averaged ? "mean of commands" : "sum");
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* diff mode: every counter's total, base -> new. */
static void write_compared_totals(const struct html_report *h, FILE *out)
{
    const struct run_comparison *c = &h->comparison;
    fputs("<h2>Totals</h2>\n<table class=\"sortable\" id=\"totals\">\n<thead><tr><th>counter</th>"
          "<th>base</th><th>new</th><th>change</th><th>unit</th><th>exactness</th></tr></thead>\n"
          "<tbody>\n",
          out);
    for (size_t k = 0; k < c->counter_count; k++) {
        const struct compare_item *item = run_comparison_total(c, k);
        if (!item)
            continue;
        char base[64], new_value[64], percent[64];
        counter_value_text(&item->base, base, sizeof base);
        counter_value_text(&item->new_value, new_value, sizeof new_value);
        percent_text(item->percent, percent, sizeof percent);
        fputs("<tr data-counter=\"", out);
        html_escape(out, c->counters[k].symbol);
        fputs("\">", out);
        element(out, "td", c->counters[k].symbol);
        fprintf(out, "<td class=\"num\" data-v=\"%.17g\">%s</td>",
                counter_value_double(&item->base), base);
        fprintf(out, "<td class=\"num\" data-v=\"%.17g\">%s</td>",
                counter_value_double(&item->new_value), new_value);
        fprintf(out, "<td class=\"num\" data-v=\"%.17g\">%s</td>",
                isfinite(item->percent) ? item->percent : 1e300, item->change ? percent : "");
        element(out, "td", c->counters[k].unit ? c->counters[k].unit : "");
        element(out, "td", counter_exactness_name(c->counters[k].exactness));
        fputs("</tr>\n", out);
    }
    fputs("</tbody></table>\n", out);
}

/* diff mode: per plotted counter, the labels, pipelines and API commands
 * that moved most, as tally diff ranks them. */
static void write_movers(const struct html_report *h, FILE *out)
{
    const struct run_comparison *c = &h->comparison;
    struct diff d = {.comparison = *c};
    fputs("<h2>Biggest movers</h2>\n<table class=\"sortable\" id=\"movers\">\n<thead><tr>"
          "<th>counter</th><th>where</th><th>base</th><th>new</th><th>change</th></tr></thead>\n"
          "<tbody>\n",
          out);
    for (size_t p = 0; p < h->plotted_count; p++) {
        for (size_t k = 0; k < c->counter_count; k++) {
            if (strcmp(c->counters[k].symbol, h->plotted[p]) != 0)
                continue;
            size_t indices[HTML_MOVERS];
            size_t n = diff_movers(&d, k, indices, HTML_MOVERS);
            for (size_t i = 0; i < n; i++) {
                const struct compare_item *item = &c->items[indices[i]];
                char where[300], base[64], new_value[64], change[200];
                diff_subject(item, where, sizeof where);
                counter_value_text(&item->base, base, sizeof base);
                counter_value_text(&item->new_value, new_value, sizeof new_value);
                change_text(&item->base, &item->new_value, item->percent, change, sizeof change);
                fputs("<tr>", out);
                element(out, "td", h->plotted[p]);
                element(out, "td", where);
                fprintf(out, "<td class=\"num\" data-v=\"%.17g\">",
                        counter_value_double(&item->base));
                html_escape(out, base);
                fprintf(out, "</td><td class=\"num\" data-v=\"%.17g\">",
                        counter_value_double(&item->new_value));
                html_escape(out, new_value);
                fprintf(out, "</td><td class=\"num\" data-v=\"%.17g\">", item->change);
                html_escape(out, change);
                fputs("</td></tr>\n", out);
            }
        }
    }
    fputs("</tbody></table>\n", out);
}

/* A path as a file:// URL: absolute, its bytes outside the unreserved
 * set percent-encoded, so that a name with '#', '?' or '%' still links. */
static void write_file_url(FILE *out, const char *path)
{
    char *absolute = realpath(path, NULL);
    const char *p = absolute ? absolute : path;
    fputs("file://", out);
    for (; *p; p++) {
        unsigned char b = (unsigned char)*p;
        if (isalnum(b) || strchr("/-._~", b))
            fputc(b, out);
        else
            fprintf(out, "%%%02X", b);
    }
    free(absolute);
}

static void write_metadata(const struct html_report *h, FILE *out)
{
    fputs("<h2>Metadata</h2>\n", out);
    for (size_t r = 0; r < h->run_count; r++) {
        const struct report_metadata *m = report_reader_metadata(h->runs[r].reader);
        fputs("<h3>", out);
        if (h->run_count == 2)
            fputs(r ? "new: " : "base: ", out);
        html_escape(out, h->runs[r].path);
        fputs("</h3>\n<table class=\"metadata\">\n", out);
        size_t rows = 0;
        for (size_t i = 0; m && i < m->count; i++) {
            /* The counters' keys are in the totals table. */
            if (strncmp(m->keys[i], "counter.", 8) == 0)
                continue;
            fputs("<tr>", out);
            element(out, "th", m->keys[i]);
            element(out, "td", m->values[i]);
            fputs("</tr>\n", out);
            rows++;
        }
        if (!rows)
            fputs("<tr><td>the report has no metadata</td></tr>\n", out);
        fputs("</table>\n", out);
    }
    if (h->trace) {
        fputs("<p>Trace: <a href=\"", out);
        write_file_url(out, h->trace);
        fputs("\">", out);
        html_escape(out, h->trace);
        fputs("</a> (open it in Perfetto or chrome://tracing)</p>\n", out);
    }
}

bool html_report_write(const struct html_report *h, FILE *out)
{
    write_head(h, out);
    bool ok = write_plots(h, out);
    if (ok && h->compared)
        write_movers(h, out);
    if (ok)
        write_top(h, out);
    if (ok && h->compared)
        write_compared_totals(h, out);
    else if (ok)
        write_totals(h, out);
    if (ok)
        write_metadata(h, out);
    fprintf(out, "<script>\n%s</script>\n</body>\n</html>\n", script);
    return ok;
}
