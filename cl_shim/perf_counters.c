/*
 * MDAPI query mode on OpenCL: clCreatePerfCountersCommandQueueINTEL makes a
 * queue that counts one metric set per command, and each of its events
 * answers CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL with that command's query
 * report (tally/metrics_discovery.h), which IMetricSet::CalculateMetrics
 * of libigdmd.so turns into the set's metrics.
 *
 * Intel's entry point has no published extension text; what it checks is
 * Intel's compute-runtime's: the queue must profile and be a host queue
 * (else CL_INVALID_QUEUE_PROPERTIES), and the configuration must name the
 * counters. Intel's newer runtimes take 0 there and collect the set
 * activated through MDAPI; tally's sets are always active (Activate is a
 * no-op), so the configuration names the set: its MDAPI
 * ApiSpecificId.OCL, which is what Intel's opencl-intercept-layer passes.
 * Another configuration is CL_INVALID_OPERATION, Intel's answer to one it
 * does not take.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* How long the report waits for the engine once the driver says the
 * command is complete; the engine runs far faster than this. */
#define REPORT_WAIT_NS (10ull * 1000 * 1000 * 1000)

static _Atomic uint32_t report_ids;

/* The Metrics-Discovery view of a device, for its sets' report layouts. */
typedef struct md_view_of {
    tally_device *device;
    tally_md_device *md;
} md_view_of;
static _Atomic(md_view_of *) current_view;

/* The view of the session's device, opened on first use. Without a lock:
 * a forked child's session is another device, whose view replaces the
 * parent's, which the child forgets (left as it is, as session.c leaves
 * the parent's records); of two threads opening one, the second closes its
 * own. */
static tally_md_device *md_view(void)
{
    tally_device *device = session_device();
    if (!device)
        return NULL;
    md_view_of *seen = atomic_load_explicit(&current_view, memory_order_acquire);
    if (seen && seen->device == device)
        return seen->md;
    md_view_of *mine = calloc(1, sizeof(*mine));
    if (!mine)
        return NULL;
    mine->device = device;
    if (tally_md_device_open(device, &mine->md) != TALLY_OK) {
        free(mine);
        return NULL;
    }
    if (atomic_compare_exchange_strong_explicit(&current_view, &seen, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine->md;
    tally_md_device_close(mine->md); /* another thread's won */
    free(mine);
    return seen && seen->device == device ? seen->md : NULL;
}

uint32_t perf_counters_next_report_id(void)
{
    return atomic_fetch_add_explicit(&report_ids, 1, memory_order_relaxed) + 1;
}

static cl_command_queue refuse(cl_int *errcode_ret, cl_int err)
{
    if (errcode_ret)
        *errcode_ret = err;
    return NULL;
}

SHIM_HIDDEN cl_command_queue CL_API_CALL shim_clCreatePerfCountersCommandQueueINTEL(
    cl_context context, cl_device_id device, cl_command_queue_properties properties,
    cl_uint configuration, cl_int *errcode_ret)
{
    tally_md_device *md = md_view();
    if (!md)
        return refuse(errcode_ret, CL_INVALID_DEVICE); /* no counters here */
    if (!(properties & CL_QUEUE_PROFILING_ENABLE) ||
        (properties & (CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT)))
        return refuse(errcode_ret, CL_INVALID_QUEUE_PROPERTIES);
    if (!tally_md_device_find_query_set(md, configuration))
        return refuse(errcode_ret, CL_INVALID_OPERATION);
    const tally_metric_set_info *set =
        tally_catalogue_metric_set(cl_catalogue(), configuration - 1);
    uint32_t *counters = set ? malloc(set->counter_count * sizeof(uint32_t)) : NULL;
    if (!counters)
        return refuse(errcode_ret, CL_OUT_OF_HOST_MEMORY);
    memcpy(counters, set->counters, set->counter_count * sizeof(uint32_t));
    cl_int err = CL_SUCCESS;
    cl_command_queue queue = queue_create_counting(context, device, properties, counters,
                                                   set->counter_count, configuration, &err);
    if (errcode_ret)
        *errcode_ret = err;
    return queue;
}
TALLY_CL_EXPORT(clCreatePerfCountersCommandQueueINTEL);

/* The command's query report, once its results are in. */
static cl_int write_report(event_record *e, const void *kind, void *value, size_t size)
{
    const tally_md_metric_set *set = kind;
    uint32_t raw_count = tally_catalogue_raw_count(cl_catalogue());
    uint64_t *raw = malloc((raw_count ? raw_count : 1) * sizeof(uint64_t));
    tally_slot_info info;
    tally_device_info device;
    cl_int err = CL_PROFILING_INFO_NOT_AVAILABLE;
    tally_status got = TALLY_NOT_READY;
    if (raw && tally_results_wait(e->results, 0, REPORT_WAIT_NS) == TALLY_OK &&
        tally_results_get_raw(e->results, 0, raw, raw_count) == TALLY_OK)
        got = tally_results_get(e->results, 0, NULL, 0, &info); /* the info alone */
    if (got == TALLY_OK || got == TALLY_INCOMPLETE) {
        tally_device_get_info(session_device(), &device);
        uint32_t mhz = (uint32_t)(device.core_clock_hz / 1000000u);
        if (tally_md_encode_query_report(set, raw, &info, e->report_id, mhz, value, size) ==
            TALLY_OK)
            err = CL_SUCCESS;
    }
    free(raw);
    return err;
}

/* The checks of clGetEventProfilingInfo, in the spec's order: the event,
 * an event with no query report (CL_INVALID_VALUE, as for another queue's
 * event under the Codeplay query), a buffer too small, the command not yet
 * complete. */
cl_int perf_counters_report(cl_event event, size_t size, void *value, size_t *size_ret)
{
    cl_int status;
    cl_int err = event_execution_status(event, &status);
    if (err != CL_SUCCESS)
        return err; /* not an event */
    event_record *e = event_find(event);
    tally_md_metric_set *set =
        e && e->query_set ? tally_md_device_find_query_set(md_view(), e->query_set) : NULL;
    if (!set)
        return CL_INVALID_VALUE; /* a user event, or not a perf-counters queue's */
    size_t needed = tally_md_metric_set_get_params(set)->query_report_size;
    return event_results_answer(event, status, e, needed, size, value, size_ret, write_report, set);
}
