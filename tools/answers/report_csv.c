/* Owns reading a CSV report: its header's columns by name, and each row's
 * fields into a report_row (report_source.h). */
#include "report_source.h"

#include <stdlib.h>
#include <string.h>

/* The columns that are counters: those the sidecar describes, else those
 * after duration_ns, else all that are no identity. */
static bool find_counters(report_reader *r, char **names, size_t count, bool sidecar, char *error,
                          size_t size)
{
    r->counter_column = calloc(count ? count : 1, sizeof *r->counter_column);
    if (!r->counter_column) {
        snprintf(error, size, "%s: out of memory", r->path);
        return false;
    }
    int after = r->identity_column[REPORT_DURATION_NS];
    for (size_t i = 0; i < count; i++) {
        if (report_identity_of(names[i]) >= 0)
            continue;
        char key[256];
        const char *unit = NULL, *exactness = NULL, *derived = NULL;
        if (sidecar) {
            snprintf(key, sizeof key, "counter.%s.unit", names[i]);
            unit = report_metadata_get(&r->metadata, key);
            snprintf(key, sizeof key, "counter.%s.exactness", names[i]);
            exactness = report_metadata_get(&r->metadata, key);
            snprintf(key, sizeof key, "counter.%s.derived", names[i]);
            derived = report_metadata_get(&r->metadata, key);
            if (!unit && !exactness && !derived)
                continue; /* a column the sidecar does not call a counter */
        } else if (after >= 0 && (int)i < after) {
            continue;
        }
        bool duplicate = false;
        for (size_t k = 0; k < r->counter_count; k++)
            duplicate |= strcmp(r->counters[k].symbol, names[i]) == 0;
        if (duplicate)
            continue;
        enum counter_exactness e = EXACTNESS_UNKNOWN;
        if (exactness && !counter_exactness_parse(exactness, &e))
            e = EXACTNESS_UNKNOWN;
        if (!report_add_counter(r, names[i], unit, e, derived && strcmp(derived, "true") == 0)) {
            snprintf(error, size, "%s: out of memory", r->path);
            return false;
        }
        r->counter_column[r->counter_count - 1] = (int)i;
    }
    return true;
}

bool report_csv_open(report_reader *r, char *error, size_t size)
{
    r->csv = csv_reader_open(r->file);
    if (!r->csv) {
        snprintf(error, size, "%s: out of memory", r->path);
        return false;
    }
    char **names;
    size_t count;
    int got = csv_reader_next(r->csv, &names, &count);
    if (got <= 0) {
        snprintf(error, size, "%s: %s", r->path,
                 got < 0 ? csv_reader_error(r->csv) : "empty file, not a tally report");
        return false;
    }
    for (size_t i = 0; i < count; i++) {
        int identity = report_identity_of(names[i]);
        if (identity >= 0 && r->identity_column[identity] < 0) {
            r->identity_column[identity] = (int)i;
            r->has[identity] = true;
        }
    }
    if (!r->has[REPORT_SEQUENCE]) {
        /* A shell glob of *.csv takes the sidecars too: say what this is. */
        bool sidecar = count == 2 && strcmp(names[0], "key") == 0 && strcmp(names[1], "value") == 0;
        snprintf(error, size, "%s: %s", r->path,
                 sidecar ? "a report's metadata (.meta.csv), read beside its report: give the "
                           "report itself"
                         : "not a tally report: its header has no sequence column");
        return false;
    }
    r->column_count = count;
    bool sidecar = false;
    if (!report_sidecar_read(r, &sidecar, error, size))
        return false;
    /* The header's names live in the reader's record, which the sidecar's
     * reading did not touch: it has a reader of its own. */
    return find_counters(r, names, count, sidecar, error, size);
}

int report_csv_next(report_reader *r, struct report_row *row, char *error, size_t size)
{
    char **fields;
    size_t count;
    int got = csv_reader_next(r->csv, &fields, &count);
    if (got < 0) {
        snprintf(error, size, "%s: %s", r->path, csv_reader_error(r->csv));
        return -1;
    }
    if (got == 0)
        return 0;
    unsigned long line = (unsigned long)csv_reader_line(r->csv);
    if (count != r->column_count) {
        snprintf(error, size, "%s: line %lu: %zu fields where the header has %zu", r->path, line,
                 count, r->column_count);
        return -1;
    }
    for (int i = 0; i < REPORT_IDENTITY_COUNT; i++)
        row->identity[i] = r->identity_column[i] >= 0 ? fields[r->identity_column[i]] : "";
    for (size_t k = 0; k < r->counter_count; k++) {
        const char *text = fields[r->counter_column[k]];
        if (!counter_value_parse(text, &r->values[k])) {
            snprintf(error, size, "%s: line %lu: %s \"%.40s\" is not a number", r->path, line,
                     r->counters[k].symbol, text);
            return -1;
        }
    }
    return report_row_finish(r, row, line, error, size) ? 1 : -1;
}
