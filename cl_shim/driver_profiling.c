/*
 * The driver backend in OpenCL: GPU time from event profiling. Every kernel
 * enqueued on a queue of the shim carries an event (the program's, retained,
 * or one of the shim's when it asked for none), and the queue has
 * CL_QUEUE_PROFILING_ENABLE (added, and hidden from the program, where it
 * did not ask: see queues.c). At a submission point whose recording holds
 * such kernels the recording is held, in a stream of its own, until the
 * driver completed them; their CL_PROFILING_COMMAND_START and _END are read
 * then, on the program's thread at a later submission point of the queue
 * (clFlush, clFinish, clWaitForEvents, blocking enqueues, release), never
 * waiting for the device, and the recording goes to the engine with a
 * measurement reader over those times. Work-items and work-groups are the
 * NDRange's (driver.c), exactly. The times go on CLOCK_MONOTONIC where the
 * kernels' enqueues were bracketed (driver_calibration.c). A queue released
 * with recordings still held leaves them to the process, read at later
 * flushes of any queue and, at exit, waited for a bounded time. The
 * holding, the order and the submission are the engine's (tally_held.h);
 * this file reads the events and keeps the orphans; gates.c knows which
 * commands may never run.
 *
 * The same hold keeps back, under any backend, a command that waits on a
 * user event the program had not completed when it enqueued it, directly
 * or through another such command (a gate, gates.h):
 * the recording is cut before the command, and what follows it is held
 * until the command's own event completed, so a command that never ran
 * (its user event was never set) is never reported. On an in-order queue
 * the recordings held after a gated one wait on the same gate, since they
 * cannot run before it; at exit whatever still waits on a gate whose user
 * events were never completed is left out of the report, and the log says
 * how many commands that was.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "gates.h"
#include "shim.h"
#include "tally_held.h"

/* OpenCL's part of a recording held until its kernels (and its gate's
 * command) completed: tally_held.payload. The engine's part says whether it
 * is measured (the driver backend), and how many of its events were read. */
typedef struct cl_held {
    uint32_t commands; /* recorded in the stream */
    cl_gate gate;
    cl_event *events;             /* the measured kernels', by measurement key (tally_held.count) */
    cl_enqueue_bracket *enqueued; /* each one's enqueue call */
    cl_calibration calibration;
} cl_held;

struct cl_profiling {
    bool measures;    /* false: the queue only holds gated commands */
    cl_event *events; /* the current recording's measured kernels, by key */
    cl_enqueue_bracket *enqueued;
    uint32_t count, capacity;
    cl_gate gate; /* the current recording's first command's */
    tally_held_queue held;
};

static const tally_held_door held_door;

/* Set when a queue measures with calibration on; every queue's device is
 * the one shared device, so one flag serves them all. */
static atomic_bool calibrating;

/* Recordings of released queues, oldest first. */
static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static tally_held_queue orphans = {.door = &held_door};
static _Atomic(bool) have_orphans;

/* At exit, how long the shim waits for the device to complete what it holds. */
#define EXIT_WAIT_NS (5ull * 1000 * 1000 * 1000)

bool profiling_measures(void)
{
    tally_device *d = session_device();
    if (!d)
        return false;
    tally_device_info info;
    tally_device_get_info(d, &info);
    return (info.measures & TALLY_MEASURE_TIME) != 0;
}

bool profiling_asked(const cl_queue_properties *properties)
{
    for (size_t i = 0; properties && properties[i] != 0; i += 2)
        if (properties[i] == CL_QUEUE_PROPERTIES && (properties[i + 1] & CL_QUEUE_PROFILING_ENABLE))
            return true;
    return false;
}

static cl_profiling *profiling_new(bool measures)
{
    cl_profiling *p = calloc(1, sizeof(cl_profiling));
    if (p)
        *p = (cl_profiling){.measures = measures, .held = {.door = &held_door}};
    return p;
}

cl_profiling *profiling_create(void)
{
    if (!profiling_measures())
        return NULL;
    tally_device_info info;
    tally_device_get_info(session_device(), &info);
    atomic_store_explicit(&calibrating, info.calibrate, memory_order_relaxed);
    return profiling_new(true);
}

bool profiling_calibrates(void)
{
    return atomic_load_explicit(&calibrating, memory_order_relaxed);
}

cl_event *profiling_event(cl_command_queue queue, cl_event *event, bool gated, cl_event *own)
{
    *own = NULL;
    if (event)
        return event;
    queue_record *q = queue_find(queue);
    return q && q->stream && (gated || (q->profiling && q->profiling->measures)) ? own : NULL;
}

void profiling_record_locked(queue_record *q, cl_event event, cl_enqueue_bracket bracket)
{
    cl_profiling *p = q->profiling;
    if (!p || !p->measures || !event)
        return;
    if (p->count == p->capacity) {
        uint32_t capacity = p->capacity ? 2 * p->capacity : 64;
        cl_event *grown = realloc(p->events, capacity * sizeof(*grown));
        if (grown)
            p->events = grown;
        cl_enqueue_bracket *brackets = realloc(p->enqueued, capacity * sizeof(*brackets));
        if (brackets)
            p->enqueued = brackets;
        if (!grown || !brackets)
            return; /* this kernel takes no GPU time */
        p->capacity = capacity;
    }
    if (next_cl()->clRetainEvent(event) != CL_SUCCESS)
        return;
    tally_stream_measure(q->stream, p->count);
    p->enqueued[p->count] = bracket;
    p->events[p->count++] = event;
}

void profiling_gate_locked(queue_record *q, cl_event command, cl_uint num_events,
                           const cl_event *wait_list, const char *api_name)
{
    cl_profiling *p = q->profiling;
    if (q->unsubmitted || (p && p->gate.command))
        queue_submit_locked(q, api_name, 0); /* what came before goes on its own */
    if (!p && !(p = q->profiling = profiling_new(false)))
        return; /* no memory: the command is reported as if it ran */
    p->gate = cl_gate_make(command, num_events, wait_list);
}

bool profiling_hold_locked(queue_record *q, const char *api_name, uint32_t flags)
{
    cl_profiling *p = q->profiling;
    if (!p || (p->count == 0 && tally_held_empty(&p->held) && !p->gate.command))
        return false;
    const tally_held *before = p->held.last;
    cl_held *c = malloc(sizeof(*c));
    if (!c || !tally_held_push(&p->held, q->context, &q->stream, api_name, flags, p->count,
                               p->measures, c)) {
        /* No memory: the recording goes now, unmeasured and ungated. */
        free(c);
        for (uint32_t i = 0; i < p->count; i++)
            next_cl()->clReleaseEvent(p->events[i]);
        p->count = 0;
        cl_gate_release(&p->gate);
        return false;
    }
    *c = (cl_held){
        .commands = q->unsubmitted, .gate = p->gate, .events = p->events, .enqueued = p->enqueued};
    /* An in-order queue runs nothing of this recording before the gate of
     * the one held before it opened. */
    if (!c->gate.command && before && !q->out_of_order)
        c->gate = cl_gate_copy(&((const cl_held *)before->payload)->gate);
    p->gate = (cl_gate){0};
    p->events = NULL;
    p->enqueued = NULL;
    p->count = p->capacity = 0;
    q->bound_program = NULL; /* the fresh stream binds the next kernel's program */
    return true;
}

/* Reads the completed kernels' times, in order; true when every one was
 * read. A kernel that failed, or whose times cannot be read, takes none. */
static bool read_held(void *user, tally_held *h, bool force)
{
    (void)user, (void)force; /* the exit's wait is profiling_finish_all's */
    cl_held *c = h->payload;
    const struct _cl_icd_dispatch *cl = next_cl();
    if (!cl_gate_open(&c->gate))
        return false;
    for (; h->read < h->count; h->read++) {
        cl_event event = c->events[h->read];
        cl_int status = CL_QUEUED;
        if (event_execution_status(event, &status) == CL_SUCCESS && status > CL_COMPLETE)
            return false;
        cl_ulong start = 0, end = 0;
        if (status == CL_COMPLETE &&
            cl->clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start,
                                        NULL) == CL_SUCCESS &&
            cl->clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL) ==
                CL_SUCCESS &&
            end >= start) {
            h->values[h->read] =
                (tally_measurement){.valid = TALLY_MEASURE_TIME, .begin_ns = start, .end_ns = end};
            cl_ulong queued = 0;
            if (c->enqueued[h->read].before &&
                cl->clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_QUEUED, sizeof(queued),
                                            &queued, NULL) == CL_SUCCESS &&
                queued <= start)
                calibration_note(&c->calibration, queued, c->enqueued[h->read]);
        }
        cl->clReleaseEvent(event);
    }
    return true;
}

static uint64_t prepare_held(void *user, tally_held *h)
{
    (void)user;
    cl_held *c = h->payload;
    return calibration_apply(&c->calibration, h->values, h->count);
}

static void release_held(void *user, tally_held *h)
{
    (void)user;
    cl_held *c = h->payload;
    for (uint32_t i = h->read; i < h->count; i++)
        next_cl()->clReleaseEvent(c->events[i]); /* unread: given up */
    cl_gate_release(&c->gate);
    free(c->events);
    free(c->enqueued);
    free(c);
}

static const tally_held_door held_door = {
    .read = read_held, .prepare = prepare_held, .release = release_held};

void profiling_poll_locked(queue_record *q)
{
    cl_profiling *p = q->profiling;
    if (p)
        tally_held_poll(&p->held, false);
}

void profiling_poll_orphans(void)
{
    if (!atomic_load_explicit(&have_orphans, memory_order_acquire))
        return;
    pthread_mutex_lock(&orphans_lock);
    tally_held_poll(&orphans, false);
    atomic_store_explicit(&have_orphans, !tally_held_empty(&orphans), memory_order_release);
    pthread_mutex_unlock(&orphans_lock);
}

void profiling_orphan_held_locked(queue_record *q)
{
    cl_profiling *p = q->profiling;
    if (!p || tally_held_empty(&p->held))
        return;
    pthread_mutex_lock(&orphans_lock);
    tally_held_move(&orphans, &p->held);
    atomic_store_explicit(&have_orphans, true, memory_order_release);
    pthread_mutex_unlock(&orphans_lock);
}

void profiling_queue_gone(queue_record *q)
{
    cl_profiling *p = q->profiling;
    if (!p)
        return;
    for (uint32_t i = 0; i < p->count; i++) /* recorded after the last submission point */
        next_cl()->clReleaseEvent(p->events[i]);
    free(p->events);
    free(p->enqueued);
    cl_gate_release(&p->gate);
    profiling_orphan_held_locked(q);
    free(p);
    q->profiling = NULL;
}

void profiling_forget(void)
{
    pthread_mutex_init(&orphans_lock, NULL);
    orphans = (tally_held_queue){.door = &held_door};
    atomic_store_explicit(&have_orphans, false, memory_order_relaxed);
    cl_gates_forget_inherited();
}

void profiling_settle_event(cl_event event)
{
    cl_command_queue queue = NULL;
    if (next_cl()->clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue, NULL) ==
            CL_SUCCESS &&
        queue) {
        queue_record *q = queue_find(queue);
        if (q) {
            pthread_mutex_lock(&q->lock);
            profiling_poll_locked(q);
            pthread_mutex_unlock(&q->lock);
        }
    }
    profiling_poll_orphans();
}

bool profiling_hidden(cl_event event)
{
    cl_command_queue queue = NULL;
    if (next_cl()->clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof(queue), &queue, NULL) !=
            CL_SUCCESS ||
        !queue)
        return false;
    queue_record *q = queue_find(queue);
    return q && q->profiling_hidden;
}

/* Flushes the queue of every event not yet complete, so that the device
 * gets to them even where the program never flushed. */
static void flush_queues_of(const tally_held_queue *list)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    for (const tally_held *h = list->first; h; h = h->next)
        for (uint32_t i = h->read; i < h->count; i++) {
            cl_command_queue queue = NULL;
            if (cl->clGetEventInfo(((const cl_held *)h->payload)->events[i], CL_EVENT_COMMAND_QUEUE,
                                   sizeof(queue), &queue, NULL) == CL_SUCCESS &&
                queue)
                cl->clFlush(queue);
        }
}

/* Takes the recordings whose gate never opens out of the list (their
 * commands never ran) and returns how many commands they held. */
static uint64_t drop_never_run(tally_held_queue *list)
{
    uint64_t dropped = 0;
    for (tally_held *h = list->first, *next; h; h = next) {
        next = h->next;
        const cl_held *c = h->payload;
        if (cl_gate_shut(&c->gate)) {
            dropped += c->commands;
            tally_held_discard(list, h);
        }
    }
    return dropped;
}

void profiling_finish_all(void)
{
    pthread_mutex_lock(&orphans_lock);
    uint64_t never_ran = drop_never_run(&orphans);
    if (never_ran)
        tally_log(TALLY_LOG_WARN,
                  "OpenCL: %llu commands waited on user events the program never completed; "
                  "they never ran and are not reported",
                  (unsigned long long)never_ran);
    flush_queues_of(&orphans);
    uint64_t until = tally_monotonic_ns() + EXIT_WAIT_NS;
    for (;;) {
        tally_held_poll(&orphans, false);
        if (tally_held_empty(&orphans) || tally_monotonic_ns() >= until)
            break;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    if (!tally_held_empty(&orphans))
        tally_log(TALLY_LOG_WARN, "OpenCL: kernels still running at exit take no GPU time");
    tally_held_drain(&orphans);
    atomic_store_explicit(&have_orphans, false, memory_order_release);
    pthread_mutex_unlock(&orphans_lock);
}
