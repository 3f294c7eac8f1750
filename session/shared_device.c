/*
 * The process-wide device every front door shares, opened from the
 * environment on first use, with the sampling TALLY_SAMPLE asks for. Its
 * reports are finished when the last user releases it, or at exit for
 * programs that never tear their APIs down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "session.h"

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static tally_device *shared_device;
static unsigned shared_refs;
static struct env_sampling *shared_sampling;
static bool exit_hook_installed;
/* The last reason an open failed: every door that asks again gets the same
 * failure, but the user reads it once. */
static char failure_logged[256];

/* Sampling ends first: its last report needs the device running. */
static void close_shared(tally_device *device, struct env_sampling *sampling)
{
    env_sampling_stop(sampling);
    tally_device_close(device);
}

static void close_at_exit(void)
{
    pthread_mutex_lock(&shared_lock);
    tally_device *d = shared_device;
    struct env_sampling *sampling = shared_sampling;
    shared_device = NULL;
    shared_sampling = NULL;
    shared_refs = 0;
    pthread_mutex_unlock(&shared_lock);
    close_shared(d, sampling);
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
    if (!shared_device) {
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
        } else if (strcmp(error, failure_logged) != 0) {
            tally_log(TALLY_LOG_ERROR, "cannot open the device: %s", error);
            snprintf(failure_logged, sizeof(failure_logged), "%s", error);
        }
        if (s == TALLY_OK && !exit_hook_installed)
            exit_hook_installed = atexit(close_at_exit) == 0;
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
