/*
 * The process-wide device every front door shares, opened from the
 * environment on first use, with the sampling TALLY_SAMPLE asks for. Its
 * reports are finished when the last user releases it, or, for programs
 * that never tear their APIs down, at exit, at _exit (through the preload
 * shims) or when SIGINT, SIGTERM or SIGHUP ends the program
 * (end_signals.c); a forked child forgets its parent's and opens its own
 * when a door asks.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>

#include "session.h"

/* How long the exit handler lets the GPU finish work in flight, in all. */
#define EXIT_WAIT_NS (1000ull * 1000 * 1000)
enum { MAX_STOP_HOOKS = 8 };

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static tally_device *shared_device;
static unsigned shared_refs;
static struct env_sampling *shared_sampling;
static bool exit_hook_installed;
/* The process that opened shared_device (0: none): _exit in a vfork child,
 * which shares this memory, must not touch it, nor take its locks. */
static atomic_int device_pid;
/* The doors' hooks (tally_device_on_shared_stop), run in reverse order. */
static void (*stop_hooks[MAX_STOP_HOOKS])(void);
static unsigned stop_hook_count;
/* Held while the shared device is finished or closed: a signal's finish
 * that comes during a close waits for it rather than end the process
 * under it. */
static pthread_mutex_t finishing = PTHREAD_MUTEX_INITIALIZER;
static bool finished; /* under finishing: the end's finish ran */
/* Set by the exit handler: no device opens after it, since nothing would
 * finish its files. */
static bool exited;
/* What a forked child inherited and never touches: kept here only so that
 * the memory stays reachable (leak checkers). */
static tally_device *inherited_device;
static struct env_sampling *inherited_sampling;
/* The last reason an open failed: every door that asks again gets the same
 * failure, but the user reads it once. */
static char failure_logged[256];

/* Sampling ends first: its last report needs the device running. */
static void close_shared(tally_device *device, struct env_sampling *sampling)
{
    if (!device && !sampling)
        return;
    pthread_mutex_lock(&finishing);
    env_sampling_stop(sampling);
    tally_device_close(device);
    pthread_mutex_unlock(&finishing);
}

/*
 * The program ends (exit, _exit, or a signal whose default action ends it)
 * while its other threads may go on: one may be inside a door's call that
 * reaches the device (a draw, a flush, a vkQueueSubmit). So the end runs
 * the doors' hooks (which hand over what they hold) and only stops the
 * device (tally_device_stop): what was submitted executes, every wait on
 * the GPU ends within EXIT_WAIT_NS, the files are finished and the engine's
 * threads end, and later submissions are refused. The memory is freed only
 * if no door holds a reference any more (the end holds one meanwhile, so a
 * door releasing its own cannot free it under the stop). Runs once: a
 * signal's finish and exit() racing each other finish the files once.
 */
static void finish_at_end(void)
{
    pthread_mutex_lock(&finishing);
    if (finished) {
        pthread_mutex_unlock(&finishing);
        return;
    }
    finished = true;
    pthread_mutex_lock(&shared_lock);
    exited = true;
    tally_device *d = shared_device;
    struct env_sampling *sampling = shared_sampling;
    shared_sampling = NULL;
    if (d)
        shared_refs++;
    unsigned hooks = d ? stop_hook_count : 0;
    pthread_mutex_unlock(&shared_lock);
    while (hooks > 0)
        stop_hooks[--hooks]();
    env_sampling_stop(sampling);
    if (d)
        tally_device_stop(d, EXIT_WAIT_NS);
    pthread_mutex_unlock(&finishing);
    if (d)
        tally_device_release_shared(d);
}

void tally_device_exit_shared(void)
{
    if (atomic_load(&device_pid) == getpid())
        finish_at_end();
}

bool tally_device_on_shared_stop(void (*hook)(void))
{
    pthread_mutex_lock(&shared_lock);
    bool room = hook && stop_hook_count < MAX_STOP_HOOKS;
    if (room)
        stop_hooks[stop_hook_count++] = hook;
    pthread_mutex_unlock(&shared_lock);
    return room;
}

static void lock_before_fork(void)
{
    pthread_mutex_lock(&finishing);
    pthread_mutex_lock(&shared_lock);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&shared_lock);
    pthread_mutex_unlock(&finishing);
}

/* A forked child owns nothing its parent opened: the device's queue and
 * writer threads did not come along, and its files are the parent's to
 * finish. The child forgets the device (its memory is left as it is) and
 * its exit handler has nothing to close; the first door that asks opens the
 * child's own device, as in a program the child would exec. */
static void forget_in_child(void)
{
    if (shared_device) {
        inherited_device = shared_device;
        inherited_sampling = shared_sampling;
    }
    shared_device = NULL;
    shared_sampling = NULL;
    shared_refs = 0;
    /* The doors forget their parent's state in their own fork handlers and
     * register again when they open the child's device. */
    stop_hook_count = 0;
    finished = false;
    atomic_store(&device_pid, 0);
    session_forget_ending_signals_in_child();
    pthread_mutex_unlock(&shared_lock);
    pthread_mutex_unlock(&finishing);
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, forget_in_child);
}

tally_status tally_device_acquire_shared(tally_device **out)
{
    return tally_device_acquire_shared_measuring(0, out);
}

tally_status tally_device_acquire_shared_measuring(uint32_t measurable, tally_device **out)
{
    if (!out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_status s = TALLY_OK;
    pthread_mutex_lock(&shared_lock);
    if (!shared_device && exited)
        s = TALLY_ERROR_INVALID_STATE;
    else if (!shared_device) {
        tally_device_options options;
        tally_device_options_from_env(&options);
        options.measurable = measurable;
        char error[256] = "";
        s = tally_device_open(&options, &shared_device, error, sizeof(error));
        if (s == TALLY_ERROR_IO) {
            /* An unwritable report must not cost the program its counters. */
            tally_log(TALLY_LOG_ERROR, "%s; going on without reports", error);
            options.report_path = options.trace_path = NULL;
            s = tally_device_open(&options, &shared_device, error, sizeof(error));
        }
        if (s == TALLY_OK) {
            shared_sampling = env_sampling_start(shared_device);
            atomic_store(&device_pid, getpid());
            if (!session_finish_on_ending_signals(tally_device_exit_shared))
                tally_log(TALLY_LOG_WARN, "the reports are finished at exit only: a signal "
                                          "that ends the program cuts them short");
        } else if (strcmp(error, failure_logged) != 0) {
            tally_log(TALLY_LOG_ERROR, "cannot open the device: %s", error);
            snprintf(failure_logged, sizeof(failure_logged), "%s", error);
        }
        /* Once per process: a forked child inherits the handler. */
        if (s == TALLY_OK && !exit_hook_installed)
            exit_hook_installed = atexit(finish_at_end) == 0;
    }
    if (s == TALLY_OK)
        shared_refs++;
    *out = shared_device;
    pthread_mutex_unlock(&shared_lock);
    return s;
}

void tally_device_release_shared(tally_device *device)
{
    tally_device *closing = NULL;
    struct env_sampling *sampling = NULL;
    pthread_mutex_lock(&shared_lock);
    if (device && device == shared_device && --shared_refs == 0) {
        closing = shared_device;
        sampling = shared_sampling;
        shared_device = NULL;
        shared_sampling = NULL;
    }
    pthread_mutex_unlock(&shared_lock);
    close_shared(closing, sampling);
}
