/*
 * A table of text cells printed for a person on a terminal (columns
 * padded to their widest cell) or as Markdown (for a pull-request
 * comment), so tally summary and tally diff show the same numbers in
 * both. Cells are copied; control characters in them print as spaces.
 */
#ifndef TALLY_TEXT_TABLE_H
#define TALLY_TEXT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum table_style { TABLE_TERMINAL, TABLE_MARKDOWN };

typedef struct text_table text_table;

/* A table of `columns` columns under a title ("" for none); NULL without
 * memory. */
text_table *text_table_new(const char *title, size_t columns);
void text_table_free(text_table *table);

/* Column c's heading; right-aligned columns are for numbers. */
void text_table_heading(text_table *table, size_t c, const char *text, bool right);

/* Starts a row; its cells follow in order (missing ones are empty). */
bool text_table_row(text_table *table);
bool text_table_cell(text_table *table, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* A line printed under the table. */
void text_table_note(text_table *table, const char *text);

/* Prints the table and a blank line after it; nothing when it has no
 * rows. */
void text_table_print(const text_table *table, FILE *out, enum table_style style);

#endif
