/*
 * Owns reading a JSON report (docs/reports.md): the members before its
 * commands ("counters"), its commands one at a time, and the members after
 * them ("metadata"). json-c parses each piece the stream captures.
 */
#include "report_source.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool fail(report_reader *r, const char *what, char *error, size_t size)
{
    const char *why = json_stream_error(r->stream);
    if (why[0])
        snprintf(error, size, "%s: %s", r->path, why);
    else
        snprintf(error, size, "%s: line %lu: %s", r->path, json_stream_line(r->stream), what);
    return false;
}

/* The next captured value, parsed; NULL with why in error. One tokener
 * serves every value, reset between them. */
static json_object *parse_next(report_reader *r, char *error, size_t size)
{
    size_t length;
    const char *text = json_stream_capture(r->stream, &length);
    if (!text) {
        fail(r, "", error, size);
        return NULL;
    }
    if (!r->tokener && !(r->tokener = json_tokener_new())) {
        snprintf(error, size, "%s: out of memory", r->path);
        return NULL;
    }
    json_tokener_reset(r->tokener);
    json_object *value = json_tokener_parse_ex(r->tokener, text, (int)length);
    enum json_tokener_error why = json_tokener_get_error(r->tokener);
    if (!value || why != json_tokener_success) {
        fail(r, json_tokener_error_desc(why), error, size);
        json_object_put(value);
        return NULL;
    }
    return value;
}

static bool expect(report_reader *r, int c, const char *what, char *error, size_t size)
{
    if (json_stream_peek(r->stream) != c)
        return fail(r, what, error, size);
    json_stream_skip(r->stream);
    return true;
}

static bool read_counters(report_reader *r, json_object *list, char *error, size_t size)
{
    if (!json_object_is_type(list, json_type_array)) {
        snprintf(error, size, "%s: \"counters\" is not a list", r->path);
        return false;
    }
    r->counters_listed = true;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *c = json_object_array_get_idx(list, i), *symbol, *unit, *exactness;
        if (!json_object_object_get_ex(c, "symbol", &symbol)) {
            snprintf(error, size, "%s: counter %zu has no symbol", r->path, i + 1);
            return false;
        }
        enum counter_exactness e = EXACTNESS_UNKNOWN;
        if (json_object_object_get_ex(c, "exactness", &exactness) &&
            !counter_exactness_parse(json_object_get_string(exactness), &e))
            e = EXACTNESS_UNKNOWN;
        json_object *derived;
        bool is_derived =
            json_object_object_get_ex(c, "derived", &derived) && json_object_get_boolean(derived);
        if (!report_add_counter(
                r, json_object_get_string(symbol),
                json_object_object_get_ex(c, "unit", &unit) ? json_object_get_string(unit) : "", e,
                is_derived)) {
            snprintf(error, size, "%s: out of memory", r->path);
            return false;
        }
    }
    return true;
}

/* Metadata as the sidecar spells it: nested members joined by dots,
 * list elements numbered from 0 (driver.0.name). */
static bool flatten(report_reader *r, const char *prefix, json_object *value)
{
    char key[256];
    if (json_object_is_type(value, json_type_object)) {
        json_object_object_foreach(value, name, member)
        {
            snprintf(key, sizeof key, "%s%s%s", prefix, prefix[0] ? "." : "", name);
            /* The report's list is "drivers"; the sidecar's keys say driver.N. */
            if (strcmp(key, "drivers") == 0)
                snprintf(key, sizeof key, "driver");
            if (!flatten(r, key, member))
                return false;
        }
        return true;
    }
    if (json_object_is_type(value, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(value); i++) {
            snprintf(key, sizeof key, "%s.%zu", prefix, i);
            if (!flatten(r, key, json_object_array_get_idx(value, i)))
                return false;
        }
        return true;
    }
    const char *text = value ? json_object_get_string(value) : "";
    return report_metadata_set(&r->metadata, prefix, text);
}

/* Members until "commands" opens (at open) or until the object closes
 * (after the commands). */
static bool read_members(report_reader *r, bool at_open, char *error, size_t size)
{
    for (;;) {
        int c = json_stream_peek(r->stream);
        if (c == '}') {
            json_stream_skip(r->stream);
            r->commands_ended = true;
            return true;
        }
        json_object *key = parse_next(r, error, size);
        if (!key)
            return false;
        bool is_commands = strcmp(json_object_get_string(key), "commands") == 0;
        bool is_counters = strcmp(json_object_get_string(key), "counters") == 0;
        bool is_metadata = strcmp(json_object_get_string(key), "metadata") == 0;
        json_object_put(key);
        if (!expect(r, ':', "a member's name must be followed by ':'", error, size))
            return false;
        if (is_commands && at_open)
            return expect(r, '[', "\"commands\" must be a list", error, size);
        json_object *value = parse_next(r, error, size);
        if (!value)
            return false;
        bool ok = true;
        if (is_counters && !r->counters_listed)
            ok = read_counters(r, value, error, size);
        else if (is_metadata && !(ok = flatten(r, "", value)))
            snprintf(error, size, "%s: out of memory", r->path);
        json_object_put(value);
        if (!ok)
            return false;
        if (json_stream_peek(r->stream) == ',')
            json_stream_skip(r->stream);
        else if (json_stream_peek(r->stream) != '}')
            return fail(r, "members must be separated by ','", error, size);
    }
}

bool report_json_open(report_reader *r, char *error, size_t size)
{
    r->stream = json_stream_open(r->file);
    if (!r->stream) {
        snprintf(error, size, "%s: out of memory", r->path);
        return false;
    }
    if (!expect(r, '{', "a JSON report is an object", error, size) ||
        !read_members(r, true, error, size))
        return false;
    if (r->commands_ended) {
        snprintf(error, size, "%s: not a tally report: no \"commands\" list", r->path);
        return false;
    }
    for (int i = 0; i < REPORT_IDENTITY_COUNT; i++)
        r->has[i] = i == REPORT_SEQUENCE; /* the rest as the first command shows them */
    return true;
}

/* Without a "counters" list before the commands, the first command's
 * values name the counters. */
static bool counters_from(report_reader *r, json_object *values, char *error, size_t size)
{
    r->counters_listed = true;
    if (values) {
        json_object_object_foreach(values, name, value)
        {
            (void)value;
            if (!report_add_counter(r, name, "", EXACTNESS_UNKNOWN, false)) {
                snprintf(error, size, "%s: out of memory", r->path);
                return false;
            }
        }
    }
    free(r->values);
    r->values = calloc(r->counter_count ? r->counter_count : 1, sizeof *r->values);
    if (!r->values) {
        snprintf(error, size, "%s: out of memory", r->path);
        return false;
    }
    return true;
}

static bool read_value(report_reader *r, json_object *values, size_t k, unsigned long line,
                       char *error, size_t size)
{
    json_object *v = NULL;
    struct counter_value *out = &r->values[k];
    *out = (struct counter_value){0};
    if (!values || !json_object_object_get_ex(values, r->counters[k].symbol, &v) || !v)
        return true; /* an absent value counts as 0, as an empty CSV field */
    if (json_object_is_type(v, json_type_int)) {
        out->integer = json_object_get_int64(v);
        return true;
    }
    if (json_object_is_type(v, json_type_double)) {
        out->real = json_object_get_double(v);
        out->decimal = true;
        return true;
    }
    snprintf(error, size, "%s: line %lu: %s is not a number", r->path, line, r->counters[k].symbol);
    return false;
}

/* The command's identity members as text, numbers written as the CSV
 * writes them. */
static void read_identity(report_reader *r, json_object *command, struct report_row *row)
{
    for (int i = 0; i < REPORT_IDENTITY_COUNT; i++)
        row->identity[i] = "";
    json_object_object_foreach(command, name, value)
    {
        int i = report_identity_of(name);
        if (i < 0 || !value)
            continue;
        r->has[i] = true;
        if (json_object_is_type(value, json_type_int)) {
            int64_t n = json_object_get_int64(value);
            if (n == INT64_MAX)
                snprintf(r->identity_text[i], sizeof r->identity_text[i], "%" PRIu64,
                         json_object_get_uint64(value));
            else
                snprintf(r->identity_text[i], sizeof r->identity_text[i], "%" PRId64, n);
            row->identity[i] = r->identity_text[i];
        } else {
            row->identity[i] = json_object_get_string(value);
        }
    }
}

int report_json_next(report_reader *r, struct report_row *row, char *error, size_t size)
{
    if (r->command) {
        json_object_put(r->command);
        r->command = NULL;
    }
    if (r->commands_ended)
        return 0;
    if (json_stream_peek(r->stream) == ']') {
        json_stream_skip(r->stream);
        if (json_stream_peek(r->stream) == ',')
            json_stream_skip(r->stream);
        bool ok = read_members(r, false, error, size);
        r->commands_ended = true;
        return ok ? 0 : -1;
    }
    unsigned long line = json_stream_line(r->stream);
    r->command = parse_next(r, error, size);
    if (!r->command)
        return -1;
    if (!json_object_is_type(r->command, json_type_object)) {
        snprintf(error, size, "%s: line %lu: a command is not an object", r->path, line);
        return -1;
    }
    json_object *values = NULL;
    json_object_object_get_ex(r->command, "values", &values);
    if (!r->counters_listed && !counters_from(r, values, error, size))
        return -1;
    read_identity(r, r->command, row);
    for (size_t k = 0; k < r->counter_count; k++)
        if (!read_value(r, values, k, line, error, size))
            return -1;
    int c = json_stream_peek(r->stream);
    if (c == ',')
        json_stream_skip(r->stream);
    else if (c != ']') {
        fail(r, "commands must be separated by ','", error, size);
        return -1;
    }
    return report_row_finish(r, row, line, error, size) ? 1 : -1;
}

void report_json_close(report_reader *r)
{
    if (r->command)
        json_object_put(r->command);
    r->command = NULL;
    if (r->tokener)
        json_tokener_free(r->tokener);
    r->tokener = NULL;
}
