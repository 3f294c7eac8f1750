/* Owns the baseline file's format: writing a digest and reading one back
 * (baseline.h). */
#include "baseline.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv_reader.h"

const char baseline_schema[] = "tally baseline 1";

static const char header_start[] = "scope,name,commands";

/* One CSV field as RFC 4180 quotes it. */
static void put_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    putc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            putc('"', f);
        putc(*s, f);
    }
    putc('"', f);
}

/* A row of scope and name and one text per counter ("" for none). */
static void put_info_row(FILE *f, const char *scope, const char *name, const struct run_digest *d,
                         const char *(*text_of)(const struct digest_counter *))
{
    put_field(f, scope);
    putc(',', f);
    put_field(f, name);
    putc(',', f);
    for (size_t k = 0; k < d->counter_count; k++) {
        putc(',', f);
        if (text_of)
            put_field(f, text_of(&d->counters[k]));
    }
    putc('\n', f);
}

static const char *unit_of(const struct digest_counter *c)
{
    return c->unit;
}

static const char *exactness_of(const struct digest_counter *c)
{
    return counter_exactness_name(c->exactness);
}

static const char *aggregate_of(const struct digest_counter *c)
{
    return c->averaged ? "mean" : "sum";
}

static void put_digest(FILE *f, const struct run_digest *d)
{
    fputs(header_start, f);
    for (size_t k = 0; k < d->counter_count; k++) {
        putc(',', f);
        put_field(f, d->counters[k].symbol);
    }
    putc('\n', f);
    put_info_row(f, "schema", baseline_schema, d, NULL);
    put_info_row(f, "backend", d->backend, d, NULL);
    put_info_row(f, "device", d->device, d, NULL);
    put_info_row(f, "clock", d->clock, d, NULL);
    put_info_row(f, "unit", "", d, unit_of);
    put_info_row(f, "exactness", "", d, exactness_of);
    put_info_row(f, "aggregate", "", d, aggregate_of);
    for (size_t i = 0; i < d->row_count; i++) {
        const struct digest_row *row = &d->rows[i];
        put_field(f, digest_scope_names[row->scope]);
        putc(',', f);
        put_field(f, row->name);
        fprintf(f, ",%llu", (unsigned long long)row->commands);
        for (size_t k = 0; k < d->counter_count; k++) {
            char text[64];
            digest_value_text(&row->values[k], text, sizeof text);
            fprintf(f, ",%s", text);
        }
        putc('\n', f);
    }
}

bool baseline_write(const struct run_digest *d, const char *path, char *error, size_t size)
{
    char temporary[4096];
    if (snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid()) >=
        (int)sizeof temporary) {
        snprintf(error, size, "%s: the name is too long", path);
        return false;
    }
    FILE *f = fopen(temporary, "w");
    if (!f) {
        snprintf(error, size, "%s: %s", temporary, strerror(errno));
        return false;
    }
    put_digest(f, d);
    bool written = !ferror(f);
    int saved = errno;
    if (fclose(f) != 0 && written) {
        written = false;
        saved = errno;
    }
    if (!written || rename(temporary, path) != 0) {
        if (written)
            saved = errno;
        snprintf(error, size, "%s: %s", path, strerror(saved ? saved : EIO));
        remove(temporary);
        return false;
    }
    return true;
}

bool baseline_is(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char start[sizeof header_start];
    size_t n = fread(start, 1, sizeof start - 1, f);
    fclose(f);
    start[n] = '\0';
    return strcmp(start, header_start) == 0;
}

/* Says why in why; false, for the caller to return. */
static bool refuse(char *why, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static bool refuse(char *why, size_t size, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(why, size, format, args);
    va_end(args);
    return false;
}

/* What one row of information (unit, exactness, aggregate) says. */
static bool read_info(struct run_digest *d, const char *scope, char **fields, char *why,
                      size_t size)
{
    for (size_t k = 0; k < d->counter_count; k++) {
        struct digest_counter *c = &d->counters[k];
        const char *text = fields[3 + k];
        if (strcmp(scope, "unit") == 0) {
            char *copy = strdup(text);
            if (!copy)
                return refuse(why, size, "out of memory");
            free(c->unit);
            c->unit = copy;
        } else if (strcmp(scope, "exactness") == 0) {
            if (!counter_exactness_parse(text, &c->exactness))
                return refuse(why, size, "%s: unknown exactness \"%.40s\"", c->symbol, text);
        } else if (strcmp(text, "sum") == 0 || strcmp(text, "mean") == 0) {
            c->averaged = strcmp(text, "mean") == 0;
        } else {
            return refuse(why, size, "%s: aggregate \"%.40s\" is neither sum nor mean", c->symbol,
                          text);
        }
    }
    return true;
}

static bool read_data(struct run_digest *d, enum digest_scope scope, char **fields, char *why,
                      size_t size)
{
    if (scope == SCOPE_FRAME && (fields[1][0] < '0' || fields[1][0] > '9' ||
                                 strspn(fields[1], "0123456789") != strlen(fields[1])))
        return refuse(why, size, "frame \"%.40s\" is not a number", fields[1]);
    struct digest_row *row = run_digest_add_row(d, scope, fields[1]);
    if (!row)
        return refuse(why, size, "out of memory");
    struct counter_value commands;
    if (!counter_value_parse(fields[2], &commands) || commands.decimal || commands.integer < 0)
        return refuse(why, size, "commands \"%.40s\" is not a count", fields[2]);
    row->commands = (uint64_t)commands.integer;
    for (size_t k = 0; k < d->counter_count; k++)
        if (!counter_value_parse(fields[3 + k], &row->values[k]))
            return refuse(why, size, "%s \"%.40s\" is not a number", d->counters[k].symbol,
                          fields[3 + k]);
    return true;
}

/* One row after the header; false with why. */
static bool read_row(struct run_digest *d, char **fields, size_t line, char *why, size_t size)
{
    const char *scope = fields[0];
    if (line == 2 && (strcmp(scope, "schema") != 0 || strcmp(fields[1], baseline_schema) != 0))
        return refuse(why, size,
                      "not a baseline this tally reads (its second line is not "
                      "schema,%s)",
                      baseline_schema);
    if (strcmp(scope, "schema") == 0)
        return true;
    if (strcmp(scope, "backend") == 0 || strcmp(scope, "device") == 0 ||
        strcmp(scope, "clock") == 0) {
        char **field = scope[0] == 'b' ? &d->backend : scope[0] == 'd' ? &d->device : &d->clock;
        return run_digest_set_text(field, fields[1]) || refuse(why, size, "out of memory");
    }
    if (strcmp(scope, "unit") == 0 || strcmp(scope, "exactness") == 0 ||
        strcmp(scope, "aggregate") == 0)
        return read_info(d, scope, fields, why, size);
    for (int s = 0; s < SCOPE_COUNT; s++)
        if (strcmp(scope, digest_scope_names[s]) == 0)
            return read_data(d, (enum digest_scope)s, fields, why, size);
    return refuse(why, size, "unknown scope \"%.40s\"", scope);
}

static bool read_rows(struct run_digest *d, csv_reader *csv, const char *path, char *error,
                      size_t size)
{
    char **fields;
    size_t count;
    int got = csv_reader_next(csv, &fields, &count);
    if (got <= 0 || count < 3 || strcmp(fields[0], "scope") || strcmp(fields[1], "name") ||
        strcmp(fields[2], "commands")) {
        snprintf(error, size, "%s: %s", path,
                 got < 0 ? csv_reader_error(csv)
                         : "not a baseline: its header must begin scope,name,commands");
        return false;
    }
    size_t columns = count;
    for (size_t k = 3; k < count; k++) {
        if (!run_digest_add_counter(d, fields[k], "", EXACTNESS_UNKNOWN, false)) {
            snprintf(error, size, "%s: out of memory", path);
            return false;
        }
    }
    while ((got = csv_reader_next(csv, &fields, &count)) > 0) {
        size_t line = (size_t)csv_reader_line(csv);
        char why[200];
        if (count != columns) {
            snprintf(error, size, "%s: line %zu: %zu fields where the header has %zu", path, line,
                     count, columns);
            return false;
        }
        if (!read_row(d, fields, line, why, sizeof why)) {
            snprintf(error, size, "%s: line %zu: %s", path, line, why);
            return false;
        }
    }
    if (got < 0) {
        snprintf(error, size, "%s: %s", path, csv_reader_error(csv));
        return false;
    }
    const struct digest_row *duplicate;
    if (!run_digest_sort(d, &duplicate)) {
        snprintf(error, size, "%s: %s \"%.60s\" is listed twice", path,
                 digest_scope_names[duplicate->scope], duplicate->name);
        return false;
    }
    return true;
}

struct run_digest *baseline_read(const char *path, char *error, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(error, size, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct run_digest *d = run_digest_new();
    csv_reader *csv = csv_reader_open(f);
    bool ok = d && csv && read_rows(d, csv, path, error, size);
    if (!d || !csv)
        snprintf(error, size, "%s: out of memory", path);
    csv_reader_close(csv);
    fclose(f);
    if (!ok) {
        run_digest_free(d);
        return NULL;
    }
    return d;
}
