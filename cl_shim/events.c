/*
 * Events of counter-enabled queues: each holds the results of its command's
 * marker pair until the program releases it. Events of other queues and
 * user events have no record and report no counters.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* How long clGetEventProfilingInfo waits for the engine once the driver says
 * the command is complete; the engine runs far faster than this. */
#define RESULT_WAIT_NS (10ull * 1000 * 1000 * 1000)

static handle_map events;
static pthread_once_t events_once = PTHREAD_ONCE_INIT;

static void init_events(void)
{
    handle_map_init(&events);
}

static handle_map *event_map(void)
{
    pthread_once(&events_once, init_events);
    return &events;
}

static void destroy_record(handle_entry *entry)
{
    event_record *e = (event_record *)entry;
    tally_results_release(e->results);
    free(e);
}

void events_forget(void)
{
    handle_map_forget(event_map());
}

uint32_t events_live(void)
{
    return handle_map_count(event_map());
}

event_record *event_track(cl_event event, queue_record *q)
{
    event_record *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    if (tally_results_create(tally_context_device(q->context), q->counters, q->counter_count, 1,
                             &e->results) != TALLY_OK) {
        free(e);
        return NULL;
    }
    e->entry.key = event;
    e->query_set = q->query_set;
    e->report_id = q->query_set ? perf_counters_next_report_id() : 0;
    handle_entry *stale = handle_map_insert(event_map(), &e->entry);
    if (stale)
        destroy_record(stale);
    return e;
}

event_record *event_find(cl_event event)
{
    return (event_record *)handle_map_find(event_map(), event);
}

SHIM_HIDDEN cl_int CL_API_CALL shim_clRetainEvent(cl_event event)
{
    cl_int err = next_cl()->clRetainEvent(event);
    if (err == CL_SUCCESS)
        handle_map_retain(event_map(), event);
    return err;
}
TALLY_CL_EXPORT(clRetainEvent);

SHIM_HIDDEN cl_int CL_API_CALL shim_clReleaseEvent(cl_event event)
{
    /* Unlinked before the driver's release (handle_map.h). */
    handle_entry *gone = handle_map_release(event_map(), event);
    cl_int err = next_cl()->clReleaseEvent(event);
    if (gone)
        destroy_record(gone);
    return err;
}
TALLY_CL_EXPORT(clReleaseEvent);

/* One result in the union member of the counter's storage. */
static cl_performance_counter_result_codeplay to_result(const tally_counter_info *counter,
                                                        tally_value value)
{
    cl_performance_counter_result_codeplay result;
    memset(&result, 0, sizeof(result));
    switch (counter->storage) {
    case TALLY_STORAGE_INT32: result.int32 = (cl_int)value.i64; break;
    case TALLY_STORAGE_INT64: result.int64 = value.i64; break;
    case TALLY_STORAGE_UINT32: result.uint32 = (cl_uint)value.u64; break;
    case TALLY_STORAGE_UINT64: result.uint64 = value.u64; break;
    case TALLY_STORAGE_FLOAT32: result.float32 = (cl_float)value.f64; break;
    case TALLY_STORAGE_FLOAT64: result.float64 = value.f64; break;
    }
    return result;
}

static cl_int read_results(event_record *e, const void *kind, void *value, size_t size)
{
    (void)kind; /* Codeplay's is the only kind of these results */
    (void)size; /* checked against the counters' count */
    cl_performance_counter_result_codeplay *out = value;
    if (tally_results_wait(e->results, 0, RESULT_WAIT_NS) != TALLY_OK)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    uint32_t count = tally_results_counter_count(e->results);
    tally_value values[count];
    if (tally_results_get(e->results, 0, values, count, NULL) != TALLY_OK)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    const uint32_t *counters = tally_results_counters(e->results);
    for (uint32_t i = 0; i < count; i++)
        out[i] = to_result(tally_catalogue_counter(cl_catalogue(), counters[i]), values[i]);
    return CL_SUCCESS;
}

cl_int event_execution_status(cl_event event, cl_int *status)
{
    return next_cl()->clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(*status),
                                     status, NULL);
}

cl_int event_results_answer(cl_event event, cl_int status, event_record *e, size_t needed,
                            size_t size, void *value, size_t *size_ret, event_results_writer write,
                            const void *kind)
{
    if (value && size < needed)
        return CL_INVALID_VALUE;
    if (status != CL_COMPLETE)
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    profiling_settle_event(event); /* its command's recording may wait for its time */
    if (value) {
        cl_int err = write(e, kind, value, needed);
        if (err != CL_SUCCESS)
            return err;
    }
    if (size_ret)
        *size_ret = needed;
    return CL_SUCCESS;
}

/* The checks of the spec and of the oneAPI Construction Kit, in order. */
static cl_int counter_results(cl_event event, size_t size, void *value, size_t *size_ret)
{
    if ((size == 0) != (value == NULL))
        return CL_INVALID_VALUE;
    cl_int status;
    cl_int err = event_execution_status(event, &status);
    if (err != CL_SUCCESS)
        return err; /* not an event */
    event_record *e = (event_record *)handle_map_find(event_map(), event);
    if (!e)
        return CL_INVALID_VALUE; /* a user event, or a queue without counters */
    size_t needed =
        tally_results_counter_count(e->results) * sizeof(cl_performance_counter_result_codeplay);
    return event_results_answer(event, status, e, needed, size, value, size_ret, read_results,
                                NULL);
}

SHIM_HIDDEN cl_int CL_API_CALL shim_clGetEventProfilingInfo(cl_event event, cl_profiling_info name,
                                                            size_t size, void *value,
                                                            size_t *size_ret)
{
    if (name == CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY)
        return counter_results(event, size, value, size_ret);
    if (name == CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL)
        return perf_counters_report(event, size, value, size_ret);
    /* Profiling the driver backend turned on where the program did not. */
    if (name >= CL_PROFILING_COMMAND_QUEUED && name <= CL_PROFILING_COMMAND_COMPLETE &&
        profiling_hidden(event))
        return CL_PROFILING_INFO_NOT_AVAILABLE;
    return next_cl()->clGetEventProfilingInfo(event, name, size, value, size_ret);
}
TALLY_CL_EXPORT(clGetEventProfilingInfo);

/* Waiting flushes the events' queues: what they recorded is submitted. */
SHIM_HIDDEN cl_int CL_API_CALL shim_clWaitForEvents(cl_uint count, const cl_event *list)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    for (cl_uint i = 0; list && i < count; i++) {
        cl_command_queue queue = NULL;
        if (cl->clGetEventInfo(list[i], CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue, NULL) !=
                CL_SUCCESS ||
            !queue)
            continue;
        queue_record *q = queue_find(queue);
        if (q)
            queue_submit(q, "clWaitForEvents");
    }
    cl_int err = cl->clWaitForEvents(count, list);
    /* The events completed: what their queues held up to them can go. */
    for (cl_uint i = 0; err == CL_SUCCESS && list && i < count; i++)
        profiling_settle_event(list[i]);
    return err;
}
TALLY_CL_EXPORT(clWaitForEvents);
