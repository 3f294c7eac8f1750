/*
 * Owns the per-command counter report's life: open, a row per command in
 * the chosen format (report_csv.c, report_json.c), close. Rows are
 * formatted into a text buffer that goes to the atomic file's stream when
 * the next row might not fit.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "report_rows.h"
#include "report_text.h"

/* The text buffer's usual size; a row larger than it (a label of
 * megabytes) grows it. */
enum { TEXT_CAPACITY = 64 * 1024 };

tally_report_format tally_report_format_for_path(const char *path)
{
    if (!path)
        return TALLY_REPORT_CSV;
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base : path, '.');
    return dot && strcasecmp(dot, ".json") == 0 ? TALLY_REPORT_JSON : TALLY_REPORT_CSV;
}

/* A failed write is found here, once per buffer, not per row. */
static void flush_text(tally_report *r)
{
    if (r->used)
        fwrite(r->text, 1, r->used, output_file_stream(&r->file));
    r->used = 0;
    r->failed = output_file_failed(&r->file);
}

char *report_text_room(tally_report *r, size_t bound)
{
    if (r->used + bound <= r->capacity)
        return r->text + r->used;
    flush_text(r);
    if (bound > r->capacity) {
        char *larger = realloc(r->text, bound);
        if (!larger)
            return NULL;
        r->text = larger;
        r->capacity = bound;
    }
    return r->text;
}

void report_text_used(tally_report *r, const char *end)
{
    r->used = (size_t)(end - r->text);
}

static void free_report(tally_report *r)
{
    report_description_free(r->description);
    free(r->path);
    free(r->text);
    free(r);
}

static tally_report *new_report(tally_report_format format, const tally_catalogue *catalogue,
                                const uint32_t *counters, uint32_t count)
{
    tally_report *r = calloc(1, sizeof *r + (size_t)count * sizeof r->columns[0]);
    if (!r)
        return NULL;
    r->format = format;
    r->count = count;
    r->pid_length = (uint32_t)(text_u64(r->pid_text, (uint64_t)getpid()) - r->pid_text);
    r->capacity = TEXT_CAPACITY;
    r->text = malloc(r->capacity);
    if (!r->text) {
        free_report(r);
        return NULL;
    }
    for (uint32_t i = 0; i < count; i++)
        r->columns[i] = tally_catalogue_counter(catalogue, counters[i]);
    return r;
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
    /* A CSV is valid up to its last whole row, so it is written live; JSON
     * parses only whole. */
    enum output_file_kind kind = format == TALLY_REPORT_CSV ? OUTPUT_FILE_LIVE : OUTPUT_FILE_WHOLE;
    status = (r->path = strdup(path)) ? output_file_open(&r->file, path, kind)
                                      : TALLY_ERROR_OUT_OF_MEMORY;
    if (status != TALLY_OK) {
        free_report(r);
        return status;
    }
    if (format == TALLY_REPORT_JSON)
        report_json_header(r);
    else
        report_csv_header(r);
    flush_text(r);
    /* The header is in the file at once: a killed run leaves a CSV that
     * names its columns, with or without rows. */
    if (output_file_flush(&r->file) != TALLY_OK) {
        output_file_abort(&r->file);
        free_report(r);
        return TALLY_ERROR_IO;
    }
    *out = r;
    return TALLY_OK;
}

tally_status tally_report_write(tally_report *report, const tally_command_record *record,
                                const tally_value *values)
{
    if (!report || !record || (report->count && !values))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!record->kind || !record->api_name || !record->context_api || !record->label)
        return TALLY_ERROR_INVALID_ARGUMENT;
    /* A record from before pipelines were named (a tool's) has none. */
    const char *pipeline_name = record->pipeline_name ? record->pipeline_name : "";
    struct report_strings n = {strlen(record->kind), strlen(record->api_name),
                               strlen(record->context_api), strlen(record->label),
                               strlen(pipeline_name), pipeline_name};
    bool json = report->format == TALLY_REPORT_JSON;
    size_t bound = json ? report_json_row_bound(report, &n) : report_csv_row_bound(report, &n);
    char *p = report_text_room(report, bound);
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    p = json ? report_json_row(report, p, record, &n, values)
             : report_csv_row(report, p, record, &n, values);
    report_text_used(report, p);
    report->rows++;
    return report->failed ? TALLY_ERROR_IO : TALLY_OK;
}

tally_status tally_report_flush(tally_report *report)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    flush_text(report);
    if (report->failed || output_file_flush(&report->file) != TALLY_OK) {
        report->failed = true;
        return TALLY_ERROR_IO;
    }
    return TALLY_OK;
}

tally_status tally_report_close(tally_report *report)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (report->format == TALLY_REPORT_JSON)
        report_json_footer(report);
    flush_text(report);
    if (report->format == TALLY_REPORT_JSON) {
        FILE *out = output_file_stream(&report->file);
        report_json_metadata(report, out);
        fputs("}\n", out);
    }
    tally_status status = output_file_commit(&report->file);
    free_report(report);
    return status;
}

bool tally_output_path_for_process(const char *pattern, char *out, size_t size)
{
    if (!pattern || !out || !size)
        return false;
    size_t n = 0;
    for (const char *c = pattern; *c; c++) {
        char pid[24];
        const char *piece = c;
        size_t length = 1;
        if (c[0] == '%' && c[1] == 'p') {
            length = (size_t)snprintf(pid, sizeof pid, "%ld", (long)getpid());
            piece = pid;
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            c++;
        }
        if (n + length >= size)
            return false;
        memcpy(out + n, piece, length);
        n += length;
    }
    out[n] = '\0';
    return true;
}

bool tally_output_same_file(const char *a, const char *b)
{
    return a && b && output_file_same_destination(a, b);
}

const char *tally_output_strerror(int error)
{
    return output_file_strerror(error);
}
