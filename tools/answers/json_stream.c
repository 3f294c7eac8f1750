/* Owns the splitting of a JSON byte stream into whole values (see
 * json_stream.h); what the values mean is json-c's to say. */
#include "json_stream.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { INPUT_BYTES = 1 << 16, MAX_DEPTH = 512 };

struct json_stream {
    FILE *file;
    size_t pos, len;
    unsigned long line;
    char *value;
    size_t used, capacity;
    char error[160];
    unsigned char input[INPUT_BYTES];
};

json_stream *json_stream_open(FILE *file)
{
    json_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->file = file;
    s->line = 1;
    return s;
}

void json_stream_close(json_stream *s)
{
    if (!s)
        return;
    free(s->value);
    free(s);
}

unsigned long json_stream_line(const json_stream *s)
{
    return s->line;
}

const char *json_stream_error(const json_stream *s)
{
    return s->error;
}

/* The next byte, not consumed, or EOF. */
static int look(json_stream *s)
{
    if (s->pos == s->len) {
        s->pos = 0;
        s->len = fread(s->input, 1, sizeof s->input, s->file);
        if (s->len == 0) {
            if (ferror(s->file))
                snprintf(s->error, sizeof s->error, "cannot read: %s",
                         strerror(errno ? errno : EIO));
            return EOF;
        }
    }
    return s->input[s->pos];
}

/* The next byte, consumed, or EOF. */
static int next_byte(json_stream *s)
{
    int c = look(s);
    if (c != EOF) {
        s->pos++;
        s->line += c == '\n';
    }
    return c;
}

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int json_stream_peek(json_stream *s)
{
    int c;
    while ((c = look(s)) != EOF && is_space(c))
        next_byte(s);
    return c;
}

void json_stream_skip(json_stream *s)
{
    next_byte(s);
}

static bool put(json_stream *s, int c)
{
    if (s->used + 2 > s->capacity) {
        size_t capacity = s->capacity ? 2 * s->capacity : 4096;
        char *value = realloc(s->value, capacity);
        if (!value) {
            snprintf(s->error, sizeof s->error, "out of memory at line %lu", s->line);
            return false;
        }
        s->value = value;
        s->capacity = capacity;
    }
    s->value[s->used++] = (char)c;
    return true;
}

static const char *fail(json_stream *s, const char *what)
{
    if (!s->error[0])
        snprintf(s->error, sizeof s->error, "line %lu: %s", s->line, what);
    return NULL;
}

/* The rest of a string whose opening quote is captured already. */
static bool capture_string(json_stream *s)
{
    for (;;) {
        int c = next_byte(s);
        if (c == EOF || !put(s, c))
            return false;
        if (c == '"')
            return true;
        if (c == '\\') {
            c = next_byte(s);
            if (c == EOF || !put(s, c))
                return false;
        }
    }
}

const char *json_stream_capture(json_stream *s, size_t *length)
{
    s->used = 0;
    s->error[0] = '\0';
    int c = json_stream_peek(s);
    if (c == EOF)
        return fail(s, "the document ends where a value should be");
    if (c == ',' || c == ':' || c == ']' || c == '}')
        return fail(s, "a value is missing");
    int depth = 0;
    do {
        c = next_byte(s);
        if (c == EOF)
            return fail(s, "the document ends inside a value");
        if (depth == 0 && c != '"' && c != '{' && c != '[') {
            /* a number or a literal: up to the byte that ends it */
            if (!put(s, c))
                return NULL;
            for (int d = look(s);
                 d != EOF && !is_space(d) && d != ',' && d != ']' && d != '}' && d != ':';
                 d = look(s)) {
                next_byte(s);
                if (!put(s, d))
                    return NULL;
            }
            break;
        }
        if (!put(s, c))
            return NULL;
        if (c == '"') {
            if (!capture_string(s))
                return fail(s, "the document ends inside a string");
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH)
                return fail(s, "values nest too deep");
        } else if (c == '}' || c == ']') {
            depth--;
        }
    } while (depth > 0);
    s->value[s->used] = '\0';
    *length = s->used;
    return s->value;
}
