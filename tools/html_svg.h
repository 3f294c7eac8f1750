/*
 * The pieces of tally report --html that know HTML and SVG: escaping any
 * text that came from a report, and per-frame line plots drawn as inline
 * SVG, so that the page shows its plots with no script and no network.
 */
#ifndef TALLY_HTML_SVG_H
#define TALLY_HTML_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes text with &, <, >, " and ' escaped: safe in an element and in a
 * quoted attribute alike. */
void html_escape(FILE *out, const char *text);

/* One line of a plot: values[i] is the point at x = i (NaN: no point). */
struct plot_series {
    const char *name;
    const char *colour; /* a CSS colour, written as is */
    const double *values;
    size_t count;
};

struct plot {
    const char *title;
    uint64_t frames_per_point; /* > 1 when each point is the largest of that many frames */
};

/* Writes an <svg> plotting the series on one scale from 0 to their
 * largest value; x is the frame number. */
void svg_line_plot(FILE *out, const struct plot *plot, const struct plot_series *series,
                   size_t series_count);

#endif
