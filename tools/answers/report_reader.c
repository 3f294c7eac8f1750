/* Owns opening a report of either format and what both formats share:
 * the counters, the metadata, a row's derived fields (report_reader.h). */
#include "report_source.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *const report_identity_names[REPORT_IDENTITY_COUNT] = {
    [REPORT_SEQUENCE] = "sequence",
    [REPORT_KIND] = "kind",
    [REPORT_API_NAME] = "api_name",
    [REPORT_CONTEXT] = "context",
    [REPORT_CONTEXT_API] = "context_api",
    [REPORT_FRAME] = "frame",
    [REPORT_SUBMISSION] = "submission",
    [REPORT_STREAM] = "stream",
    [REPORT_LABEL] = "label",
    [REPORT_PID] = "pid",
    [REPORT_TID] = "tid",
    [REPORT_PIPELINE] = "pipeline",
    [REPORT_PIPELINE_NAME] = "pipeline_name",
    [REPORT_SHADER_HASH] = "shader_hash",
    [REPORT_TARGET] = "target",
    [REPORT_KERNEL] = "kernel",
    [REPORT_BEGIN_NS] = "begin_ns",
    [REPORT_END_NS] = "end_ns",
    [REPORT_DURATION_NS] = "duration_ns",
};

static const char *const exactness_names[] = {
    [EXACTNESS_UNKNOWN] = "unknown",         [EXACTNESS_EXACT] = "exact",
    [EXACTNESS_CONDITIONAL] = "conditional", [EXACTNESS_MODELED] = "modeled",
    [EXACTNESS_MEASURED] = "measured",
};

const char *counter_exactness_name(enum counter_exactness e)
{
    return exactness_names[e];
}

bool counter_exactness_parse(const char *name, enum counter_exactness *out)
{
    for (size_t i = 0; i < sizeof exactness_names / sizeof *exactness_names; i++) {
        if (strcmp(name, exactness_names[i]) == 0) {
            *out = (enum counter_exactness)i;
            return true;
        }
    }
    return false;
}

int report_identity_of(const char *name)
{
    for (int i = 0; i < REPORT_IDENTITY_COUNT; i++)
        if (strcmp(name, report_identity_names[i]) == 0)
            return i;
    return -1;
}

const char *report_metadata_get(const struct report_metadata *m, const char *key)
{
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->keys[i], key) == 0)
            return m->values[i];
    return NULL;
}

bool report_metadata_set(struct report_metadata *m, const char *key, const char *value)
{
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->keys[i], key) == 0) {
            char *copy = strdup(value);
            if (!copy)
                return false;
            free(m->values[i]);
            m->values[i] = copy;
            return true;
        }
    }
    if (m->count == m->capacity) {
        size_t capacity = m->capacity ? 2 * m->capacity : 32;
        char **keys = realloc(m->keys, capacity * sizeof *keys);
        if (!keys)
            return false;
        m->keys = keys;
        char **values = realloc(m->values, capacity * sizeof *values);
        if (!values)
            return false;
        m->values = values;
        m->capacity = capacity;
    }
    m->keys[m->count] = strdup(key);
    m->values[m->count] = strdup(value);
    if (!m->keys[m->count] || !m->values[m->count]) {
        free(m->keys[m->count]);
        free(m->values[m->count]);
        return false;
    }
    m->count++;
    return true;
}

static void metadata_free(struct report_metadata *m)
{
    for (size_t i = 0; i < m->count; i++) {
        free(m->keys[i]);
        free(m->values[i]);
    }
    free(m->keys);
    free(m->values);
}

bool report_add_counter(report_reader *r, const char *symbol, const char *unit,
                        enum counter_exactness exactness, bool derived)
{
    struct report_counter *counters =
        realloc(r->counters, (r->counter_count + 1) * sizeof *counters);
    if (!counters)
        return false;
    r->counters = counters;
    struct report_counter *c = &counters[r->counter_count];
    c->symbol = strdup(symbol);
    c->unit = strdup(unit ? unit : "");
    c->exactness = exactness;
    c->derived = derived;
    if (!c->symbol || !c->unit) {
        free(c->symbol);
        free(c->unit);
        return false;
    }
    r->counter_count++;
    return true;
}

/* A whole unsigned decimal, or false. */
static bool parse_count(const char *text, uint64_t *out)
{
    if (*text < '0' || *text > '9')
        return false;
    uint64_t v = 0;
    for (; *text >= '0' && *text <= '9'; text++) {
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*text - '0');
    }
    *out = v;
    return *text == '\0';
}

bool report_row_finish(report_reader *r, struct report_row *row, unsigned long line, char *error,
                       size_t size)
{
    static const enum report_identity counted[] = {REPORT_SEQUENCE, REPORT_FRAME};
    uint64_t *values[] = {&row->sequence, &row->frame};
    for (size_t i = 0; i < 2; i++) {
        *values[i] = 0;
        const char *text = row->identity[counted[i]];
        if (r->has[counted[i]] && !parse_count(text, values[i])) {
            snprintf(error, size, "%s: line %lu: %s \"%.40s\" is not a whole number", r->path, line,
                     report_identity_names[counted[i]], text);
            return false;
        }
    }
    /* Its name, else its number; pipeline 0 is none (a transfer). */
    row->pipeline = "";
    static const enum report_identity pipelines[] = {REPORT_PIPELINE_NAME, REPORT_PIPELINE,
                                                     REPORT_KERNEL};
    for (size_t i = 0; i < 3 && !row->pipeline[0]; i++)
        row->pipeline = row->identity[pipelines[i]];
    if (strcmp(row->pipeline, "0") == 0 && !row->identity[REPORT_PIPELINE_NAME][0])
        row->pipeline = "";
    row->values = r->values;
    return true;
}

report_reader *report_reader_open(const char *path, char *error, size_t size)
{
    report_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        snprintf(error, size, "%s: out of memory", path);
        return NULL;
    }
    for (int i = 0; i < REPORT_IDENTITY_COUNT; i++)
        r->identity_column[i] = -1;
    r->file = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!r->file) {
        snprintf(error, size, "%s: %s", path, strerror(errno));
        report_reader_close(r);
        return NULL;
    }
    /* The format by content: a JSON report is an object, a CSV begins
     * with its header. */
    int c = getc(r->file);
    while (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        c = getc(r->file);
    if (c == EOF) {
        snprintf(error, size, "%s: %s", path,
                 ferror(r->file) ? strerror(errno) : "empty file, not a tally report");
        report_reader_close(r);
        return NULL;
    }
    ungetc(c, r->file);
    r->json = c == '{';
    bool ok = r->json ? report_json_open(r, error, size) : report_csv_open(r, error, size);
    if (ok && r->counter_count) {
        r->values = calloc(r->counter_count, sizeof *r->values);
        if (!r->values) {
            snprintf(error, size, "%s: out of memory", path);
            ok = false;
        }
    }
    if (!ok) {
        report_reader_close(r);
        return NULL;
    }
    return r;
}

int report_reader_next(report_reader *r, struct report_row *row, char *error, size_t size)
{
    return r->json ? report_json_next(r, row, error, size) : report_csv_next(r, row, error, size);
}

void report_reader_close(report_reader *r)
{
    if (!r)
        return;
    if (r->file && r->file != stdin)
        fclose(r->file);
    csv_reader_close(r->csv);
    json_stream_close(r->stream);
    report_json_close(r);
    for (size_t i = 0; i < r->counter_count; i++) {
        free(r->counters[i].symbol);
        free(r->counters[i].unit);
    }
    free(r->counters);
    free(r->counter_column);
    free(r->values);
    metadata_free(&r->metadata);
    free(r->path);
    free(r);
}

const char *report_reader_path(const report_reader *r)
{
    return r->path;
}

size_t report_reader_counter_count(const report_reader *r)
{
    return r->counter_count;
}

const struct report_counter *report_reader_counter(const report_reader *r, size_t i)
{
    return &r->counters[i];
}

bool report_reader_has(const report_reader *r, enum report_identity identity)
{
    return r->has[identity];
}

bool report_reader_has_pipeline(const report_reader *r)
{
    return r->has[REPORT_PIPELINE_NAME] || r->has[REPORT_PIPELINE] || r->has[REPORT_KERNEL];
}

const struct report_metadata *report_reader_metadata(const report_reader *r)
{
    return &r->metadata;
}
