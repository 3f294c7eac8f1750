/* Owns reading a CSV report's metadata sidecar (report.meta.csv beside
 * report.csv: "key,value" rows, docs/reports.md). */
#include "report_source.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <tally/tally.h>

static bool read_rows(report_reader *r, const char *path, FILE *file, char *error, size_t size)
{
    csv_reader *csv = csv_reader_open(file);
    if (!csv) {
        snprintf(error, size, "%s: out of memory", path);
        return false;
    }
    char **fields;
    size_t count;
    int got = csv_reader_next(csv, &fields, &count);
    bool ok =
        got > 0 && count == 2 && strcmp(fields[0], "key") == 0 && strcmp(fields[1], "value") == 0;
    if (!ok && got >= 0)
        snprintf(error, size, "%s: a report's metadata begins with the header key,value", path);
    while (ok && (got = csv_reader_next(csv, &fields, &count)) > 0) {
        if (count != 2) {
            snprintf(error, size, "%s: line %llu: %zu fields, not key,value", path,
                     (unsigned long long)csv_reader_line(csv), count);
            ok = false;
        } else if (!report_metadata_set(&r->metadata, fields[0], fields[1])) {
            snprintf(error, size, "%s: out of memory", path);
            ok = false;
        }
    }
    if (got < 0) {
        snprintf(error, size, "%s: %s", path, csv_reader_error(csv));
        ok = false;
    }
    csv_reader_close(csv);
    return ok;
}

bool report_sidecar_read(report_reader *r, bool *found, char *error, size_t size)
{
    *found = false;
    char path[PATH_MAX];
    if (strcmp(r->path, "-") == 0 || !tally_report_metadata_path(r->path, path, sizeof path))
        return true;
    FILE *file = fopen(path, "rb");
    if (!file) {
        if (errno == ENOENT)
            return true; /* a report without its metadata: counters by position */
        snprintf(error, size, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = read_rows(r, path, file, error, size);
    fclose(file);
    *found = ok;
    return ok;
}
