/* Owns the HTML escaping and the SVG plots of tally report --html. */
#include <math.h>
#include <stdbool.h>

#include "html_svg.h"
#include "value_text.h"

void html_escape(FILE *out, const char *text)
{
    for (const char *c = text; *c; c++) {
        switch (*c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*c, out);
        }
    }
}

/* The drawing area inside the SVG's fixed viewBox; the margins hold the
 * axis labels. */
enum { PLOT_WIDTH = 1000, PLOT_HEIGHT = 240, LEFT = 90, RIGHT = 20, TOP = 16, BOTTOM = 28 };

static double x_of(size_t i, size_t points)
{
    double span = PLOT_WIDTH - LEFT - RIGHT;
    return points > 1 ? LEFT + span * (double)i / (double)(points - 1) : LEFT + span / 2;
}

static double y_of(double value, double top)
{
    double span = PLOT_HEIGHT - TOP - BOTTOM;
    return PLOT_HEIGHT - BOTTOM - (top > 0 ? span * value / top : 0);
}

static void axis_label(FILE *out, double x, double y, const char *anchor, const char *text)
{
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, y, anchor);
    html_escape(out, text);
    fputs("</text>\n", out);
}

static void draw_series(FILE *out, const struct plot_series *s, size_t points, double top)
{
    /* A gap (a frame with no command) breaks the line into pieces. */
    bool open = false;
    for (size_t i = 0; i < s->count; i++) {
        if (isnan(s->values[i])) {
            if (open)
                fputs("\"/>\n", out);
            open = false;
            continue;
        }
        if (!open)
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
                    s->colour);
        fprintf(out, "%s%.1f,%.1f", open ? " " : "", x_of(i, points), y_of(s->values[i], top));
        open = true;
    }
    if (open)
        fputs("\"/>\n", out);
    /* Few points: each is a dot with its value as a tooltip, so that a
     * single frame still shows. */
    if (points > 60)
        return;
    for (size_t i = 0; i < s->count; i++) {
        if (isnan(s->values[i]))
            continue;
        char value[64];
        value_text(s->values[i], false, value, sizeof value);
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", x_of(i, points),
                y_of(s->values[i], top), s->colour);
        html_escape(out, s->name);
        fprintf(out, ", frame %zu: %s</title></circle>\n", i, value);
    }
}

void svg_line_plot(FILE *out, const struct plot *plot, const struct plot_series *series,
                   size_t series_count)
{
    size_t points = 0;
    double top = 0;
    for (size_t s = 0; s < series_count; s++) {
        if (series[s].count > points)
            points = series[s].count;
        for (size_t i = 0; i < series[s].count; i++)
            if (series[s].values[i] > top)
                top = series[s].values[i];
    }
    fprintf(out, "<svg class=\"plot\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", PLOT_WIDTH,
            PLOT_HEIGHT);
    html_escape(out, plot->title);
    fputs("\">\n", out);
    char text[96];
    for (int tick = 0; tick <= 2; tick++) {
        double value = top * tick / 2, y = y_of(value, top);
        fprintf(out, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>\n", LEFT,
                PLOT_WIDTH - RIGHT, y, y);
        value_text(value, value != floor(value), text, sizeof text);
        axis_label(out, LEFT - 6, y + 4, "end", text);
    }
    uint64_t step = plot->frames_per_point ? plot->frames_per_point : 1;
    snprintf(text, sizeof text, "frame 0");
    axis_label(out, x_of(0, points), PLOT_HEIGHT - 8, points > 1 ? "start" : "middle", text);
    if (points > 1) {
        snprintf(text, sizeof text, "frame %llu", (unsigned long long)((points - 1) * step));
        axis_label(out, x_of(points - 1, points), PLOT_HEIGHT - 8, "end", text);
    }
    for (size_t s = 0; s < series_count; s++)
        draw_series(out, &series[s], points, top);
    fputs("</svg>\n", out);
}
