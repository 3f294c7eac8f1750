/* Owns the layout of text tables for terminals and Markdown
 * (text_table.h). */
#include "text_table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct text_table {
    char *title;
    char *note; /* a line under the table, or NULL */
    size_t columns;
    char **headings;
    bool *right;
    char **cells; /* rows x columns, NULL for empty */
    size_t rows, capacity, filled;
};

text_table *text_table_new(const char *title, size_t columns)
{
    text_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->title = strdup(title);
    t->columns = columns;
    t->headings = calloc(columns, sizeof *t->headings);
    t->right = calloc(columns, sizeof *t->right);
    if (!t->title || !t->headings || !t->right) {
        text_table_free(t);
        return NULL;
    }
    return t;
}

void text_table_free(text_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->rows * t->columns; i++)
        free(t->cells[i]);
    for (size_t c = 0; c < t->columns; c++)
        free(t->headings[c]);
    free(t->cells);
    free(t->headings);
    free(t->right);
    free(t->title);
    free(t->note);
    free(t);
}

void text_table_note(text_table *t, const char *text)
{
    free(t->note);
    t->note = strdup(text);
}

void text_table_heading(text_table *t, size_t c, const char *text, bool right)
{
    free(t->headings[c]);
    t->headings[c] = strdup(text);
    t->right[c] = right;
}

bool text_table_row(text_table *t)
{
    if (t->rows == t->capacity) {
        size_t capacity = t->capacity ? 2 * t->capacity : 16;
        char **cells = realloc(t->cells, capacity * t->columns * sizeof *cells);
        if (!cells)
            return false;
        t->cells = cells;
        t->capacity = capacity;
    }
    memset(t->cells + t->rows * t->columns, 0, t->columns * sizeof *t->cells);
    t->rows++;
    t->filled = 0;
    return true;
}

bool text_table_cell(text_table *t, const char *format, ...)
{
    if (!t->rows || t->filled == t->columns)
        return false;
    va_list args;
    va_start(args, format);
    char *text = NULL;
    int n = vasprintf(&text, format, args);
    va_end(args);
    if (n < 0)
        return false;
    for (char *p = text; *p; p++)
        if ((unsigned char)*p < ' ' || *p == 0x7f)
            *p = ' ';
    t->cells[(t->rows - 1) * t->columns + t->filled++] = text;
    return true;
}

static const char *cell(const text_table *t, size_t row, size_t c)
{
    const char *text = t->cells[row * t->columns + c];
    return text ? text : "";
}

/* Width in characters: UTF-8 continuation bytes take no column. */
static size_t width_of(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

static void pad(FILE *out, const char *text, size_t width, bool right)
{
    size_t w = width_of(text);
    if (right)
        fprintf(out, "%*s%s", (int)(width - w), "", text);
    else
        fprintf(out, "%s%*s", text, (int)(width - w), "");
}

static void print_terminal(const text_table *t, FILE *out)
{
    size_t *widths = calloc(t->columns, sizeof *widths);
    if (!widths)
        return;
    for (size_t c = 0; c < t->columns; c++) {
        widths[c] = width_of(t->headings[c] ? t->headings[c] : "");
        for (size_t r = 0; r < t->rows; r++)
            if (width_of(cell(t, r, c)) > widths[c])
                widths[c] = width_of(cell(t, r, c));
    }
    if (t->title[0])
        fprintf(out, "%s\n", t->title);
    for (size_t r = 0; r <= t->rows; r++) {
        fputs("  ", out);
        for (size_t c = 0; c < t->columns; c++) {
            const char *text = r == 0 ? (t->headings[c] ? t->headings[c] : "") : cell(t, r - 1, c);
            /* the last column unpadded: no trailing blanks */
            if (c + 1 == t->columns && !t->right[c])
                fputs(text, out);
            else
                pad(out, text, widths[c], t->right[c]);
            if (c + 1 < t->columns)
                fputs("  ", out);
        }
        fputc('\n', out);
    }
    free(widths);
}

/* Markdown's punctuation escaped, so a label prints as written. */
static void put_markdown(FILE *out, const char *text)
{
    for (; *text; text++) {
        if (strchr("\\`*_[]<>|", *text))
            fputc('\\', out);
        fputc(*text, out);
    }
}

static void print_markdown(const text_table *t, FILE *out)
{
    if (t->title[0]) {
        fputs("**", out);
        put_markdown(out, t->title);
        fputs("**\n\n", out);
    }
    for (size_t r = 0; r <= t->rows + 1; r++) {
        fputc('|', out);
        for (size_t c = 0; c < t->columns; c++) {
            fputc(' ', out);
            if (r == 1)
                fputs(t->right[c] ? "---:" : "---", out);
            else
                put_markdown(out,
                             r == 0 ? (t->headings[c] ? t->headings[c] : "") : cell(t, r - 2, c));
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

void text_table_print(const text_table *t, FILE *out, enum table_style style)
{
    if (!t->rows)
        return;
    if (style == TABLE_MARKDOWN)
        print_markdown(t, out);
    else
        print_terminal(t, out);
    if (t->note)
        fprintf(out, style == TABLE_MARKDOWN ? "%s\n\n" : "  %s\n", t->note);
    if (style == TABLE_TERMINAL)
        fputc('\n', out);
}
