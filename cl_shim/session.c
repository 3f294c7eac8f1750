/*
 * The engine device the shim records into: the process-wide shared device,
 * acquired on the first queue and held until exit. At exit every queue's
 * work is submitted and what waits for its kernels' times is waited for (a
 * bounded time) before the device finishes its reports; no record is freed,
 * since exit() leaves the program's other threads running and one may be
 * inside a call on a queue, an event or a kernel. A forked child forgets
 * the records and the device (its parent's) and opens its own if a queue
 * asks.
 */
#include <stdlib.h>

#include "shim.h"

/* Asked for once per process (a forked child asks again): asked is set
 * under session_lock once device holds the answer (NULL: it did not open). */
static pthread_mutex_t session_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool asked;
static tally_device *device;

static void end_session(void)
{
    queues_settle_all();
    profiling_finish_all();
    /* The shared device stops right after this, its doors' hook. */
}

static void start_session(void)
{
    tally_device *d = NULL;
    /* A measuring backend offers OpenCL what its commands say (work-groups
     * and work-items from the NDRange) and GPU time from event profiling,
     * which every OpenCL device has (docs/driver.md). */
    if (tally_device_acquire_shared_measuring(TALLY_MEASURE_COMMANDS |
                                                  TALLY_MEASURE_CS_INVOCATIONS | TALLY_MEASURE_TIME,
                                              &d) != TALLY_OK) {
        tally_log(TALLY_LOG_WARN, "OpenCL shim: the counter device did not open (see above); "
                                  "cl_codeplay_performance_counters is not offered and OpenCL "
                                  "commands pass through unmeasured");
        return;
    }
    device = d;
    /* Once per process: a forked child asks for its device again. */
    tally_device_on_shared_stop(end_session);
}

tally_device *session_device(void)
{
    if (!atomic_load_explicit(&asked, memory_order_acquire)) {
        pthread_mutex_lock(&session_lock);
        if (!atomic_load_explicit(&asked, memory_order_relaxed)) {
            start_session();
            atomic_store_explicit(&asked, true, memory_order_release);
        }
        pthread_mutex_unlock(&session_lock);
    }
    return device;
}

static void lock_before_fork(void)
{
    pthread_mutex_lock(&session_lock);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&session_lock);
}

/* A forked child owns nothing its parent opened (session/shared_device.c
 * forgets the device): the records' engine objects are that device's, so
 * they are forgotten too (left as they are), and the queues the child
 * inherited pass through unmeasured. */
static void forget_in_child(void)
{
    queues_forget();
    events_forget();
    profiling_forget();
    device = NULL;
    atomic_store_explicit(&asked, false, memory_order_relaxed);
    unlock_after_fork();
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, forget_in_child);
}

/* For tests and tools: the side records alive now (queues the program has
 * not released, events of counter-enabled queues it still holds). */
__attribute__((visibility("default"))) void tally_cl_shim_live_records(uint32_t *queues,
                                                                       uint32_t *events)
{
    *queues = queues_live();
    *events = events_live();
}

/* For tests: the kernel records alive now (kernels the program holds). */
__attribute__((visibility("default"))) void tally_cl_shim_live_kernel_records(uint32_t *kernels)
{
    *kernels = kernels_live();
}
