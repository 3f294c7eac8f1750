/*
 * Inside the report reader: the state both formats fill, and the
 * functions each format's file provides (report_csv.c, report_json.c).
 * Nothing outside report_reader.c and those files includes this.
 */
#ifndef TALLY_ANSWERS_REPORT_SOURCE_H
#define TALLY_ANSWERS_REPORT_SOURCE_H

#include <stdio.h>

#include <json-c/json.h>

#include "csv_reader.h"
#include "json_stream.h"
#include "report_reader.h"

struct report_reader {
    char *path;
    FILE *file;
    bool json;
    struct report_counter *counters;
    size_t counter_count;
    struct report_metadata metadata;
    bool has[REPORT_IDENTITY_COUNT];
    struct counter_value *values; /* the current row's */
    /* CSV: the header's column of each identity and counter (-1: none). */
    csv_reader *csv;
    size_t column_count;
    int identity_column[REPORT_IDENTITY_COUNT];
    int *counter_column;
    /* JSON: the stream, positioned in "commands", and the current row's
     * parsed object with the text of its numbers. */
    json_stream *stream;
    json_tokener *tokener;
    struct json_object *command;
    bool commands_ended;
    bool counters_listed; /* the report had a "counters" member before its commands */
    char identity_text[REPORT_IDENTITY_COUNT][24];
};

/* Each format: its header read at open, then its rows. */
bool report_csv_open(report_reader *r, char *error, size_t size);
int report_csv_next(report_reader *r, struct report_row *row, char *error, size_t size);
bool report_json_open(report_reader *r, char *error, size_t size);
int report_json_next(report_reader *r, struct report_row *row, char *error, size_t size);
void report_json_close(report_reader *r);

/* The sidecar beside a CSV report, read into r's metadata (*found: it
 * exists): false on one that cannot be read (with why). */
bool report_sidecar_read(report_reader *r, bool *found, char *error, size_t size);

/* Shared helpers of report_reader.c. */
bool report_metadata_set(struct report_metadata *m, const char *key, const char *value);
/* Adds a counter (copies the strings); false without memory. */
bool report_add_counter(report_reader *r, const char *symbol, const char *unit,
                        enum counter_exactness exactness, bool derived);
/* Which identity a column name is, or -1. */
int report_identity_of(const char *name);
/* Fills the row's derived fields (sequence, frame, pipeline) from its
 * identity text; false with why when a number is not one. */
bool report_row_finish(report_reader *r, struct report_row *row, unsigned long line, char *error,
                       size_t size);

#endif
