/*
 * The event sampler: eglSetEventCollectionBRCM and eglGetEventDataBRCM. The
 * process that acquired the sampler collects, between start and stop, every
 * event of the shared engine device into a bounded ring (an engine
 * subscription, paused while stopped); eglGetEventDataBRCM hands out whole
 * records and keeps the rest. None of this is on a per-draw path, so one lock
 * serializes the callers.
 */
#include <pthread.h>
#include <stdlib.h>
#include <stdbool.h>

#include "event_records.h"

/* Events the ring keeps until they are read (72 bytes each). */
#define RING_EVENTS 65536u
#define BATCH_EVENTS 512u

static struct monitor {
    pthread_mutex_t lock;
    tally_device *device;
    bool device_failed;
    bool acquired;
    tally_subscription *ring; /* from the first start until release */
    bool exit_handler_registered;
    tally_event batch[BATCH_EVENTS];
} monitor = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* At exit the engine stops the shared device, and frees it with its
 * subscriptions once no reference is left. Registered after the device was
 * acquired, this runs first: it lets go of the ring and the device, so a
 * call from a later exit handler finds no device (EGL_NOT_INITIALIZED)
 * instead of freed memory. */
static void finish_at_exit(void)
{
    pthread_mutex_lock(&monitor.lock);
    tally_timeline_unsubscribe(monitor.ring);
    monitor.ring = NULL;
    tally_device_release_shared(monitor.device);
    monitor.device = NULL;
    monitor.device_failed = true;
    pthread_mutex_unlock(&monitor.lock);
}

/* Callers hold monitor.lock. The reference is kept until exit. */
static tally_device *device_locked(void)
{
    if (monitor.device || monitor.device_failed)
        return monitor.device;
    monitor.device_failed = tally_device_acquire_shared(&monitor.device) != TALLY_OK;
    if (!monitor.device_failed) {
        /* Once per process: a forked child inherits the handler. */
        if (!monitor.exit_handler_registered)
            monitor.exit_handler_registered = atexit(finish_at_exit) == 0;
    } else
        tally_log(TALLY_LOG_WARN, "EGL shim: the counter device did not open (see above); "
                                  "EGL_BRCM_event_monitor is not offered");
    return monitor.device;
}

tally_device *shim_device(void)
{
    pthread_mutex_lock(&monitor.lock);
    tally_device *device = device_locked();
    pthread_mutex_unlock(&monitor.lock);
    return device;
}

static void lock_before_fork(void)
{
    pthread_mutex_lock(&monitor.lock);
}

static void unlock_after_fork(void)
{
    pthread_mutex_unlock(&monitor.lock);
}

/* A forked child is another process: it does not hold the sampler, and the
 * engine's queue thread did not come along, so it starts from nothing. The
 * device is its parent's (session/shared_device.c forgets it too): the
 * child's first start acquires its own. */
static void start_over_in_child(void)
{
    sampler_lock_forget();
    monitor.acquired = false;
    monitor.ring = NULL;
    monitor.device = NULL;
    monitor.device_failed = false;
    pthread_mutex_unlock(&monitor.lock);
}

__attribute__((constructor)) static void install_fork_handlers(void)
{
    pthread_atfork(lock_before_fork, unlock_after_fork, start_over_in_child);
}

static EGLint acquire(void)
{
    if (!monitor.acquired && !sampler_lock_take())
        return EGL_BAD_ACCESS;
    monitor.acquired = true;
    return EGL_SUCCESS;
}

static EGLint release(void)
{
    tally_timeline_unsubscribe(monitor.ring); /* what was not read is dropped */
    monitor.ring = NULL;
    sampler_lock_give_back();
    monitor.acquired = false;
    return EGL_SUCCESS;
}

static EGLint start(void)
{
    if (monitor.ring) {
        tally_timeline_set_paused(monitor.ring, false);
        return EGL_SUCCESS;
    }
    tally_device *device = device_locked();
    if (!device)
        return EGL_NOT_INITIALIZED;
    if (tally_timeline_subscribe(device, RING_EVENTS, &monitor.ring) != TALLY_OK)
        return EGL_BAD_ALLOC;
    return EGL_SUCCESS;
}

static EGLint stop(void)
{
    tally_timeline_set_paused(monitor.ring, true); /* keeps what it holds */
    return EGL_SUCCESS;
}

SHIM_EXPORT EGLBoolean EGLAPIENTRY eglSetEventCollectionBRCM(EGLenum pname)
{
    if (pname != EGL_ACQUIRE_EVENTS_BRCM && pname != EGL_RELEASE_EVENTS_BRCM &&
        pname != EGL_START_EVENTS_BRCM && pname != EGL_STOP_EVENTS_BRCM)
        return egl_error_set(EGL_BAD_PARAMETER);
    pthread_mutex_lock(&monitor.lock);
    EGLint error;
    if (pname == EGL_ACQUIRE_EVENTS_BRCM)
        error = acquire();
    else if (!monitor.acquired)
        error = EGL_BAD_ACCESS; /* the sampler is not ours to use */
    else if (pname == EGL_RELEASE_EVENTS_BRCM)
        error = release();
    else if (pname == EGL_START_EVENTS_BRCM)
        error = start();
    else
        error = stop();
    pthread_mutex_unlock(&monitor.lock);
    return egl_error_set(error);
}

/* Bytes of every record not read yet. */
static uint32_t pending_bytes(bool *lost)
{
    uint32_t bytes = 0, first = 0, count = 0;
    *lost = false;
    if (!monitor.ring)
        return 0;
    do {
        tally_timeline_peek(monitor.ring, first, monitor.batch, BATCH_EVENTS, &count, lost);
        for (uint32_t i = 0; i < count; i++)
            bytes += event_record_bytes(&monitor.batch[i]);
        first += count;
    } while (count == BATCH_EVENTS);
    return bytes;
}

/* Writes the oldest records that fit whole into size bytes, and takes them
 * from the ring. */
static uint32_t take_records(unsigned char *out, uint32_t size, bool *lost)
{
    uint32_t written = 0, count = 0;
    *lost = false;
    if (!monitor.ring)
        return 0;
    for (;;) {
        bool batch_lost = false;
        tally_timeline_peek(monitor.ring, 0, monitor.batch, BATCH_EVENTS, &count, &batch_lost);
        uint32_t fit = 0;
        for (; fit < count; fit++) {
            uint32_t bytes = event_record_bytes(&monitor.batch[fit]);
            if (bytes > size - written)
                break;
            event_record_write(&monitor.batch[fit], out + written);
            written += bytes;
        }
        if (fit) /* the loss is reported with the events taken */
            tally_timeline_read(monitor.ring, monitor.batch, fit, &count, &batch_lost);
        *lost = *lost || batch_lost;
        if (!fit || fit < BATCH_EVENTS)
            return written;
    }
}

SHIM_EXPORT EGLBoolean EGLAPIENTRY eglGetEventDataBRCM(EGLint dataBufferBytes, void *data,
                                                       EGLint *bytesWritten, EGLBoolean *lostData,
                                                       EGLuint64BRCM *timestampNow)
{
    if (dataBufferBytes < 0 || !bytesWritten)
        return egl_error_set(EGL_BAD_PARAMETER);
    pthread_mutex_lock(&monitor.lock);
    if (!monitor.acquired) {
        pthread_mutex_unlock(&monitor.lock);
        return egl_error_set(EGL_BAD_ACCESS);
    }
    tally_device *device = device_locked();
    if (!device) { /* it could not be opened, or the process is exiting */
        pthread_mutex_unlock(&monitor.lock);
        return egl_error_set(EGL_NOT_INITIALIZED);
    }
    bool lost = false;
    uint32_t bytes = !data || !dataBufferBytes
                         ? pending_bytes(&lost)
                         : take_records(data, (uint32_t)dataBufferBytes, &lost);
    /* After the events were taken, so none lies after it. */
    uint64_t now_us = tally_device_gpu_time_ns(device) / 1000u;
    pthread_mutex_unlock(&monitor.lock);
    *bytesWritten = (EGLint)bytes;
    if (lostData)
        *lostData = lost ? EGL_TRUE : EGL_FALSE;
    if (timestampNow)
        *timestampNow = now_us;
    return egl_error_set(EGL_SUCCESS);
}
