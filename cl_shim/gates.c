/* Commands that may never run, for as long as they may not (gates.h). */
#include "gates.h"

#include <stdatomic.h>
#include <stdlib.h>

/* Every gate whose command had not completed when last looked at: the
 * commands later enqueues may wait on. Each entry holds its own retains. */
typedef struct known_gate {
    struct known_gate *next;
    cl_gate gate;
} known_gate;

static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
static known_gate *known;
/* Any gate known: an enqueue whose wait list holds no user event looks
 * no further while there is none (the common case: no gates at all). */
static atomic_bool any_known;

static cl_int event_status(cl_event event)
{
    cl_int status = CL_QUEUED;
    if (event_execution_status(event, &status) != CL_SUCCESS)
        return CL_INVALID_EVENT; /* negative, as a failed command's */
    return status;
}

static bool is_waiting_user_event(cl_event event)
{
    cl_command_type type = 0;
    return next_cl()->clGetEventInfo(event, CL_EVENT_COMMAND_TYPE, sizeof(type), &type, NULL) ==
               CL_SUCCESS &&
           type == CL_COMMAND_USER && event_status(event) > CL_COMPLETE;
}

void cl_gate_release(cl_gate *g)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    if (g->command)
        cl->clReleaseEvent(g->command);
    for (uint32_t i = 0; i < g->wait_count; i++)
        cl->clReleaseEvent(g->waits[i]);
    free(g->waits);
    *g = (cl_gate){0};
}

/* Known gates: the one of `command`, whose command has not completed, or
 * NULL. Completed ones are taken out onto *done, for the caller to release
 * once it let go of known_lock (a release calls the driver). Under
 * known_lock. */
static const cl_gate *known_shut_locked(cl_event command, known_gate **done)
{
    for (known_gate **at = &known; *at;) {
        known_gate *k = *at;
        if (event_status(k->gate.command) <= CL_COMPLETE) {
            *at = k->next;
            k->next = *done;
            *done = k;
            continue;
        }
        if (k->gate.command == command)
            return &k->gate;
        at = &k->next;
    }
    atomic_store_explicit(&any_known, known != NULL, memory_order_relaxed);
    return NULL;
}

static void release_done(known_gate *done)
{
    while (done) {
        known_gate *k = done;
        done = k->next;
        cl_gate_release(&k->gate);
        free(k);
    }
}

static bool waits_on_known_gate(cl_event event)
{
    if (!atomic_load_explicit(&any_known, memory_order_relaxed))
        return false;
    known_gate *done = NULL;
    pthread_mutex_lock(&known_lock);
    bool gated = known_shut_locked(event, &done) != NULL;
    pthread_mutex_unlock(&known_lock);
    release_done(done);
    return gated;
}

bool profiling_gated(cl_uint num_events, const cl_event *wait_list)
{
    for (cl_uint i = 0; wait_list && i < num_events; i++)
        if (is_waiting_user_event(wait_list[i]) || waits_on_known_gate(wait_list[i]))
            return true;
    return false;
}

/* Adds `event` to g's waits, retained, once. */
static void add_wait(cl_gate *g, cl_event event, uint32_t capacity)
{
    for (uint32_t i = 0; i < g->wait_count; i++)
        if (g->waits[i] == event)
            return;
    if (g->wait_count < capacity && next_cl()->clRetainEvent(event) == CL_SUCCESS)
        g->waits[g->wait_count++] = event;
}

/* The user events the wait list waits on, directly or through known gates'
 * commands, into g (capacity for them all); under known_lock. */
static void collect_waits_locked(cl_gate *g, uint32_t capacity, cl_uint num_events,
                                 const cl_event *wait_list, known_gate **done)
{
    for (cl_uint i = 0; i < num_events; i++) {
        if (is_waiting_user_event(wait_list[i])) {
            add_wait(g, wait_list[i], capacity);
            continue;
        }
        const cl_gate *through = known_shut_locked(wait_list[i], done);
        for (uint32_t k = 0; through && k < through->wait_count; k++)
            if (event_status(through->waits[k]) > CL_COMPLETE)
                add_wait(g, through->waits[k], capacity);
    }
}

static uint32_t capacity_for_locked(cl_uint num_events, const cl_event *wait_list,
                                    known_gate **done)
{
    uint32_t capacity = num_events;
    for (cl_uint i = 0; i < num_events; i++) {
        const cl_gate *through = known ? known_shut_locked(wait_list[i], done) : NULL;
        capacity += through ? through->wait_count : 0;
    }
    return capacity;
}

cl_gate cl_gate_make(cl_event command, cl_uint num_events, const cl_event *wait_list)
{
    cl_gate g = {0};
    known_gate *k = calloc(1, sizeof *k), *done = NULL;
    pthread_mutex_lock(&known_lock);
    uint32_t capacity = capacity_for_locked(num_events, wait_list, &done);
    if (k && capacity && (g.waits = malloc(capacity * sizeof(cl_event))) &&
        next_cl()->clRetainEvent(command) == CL_SUCCESS) {
        g.command = command;
        collect_waits_locked(&g, capacity, num_events, wait_list, &done);
    }
    if (g.command && g.wait_count && (k->gate = cl_gate_copy(&g)).command) {
        k->next = known;
        known = k;
        k = NULL;
        atomic_store_explicit(&any_known, true, memory_order_relaxed);
    }
    pthread_mutex_unlock(&known_lock);
    release_done(done);
    free(k);
    if (!g.wait_count) /* its user events completed meanwhile: no gate */
        cl_gate_release(&g);
    return g;
}

cl_gate cl_gate_copy(const cl_gate *g)
{
    cl_gate copy = {0};
    if (!g->command || (g->wait_count && !(copy.waits = malloc(g->wait_count * sizeof(cl_event)))))
        return copy;
    const struct _cl_icd_dispatch *cl = next_cl();
    cl->clRetainEvent(g->command);
    copy.command = g->command;
    for (uint32_t i = 0; i < g->wait_count; i++)
        if (cl->clRetainEvent(g->waits[i]) == CL_SUCCESS)
            copy.waits[copy.wait_count++] = g->waits[i];
    return copy;
}

bool cl_gate_open(cl_gate *g)
{
    if (!g->command || event_status(g->command) <= CL_COMPLETE) {
        cl_gate_release(g);
        return true;
    }
    return false;
}

bool cl_gate_shut(const cl_gate *g)
{
    for (uint32_t i = 0; g->command && i < g->wait_count; i++)
        if (event_status(g->waits[i]) > CL_COMPLETE)
            return true;
    return false;
}

void cl_gates_forget_inherited(void)
{
    pthread_mutex_init(&known_lock, NULL);
    known = NULL;
    atomic_store_explicit(&any_known, false, memory_order_relaxed);
}
