/* Owns the splitting of a CSV byte stream into records of fields (see
 * csv_reader.h). */
#include "csv_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { INPUT_BYTES = 1 << 16 };

enum field_state {
    FIELD_START, /* nothing of the field read yet */
    UNQUOTED,
    QUOTED,
    QUOTE_SEEN, /* a quote inside a quoted field: its end, or the first of "" */
};

struct csv_reader {
    FILE *file;
    size_t pos, len;
    uint64_t line, record_line;
    /* The record being assembled: its fields' text, each NUL-terminated,
     * and where each starts (offsets while the text may still move). */
    char *text;
    size_t used, capacity;
    size_t *starts;
    char **fields;
    size_t field_count, field_capacity;
    char error[160];
    char input[INPUT_BYTES];
};

csv_reader *csv_reader_open(FILE *file)
{
    csv_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->file = file;
    r->line = 1;
    return r;
}

void csv_reader_close(csv_reader *r)
{
    if (!r)
        return;
    free(r->text);
    free(r->starts);
    free(r->fields);
    free(r);
}

uint64_t csv_reader_line(const csv_reader *r)
{
    return r->record_line;
}

const char *csv_reader_error(const csv_reader *r)
{
    return r->error;
}

static bool reserve(csv_reader *r, size_t more)
{
    if (r->used + more <= r->capacity)
        return true;
    size_t capacity = r->capacity ? r->capacity : 4096;
    while (capacity < r->used + more)
        capacity *= 2;
    char *text = realloc(r->text, capacity);
    if (!text)
        return false;
    r->text = text;
    r->capacity = capacity;
    return true;
}

/* Room for one more field. */
static bool room_for_field(csv_reader *r)
{
    if (r->field_count == r->field_capacity) {
        size_t capacity = r->field_capacity ? 2 * r->field_capacity : 64;
        size_t *starts = realloc(r->starts, capacity * sizeof *starts);
        if (!starts)
            return false;
        r->starts = starts;
        char **fields = realloc(r->fields, capacity * sizeof *fields);
        if (!fields)
            return false;
        r->fields = fields;
        r->field_capacity = capacity;
    }
    return true;
}

static bool start_field(csv_reader *r)
{
    if (!room_for_field(r))
        return false;
    r->starts[r->field_count++] = r->used;
    return true;
}

/*
 * The common case, made cheap: a record that lies whole in the input read
 * so far and holds no quote is split where it lies, its commas made NULs,
 * nothing copied. 1: done; 0: not such a record (the general path reads
 * it); -1: out of memory.
 */
static int split_in_place(csv_reader *r, char ***fields, size_t *count)
{
    char *start = r->input + r->pos;
    char *end = memchr(start, '\n', r->len - r->pos);
    if (!end || end == start || memchr(start, '"', (size_t)(end - start)))
        return 0;
    char *stop = end[-1] == '\r' ? end - 1 : end;
    if (stop == start)
        return 0; /* an empty line: the general path skips it */
    *stop = '\0';
    r->field_count = 0;
    if (!room_for_field(r))
        return -1;
    r->fields[r->field_count++] = start;
    for (char *p = start; p < stop; p++) {
        if (*p != ',')
            continue;
        *p = '\0';
        if (!room_for_field(r))
            return -1;
        r->fields[r->field_count++] = p + 1;
    }
    r->pos = (size_t)(end + 1 - r->input);
    r->record_line = r->line++;
    *fields = r->fields;
    *count = r->field_count;
    return 1;
}

/* The bytes of the input from pos up to the first that ends a run of
 * plain text in the given state, appended to the field. */
static bool append_run(csv_reader *r, bool quoted)
{
    const char *p = r->input + r->pos, *end = r->input + r->len;
    const char *q = p;
    if (quoted) {
        while (q < end && *q != '"') {
            r->line += *q == '\n';
            q++;
        }
    } else {
        while (q < end && *q != ',' && *q != '\n' && *q != '\r')
            q++;
    }
    size_t n = (size_t)(q - p);
    if (!reserve(r, n + 1))
        return false;
    memcpy(r->text + r->used, p, n);
    r->used += n;
    r->pos += n;
    return true;
}

/* 1: more input; 0: the end of the file; -1: a read error. */
static int refill(csv_reader *r)
{
    if (r->pos < r->len)
        return 1;
    r->pos = 0;
    r->len = fread(r->input, 1, sizeof r->input, r->file);
    if (r->len)
        return 1;
    if (ferror(r->file)) {
        snprintf(r->error, sizeof r->error, "cannot read: %s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

static int fail(csv_reader *r, const char *what)
{
    snprintf(r->error, sizeof r->error, "line %llu: %s", (unsigned long long)r->line, what);
    return -1;
}

static int out_of_memory(csv_reader *r)
{
    snprintf(r->error, sizeof r->error, "out of memory at line %llu", (unsigned long long)r->line);
    return -1;
}

/* Ends the record: NUL-terminated fields, offsets made pointers. */
static int finish(csv_reader *r, char ***fields, size_t *count)
{
    for (size_t i = 0; i < r->field_count; i++)
        r->fields[i] = r->text + r->starts[i];
    *fields = r->fields;
    *count = r->field_count;
    return 1;
}

/* Closes the current field with its NUL (room for it is always kept). */
static bool end_field(csv_reader *r)
{
    if (!reserve(r, 1))
        return false;
    r->text[r->used++] = '\0';
    return true;
}

int csv_reader_next(csv_reader *r, char ***fields, size_t *count)
{
    int split = split_in_place(r, fields, count);
    if (split)
        return split > 0 ? 1 : out_of_memory(r);
    for (;;) {
        r->used = 0;
        r->field_count = 0;
        r->record_line = r->line;
        bool quoted_any = false;
        if (!start_field(r))
            return out_of_memory(r);
        enum field_state state = FIELD_START;
        bool record_done = false;
        while (!record_done) {
            int more = refill(r);
            if (more < 0)
                return -1;
            if (more == 0) {
                if (state == QUOTED)
                    return fail(r, "a quoted field runs to the end of the file");
                if (r->field_count == 1 && r->used == 0 && !quoted_any)
                    return 0;
                break;
            }
            if (state == UNQUOTED || state == QUOTED) {
                if (!append_run(r, state == QUOTED))
                    return out_of_memory(r);
                if (r->pos == r->len)
                    continue;
            }
            char c = r->input[r->pos++];
            switch (state) {
            case FIELD_START:
                if (c == '"') {
                    state = QUOTED;
                    quoted_any = true;
                    break;
                }
                /* the byte is the unquoted field's first */
                state = UNQUOTED;
                /* fall through */
            case UNQUOTED:
                if (c == ',') {
                    if (!end_field(r) || !start_field(r))
                        return out_of_memory(r);
                    state = FIELD_START;
                } else if (c == '\n') {
                    r->line++;
                    record_done = true;
                } else if (c != '\r') { /* CR of a CRLF is dropped */
                    if (!reserve(r, 2))
                        return out_of_memory(r);
                    r->text[r->used++] = c;
                }
                break;
            case QUOTED: state = QUOTE_SEEN; break; /* append_run stopped at a quote */
            case QUOTE_SEEN:
                if (c == '"') {
                    if (!reserve(r, 2))
                        return out_of_memory(r);
                    r->text[r->used++] = '"';
                    state = QUOTED;
                } else if (c == ',') {
                    if (!end_field(r) || !start_field(r))
                        return out_of_memory(r);
                    state = FIELD_START;
                } else if (c == '\n') {
                    r->line++;
                    record_done = true;
                } else if (c != '\r') {
                    return fail(r, "a quoted field must end at a comma or the line's end");
                }
                break;
            }
        }
        if (!end_field(r))
            return out_of_memory(r);
        /* A line with nothing on it is no record. */
        if (r->field_count == 1 && r->text[0] == '\0' && !quoted_any)
            continue;
        return finish(r, fields, count);
    }
}
