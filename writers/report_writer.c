/* Owns the per-command counter report: one row (CSV) or object (JSON) per
 * command, formatted without stdio into a large buffer that reaches the file
 * a megabyte at a time. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "atomic_file.h"
#include "report_keyed.h"
#include "report_text.h"
#include "text_format.h"
#include "tally/report.h"

enum { TEXT_BUFFER_SIZE = 1024 * 1024 };

/* How a column's values are written. */
enum column_kind { COLUMN_SIGNED, COLUMN_UNSIGNED, COLUMN_FLOAT };

/* The text between a row's sequence and its begin_ns (CSV) or begin_ns key
 * (JSON): the same for every command of a stream until its frame, label or
 * submission changes, so it is formatted once and copied. */
struct segment {
    bool valid;
    bool keyed; /* made by report_write_keyed: key, kind and api_name identify it */
    uint64_t key;
    const char *kind, *api_name;
    uint32_t context;
    uint64_t frame, submission, stream;
    size_t lengths[4]; /* kind, api_name, context_api, label */
    char *strings;     /* the four, each with its NUL */
    size_t strings_capacity;
    char *text;
    size_t text_length, text_capacity;
};

/* A column's latest float and its text: ratios often repeat from one
 * command to the next. */
struct float_memo {
    uint64_t bits;
    uint8_t length; /* 0: none yet */
    char text[TEXT_NUMBER_MAX];
};

struct tally_report {
    struct atomic_file file;
    struct segment segment;
    struct float_memo *floats; /* per column */
    tally_report_format format;
    const tally_catalogue *catalogue; /* lives as long as the process */
    bool wrote_record;                /* JSON: the next record needs a comma */
    bool failed;                      /* a write failed (seen when the text was written) */
    /* Rows are formatted here and reach the file TEXT_BUFFER_SIZE at a time. */
    char *text;
    size_t used;
    size_t keys_size; /* JSON: the counters' "symbol": keys, summed */
    uint8_t *kinds;   /* enum column_kind, per column */
    char **keys;      /* JSON: each column's "symbol": key */
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

static char *put_float(char *p, struct float_memo *memo, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (memo->length && memo->bits == bits) {
        memcpy(p, memo->text, memo->length);
        return p + memo->length;
    }
    char *end = text_f64(p, v);
    memo->bits = bits;
    memo->length = (uint8_t)(end - p);
    memcpy(memo->text, p, memo->length);
    return end;
}

/* A value by its column's kind. JSON has no NaN or infinity, so a non-finite
 * float is written there as 0; CSV gets "nan", "inf", "-inf". */
static char *put_value(tally_report *r, char *p, uint32_t i, tally_value v, bool json)
{
    switch (r->kinds[i]) {
    case COLUMN_SIGNED: return text_i64(p, v.i64);
    case COLUMN_FLOAT:
        if (json && !isfinite(v.f64)) {
            *p = '0';
            return p + 1;
        }
        return put_float(p, &r->floats[i], v.f64);
    case COLUMN_UNSIGNED:
    default: return text_u64(p, v.u64);
    }
}

static enum column_kind kind_of(tally_storage storage)
{
    switch (storage) {
    case TALLY_STORAGE_INT32:
    case TALLY_STORAGE_INT64: return COLUMN_SIGNED;
    case TALLY_STORAGE_FLOAT32:
    case TALLY_STORAGE_FLOAT64: return COLUMN_FLOAT;
    default: return COLUMN_UNSIGNED;
    }
}

static uint64_t duration(const tally_command_record *record)
{
    return record->end_ns >= record->begin_ns ? record->end_ns - record->begin_ns : 0;
}

/* Write errors are found here, not per row (ferror costs a lock). */
static void flush_text(tally_report *r)
{
    if (r->used)
        fwrite(r->text, 1, r->used, atomic_file_stream(&r->file));
    r->used = 0;
    r->failed = atomic_file_failed(&r->file);
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

/* The four strings of a record, measured once. */
struct record_strings {
    size_t kind, api_name, context_api, label;
};

static struct record_strings measure(const tally_command_record *record)
{
    return (struct record_strings){strlen(record->kind), strlen(record->api_name),
                                   strlen(record->context_api), strlen(record->label)};
}

/* Where a row of at most `bound` bytes is formatted: the text buffer, after
 * writing what it holds if the row might not fit, or for a row larger than
 * the buffer (a label of megabytes), an allocation of its own. */
static char *row_space(tally_report *r, size_t bound, char **own)
{
    *own = NULL;
    if (r->used + bound > TEXT_BUFFER_SIZE)
        flush_text(r);
    if (bound <= TEXT_BUFFER_SIZE)
        return r->text + r->used;
    return *own = malloc(bound);
}

static void row_done(tally_report *r, char *start, char *end, char *own)
{
    if (!own) {
        r->used += (size_t)(end - start);
        return;
    }
    fwrite(own, 1, (size_t)(end - own), atomic_file_stream(&r->file));
    free(own);
    r->failed = atomic_file_failed(&r->file);
}

/* Twelve record numbers and their separators, at most. */
#define RECORD_NUMBERS_MAX (12 * (TEXT_NUMBER_MAX + 1))

static bool segment_matches(const struct segment *g, const tally_command_record *record,
                            const struct record_strings *n)
{
    if (!g->valid || g->context != record->context || g->frame != record->frame ||
        g->submission != record->submission || g->stream != record->stream ||
        g->lengths[0] != n->kind || g->lengths[1] != n->api_name ||
        g->lengths[2] != n->context_api || g->lengths[3] != n->label)
        return false;
    const char *at = g->strings;
    const char *strings[4] = {record->kind, record->api_name, record->context_api, record->label};
    for (int i = 0; i < 4; i++) {
        if (memcmp(at, strings[i], g->lengths[i]) != 0)
            return false;
        at += g->lengths[i] + 1;
    }
    return true;
}

static bool grow(char **buffer, size_t *capacity, size_t needed)
{
    if (needed <= *capacity)
        return true;
    char *bigger = realloc(*buffer, needed);
    if (!bigger)
        return false;
    *buffer = bigger;
    *capacity = needed;
    return true;
}

static char *put_literal(char *p, const char *text)
{
    size_t n = strlen(text);
    memcpy(p, text, n);
    return p + n;
}

static bool same_numbers(const struct segment *g, const tally_command_record *record)
{
    return g->valid && g->context == record->context && g->frame == record->frame &&
           g->submission == record->submission && g->stream == record->stream;
}

/* The segment of this record, formatted when it differs from the last. */
static const struct segment *segment_for(tally_report *r, const tally_command_record *record,
                                         const struct record_strings *n)
{
    struct segment *g = &r->segment;
    if (!g->keyed && segment_matches(g, record, n))
        return g;
    g->valid = false;
    g->keyed = false;
    size_t total = n->kind + n->api_name + n->context_api + n->label + 4;
    size_t bound = 128 + RECORD_NUMBERS_MAX + TEXT_JSON_MAX(total);
    if (!grow(&g->strings, &g->strings_capacity, total) ||
        !grow(&g->text, &g->text_capacity, bound))
        return NULL;
    const char *strings[4] = {record->kind, record->api_name, record->context_api, record->label};
    size_t lengths[4] = {n->kind, n->api_name, n->context_api, n->label};
    char *at = g->strings;
    for (int i = 0; i < 4; i++) {
        memcpy(at, strings[i], lengths[i] + 1);
        at += lengths[i] + 1;
        g->lengths[i] = lengths[i];
    }
    char *p = g->text;
    if (r->format == TALLY_REPORT_CSV) {
        *p++ = ',';
        p = text_csv_field(p, record->kind, n->kind);
        *p++ = ',';
        p = text_csv_field(p, record->api_name, n->api_name);
        *p++ = ',';
        p = text_u64(p, record->context);
        *p++ = ',';
        p = text_csv_field(p, record->context_api, n->context_api);
        *p++ = ',';
        p = text_u64(p, record->frame);
        *p++ = ',';
        p = text_u64(p, record->submission);
        *p++ = ',';
        p = text_u64(p, record->stream);
        *p++ = ',';
        p = text_csv_field(p, record->label, n->label);
        *p++ = ',';
    } else {
        p = put_literal(p, ",\"kind\":");
        p = text_json_string(p, record->kind, n->kind);
        p = put_literal(p, ",\"api_name\":");
        p = text_json_string(p, record->api_name, n->api_name);
        p = put_literal(p, ",\"context\":");
        p = text_u64(p, record->context);
        p = put_literal(p, ",\"context_api\":");
        p = text_json_string(p, record->context_api, n->context_api);
        p = put_literal(p, ",\"frame\":");
        p = text_u64(p, record->frame);
        p = put_literal(p, ",\"submission\":");
        p = text_u64(p, record->submission);
        p = put_literal(p, ",\"stream\":");
        p = text_u64(p, record->stream);
        p = put_literal(p, ",\"label\":");
        p = text_json_string(p, record->label, n->label);
        p = put_literal(p, ",\"begin_ns\":");
    }
    g->text_length = (size_t)(p - g->text);
    g->context = record->context;
    g->frame = record->frame;
    g->submission = record->submission;
    g->stream = record->stream;
    g->valid = true;
    return g;
}

static tally_status write_csv_record(tally_report *r, const tally_command_record *record,
                                     const tally_value *values, const struct segment *g)
{
    if (!g)
        return TALLY_ERROR_OUT_OF_MEMORY;
    size_t bound =
        RECORD_NUMBERS_MAX + g->text_length + (size_t)r->count * (TEXT_NUMBER_MAX + 1) + 1;
    char *own, *start = row_space(r, bound, &own), *p = start;
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    p = text_u64(p, record->sequence);
    memcpy(p, g->text, g->text_length);
    p += g->text_length;
    p = text_u64(p, record->begin_ns);
    *p++ = ',';
    p = text_u64(p, record->end_ns);
    *p++ = ',';
    p = text_u64(p, duration(record));
    for (uint32_t i = 0; i < r->count; i++) {
        *p++ = ',';
        p = put_value(r, p, i, values[i], false);
    }
    *p++ = '\n';
    row_done(r, start, p, own);
    return TALLY_OK;
}

static void write_json_header(tally_report *r)
{
    FILE *out = atomic_file_stream(&r->file);
    fputs("{\"counters\":[", out);
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        fputs(i ? ",{\"symbol\":" : "{\"symbol\":", out);
        report_put_json_string(r->file.stream, counter->symbol);
        fputs(",\"unit\":", out);
        report_put_json_string(r->file.stream, counter->unit_name ? counter->unit_name : "");
        putc('}', out);
    }
    fputs("],\n\"commands\":[", out);
}

static tally_status write_json_record(tally_report *r, const tally_command_record *record,
                                      const tally_value *values, const struct segment *g)
{
    if (!g)
        return TALLY_ERROR_OUT_OF_MEMORY;
    size_t bound = 128 + RECORD_NUMBERS_MAX + g->text_length + r->keys_size +
                   (size_t)r->count * (TEXT_NUMBER_MAX + 1);
    char *own, *start = row_space(r, bound, &own), *p = start;
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    p = put_literal(p, r->wrote_record ? ",\n{\"sequence\":" : "\n{\"sequence\":");
    r->wrote_record = true;
    p = text_u64(p, record->sequence);
    memcpy(p, g->text, g->text_length);
    p += g->text_length;
    p = text_u64(p, record->begin_ns);
    p = put_literal(p, ",\"end_ns\":");
    p = text_u64(p, record->end_ns);
    p = put_literal(p, ",\"duration_ns\":");
    p = text_u64(p, duration(record));
    p = put_literal(p, ",\"values\":{");
    for (uint32_t i = 0; i < r->count; i++) {
        if (i)
            *p++ = ',';
        p = put_literal(p, r->keys[i]);
        p = put_value(r, p, i, values[i], true);
    }
    *p++ = '}';
    *p++ = '}';
    row_done(r, start, p, own);
    return TALLY_OK;
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

static void free_report(tally_report *r)
{
    if (r->keys)
        for (uint32_t i = 0; i < r->count; i++)
            free(r->keys[i]);
    free(r->keys);
    free(r->kinds);
    free(r->floats);
    free(r->segment.strings);
    free(r->segment.text);
    free(r->text);
    free(r);
}

/* Each column's kind and JSON key, worked out once. */
static bool prepare_columns(tally_report *r)
{
    r->kinds = calloc(r->count + 1, sizeof *r->kinds);
    r->keys = calloc(r->count + 1, sizeof *r->keys);
    r->floats = calloc(r->count + 1, sizeof *r->floats);
    if (!r->kinds || !r->keys || !r->floats)
        return false;
    for (uint32_t i = 0; i < r->count; i++) {
        const tally_counter_info *counter = column(r, i);
        r->kinds[i] = (uint8_t)kind_of(counter->storage);
        size_t n = strlen(counter->symbol);
        if (!(r->keys[i] = malloc(TEXT_JSON_MAX(n) + 2)))
            return false;
        char *end = text_json_string(r->keys[i], counter->symbol, n);
        *end++ = ':';
        *end = '\0';
        r->keys_size += (size_t)(end - r->keys[i]) + 1;
    }
    return true;
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
    if (!(r->text = malloc(TEXT_BUFFER_SIZE)) || !prepare_columns(r)) {
        free_report(r);
        return NULL;
    }
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
        free_report(r);
        return status;
    }
    if (format == TALLY_REPORT_JSON)
        write_json_header(r);
    else
        write_csv_header(r);
    if (atomic_file_failed(&r->file)) {
        atomic_file_abort(&r->file);
        free_report(r);
        return TALLY_ERROR_IO;
    }
    *out = r;
    return TALLY_OK;
}

static bool has_strings(const tally_command_record *record)
{
    return record->api_name && record->kind && record->context_api && record->label;
}

static tally_status write_record(tally_report *r, const tally_command_record *record,
                                 const tally_value *values, const struct segment *g)
{
    if (!g)
        return TALLY_ERROR_OUT_OF_MEMORY;
    tally_status status = r->format == TALLY_REPORT_JSON ? write_json_record(r, record, values, g)
                                                         : write_csv_record(r, record, values, g);
    if (status != TALLY_OK)
        return status;
    return r->failed ? TALLY_ERROR_IO : TALLY_OK;
}

tally_status tally_report_write(tally_report *report, const tally_command_record *record,
                                const tally_value *values)
{
    if (!report || !record || !has_strings(record) || (report->count && !values))
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct record_strings n = measure(record);
    return write_record(report, record, values, segment_for(report, record, &n));
}

tally_status report_write_keyed(tally_report *report, const tally_command_record *record,
                                const tally_value *values, uint64_t strings_key)
{
    struct segment *g = &report->segment;
    if (g->keyed && g->key == strings_key && g->kind == record->kind &&
        g->api_name == record->api_name && same_numbers(g, record))
        return write_record(report, record, values, g);
    struct record_strings n = measure(record);
    const struct segment *made = segment_for(report, record, &n);
    if (made) {
        g->keyed = true;
        g->key = strings_key;
        g->kind = record->kind;
        g->api_name = record->api_name;
    }
    return write_record(report, record, values, made);
}

tally_status tally_report_close(tally_report *report)
{
    if (!report)
        return TALLY_ERROR_INVALID_ARGUMENT;
    flush_text(report);
    if (report->format == TALLY_REPORT_JSON)
        fputs("\n]}\n", atomic_file_stream(&report->file));
    tally_status status = atomic_file_commit(&report->file);
    free_report(report);
    return status;
}
