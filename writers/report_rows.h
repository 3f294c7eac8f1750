/*
 * What the per-command report's writer (report_writer.c) shares with its
 * two formats (report_csv.c, report_json.c): the report, and the text
 * buffer each row is formatted into before it goes to the file. Internal
 * to the writers.
 */
#ifndef TALLY_REPORT_ROWS_H
#define TALLY_REPORT_ROWS_H

#include <math.h>

#include "output_file.h"
#include "report_text.h"
#include "tally/report.h"

struct tally_report {
    struct output_file file;
    char *path; /* as given, for the metadata's sidecar beside it */
    tally_report_format format;
    uint64_t rows; /* written so far */
    /* The writing process's id, in every row: formatted once. */
    char pid_text[TEXT_INTEGER_MAX];
    uint32_t pid_length;
    bool failed; /* a write failed (errno said why then): the rows return TALLY_ERROR_IO */
    /* Rows are formatted into text and reach the file's stream when the
     * next one might not fit: one stream call for many rows. */
    char *text;
    size_t used, capacity;
    struct report_description *description; /* report_metadata.c; NULL: none given */
    uint32_t count;                         /* value columns */
    /* each column's counter, in the catalogue that lives as long as the process */
    const tally_counter_info *columns[];
};

/* The lengths of a record's strings, measured once per row. */
struct report_strings {
    size_t kind, api_name, context_api, label, pipeline_name;
    const char *pipeline_name_text; /* the record's, or "" for none */
};

/* Room for `bound` more bytes at the end of the text (which is written out
 * or grown to make it); NULL without memory. The row written there is
 * added by report_text_used. */
char *report_text_room(tally_report *r, size_t bound);
void report_text_used(tally_report *r, const char *end);

/* Each format: the header (at open), the most bytes a row can take, the
 * row, and the footer (at close: JSON's commands closed, before its
 * metadata). */
void report_csv_header(tally_report *r);
size_t report_csv_row_bound(const tally_report *r, const struct report_strings *n);
char *report_csv_row(const tally_report *r, char *p, const tally_command_record *record,
                     const struct report_strings *n, const tally_value *values);

void report_json_header(tally_report *r);
size_t report_json_row_bound(const tally_report *r, const struct report_strings *n);
char *report_json_row(const tally_report *r, char *p, const tally_command_record *record,
                      const struct report_strings *n, const tally_value *values);
void report_json_footer(tally_report *r);

/* report_metadata.c: the description's copy, the JSON report's "metadata"
 * member (after its commands), and a counter's exactness as the metadata
 * says it: "exact", "conditional", "modeled" or "measured". */
void report_description_free(struct report_description *description);
void report_json_metadata(tally_report *r, FILE *out);
const char *report_counter_exactness(const tally_counter_info *counter);

/* Column i's value is not known for this command (tally_command_record's
 * unmeasured): the formats leave it out. */
static inline bool report_value_unmeasured(const tally_command_record *record, uint32_t i)
{
    return i < 64 && (record->unmeasured >> i & 1);
}

/* A value as its column's storage says: unsigned, signed or float (with
 * three decimals). JSON has no NaN or infinity: json_safe writes a
 * non-finite float as 0. Inline: a row is mostly values. */
static inline char *report_put_value(char *p, const tally_counter_info *column, tally_value v,
                                     bool json_safe)
{
    switch (column->storage) {
    case TALLY_STORAGE_INT32:
    case TALLY_STORAGE_INT64: return text_i64(p, v.i64);
    case TALLY_STORAGE_FLOAT32:
    case TALLY_STORAGE_FLOAT64: return text_fixed3(p, json_safe && !isfinite(v.f64) ? 0.0 : v.f64);
    default: return text_u64(p, v.u64);
    }
}

#endif
