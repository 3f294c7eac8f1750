/*
 * GL_INTEL_performance_query over the engine. Query ids 1..N are the
 * catalogue's metric sets in order; counter ids 1..M are a set's counters in
 * order. Data layout of a query: counters in id order, each at the previous
 * end rounded up to its own size (4 or 8 bytes), no tail padding. Only one
 * metric set of a concurrent group can be active at a time in a context.
 */
#include "gl_shim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct intel_query {
    uint32_t metric_set; /* catalogue index */
    tally_results *results;
    bool active;
    bool ended; /* begun and ended at least once */
};

typedef struct set_layout {
    uint32_t *offsets; /* per counter */
    uint32_t size;
} set_layout;

static pthread_once_t layouts_once = PTHREAD_ONCE_INIT;
static set_layout *layouts;
static uint32_t layout_count;

static uint32_t storage_size(tally_storage storage)
{
    return storage == TALLY_STORAGE_UINT32 || storage == TALLY_STORAGE_INT32 ||
                   storage == TALLY_STORAGE_FLOAT32
               ? 4
               : 8;
}

static void compute_layouts(void)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    uint32_t count = cat ? tally_catalogue_metric_set_count(cat) : 0;
    set_layout *all = calloc(count ? count : 1, sizeof(*all));
    if (!all)
        return;
    for (uint32_t s = 0; s < count; s++) {
        const tally_metric_set_info *set = tally_catalogue_metric_set(cat, s);
        all[s].offsets = calloc(set->counter_count ? set->counter_count : 1, sizeof(uint32_t));
        if (!all[s].offsets)
            return; /* layouts stays NULL: the extension shows no queries */
        uint32_t end = 0;
        for (uint32_t c = 0; c < set->counter_count; c++) {
            uint32_t size = storage_size(tally_catalogue_counter(cat, set->counters[c])->storage);
            uint32_t offset = (end + size - 1) / size * size;
            all[s].offsets[c] = offset;
            end = offset + size;
        }
        all[s].size = end;
    }
    layouts = all;
    layout_count = count;
}

static const set_layout *layout_of(uint32_t metric_set)
{
    pthread_once(&layouts_once, compute_layouts);
    return layouts && metric_set < layout_count ? &layouts[metric_set] : NULL;
}

static const tally_metric_set_info *set_of(GLuint query_id)
{
    if (query_id == 0 || !layout_of(query_id - 1))
        return NULL;
    return tally_catalogue_metric_set(tally_gl_catalogue(), query_id - 1);
}

static intel_query *query_of(tally_gl_context *ctx, GLuint handle)
{
    if (!ctx || handle == 0 || handle > ctx->query_count)
        return NULL;
    return ctx->queries[handle - 1];
}

/* The INTEL string rule: at most length - 1 characters and a terminator. */
static void copy_clipped(const char *text, GLuint length, GLchar *out)
{
    if (!out || length == 0)
        return;
    size_t copied = strlen(text);
    if (copied > length - 1)
        copied = length - 1;
    memcpy(out, text, copied);
    out[copied] = '\0';
}

#define EXPORT __attribute__((visibility("default")))

EXPORT void glGetFirstPerfQueryIdINTEL(GLuint *queryId)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!queryId) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!set_of(1)) {
        *queryId = 0;
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    *queryId = 1;
}

EXPORT void glGetNextPerfQueryIdINTEL(GLuint queryId, GLuint *nextQueryId)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!nextQueryId) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!set_of(queryId)) {
        *nextQueryId = 0;
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    *nextQueryId = set_of(queryId + 1) ? queryId + 1 : 0;
}

EXPORT void glGetPerfQueryIdByNameINTEL(GLchar *queryName, GLuint *queryId)
{
    tally_gl_context *ctx = tally_gl_current();
    if (!queryName || !queryId) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    for (GLuint id = 1; set_of(id); id++) {
        if (strcmp(set_of(id)->symbol, queryName) == 0) {
            *queryId = id;
            return;
        }
    }
    tally_gl_error(ctx, GL_INVALID_VALUE);
}

/* Active queries of the context in the concurrent group of a metric set. */
static GLuint active_in_group(tally_gl_context *ctx, uint32_t metric_set)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    uint32_t group = tally_catalogue_metric_set(cat, metric_set)->concurrent_group;
    GLuint active = 0;
    for (uint32_t i = 0; ctx && i < ctx->query_count; i++) {
        intel_query *q = ctx->queries[i];
        if (q && q->active &&
            tally_catalogue_metric_set(cat, q->metric_set)->concurrent_group == group)
            active++;
    }
    return active;
}

EXPORT void glGetPerfQueryInfoINTEL(GLuint queryId, GLuint queryNameLength, GLchar *queryName,
                                    GLuint *dataSize, GLuint *noCounters, GLuint *noInstances,
                                    GLuint *capsMask)
{
    tally_gl_context *ctx = tally_gl_current();
    const tally_metric_set_info *set = set_of(queryId);
    if (!set) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    copy_clipped(set->symbol, queryNameLength, queryName);
    if (dataSize)
        *dataSize = layout_of(queryId - 1)->size;
    if (noCounters)
        *noCounters = set->counter_count;
    if (noInstances)
        *noInstances = active_in_group(ctx, queryId - 1);
    if (capsMask)
        *capsMask = GL_PERFQUERY_SINGLE_CONTEXT_INTEL;
}

static GLuint counter_type_of(const tally_counter_info *counter)
{
    switch (counter->semantic) {
    case TALLY_SEMANTIC_DURATION: return GL_PERFQUERY_COUNTER_DURATION_RAW_INTEL;
    case TALLY_SEMANTIC_THROUGHPUT: return GL_PERFQUERY_COUNTER_THROUGHPUT_INTEL;
    case TALLY_SEMANTIC_RATIO:
        return counter->unit == TALLY_UNIT_PERCENTAGE ? GL_PERFQUERY_COUNTER_DURATION_NORM_INTEL
                                                      : GL_PERFQUERY_COUNTER_RAW_INTEL;
    case TALLY_SEMANTIC_TIMESTAMP: return GL_PERFQUERY_COUNTER_TIMESTAMP_INTEL;
    default: return GL_PERFQUERY_COUNTER_EVENT_INTEL;
    }
}

static GLuint data_type_of(const tally_counter_info *counter)
{
    switch (counter->storage) {
    case TALLY_STORAGE_UINT32:
    case TALLY_STORAGE_INT32: return GL_PERFQUERY_COUNTER_DATA_UINT32_INTEL;
    case TALLY_STORAGE_FLOAT32: return GL_PERFQUERY_COUNTER_DATA_FLOAT_INTEL;
    case TALLY_STORAGE_FLOAT64: return GL_PERFQUERY_COUNTER_DATA_DOUBLE_INTEL;
    default: return GL_PERFQUERY_COUNTER_DATA_UINT64_INTEL;
    }
}

EXPORT void glGetPerfCounterInfoINTEL(GLuint queryId, GLuint counterId, GLuint counterNameLength,
                                      GLchar *counterName, GLuint counterDescLength,
                                      GLchar *counterDesc, GLuint *counterOffset,
                                      GLuint *counterDataSize, GLuint *counterTypeEnum,
                                      GLuint *counterDataTypeEnum, GLuint64 *rawCounterMaxValue)
{
    tally_gl_context *ctx = tally_gl_current();
    const tally_metric_set_info *set = set_of(queryId);
    if (!set || counterId == 0 || counterId > set->counter_count) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    const tally_counter_info *counter =
        tally_catalogue_counter(tally_gl_catalogue(), set->counters[counterId - 1]);
    copy_clipped(tally_gl_counter_name(counter), counterNameLength, counterName);
    copy_clipped(counter->description, counterDescLength, counterDesc);
    if (counterOffset)
        *counterOffset = layout_of(queryId - 1)->offsets[counterId - 1];
    if (counterDataSize)
        *counterDataSize = storage_size(counter->storage);
    if (counterTypeEnum)
        *counterTypeEnum = counter_type_of(counter);
    if (counterDataTypeEnum)
        *counterDataTypeEnum = data_type_of(counter);
    if (rawCounterMaxValue)
        *rawCounterMaxValue = counter->unit == TALLY_UNIT_PERCENTAGE ? 100 : 0;
}

/* Query handles a context hands out over its life; beyond it,
 * GL_OUT_OF_MEMORY. */
#define MAX_QUERIES (1u << 20)

EXPORT void glCreatePerfQueryINTEL(GLuint queryId, GLuint *queryHandle)
{
    tally_gl_context *ctx = tally_gl_current();
    const tally_metric_set_info *set = set_of(queryId);
    if (!set || !queryHandle) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!ctx)
        return;
    intel_query *q = calloc(1, sizeof(*q));
    if (q && ctx->query_count == ctx->query_capacity && ctx->query_capacity < MAX_QUERIES) {
        /* Doubling, capped: handles are GLuint and never reused. */
        uint32_t capacity = ctx->query_capacity ? ctx->query_capacity : 4;
        capacity = capacity > MAX_QUERIES / 2 ? MAX_QUERIES : capacity * 2;
        intel_query **grown = realloc(ctx->queries, (size_t)capacity * sizeof(*grown));
        if (grown) {
            ctx->queries = grown;
            ctx->query_capacity = capacity;
        }
    }
    if (!q || ctx->query_count == ctx->query_capacity) {
        free(q);
        *queryHandle = 0;
        tally_gl_error(ctx, GL_OUT_OF_MEMORY);
        return;
    }
    q->metric_set = queryId - 1;
    ctx->queries[ctx->query_count++] = q;
    *queryHandle = ctx->query_count;
}

static void free_query(tally_gl_context *ctx, intel_query *q)
{
    if (q->active && ctx->stream && q->results)
        tally_gl_marker_end(ctx, q->results);
    if (q->results)
        tally_results_release(q->results);
    free(q);
}

EXPORT void glDeletePerfQueryINTEL(GLuint queryHandle)
{
    tally_gl_context *ctx = tally_gl_current();
    intel_query *q = query_of(ctx, queryHandle);
    if (!q) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    free_query(ctx, q);
    ctx->queries[queryHandle - 1] = NULL;
}

EXPORT void glBeginPerfQueryINTEL(GLuint queryHandle)
{
    tally_gl_context *ctx = tally_gl_current();
    intel_query *q = query_of(ctx, queryHandle);
    if (!q) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    const tally_catalogue *cat = tally_gl_catalogue();
    uint32_t group = tally_catalogue_metric_set(cat, q->metric_set)->concurrent_group;
    bool conflict = q->active;
    for (uint32_t i = 0; !conflict && i < ctx->query_count; i++) {
        intel_query *other = ctx->queries[i];
        conflict = other && other->active && other->metric_set != q->metric_set &&
                   tally_catalogue_metric_set(cat, other->metric_set)->concurrent_group == group;
    }
    const tally_metric_set_info *set = tally_catalogue_metric_set(cat, q->metric_set);
    tally_results *results = NULL;
    if (conflict || !ctx->stream ||
        tally_results_create(tally_context_device(ctx->engine), set->counters, set->counter_count,
                             1, &results) != TALLY_OK) {
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    if (tally_gl_marker_begin(ctx, results, set->counters, set->counter_count) != TALLY_OK) {
        tally_results_release(results);
        tally_gl_error(ctx, GL_OUT_OF_MEMORY);
        return;
    }
    if (q->results)
        tally_results_release(q->results);
    q->results = results;
    q->active = true;
    q->ended = false;
}

EXPORT void glEndPerfQueryINTEL(GLuint queryHandle)
{
    tally_gl_context *ctx = tally_gl_current();
    intel_query *q = query_of(ctx, queryHandle);
    if (!q) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    if (!q->active) {
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    tally_gl_marker_end(ctx, q->results);
    q->active = false;
    q->ended = true;
}

/* Each counter at its offset, for the counters that fit in data_size. */
static GLuint write_data(const intel_query *q, GLuint data_size, char *data)
{
    const tally_catalogue *cat = tally_gl_catalogue();
    const tally_metric_set_info *set = tally_catalogue_metric_set(cat, q->metric_set);
    const set_layout *layout = layout_of(q->metric_set);
    tally_value *values = calloc(set->counter_count + 1, sizeof(*values));
    if (!values)
        return 0;
    tally_results_get(q->results, 0, values, set->counter_count, NULL);
    GLuint written = 0;
    for (uint32_t c = 0; c < set->counter_count; c++) {
        const tally_counter_info *counter = tally_catalogue_counter(cat, set->counters[c]);
        uint32_t size = storage_size(counter->storage);
        uint32_t offset = layout->offsets[c];
        if (offset + size > data_size)
            break;
        if (counter->storage == TALLY_STORAGE_FLOAT32) {
            float v = (float)values[c].f64;
            memcpy(data + offset, &v, 4);
        } else if (size == 4) {
            uint32_t v = (uint32_t)values[c].u64;
            memcpy(data + offset, &v, 4);
        } else {
            memcpy(data + offset, &values[c], 8);
        }
        written = offset + size;
    }
    free(values);
    return written;
}

EXPORT void glGetPerfQueryDataINTEL(GLuint queryHandle, GLuint flags, GLsizei dataSize, void *data,
                                    GLuint *bytesWritten)
{
    tally_gl_context *ctx = tally_gl_current();
    intel_query *q = query_of(ctx, queryHandle);
    if (!q || !data || !bytesWritten || dataSize < 0) {
        tally_gl_error(ctx, GL_INVALID_VALUE);
        return;
    }
    *bytesWritten = 0;
    if (!q->ended || q->active) {
        tally_gl_error(ctx, GL_INVALID_OPERATION);
        return;
    }
    bool ready = tally_results_get(q->results, 0, NULL, 0, NULL) != TALLY_NOT_READY;
    if (!ready)
        tally_gl_catch_up(ctx); /* submissions held for the driver backend's queries */
    if (!ready && flags == GL_PERFQUERY_FLUSH_INTEL) {
        tally_gl_submit(ctx, "glGetPerfQueryDataINTEL", false);
    } else if (!ready && flags == GL_PERFQUERY_WAIT_INTEL) {
        tally_gl_submit(ctx, "glGetPerfQueryDataINTEL", true);
        ready = tally_results_wait(q->results, 0, UINT64_MAX) == TALLY_OK;
    }
    if (ready)
        *bytesWritten = write_data(q, (GLuint)dataSize, data);
}

void tally_gl_intel_destroy_all(tally_gl_context *ctx)
{
    for (uint32_t i = 0; i < ctx->query_count; i++) {
        if (ctx->queries[i])
            free_query(ctx, ctx->queries[i]);
    }
    free(ctx->queries);
    ctx->queries = NULL;
    ctx->query_count = ctx->query_capacity = 0;
}
