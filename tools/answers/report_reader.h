/*
 * Reads a tally report back, row by row, whatever its format: a CSV
 * (with its .meta.csv sidecar when there is one) or a JSON report. Columns
 * are found by name, never by position, so columns added to the format
 * later (pid, pipeline, kernel, ...) are read where they exist and
 * ignored where nothing here knows them. One row is held at a time.
 *
 * Which columns are counters: the sidecar's counter.SYMBOL.* keys when the
 * sidecar exists, else every column after duration_ns (CSV), or the
 * report's "counters" list (JSON).
 */
#ifndef TALLY_ANSWERS_REPORT_READER_H
#define TALLY_ANSWERS_REPORT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counter_value.h"

/* The identity columns a reader looks for, by name. */
enum report_identity {
    REPORT_SEQUENCE,
    REPORT_KIND,
    REPORT_API_NAME,
    REPORT_CONTEXT,
    REPORT_CONTEXT_API,
    REPORT_FRAME,
    REPORT_SUBMISSION,
    REPORT_STREAM,
    REPORT_LABEL,
    REPORT_PID,
    REPORT_TID,
    REPORT_PIPELINE,
    REPORT_PIPELINE_NAME,
    REPORT_SHADER_HASH,
    REPORT_TARGET,
    REPORT_KERNEL,
    REPORT_BEGIN_NS,
    REPORT_END_NS,
    REPORT_DURATION_NS,
    REPORT_IDENTITY_COUNT
};

/* The column name of each identity ("sequence", "api_name", ...). */
extern const char *const report_identity_names[REPORT_IDENTITY_COUNT];

enum counter_exactness {
    EXACTNESS_UNKNOWN, /* a report without metadata */
    EXACTNESS_EXACT,
    EXACTNESS_CONDITIONAL,
    EXACTNESS_MODELED,
    EXACTNESS_MEASURED,
};

/* "exact", "conditional", "modeled", "measured" or "unknown". */
const char *counter_exactness_name(enum counter_exactness exactness);
/* The exactness named, or false for a name that is none. */
bool counter_exactness_parse(const char *name, enum counter_exactness *out);

struct report_counter {
    char *symbol;
    char *unit; /* "" when the report does not say */
    enum counter_exactness exactness;
    bool derived;
};

/* The report's metadata, "key,value" as the sidecar or "metadata" holds. */
struct report_metadata {
    char **keys, **values;
    size_t count, capacity;
};

/* The value of key, or NULL. */
const char *report_metadata_get(const struct report_metadata *metadata, const char *key);

struct report_row {
    /* Each identity column's text; "" where the report has no such column. */
    const char *identity[REPORT_IDENTITY_COUNT];
    uint64_t sequence, frame;
    /* The pipeline or program: pipeline_name, else pipeline, else kernel,
     * the first that is not empty; "" when none is. */
    const char *pipeline;
    /* One per counter of report_reader_counters, in that order. */
    const struct counter_value *values;
};

typedef struct report_reader report_reader;

/*
 * Opens a report ("-" for a CSV on standard input) and reads its header
 * and counters. NULL on failure, with why in error ("r.csv: no column
 * sequence", "r.csv: No such file or directory").
 */
report_reader *report_reader_open(const char *path, char *error, size_t error_size);
void report_reader_close(report_reader *reader);

/* The next row: 1, 0 at the end, -1 on bad input with why in error
 * (naming the file and the line). */
int report_reader_next(report_reader *reader, struct report_row *row, char *error,
                       size_t error_size);

const char *report_reader_path(const report_reader *reader);
size_t report_reader_counter_count(const report_reader *reader);
const struct report_counter *report_reader_counter(const report_reader *reader, size_t i);
/* Whether the report has a column of that identity. */
bool report_reader_has(const report_reader *reader, enum report_identity identity);
/* Whether any of pipeline_name, pipeline and kernel is a column. */
bool report_reader_has_pipeline(const report_reader *reader);
/* A JSON report's metadata comes after its rows: complete once
 * report_reader_next has returned 0. */
const struct report_metadata *report_reader_metadata(const report_reader *reader);

#endif
