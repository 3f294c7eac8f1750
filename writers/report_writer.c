/* Owns the per-command counter report: one row (CSV) or object (JSON) per command. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "atomic_file.h"
#include "report_text.h"
#include "tally/report.h"

struct tally_report {
    struct atomic_file file;
    tally_report_format format;
    const tally_catalogue *catalogue; /* lives as long as the process */
    bool wrote_record;                /* JSON: the next record needs a comma */
    uint32_t count;
    uint32_t counters[]; /* catalogue indices of the value columns */
};

static const char csv_record_header[] = "sequence,kind,api_name,context,context_api,frame,"
                                        "submission,stream,label,begin_ns,end_ns,duration_ns";

tally_report_format tally_report_format_for_path(const char *path)
{
    if (!path)
        return TALLY_REPORT_CSV;
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base : path, '.');
    return dot && strcasecmp(dot, ".json") == 0 ? TALLY_REPORT_JSON : TALLY_REPORT_CSV;
}

static const tally_counter_info *column(const tally_report *r, uint32_t i)
{
    return tally_catalogue_counter(r->catalogue, r->counters[i]);
}

/* Quoted per RFC 4180 when it holds a comma, quote, CR or LF; quotes doubled. */
static void put_csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    putc('"', out);
    for (const char *quote; (quote = strchr(s, '"')); s = quote + 1) {
        fwrite(s, 1, (size_t)(quote - s) + 1, out);
        putc('"', out);
    }
    fputs(s, out);
    putc('"', out);
}

/* A value by its counter's storage. JSON has no NaN or infinity, so a
 * non-finite float is written there as 0; CSV gets "nan", "inf", "-inf". */
static void put_value(FILE *out, tally_storage storage, tally_value v, bool json)
{
    char text[REPORT_F64_SIZE];
    switch (storage) {
    case TALLY_STORAGE_INT32:
    case TALLY_STORAGE_INT64: fprintf(out, "%" PRId64, v.i64); return;
    case TALLY_STORAGE_FLOAT32:
    case TALLY_STORAGE_FLOAT64:
        if (json && !isfinite(v.f64)) {
            putc('0', out);
            return;
        }
        report_format_f64(v.f64, text);
        fputs(text, out);
        return;
    case TALLY_STORAGE_UINT32:
    case TALLY_STORAGE_UINT64:
    default: fprintf(out, "%" PRIu64, v.u64); return;
    }
}

static uint64_t duration(const tally_command_record *record)
{
    return record->end_ns >= record->begin_ns ? record->end_ns - record->begin_ns : 0;
}

static void write_csv_header(tally_report *r)
{
    FILE *out = atomic_file_stream(&r->file);
    fputs(csv_record_header, out);
    for (uint32_t i = 0; i < r->count; i++) {
        putc(',', out);
        put_csv_field(out, column(r, i)->symbol);
    }
    putc('\n', out);
}

static void write_csv_record(tally_report *r, const tally_command_record *record,
                             const tally_value *values)
{
    FILE *out = atomic_file_stream(&r->file);
    fprintf(out, "%" PRIu64 ",", record->sequence);
    put_csv_field(out, record->kind);
    putc(',', out);
    put_csv_field(out, record->api_name);
    fprintf(out, ",%" PRIu32 ",", record->context);
    put_csv_field(out, record->context_api);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", record->frame, record->submission,
            record->stream);
    put_csv_field(out, record->label);
    fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, record->begin_ns, record->end_ns,
            duration(record));
    for (uint32_t i = 0; i < r->count; i++) {
        putc(',', out);
        put_value(out, column(r, i)->storage, values[i], false);
    }
    putc('\n', out);
}

/* A JSON member's key and colon, after a comma unless it is the first. */
static void put_json_key(tally_report *r, const char *key, bool first)
{
    FILE *out = atomic_file_stream(&r->file);
    if (!first)
        putc(',', out);
    report_put_json_string(r->file.stream, key);
    putc(':', out);
}

static void write_json_header(tally_report *r)
{
    FILE *out = atomic_file_stream(&r->file);
    fputs("{\"counters\":[", out);
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        fputs(i ? ",{" : "{", out);
        put_json_key(r, "symbol", true);
        report_put_json_string(r->file.stream, counter->symbol);
        put_json_key(r, "unit", false);
        report_put_json_string(r->file.stream, counter->unit_name ? counter->unit_name : "");
        putc('}', out);
    }
    fputs("],\n\"commands\":[", out);
}

static void put_json_u64(tally_report *r, const char *key, uint64_t value)
{
    put_json_key(r, key, false);
    fprintf(atomic_file_stream(&r->file), "%" PRIu64, value);
}

static void put_json_text(tally_report *r, const char *key, const char *value)
{
    put_json_key(r, key, false);
    report_put_json_string(r->file.stream, value);
}

static void write_json_record(tally_report *r, const tally_command_record *record,
                              const tally_value *values)
{
    FILE *out = atomic_file_stream(&r->file);
    fputs(r->wrote_record ? ",\n{" : "\n{", out);
    r->wrote_record = true;
    put_json_key(r, "sequence", true);
    fprintf(out, "%" PRIu64, record->sequence);
    put_json_text(r, "kind", record->kind);
    put_json_text(r, "api_name", record->api_name);
    put_json_u64(r, "context", record->context);
    put_json_text(r, "context_api", record->context_api);
    put_json_u64(r, "frame", record->frame);
    put_json_u64(r, "submission", record->submission);
    put_json_u64(r, "stream", record->stream);
    put_json_text(r, "label", record->label);
    put_json_u64(r, "begin_ns", record->begin_ns);
    put_json_u64(r, "end_ns", record->end_ns);
    put_json_u64(r, "duration_ns", duration(record));
    put_json_key(r, "values", false);
    putc('{', out);
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        put_json_key(r, counter->symbol, i == 0);
        put_value(out, counter->storage, values[i], true);
    }
    fputs("}}", out);
}

static tally_status check_counters(const tally_catalogue *catalogue, const uint32_t *counters,
                                   uint32_t count)
{
    uint32_t known = tally_catalogue_counter_count(catalogue);
    for (uint32_t i = 0; i < count; i++) {
        if (counters[i] >= known || !tally_catalogue_counter(catalogue, counters[i]))
            return TALLY_ERROR_UNKNOWN_COUNTER;
    }
    return TALLY_OK;
}

static tally_report *new_report(tally_report_format format, const tally_catalogue *catalogue,
                                const uint32_t *counters, uint32_t count)
{
    tally_report *r = calloc(1, sizeof *r + (size_t)count * sizeof r->counters[0]);
    if (!r)
        return NULL;
    r->format = format;
    r->catalogue = catalogue;
    r->count = count;
    if (count)
        memcpy(r->counters, counters, (size_t)count * sizeof r->counters[0]);
    return r;
}

tally_status tally_report_open(const char *path, tally_report_format format,
                               const tally_catalogue *catalogue, const uint32_t *counters,
                               uint32_t count, tally_report **out)
{
    if (out)
        *out = NULL;
    if (!path || !catalogue || !out || (count && !counters))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (format != TALLY_REPORT_CSV && format != TALLY_REPORT_JSON)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_status status = check_counters(catalogue, counters, count);
    if (status != TALLY_OK)
        return status;
    tally_report *r = new_report(format, catalogue, counters, count);
    if (!r)
        return TALLY_ERROR_OUT_OF_MEMORY;
    status = atomic_file_open(&r->file, path);
    if (status != TALLY_OK) {
        free(r);
        return status;
    }
    if (format == TALLY_REPORT_JSON)
        write_json_header(r);
    else
        write_csv_header(r);
    if (atomic_file_failed(&r->file)) {
        atomic_file_abort(&r->file);
        free(r);
        return TALLY_ERROR_IO;
    }
    *out = r;
    return TALLY_OK;
}

static bool has_strings(const tally_command_record *record)
{
    return record->api_name && record->kind && record->context_api && record->label;
}

tally_status tally_report_write(tally_report *report, const tally_command_record *record,
                                const tally_value *values)
{
    if (!report || !record || !has_strings(record) || (report->count && !values))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (report->format == TALLY_REPORT_JSON)
        write_json_record(report, record, values);
    else
        write_csv_record(report, record, values);
    return atomic_file_failed(&report->file) ? TALLY_ERROR_IO : TALLY_OK;
}

tally_status tally_report_close(tally_report *report)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (report->format == TALLY_REPORT_JSON)
        fputs("\n]}\n", atomic_file_stream(&report->file));
    tally_status status = atomic_file_commit(&report->file);
    free(report);
    return status;
}
