/*
 * Command queues: creation with or without counters, their side records
 * (one engine context and stream each), submission points, retain/release.
 *
 * One tally context per queue: markers measure the work of their own
 * context, so a counter-enabled event counts its own command and never the
 * work of another queue that ran in between.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

handle_map queue_records;
static pthread_once_t queues_once = PTHREAD_ONCE_INIT;

/* Every enqueue looks its queue up: through the thread's memo. */
_Thread_local handle_memo queue_memo;

static void init_queues(void)
{
    handle_map_init(&queue_records);
}

static handle_map *queue_map(void)
{
    pthread_once(&queues_once, init_queues);
    return &queue_records;
}

queue_record *queue_find(cl_command_queue queue)
{
    handle_entry *hit = handle_map_memo_hit(&queue_records, &queue_memo, queue);
    return (queue_record *)(hit ? hit : handle_map_find_memo(queue_map(), &queue_memo, queue));
}

bool queue_heard(cl_command_queue queue)
{
    queue_record *q = queue_find(queue);
    return q && queue_record_heard(q);
}

void queue_submit_locked(queue_record *q, const char *api_name, uint32_t flags)
{
    if (!q->stream)
        return;
    /* Under the driver backend a recording with kernels waits for their
     * times (driver_profiling.c). */
    if (q->unsubmitted && !profiling_hold_locked(q, api_name, flags))
        tally_submit_stream(tally_context_device(q->context), q->stream, flags, api_name, NULL);
    q->unsubmitted = 0;
    profiling_poll_locked(q);
}

static void submit(queue_record *q, const char *api_name, uint32_t flags)
{
    pthread_mutex_lock(&q->lock);
    queue_submit_locked(q, api_name, flags);
    pthread_mutex_unlock(&q->lock);
}

void queue_submit(queue_record *q, const char *api_name)
{
    submit(q, api_name, 0);
}

void queue_flush(queue_record *q, const char *api_name)
{
    submit(q, api_name, TALLY_SUBMIT_FLUSH);
}

static void destroy_record(handle_entry *entry)
{
    queue_record *q = (queue_record *)entry;
    queue_submit(q, "clReleaseCommandQueue");
    profiling_queue_gone(q);
    if (q->stream)
        tally_stream_destroy(q->stream);
    if (q->context)
        tally_context_destroy(q->context);
    pthread_mutex_destroy(&q->lock);
    free(q->counters);
    free(q->app_properties);
    free(q);
}

/* Settled queues, kept where they stay reachable: exit() does not stop the
 * program's other threads, and one may still hold a record it found. */
static handle_entry *settled;

static void settle_record(handle_entry *entry)
{
    queue_record *q = (queue_record *)entry;
    pthread_mutex_lock(&q->lock);
    queue_submit_locked(q, "exit", 0);
    profiling_orphan_held_locked(q);
    pthread_mutex_unlock(&q->lock);
    entry->next = settled;
    settled = entry;
}

void queues_settle_all(void)
{
    handle_map_drain(queue_map(), settle_record);
}

void queues_forget(void)
{
    handle_map_forget(queue_map());
}

uint32_t queues_live(void)
{
    return handle_map_count(queue_map());
}

static void query_limits(cl_device_id device, device_limits *limits)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    memset(limits, 0, sizeof(*limits));
    size_t sizes[3] = {1, 1, 1};
    cl_uint dims = 0;
    cl->clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof(dims), &dims, NULL);
    if (dims >= 1 && dims <= 3)
        cl->clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(size_t), sizes,
                            NULL);
    memcpy(limits->max_item_sizes, sizes, sizeof(sizes));
    limits->max_group_size = 1;
    cl->clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size_t),
                        &limits->max_group_size, NULL);
    limits->compute_units = 1;
    cl->clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint),
                        &limits->compute_units, NULL);
}

/* The driver under the queue, for the report's metadata. */
static void say_driver(cl_device_id device, tally_context *context)
{
    char name[256] = "", version[256] = "";
    const struct _cl_icd_dispatch *cl = next_cl();
    cl->clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
    cl->clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof version - 1, version, NULL);
    tally_context_set_driver(context, name, version);
}

/* The engine side of a queue; without an engine the queue is passed through. */
static void attach_engine(queue_record *q)
{
    tally_device *d = session_device();
    if (!d)
        return;
    if (tally_context_create(d, "opencl", &q->context) != TALLY_OK) {
        q->context = NULL;
        return;
    }
    if (tally_stream_create(q->context, &q->stream) != TALLY_OK) {
        tally_context_destroy(q->context);
        q->context = NULL;
        q->stream = NULL;
        return;
    }
    q->profiling = profiling_create();
    q->listening = tally_device_listeners(d);
    say_driver(q->device, q->context);
    q->always_heard = q->counter_count > 0;
}

/* Takes ownership of counters and app_properties. profiling_hidden: the
 * shim added CL_QUEUE_PROFILING_ENABLE the program did not ask for. */
static void track_queue(cl_command_queue queue, cl_device_id device, uint32_t *counters,
                        uint32_t counter_count, cl_queue_properties *app_properties,
                        size_t app_property_count, bool profiling_hidden)
{
    queue_record *q = calloc(1, sizeof(*q));
    if (!q) {
        free(counters);
        free(app_properties);
        return;
    }
    q->entry.key = queue;
    q->queue = queue;
    q->device = device;
    q->counters = counters;
    q->counter_count = counter_count;
    q->app_properties = app_properties;
    q->app_property_count = app_property_count;
    q->profiling_hidden = profiling_hidden;
    cl_command_queue_properties mode = 0;
    next_cl()->clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof(mode), &mode, NULL);
    q->out_of_order = (mode & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    pthread_mutex_init(&q->lock, NULL);
    query_limits(device, &q->limits);
    attach_engine(q);
    handle_entry *stale = handle_map_insert(queue_map(), &q->entry);
    if (stale)
        destroy_record(stale);
}

cl_command_queue queue_create_counting(cl_context context, cl_device_id device,
                                       cl_command_queue_properties flags, uint32_t *counters,
                                       uint32_t count, uint32_t query_set, cl_int *err)
{
    cl_command_queue queue = next_cl()->clCreateCommandQueue(context, device, flags, err);
    if (!queue) {
        free(counters);
        return NULL;
    }
    track_queue(queue, device, counters, count, NULL, 0, false);
    /* Set before the queue is handed out: no enqueue has seen the record. */
    queue_record *q = queue_find(queue);
    if (q)
        q->query_set = query_set;
    return queue;
}

/* What the application asked for in a property list. */
typedef struct queue_request {
    size_t pairs; /* key-value pairs before the terminator */
    const cl_performance_counter_config_codeplay *config;
    bool names_counters;
} queue_request;

static cl_int read_request(const cl_queue_properties *properties, queue_request *request)
{
    memset(request, 0, sizeof(*request));
    if (!properties)
        return CL_SUCCESS;
    for (size_t i = 0; properties[2 * i] != 0; i++) {
        request->pairs++;
        if (properties[2 * i] != CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY)
            continue;
        if (request->names_counters)
            return CL_INVALID_VALUE; /* named twice */
        request->names_counters = true;
        request->config =
            (const cl_performance_counter_config_codeplay *)(uintptr_t)properties[2 * i + 1];
    }
    return CL_SUCCESS;
}

/* The enabled counters as catalogue indices, validated: a NULL config or
 * descs, no counter, a uuid not in the catalogue, or a selection that needs
 * more than one pass are CL_INVALID_VALUE. */
static cl_int read_counters(const cl_performance_counter_config_codeplay *config,
                            uint32_t **counters)
{
    if (!config || !config->descs || config->count == 0)
        return CL_INVALID_VALUE;
    uint32_t *indices = malloc(config->count * sizeof(uint32_t));
    if (!indices)
        return CL_OUT_OF_HOST_MEMORY;
    for (cl_uint i = 0; i < config->count; i++) {
        if (!counter_index_of_uuid(config->descs[i].uuid, &indices[i])) {
            free(indices);
            return CL_INVALID_VALUE;
        }
    }
    uint32_t passes = 0;
    if (tally_plan_passes(cl_catalogue(), indices, config->count, NULL, &passes) != TALLY_OK ||
        passes != 1) {
        free(indices);
        return CL_INVALID_VALUE;
    }
    *counters = indices;
    return CL_SUCCESS;
}

/* The list the driver gets: the counter property removed, everything else
 * kept in order, and profiling enabled (see docs/opencl.md). */
static cl_queue_properties *driver_properties(const cl_queue_properties *properties,
                                              const queue_request *request)
{
    cl_queue_properties *list = malloc((2 * request->pairs + 3) * sizeof(*list));
    if (!list)
        return NULL;
    size_t n = 0;
    bool has_flags = false;
    for (size_t i = 0; i < request->pairs; i++) {
        cl_queue_properties key = properties[2 * i], value = properties[2 * i + 1];
        if (key == CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY)
            continue;
        if (key == CL_QUEUE_PROPERTIES) {
            value |= CL_QUEUE_PROFILING_ENABLE;
            has_flags = true;
        }
        list[n++] = key;
        list[n++] = value;
    }
    if (!has_flags) {
        list[n++] = CL_QUEUE_PROPERTIES;
        list[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    list[n] = 0;
    return list;
}

static void set_error(cl_int *errcode_ret, cl_int err)
{
    if (errcode_ret)
        *errcode_ret = err;
}

static cl_command_queue fail(cl_int *errcode_ret, cl_int err)
{
    set_error(errcode_ret, err);
    return NULL;
}

/* Drivers older than OpenCL 2.0 have only clCreateCommandQueue: a list
 * holding nothing but CL_QUEUE_PROPERTIES maps onto it. */
static cl_command_queue create_on_driver(cl_context context, cl_device_id device,
                                         const cl_queue_properties *properties, cl_int *err)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    if (cl->clCreateCommandQueueWithProperties)
        return cl->clCreateCommandQueueWithProperties(context, device, properties, err);
    cl_command_queue_properties flags = 0;
    for (size_t i = 0; properties && properties[i] != 0; i += 2) {
        if (properties[i] != CL_QUEUE_PROPERTIES) {
            *err = CL_INVALID_VALUE;
            return NULL;
        }
        flags = properties[i + 1];
    }
    return cl->clCreateCommandQueue(context, device, flags, err);
}

/* A queue without counters. Under the driver backend every queue profiles
 * its kernels (driver_profiling.c): where the program did not ask for
 * CL_QUEUE_PROFILING_ENABLE the shim adds it, and answers the queue's and
 * its events' queries as the driver would without it. */
static cl_command_queue create_profiled(cl_context context, cl_device_id device,
                                        const cl_queue_properties *properties,
                                        const queue_request *request, cl_int *errcode_ret)
{
    cl_int err;
    bool add = profiling_measures() && !profiling_asked(properties);
    size_t app_count = properties ? 2 * request->pairs + 1 : 0;
    cl_queue_properties *forwarded = add ? driver_properties(properties, request) : NULL;
    cl_queue_properties *app = add ? malloc((app_count ? app_count : 1) * sizeof(*app)) : NULL;
    if (add && (!forwarded || !app)) {
        free(forwarded);
        free(app);
        return fail(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    }
    if (app && app_count)
        memcpy(app, properties, app_count * sizeof(*app));
    cl_command_queue queue = create_on_driver(context, device, add ? forwarded : properties, &err);
    free(forwarded);
    if (queue)
        track_queue(queue, device, NULL, 0, app, app_count, add);
    else
        free(app);
    set_error(errcode_ret, err);
    return queue;
}

static cl_command_queue create_with_properties(cl_context context, cl_device_id device,
                                               const cl_queue_properties *properties,
                                               cl_int *errcode_ret)
{
    queue_request request;
    cl_int err = read_request(properties, &request);
    if (err != CL_SUCCESS)
        return fail(errcode_ret, err);
    /* Without a counter device the extension is not offered: the driver
     * answers the whole list, as it would without the shim. */
    if (!request.names_counters || !session_device())
        return create_profiled(context, device, properties, &request, errcode_ret);

    /* The config is deep-copied: the program may free it after this call. */
    uint32_t *counters = NULL;
    err = read_counters(request.config, &counters);
    if (err != CL_SUCCESS)
        return fail(errcode_ret, err);
    size_t app_count = 2 * request.pairs + 1;
    cl_queue_properties *app = malloc(app_count * sizeof(*app));
    cl_queue_properties *forwarded = driver_properties(properties, &request);
    if (!app || !forwarded) {
        free(app);
        free(forwarded);
        free(counters);
        return fail(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    }
    memcpy(app, properties, app_count * sizeof(*app));
    cl_command_queue queue = create_on_driver(context, device, forwarded, &err);
    free(forwarded);
    if (!queue) {
        free(app);
        free(counters);
        return fail(errcode_ret, err);
    }
    track_queue(queue, device, counters, request.config->count, app, app_count, false);
    set_error(errcode_ret, CL_SUCCESS);
    return queue;
}

SHIM_HIDDEN cl_command_queue CL_API_CALL
shim_clCreateCommandQueueWithProperties(cl_context context, cl_device_id device,
                                        const cl_queue_properties *properties, cl_int *errcode_ret)
{
    return create_with_properties(context, device, properties, errcode_ret);
}
TALLY_CL_EXPORT(clCreateCommandQueueWithProperties);

SHIM_HIDDEN cl_command_queue CL_API_CALL shim_clCreateCommandQueueWithPropertiesKHR(
    cl_context context, cl_device_id device, const cl_queue_properties_khr *properties,
    cl_int *errcode_ret)
{
    return create_with_properties(context, device, properties, errcode_ret);
}
TALLY_CL_EXPORT(clCreateCommandQueueWithPropertiesKHR);

SHIM_HIDDEN cl_command_queue CL_API_CALL
shim_clCreateCommandQueue(cl_context context, cl_device_id device,
                          cl_command_queue_properties properties, cl_int *errcode_ret)
{
    cl_int err;
    bool add = profiling_measures() && !(properties & CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue queue = next_cl()->clCreateCommandQueue(
        context, device, properties | (add ? CL_QUEUE_PROFILING_ENABLE : 0), &err);
    if (queue)
        track_queue(queue, device, NULL, 0, NULL, 0, add);
    set_error(errcode_ret, err);
    return queue;
}
TALLY_CL_EXPORT(clCreateCommandQueue);

SHIM_HIDDEN cl_int CL_API_CALL shim_clRetainCommandQueue(cl_command_queue queue)
{
    cl_int err = next_cl()->clRetainCommandQueue(queue);
    if (err == CL_SUCCESS)
        handle_map_retain(queue_map(), queue);
    return err;
}
TALLY_CL_EXPORT(clRetainCommandQueue);

SHIM_HIDDEN cl_int CL_API_CALL shim_clReleaseCommandQueue(cl_command_queue queue)
{
    queue_record *q = queue_find(queue);
    /* Releasing flushes the queue, so the recorded work is submitted. */
    if (q)
        queue_submit(q, "clReleaseCommandQueue");
    /* Unlinked before the driver's release (handle_map.h). */
    handle_entry *gone = handle_map_release(queue_map(), queue);
    cl_int err = next_cl()->clReleaseCommandQueue(queue);
    if (gone)
        destroy_record(gone);
    return err;
}
TALLY_CL_EXPORT(clReleaseCommandQueue);

SHIM_HIDDEN cl_int CL_API_CALL shim_clGetCommandQueueInfo(cl_command_queue queue,
                                                          cl_command_queue_info name, size_t size,
                                                          void *value, size_t *size_ret)
{
    if (name == CL_QUEUE_PROPERTIES) {
        cl_int err = next_cl()->clGetCommandQueueInfo(queue, name, size, value, size_ret);
        queue_record *q = err == CL_SUCCESS && value ? queue_find(queue) : NULL;
        if (q && q->profiling_hidden) /* the flag the program did not ask for */
            *(cl_command_queue_properties *)value &=
                ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
        return err;
    }
    queue_record *q = name == CL_QUEUE_PROPERTIES_ARRAY ? queue_find(queue) : NULL;
    if (!q || !q->app_properties)
        return next_cl()->clGetCommandQueueInfo(queue, name, size, value, size_ret);
    /* The list the application gave, not the one the driver got. */
    size_t bytes = q->app_property_count * sizeof(cl_queue_properties);
    return shim_answer_info(q->app_properties, bytes, size, value, size_ret);
}
TALLY_CL_EXPORT(clGetCommandQueueInfo);

SHIM_HIDDEN cl_int CL_API_CALL shim_clFlush(cl_command_queue queue)
{
    queue_record *q = queue_find(queue);
    if (q)
        queue_flush(q, "clFlush");
    profiling_poll_orphans();
    return next_cl()->clFlush(queue);
}
TALLY_CL_EXPORT(clFlush);

SHIM_HIDDEN cl_int CL_API_CALL shim_clFinish(cl_command_queue queue)
{
    queue_record *q = queue_find(queue);
    if (q)
        queue_flush(q, "clFinish");
    cl_int err = next_cl()->clFinish(queue);
    /* Every kernel of the queue completed: their times can be read. */
    if (q && err == CL_SUCCESS) {
        pthread_mutex_lock(&q->lock);
        profiling_poll_locked(q);
        pthread_mutex_unlock(&q->lock);
    }
    profiling_poll_orphans();
    return err;
}
TALLY_CL_EXPORT(clFinish);
