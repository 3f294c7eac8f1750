/*
 * GL_AMD_performance_monitor over the engine. Groups are the catalogue's
 * groups (id = catalogue group index) with their per-pass capacity as
 * maxActiveCounters; a counter's id is its position in its group. A monitor
 * is a results object of one slot; Begin/End are markers in the context's
 * stream, so values are available once the context's work up to End was
 * submitted (glFlush, glFinish, a swap or a blocking read) and executed.
 */
#include "gl_shim.h"

#include <stdlib.h>
#include <string.h>

struct amd_monitor {
    bool *selected; /* per catalogue counter */
    tally_results *results;
    uint32_t *result_counters; /* catalogue indices, in record order */
    uint32_t result_count;
    bool active;
    bool ended; /* Begin/End happened since the last selection */
};

static const tally_group_info *group_of(GLuint group)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    if (!cat || group >= tally_catalogue_group_count(cat))
        return NULL;
    return tally_catalogue_group(cat, group);
}

static const tally_counter_info *counter_of(GLuint group, GLuint counter)
{
    const tally_group_info *info = group_of(group);
    if (!info || counter >= info->counter_count)
        return NULL;
    return tally_catalogue_counter(tally_gl_catalogue(), info->counters[counter]);
}

static amd_monitor *monitor_of(tally_gl_context *ctx, GLuint id)
{
    if (!ctx || id == 0 || id > ctx->monitor_count)
        return NULL;
    return ctx->monitors[id - 1];
}

/* The AMD type of a counter: percentages and floating point are floats on
 * the wire; 64-bit integers are UNSIGNED_INT64_AMD. */
static GLenum type_of(const tally_counter_info *counter)
{
    switch (counter->storage) {
    case TALLY_STORAGE_FLOAT32:
    case TALLY_STORAGE_FLOAT64:
        return counter->unit == TALLY_UNIT_PERCENTAGE ? GL_PERCENTAGE_AMD : GL_FLOAT;
    case TALLY_STORAGE_UINT32:
    case TALLY_STORAGE_INT32: return GL_UNSIGNED_INT;
    default: return GL_UNSIGNED_INT64_AMD;
    }
}

static size_t value_size(GLenum type)
{
    return type == GL_UNSIGNED_INT64_AMD ? 8 : 4;
}

void tally_gl_copy_string_amd(const char *text, GLsizei buf_size, GLsizei *length, GLchar *buf)
{
    size_t text_length = strlen(text);
    if (buf_size == 0 || !buf) {
        if (length)
            *length = (GLsizei)text_length;
        return;
    }
    size_t copied = text_length < (size_t)buf_size ? text_length : (size_t)buf_size;
    memcpy(buf, text, copied);
    if (copied < (size_t)buf_size)
        buf[copied] = '\0';
    if (length)
        *length = (GLsizei)copied;
}

#define EXPORT __attribute__((visibility("default")))

EXPORT void glGetPerfMonitorGroupsAMD(GLint *numGroups, GLsizei groupsSize, GLuint *groups)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    uint32_t count = cat ? tally_catalogue_group_count(cat) : 0;
    if (numGroups)
        *numGroups = (GLint)count;
    for (GLsizei i = 0; groups && i < groupsSize && (uint32_t)i < count; i++)
        groups[i] = (GLuint)i;
}

EXPORT void glGetPerfMonitorCountersAMD(GLuint group, GLint *numCounters, GLint *maxActiveCounters,
                                        GLsizei counterSize, GLuint *counters)
{
    const tally_group_info *info = group_of(group);
    if (!info) {
        tally_gl_error(tally_gl_current(), GL_INVALID_VALUE);
        return;
    }
    if (numCounters)
        *numCounters = (GLint)info->counter_count;
    if (maxActiveCounters)
        *maxActiveCounters = (GLint)info->capacity;
    for (GLsizei i = 0; counters && i < counterSize && (uint32_t)i < info->counter_count; i++)
        counters[i] = (GLuint)i;
}

EXPORT void glGetPerfMonitorGroupStringAMD(GLuint group, GLsizei bufSize, GLsizei *length,
                                           GLchar *groupString)
{
    const tally_group_info *info = group_of(group);
    if (!info || bufSize < 0) {
        tally_gl_error(tally_gl_current(), GL_INVALID_VALUE);
        return;
    }
    tally_gl_copy_string_amd(info->symbol, bufSize, length, groupString);
}

EXPORT void glGetPerfMonitorCounterStringAMD(GLuint group, GLuint counter, GLsizei bufSize,
                                             GLsizei *length, GLchar *counterString)
{
    const tally_counter_info *info = counter_of(group, counter);
    if (!info || bufSize < 0) {
        tally_gl_error(tally_gl_current(), GL_INVALID_VALUE);
        return;
    }
    tally_gl_copy_string_amd(tally_gl_counter_name(info), bufSize, length, counterString);
}

EXPORT void glGetPerfMonitorCounterInfoAMD(GLuint group, GLuint counter, GLenum pname, void *data)
{
    const tally_counter_info *info = counter_of(group, counter);
    if (!info) {
        tally_gl_error(tally_gl_current(), GL_INVALID_VALUE);
        return;
    }
    GLenum type = type_of(info);
    if (pname == GL_COUNTER_TYPE_AMD) {
        if (data)
            *(GLenum *)data = type;
        return;
    }
    if (pname != GL_COUNTER_RANGE_AMD) {
        tally_gl_error(tally_gl_current(), GL_INVALID_ENUM);
        return;
    }
    if (!data)
        return;
    if (type == GL_PERCENTAGE_AMD) {
        GLfloat range[2] = {0.0f, 100.0f};
        memcpy(data, range, sizeof(range));
    } else if (type == GL_FLOAT) {
        GLfloat range[2] = {(GLfloat)info->min_value.f64, (GLfloat)info->max_value.f64};
        memcpy(data, range, sizeof(range));
    } else if (type == GL_UNSIGNED_INT) {
        GLuint range[2] = {(GLuint)info->min_value.u64, (GLuint)info->max_value.u64};
        memcpy(data, range, sizeof(range));
    } else {
        GLuint64 range[2] = {info->min_value.u64, info->max_value.u64};
        memcpy(data, range, sizeof(range));
    }
}

static void free_results(amd_monitor *m)
{
    if (m->results)
        tally_results_release(m->results);
    m->results = NULL;
    free(m->result_counters);
    m->result_counters = NULL;
    m->result_count = 0;
}

static void free_monitor(tally_gl_context *ctx, amd_monitor *m)
{
    if (m->active && ctx->stream && m->results)
        tally_gl_marker_end(ctx, m->results);
    free_results(m);
    free(m->selected);
    free(m);
}

/* Monitor ids are never reused, so a context holds at most this many over
 * its life; a request beyond it is GL_OUT_OF_MEMORY, as one the allocator
 * refused would be (the extension defines no error of its own for it). */
#define MAX_MONITORS (1u << 20)

/* Room for `more` monitors after the context's; false if not possible. */
static bool reserve_monitors(tally_gl_context *ctx, uint32_t more)
{
    if (more > MAX_MONITORS - ctx->monitor_count)
        return false;
    uint32_t needed = ctx->monitor_count + more;
    if (needed <= ctx->monitor_capacity)
        return true;
    /* Doubling, in 64 bits and capped, so it can neither wrap nor spin. */
    uint64_t capacity = ctx->monitor_capacity ? (uint64_t)ctx->monitor_capacity * 2 : 8;
    if (capacity < needed)
        capacity = needed;
    if (capacity > MAX_MONITORS)
        capacity = MAX_MONITORS;
    amd_monitor **grown = realloc(ctx->monitors, (size_t)capacity * sizeof(*grown));
    if (!grown)
        return false;
    ctx->monitors = grown;
    ctx->monitor_capacity = (uint32_t)capacity;
    return true;
}

EXPORT void glGenPerfMonitorsAMD(GLsizei n, GLuint *monitors)
{
    tally_gl_context *ctx = tally_gl_current();
    if (n < 0) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!ctx || !monitors)
        return;
    if (!reserve_monitors(ctx, (uint32_t)n)) {
        tally_gl_error(ctx, GL_OUT_OF_MEMORY);
        return;
    }
    const tally_catalogue *cat = tally_gl_catalogue();
    uint32_t counters = cat ? tally_catalogue_counter_count(cat) : 0;
    for (GLsizei i = 0; i < n; i++) {
        amd_monitor *m = calloc(1, sizeof(*m));
        bool *selected = calloc(counters ? counters : 1, sizeof(bool));
        if (!m || !selected) {
            free(m);
            free(selected);
            tally_gl_error(ctx, GL_OUT_OF_MEMORY);
            return;
        }
        m->selected = selected;
        ctx->monitors[ctx->monitor_count++] = m;
        monitors[i] = ctx->monitor_count; /* ids are never reused */
    }
}

EXPORT void glDeletePerfMonitorsAMD(GLsizei n, GLuint *monitors)
{
    tally_gl_context *ctx = tally_gl_current();
    if (n < 0) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    for (GLsizei i = 0; ctx && monitors && i < n; i++) {
        amd_monitor *m = monitor_of(ctx, monitors[i]);
        if (!m) {
            tally_gl_error(ctx, GL_INVALID_VALUE);
            continue;
        }
        free_monitor(ctx, m);
        ctx->monitors[monitors[i] - 1] = NULL;
    }
}

/* Counters in record order: group ascending, then counter id ascending. */
static uint32_t selection_of(const amd_monitor *m, uint32_t *out)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    uint32_t count = 0;
    for (uint32_t g = 0; g < tally_catalogue_group_count(cat); g++) {
        const tally_group_info *group = tally_catalogue_group(cat, g);
        for (uint32_t c = 0; c < group->counter_count; c++) {
            if (m->selected[group->counters[c]])
                out[count++] = group->counters[c];
        }
    }
    return count;
}

/* Starts collecting the current selection; false if it cannot be
 * collected in one pass (or there is no device). */
static bool start(tally_gl_context *ctx, amd_monitor *m)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    if (!ctx->stream || !cat)
        return false;
    uint32_t *counters = malloc((tally_catalogue_counter_count(cat) + 1) * sizeof(uint32_t));
    if (!counters)
        return false;
    uint32_t count = selection_of(m, counters);
    uint32_t passes = 0;
    tally_results *results = NULL;
    if (tally_plan_passes(cat, counters, count, NULL, &passes) != TALLY_OK || passes > 1 ||
        tally_results_create(tally_context_device(ctx->engine), counters, count, 1, &results) !=
            TALLY_OK) {
        free(counters);
        return false;
    }
    if (tally_gl_marker_begin(ctx, results, counters, count) != TALLY_OK) {
        tally_results_release(results);
        free(counters);
        return false;
    }
    free_results(m);
    m->results = results;
    m->result_counters = counters;
    m->result_count = count;
    return true;
}

EXPORT void glSelectPerfMonitorCountersAMD(GLuint monitor, GLboolean enable, GLuint group,
                                           GLint numCounters, GLuint *counterList)
{
    tally_gl_context *ctx = tally_gl_current();
    amd_monitor *m = monitor_of(ctx, monitor);
    const tally_group_info *info = group_of(group);
    if (!m || !info || numCounters < 0) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    for (GLint i = 0; i < numCounters; i++) {
        if (!counterList || counterList[i] >= info->counter_count) {
            tally_gl_error(ctx, GL_INVALID_VALUE);
            return;
        }
    }
    for (GLint i = 0; i < numCounters; i++)
        m->selected[info->counters[counterList[i]]] = enable != 0;
    /* Outstanding results are invalidated; an active monitor goes on
     * collecting the new selection from here. */
    m->ended = false;
    if (m->active) {
        if (m->results && ctx->stream)
            tally_gl_marker_end(ctx, m->results);
        free_results(m);
        start(ctx, m);
    } else {
        free_results(m);
    }
}

EXPORT void glBeginPerfMonitorAMD(GLuint monitor)
{
    tally_gl_context *ctx = tally_gl_current();
    amd_monitor *m = monitor_of(ctx, monitor);
    if (!m) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (m->active || !start(ctx, m)) {
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    m->active = true;
    m->ended = false;
}

EXPORT void glEndPerfMonitorAMD(GLuint monitor)
{
    tally_gl_context *ctx = tally_gl_current();
    amd_monitor *m = monitor_of(ctx, monitor);
    if (!m) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!m->active) {
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    if (m->results)
        tally_gl_marker_end(ctx, m->results);
    m->active = false;
    m->ended = m->results != NULL;
}

static size_t result_size(const amd_monitor *m)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    size_t size = 0;
    for (uint32_t i = 0; i < m->result_count; i++)
        size += 8 + value_size(type_of(tally_catalogue_counter(cat, m->result_counters[i])));
    return size;
}

/* Writes the records {group, counter, value} into data, up to dataSize
 * bytes; returns the bytes written. */
static size_t write_results(amd_monitor *m, GLsizei data_size, GLuint *data)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    tally_value *values = calloc(m->result_count + 1, sizeof(*values));
    if (!values)
        return 0;
    tally_results_get(m->results, 0, values, m->result_count, NULL);
    char *out = (char *)data;
    size_t written = 0;
    for (uint32_t i = 0; i < m->result_count; i++) {
        const tally_counter_info *counter = tally_catalogue_counter(cat, m->result_counters[i]);
        const tally_group_info *group = tally_catalogue_group(cat, counter->group);
        GLuint id = 0;
        while (group->counters[id] != counter->index)
            id++;
        GLenum type = type_of(counter);
        unsigned char record[16];
        GLuint header[2] = {counter->group, id};
        memcpy(record, header, 8);
        if (type == GL_UNSIGNED_INT64_AMD) {
            GLuint64 v =
                counter->storage == TALLY_STORAGE_INT64 && values[i].i64 < 0 ? 0 : values[i].u64;
            memcpy(record + 8, &v, 8);
        } else if (type == GL_UNSIGNED_INT) {
            GLuint v = (GLuint)values[i].u64;
            memcpy(record + 8, &v, 4);
        } else {
            GLfloat v = (GLfloat)values[i].f64;
            memcpy(record + 8, &v, 4);
        }
        size_t record_size = 8 + value_size(type);
        size_t room = (size_t)data_size - written;
        size_t copied = record_size < room ? record_size : room;
        memcpy(out + written, record, copied);
        written += copied;
        if (copied < record_size)
            break;
    }
    free(values);
    return written;
}

EXPORT void glGetPerfMonitorCounterDataAMD(GLuint monitor, GLenum pname, GLsizei dataSize,
                                           GLuint *data, GLsizei *bytesWritten)
{
    tally_gl_context *ctx = tally_gl_current();
    amd_monitor *m = monitor_of(ctx, monitor);
    if (!m) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!data) {
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    if (pname != GL_PERFMON_RESULT_AVAILABLE_AMD && pname != GL_PERFMON_RESULT_SIZE_AMD &&
        pname != GL_PERFMON_RESULT_AMD) {
        tally_gl_error(ctx, GL_INVALID_ENUM);
        return;
    }
    if (bytesWritten)
        *bytesWritten = 0;
    if (dataSize < (GLsizei)sizeof(GLuint))
        return;
    bool available = m->ended && tally_results_get(m->results, 0, NULL, 0, NULL) != TALLY_NOT_READY;
    if (m->ended && !available)
        tally_gl_catch_up(ctx); /* submissions held for the driver backend's queries */
    if (pname == GL_PERFMON_RESULT_AMD && m->ended && !available) {
        /* Reading the result waits for it, as reading a GL query does. */
        tally_gl_submit(ctx, "glGetPerfMonitorCounterDataAMD", true);
        available = tally_results_wait(m->results, 0, UINT64_MAX) == TALLY_OK;
    }
    size_t written = sizeof(GLuint);
    if (pname == GL_PERFMON_RESULT_AVAILABLE_AMD)
        *data = available;
    else if (pname == GL_PERFMON_RESULT_SIZE_AMD)
        *data = m->ended ? (GLuint)result_size(m) : 0;
    else if (available)
        written = write_results(m, dataSize, data);
    else
        *data = 0; /* nothing was measured yet */
    if (bytesWritten)
        *bytesWritten = (GLsizei)written;
}

void tally_gl_amd_destroy_all(tally_gl_context *ctx)
{
    for (uint32_t i = 0; i < ctx->monitor_count; i++) {
        if (ctx->monitors[i])
            free_monitor(ctx, ctx->monitors[i]);
    }
    free(ctx->monitors);
    ctx->monitors = NULL;
    ctx->monitor_count = ctx->monitor_capacity = 0;
}

const char *tally_gl_counter_name(const tally_counter_info *counter)
{
    return tally_counter_symbol_for(counter, TALLY_API_GL);
}
