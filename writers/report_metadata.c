/*
 * Owns what a report says about the run that made it
 * (tally_report_describe): a copy of the metadata, the CSV report's
 * sidecar of "key,value" rows, and the JSON report's "metadata" member.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "report_rows.h"
#include "report_text.h"

/* The metadata's own copy: every string of it in one allocation. */
struct report_description {
    tally_report_metadata metadata;
    tally_report_driver *drivers;
    char *strings;
};

const char *report_counter_exactness(const tally_counter_info *counter)
{
    if (counter->measured)
        return "measured";
    if (counter->exact)
        return "exact";
    return counter->exact_when ? "conditional" : "modeled";
}

static size_t string_bytes(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static const char *copy_string(char **at, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *copy = memcpy(*at, s, n);
    *at += n;
    return copy;
}

static struct report_description *copy_description(const tally_report_metadata *m)
{
    size_t bytes = string_bytes(m->tally_version) + string_bytes(m->backend) +
                   string_bytes(m->device) + string_bytes(m->clock) + string_bytes(m->program) +
                   string_bytes(m->arguments);
    for (uint32_t i = 0; i < m->driver_count; i++)
        bytes += string_bytes(m->drivers[i].api) + string_bytes(m->drivers[i].name) +
                 string_bytes(m->drivers[i].version);
    struct report_description *d = calloc(1, sizeof *d);
    if (!d || !(d->strings = malloc(bytes + 1)) ||
        !(d->drivers = calloc(m->driver_count + 1, sizeof *d->drivers))) {
        report_description_free(d);
        return NULL;
    }
    char *at = d->strings;
    d->metadata = *m;
    d->metadata.tally_version = copy_string(&at, m->tally_version);
    d->metadata.backend = copy_string(&at, m->backend);
    d->metadata.device = copy_string(&at, m->device);
    d->metadata.clock = copy_string(&at, m->clock);
    d->metadata.program = copy_string(&at, m->program);
    d->metadata.arguments = copy_string(&at, m->arguments);
    for (uint32_t i = 0; i < m->driver_count; i++)
        d->drivers[i] = (tally_report_driver){copy_string(&at, m->drivers[i].api),
                                              copy_string(&at, m->drivers[i].name),
                                              copy_string(&at, m->drivers[i].version)};
    d->metadata.drivers = d->drivers;
    return d;
}

void report_description_free(struct report_description *d)
{
    if (!d)
        return;
    free(d->drivers);
    free(d->strings);
    free(d);
}

/* ISO 8601 in UTC with nanoseconds: "2026-12-07T13:55:01.123456789Z". */
static void format_utc(uint64_t unix_ns, char out[40])
{
    time_t seconds = (time_t)(unix_ns / 1000000000u);
    struct tm utc;
    if (!gmtime_r(&seconds, &utc)) {
        out[0] = '\0';
        return;
    }
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &utc);
    snprintf(out + n, 40 - n, ".%09uZ", (unsigned)(unix_ns % 1000000000u));
}

/* --- the CSV sidecar ------------------------------------------------------------- */

static void put_csv_text(FILE *out, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    char *text = malloc(TEXT_CSV_MAX(n));
    if (text) {
        fwrite(text, 1, (size_t)(text_csv_field(text, s ? s : "", n) - text), out);
        free(text);
    }
}

static void put_csv_row(FILE *out, const char *key, const char *value)
{
    put_csv_text(out, key);
    putc(',', out);
    put_csv_text(out, value);
    putc('\n', out);
}

static void put_csv_counter(FILE *out, const tally_counter_info *c, const char *field,
                            const char *value)
{
    char key[256];
    snprintf(key, sizeof key, "counter.%s.%s", c->symbol, field);
    put_csv_row(out, key, value);
}

static void put_csv_metadata(FILE *out, const tally_report *r, const tally_report_metadata *m)
{
    char number[32], utc[40];
    fputs("key,value\n", out);
    put_csv_row(out, "schema", "tally report metadata 1");
    put_csv_row(out, "tally_version", m->tally_version);
    put_csv_row(out, "backend", m->backend);
    put_csv_row(out, "device", m->device);
    put_csv_row(out, "clock", m->clock);
    put_csv_row(out, "program", m->program);
    put_csv_row(out, "arguments", m->arguments);
    snprintf(number, sizeof number, "%lld", (long long)m->pid);
    put_csv_row(out, "pid", number);
    format_utc(m->start_unix_ns, utc);
    put_csv_row(out, "start_utc", utc);
    for (uint32_t i = 0; i < m->driver_count; i++) {
        char key[64];
        static const char *const fields[] = {"api", "name", "version"};
        const char *values[] = {m->drivers[i].api, m->drivers[i].name, m->drivers[i].version};
        for (int f = 0; f < 3; f++) {
            snprintf(key, sizeof key, "driver.%u.%s", i + 1, fields[f]);
            put_csv_row(out, key, values[f]);
        }
    }
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *c = r->columns[i];
        put_csv_counter(out, c, "unit", c->unit_name ? c->unit_name : "");
        put_csv_counter(out, c, "exactness", report_counter_exactness(c));
        put_csv_counter(out, c, "derived", c->expression ? "true" : "false");
    }
}

bool tally_report_metadata_path(const char *path, char *out, size_t size)
{
    if (!path || !out)
        return false;
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base : path, '.');
    size_t stem = dot && strcasecmp(dot, ".csv") == 0 ? (size_t)(dot - path) : strlen(path);
    int n = snprintf(out, size, "%.*s.meta.csv", (int)stem, path);
    return n >= 0 && (size_t)n < size;
}

/* Only beside a report in a regular file (one it replaces or makes): a
 * device or FIFO, written into directly, has no place beside it. */
static bool has_sidecar(const tally_report *r)
{
    return r->file.mode != OUTPUT_FILE_DIRECT;
}

static tally_status write_sidecar(const tally_report *r)
{
    char path[4096];
    if (!has_sidecar(r))
        return TALLY_OK;
    if (!tally_report_metadata_path(r->path, path, sizeof path))
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct output_file file = {0};
    tally_status s = output_file_open(&file, path, OUTPUT_FILE_WHOLE);
    if (s != TALLY_OK)
        return s;
    put_csv_metadata(output_file_stream(&file), r, &r->description->metadata);
    return output_file_commit(&file);
}

/* --- the JSON member ------------------------------------------------------------- */

static void put_json_member(FILE *out, const char *key, const char *value, bool first)
{
    if (!first)
        putc(',', out);
    report_put_json_string(out, key);
    putc(':', out);
    report_put_json_string(out, value ? value : "");
}

void report_json_metadata(tally_report *r, FILE *out)
{
    if (!r->description)
        return;
    const tally_report_metadata *m = &r->description->metadata;
    char utc[40];
    format_utc(m->start_unix_ns, utc);
    fputs(",\n\"metadata\":{", out);
    put_json_member(out, "schema", "tally report metadata 1", true);
    put_json_member(out, "tally_version", m->tally_version, false);
    put_json_member(out, "backend", m->backend, false);
    put_json_member(out, "device", m->device, false);
    put_json_member(out, "clock", m->clock, false);
    put_json_member(out, "program", m->program, false);
    put_json_member(out, "arguments", m->arguments, false);
    fprintf(out, ",\"pid\":%lld", (long long)m->pid);
    put_json_member(out, "start_utc", utc, false);
    fputs(",\"drivers\":[", out);
    for (uint32_t i = 0; i < m->driver_count; i++) {
        fputs(i ? ",{" : "{", out);
        put_json_member(out, "api", m->drivers[i].api, true);
        put_json_member(out, "name", m->drivers[i].name, false);
        put_json_member(out, "version", m->drivers[i].version, false);
        putc('}', out);
    }
    fputs("]}", out);
}

tally_status tally_report_describe(tally_report *report, const tally_report_metadata *metadata)
{
    if (!report || !metadata || (metadata->driver_count && !metadata->drivers))
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct report_description *d = copy_description(metadata);
    if (!d)
        return TALLY_ERROR_OUT_OF_MEMORY;
    report_description_free(report->description);
    report->description = d;
    return report->format == TALLY_REPORT_CSV ? write_sidecar(report) : TALLY_OK;
}
