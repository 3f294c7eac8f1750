/*
 * Enqueues that do device work become canonical commands in the queue's
 * stream: kernels are dispatches, reads, writes, copies, fills and maps are
 * transfers. On a counter-enabled queue a command that returns an event is
 * bracketed by a marker pair whose results the event reports.
 *
 * Submission: a counter-enabled queue submits after every such command, so
 * results exist as soon as the driver completes the event; other queues
 * submit at CL's submission points (clFlush, clFinish, clWaitForEvents,
 * blocking enqueues, release) and every SUBMIT_BATCH commands, which bounds
 * the memory a never-flushed queue holds; each submission wakes the
 * engine's thread, so they are kept few.
 */
#include <string.h>

#include "shim.h"

#define SUBMIT_BATCH 4096

typedef enum work_kind { WORK_NONE, WORK_DISPATCH, WORK_TRANSFER } work_kind;

typedef struct work {
    work_kind kind;
    tally_program *program; /* a dispatch's kernel profile */
    tally_dispatch dispatch;
    tally_transfer transfer;
} work;

static void record_work_locked(queue_record *q, const work *w)
{
    if (w->kind == WORK_DISPATCH) {
        if (w->program && q->bound_program != w->program) {
            tally_stream_bind_program(q->stream, w->program);
            q->bound_program = w->program;
        }
        tally_stream_dispatch(q->stream, &w->dispatch);
    } else if (w->kind == WORK_TRANSFER) {
        tally_stream_transfer(q->stream, &w->transfer);
    }
}

/* An enqueue's event, as the shim needs it. */
typedef struct enqueue_event {
    cl_event *app;      /* the program's (NULL: it asked for none) */
    cl_event *returned; /* what the driver returns the event to: app, &own or NULL */
    cl_event own;       /* the shim's, released after the call */
    bool heard;         /* queue_heard: the command is recorded */
    bool gated;         /* it waits on a user event not yet completed */
    cl_uint num_events;
    const cl_event *wait_list;
} enqueue_event;

/* Before the driver call. A kernel's event is the one its GPU time is read
 * from under the driver backend; any command's is the one a gate waits on. */
static void enqueue_event_begin(enqueue_event *ev, cl_command_queue queue, cl_uint num_events,
                                const cl_event *wait_list, cl_event *event, bool kernel)
{
    *ev = (enqueue_event){.app = event, .num_events = num_events, .wait_list = wait_list};
    ev->heard = queue_heard(queue);
    ev->gated = ev->heard && profiling_gated(num_events, wait_list);
    if (kernel && ev->heard)
        ev->returned = profiling_event(queue, event, ev->gated, &ev->own);
    else
        ev->returned = event || !ev->gated ? event : &ev->own;
}

static void enqueue_event_end(enqueue_event *ev)
{
    if (ev->own)
        next_cl()->clReleaseEvent(ev->own);
}

/* The driver's event of the command, once it accepted it; NULL if none. */
static cl_event enqueue_event_of(const enqueue_event *ev)
{
    return ev->returned ? *ev->returned : NULL;
}

/* After the driver accepted the command: record it. A kernel enqueued
 * within `bracket` takes its GPU time from its event under the driver
 * backend. */
static void record(queue_record *q, const enqueue_event *ev, const work *w, bool blocking,
                   const char *api_name, cl_enqueue_bracket bracket)
{
    event_record *e = NULL;
    if (q->counter_count > 0 && ev->app && *ev->app)
        e = event_track(*ev->app, q);
    if (!e && w->kind == WORK_NONE)
        return;
    cl_event command = enqueue_event_of(ev);
    pthread_mutex_lock(&q->lock);
    if (ev->gated && command)
        profiling_gate_locked(q, command, ev->num_events, ev->wait_list, api_name);
    if (e)
        tally_stream_marker_begin(q->stream, e->results, 0);
    if (command && w->kind == WORK_DISPATCH)
        profiling_record_locked(q, command, bracket);
    record_work_locked(q, w);
    if (e)
        tally_stream_marker_end(q->stream, e->results, 0);
    q->unsubmitted++;
    if (e || blocking || q->unsubmitted >= SUBMIT_BATCH)
        queue_submit_locked(q, api_name, 0);
    pthread_mutex_unlock(&q->lock);
}

static uint32_t clamp_u32(size_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static void record_ndrange(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                           const size_t *offset, const size_t *global_size,
                           const size_t *local_size, const enqueue_event *ev,
                           cl_enqueue_bracket bracket, const char *api_name)
{
    queue_record *q = queue_find(queue);
    if (!q || !q->stream)
        return;
    work w = {.kind = WORK_DISPATCH};
    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
    for (cl_uint d = 0; d < work_dim && d < 3; d++) {
        global[d] = global_size ? global_size[d] : 0;
        if (global[d] == 0)
            w.kind = WORK_NONE; /* an empty range runs nothing */
    }
    if (w.kind == WORK_DISPATCH) {
        if (local_size)
            for (cl_uint d = 0; d < work_dim && d < 3; d++)
                local[d] = local_size[d] ? local_size[d] : 1;
        w.program = kernel_launch(q, kernel, global, local_size ? NULL : local);
        w.dispatch.api_name = api_name;
        for (int d = 0; d < 3; d++) {
            w.dispatch.local_size[d] = clamp_u32(local[d]);
            /* Non-uniform groups (OpenCL 2.0) count the partial last group. */
            w.dispatch.groups[d] = clamp_u32((global[d] + local[d] - 1) / local[d]);
            if (offset && (cl_uint)d < work_dim)
                w.dispatch.base_group[d] = clamp_u32(offset[d] / local[d]);
        }
    }
    record(q, ev, &w, false, api_name, bracket);
}

static void record_transfer(cl_command_queue queue, const enqueue_event *ev,
                            tally_transfer_kind kind, uint64_t bytes, bool blocking,
                            const char *api_name)
{
    queue_record *q = queue_find(queue);
    if (!q || !q->stream)
        return;
    work w = {.kind = WORK_TRANSFER};
    w.transfer = (tally_transfer){.api_name = api_name, .kind = kind, .bytes = bytes};
    record(q, ev, &w, blocking, api_name, (cl_enqueue_bracket){0, 0});
}

static uint64_t region_bytes(const size_t region[3])
{
    return region ? (uint64_t)region[0] * region[1] * region[2] : 0;
}

static uint64_t image_bytes(cl_mem image, const size_t region[3])
{
    size_t element = 0;
    next_cl()->clGetImageInfo(image, CL_IMAGE_ELEMENT_SIZE, sizeof(element), &element, NULL);
    return region_bytes(region) * element;
}

#define WAIT_ARGS cl_uint num_events, const cl_event *wait_list, cl_event *event

/* A measured kernel's enqueue call is bracketed by CLOCK_MONOTONIC reads
 * where the driver backend calibrates (driver_calibration.c). */
static cl_enqueue_bracket bracket_begin(const enqueue_event *ev)
{
    return (cl_enqueue_bracket){ev->returned && profiling_calibrates() ? tally_monotonic_ns() : 0,
                                0};
}

static void bracket_end(cl_enqueue_bracket *bracket)
{
    if (bracket->before)
        bracket->after = tally_monotonic_ns();
}

/* A kernel enqueue the inline test could not pass straight down: asked
 * again (enqueue_event_begin's queue_heard), then recorded. */
static __attribute__((noinline)) cl_int
general_clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                               const size_t *offset, const size_t *global, const size_t *local,
                               WAIT_ARGS)
{
    enqueue_event ev;
    enqueue_event_begin(&ev, queue, num_events, wait_list, event, true);
    if (!ev.heard)
        return next_cl()->clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local,
                                                 num_events, wait_list, event);
    cl_enqueue_bracket bracket = bracket_begin(&ev);
    cl_int err = next_cl()->clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local,
                                                   num_events, wait_list, ev.returned);
    bracket_end(&bracket);
    if (err == CL_SUCCESS)
        record_ndrange(queue, kernel, work_dim, offset, global, local, &ev, bracket,
                       "clEnqueueNDRangeKernel");
    enqueue_event_end(&ev);
    return err;
}

/* Idle, the whole wrapper is queue_idle_next's loads and a tail call. */
SHIM_HIDDEN cl_int CL_API_CALL shim_clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel,
                                                           cl_uint work_dim, const size_t *offset,
                                                           const size_t *global,
                                                           const size_t *local, WAIT_ARGS)
{
    const struct _cl_icd_dispatch *idle = queue_idle_next(queue);
    if (__builtin_expect(idle != NULL, 1))
        return idle->clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local,
                                            num_events, wait_list, event);
    return general_clEnqueueNDRangeKernel(queue, kernel, work_dim, offset, global, local,
                                          num_events, wait_list, event);
}
TALLY_CL_EXPORT(clEnqueueNDRangeKernel);

static __attribute__((noinline)) cl_int general_clEnqueueTask(cl_command_queue queue,
                                                              cl_kernel kernel, WAIT_ARGS)
{
    enqueue_event ev;
    enqueue_event_begin(&ev, queue, num_events, wait_list, event, true);
    if (!ev.heard)
        return next_cl()->clEnqueueTask(queue, kernel, num_events, wait_list, event);
    cl_enqueue_bracket bracket = bracket_begin(&ev);
    cl_int err = next_cl()->clEnqueueTask(queue, kernel, num_events, wait_list, ev.returned);
    bracket_end(&bracket);
    static const size_t one[3] = {1, 1, 1};
    if (err == CL_SUCCESS)
        record_ndrange(queue, kernel, 1, NULL, one, one, &ev, bracket, "clEnqueueTask");
    enqueue_event_end(&ev);
    return err;
}

SHIM_HIDDEN cl_int CL_API_CALL shim_clEnqueueTask(cl_command_queue queue, cl_kernel kernel,
                                                  WAIT_ARGS)
{
    const struct _cl_icd_dispatch *idle = queue_idle_next(queue);
    if (__builtin_expect(idle != NULL, 1))
        return idle->clEnqueueTask(queue, kernel, num_events, wait_list, event);
    return general_clEnqueueTask(queue, kernel, num_events, wait_list, event);
}
TALLY_CL_EXPORT(clEnqueueTask);

/* The transfer enqueues, one wrapper each, generated from cl_transfers.txt
 * with the parameters of CL/cl.h (gen_cl_transfers.py). */
#include "cl_transfers.inc"

/* Markers do no work: on a counter-enabled queue their event measures an
 * empty scope. */
static void record_marker(cl_command_queue queue, cl_event *event, const char *api_name)
{
    queue_record *q = queue_find(queue);
    work none = {.kind = WORK_NONE};
    enqueue_event ev = {.app = event, .returned = event};
    if (q && q->stream)
        record(q, &ev, &none, false, api_name, (cl_enqueue_bracket){0, 0});
}

SHIM_HIDDEN cl_int CL_API_CALL shim_clEnqueueMarker(cl_command_queue queue, cl_event *event)
{
    cl_int err = next_cl()->clEnqueueMarker(queue, event);
    if (err == CL_SUCCESS)
        record_marker(queue, event, "clEnqueueMarker");
    return err;
}
TALLY_CL_EXPORT(clEnqueueMarker);

SHIM_HIDDEN cl_int CL_API_CALL shim_clEnqueueMarkerWithWaitList(cl_command_queue queue, WAIT_ARGS)
{
    cl_int err = next_cl()->clEnqueueMarkerWithWaitList(queue, num_events, wait_list, event);
    if (err == CL_SUCCESS)
        record_marker(queue, event, "clEnqueueMarkerWithWaitList");
    return err;
}
TALLY_CL_EXPORT(clEnqueueMarkerWithWaitList);
