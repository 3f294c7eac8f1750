/*
 * Periodic samplers. The queue thread takes each sampler's samples when the
 * GPU clock passes its interval boundaries (see sampler.h for which command
 * belongs to which sample); readers take them from a bounded ring.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static void take_sample(struct tally_device *d, struct tally_sampler *s, uint64_t gpu_ns,
                        tally_sample_reason reason)
{
    pthread_mutex_lock(&s->lock);
    if (s->count == s->capacity) {
        s->lost = true;
    } else {
        uint32_t i = (s->head + s->count++) % s->capacity;
        s->headers[i] = (tally_sample){gpu_ns,
                                       reason,
                                       d->exec.last_context_id,
                                       d->info.core_clock_hz,
                                       s->taken,
                                       d->exec.context_switches};
        uint64_t *raw = &s->raw[(size_t)i * d->raw_count];
        tally_executor_snapshot(d, d->exec.global, gpu_ns, raw);
        /* Elapsed cycles never go back: a reader's difference cannot wrap. */
        if (d->elapsed_cycles_slot != TALLY_NOT_RAW) {
            uint64_t *cycles = &raw[d->elapsed_cycles_slot];
            if (*cycles < s->last_cycles)
                *cycles = s->last_cycles;
            s->last_cycles = *cycles;
        }
    }
    s->taken++;
    s->last_taken_ns = gpu_ns;
    pthread_cond_broadcast(&s->ready); /* flushers wait for dropped samples too */
    pthread_mutex_unlock(&s->lock);
}

/* A new sampler's first sample, now, and when its next one is due. Callers
 * hold listeners_lock. */
static void ensure_baseline(struct tally_device *d, struct tally_sampler *s)
{
    if (s->has_baseline)
        return;
    take_sample(d, s, d->exec.gpu_ns, TALLY_SAMPLE_TIMER);
    s->next_ns = (d->exec.gpu_ns / s->interval_ns + 1) * s->interval_ns;
    s->has_baseline = true;
}

/* Queue thread: takes every sample due before `until` (or at it, when
 * inclusive) from the device's counters as they are now. */
void tally_samplers_advance(struct tally_device *d, uint64_t until, bool inclusive)
{
    uint64_t next = UINT64_MAX;
    pthread_mutex_lock(&d->listeners_lock);
    for (struct tally_sampler *s = d->samplers; s; s = s->next) {
        ensure_baseline(d, s);
        while (s->next_ns < until || (inclusive && s->next_ns == until)) {
            take_sample(d, s, s->next_ns, TALLY_SAMPLE_TIMER);
            s->next_ns += s->interval_ns;
        }
        if (s->next_ns < next)
            next = s->next_ns;
    }
    pthread_mutex_unlock(&d->listeners_lock);
    d->exec.next_sample_ns = next;
}

/* Queue thread: the earliest time a sampler needs the clock to reach. */
uint64_t tally_samplers_next_ns(struct tally_device *d)
{
    uint64_t next = UINT64_MAX;
    pthread_mutex_lock(&d->listeners_lock);
    for (struct tally_sampler *s = d->samplers; s; s = s->next) {
        uint64_t due = s->has_baseline ? s->next_ns : d->exec.gpu_ns;
        if (due < next)
            next = due;
    }
    pthread_mutex_unlock(&d->listeners_lock);
    return next;
}

static void destroy(struct tally_sampler *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->ready);
    free(s->headers);
    free(s->raw);
    free(s);
}

tally_status tally_sampler_open(tally_device *d, uint64_t interval_ns, uint32_t capacity,
                                tally_sampler **out)
{
    if (!d || !out || !capacity || interval_ns < TALLY_SAMPLER_MIN_INTERVAL_NS)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_sampler *s = calloc(1, sizeof(*s));
    if (!s)
        return TALLY_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&s->lock, NULL);
    tally_cond_init(&s->ready);
    s->headers = calloc(capacity, sizeof(*s->headers));
    s->raw = calloc((size_t)capacity * d->raw_count, sizeof(uint64_t));
    if (!s->headers || !s->raw) {
        destroy(s);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    s->device = d;
    s->interval_ns = interval_ns;
    s->capacity = capacity;
    pthread_mutex_lock(&d->listeners_lock);
    s->next = d->samplers;
    d->samplers = s;
    atomic_fetch_add_explicit(&d->sampler_count, 1, memory_order_relaxed);
    tally_listening_update(d);
    pthread_mutex_unlock(&d->listeners_lock);
    atomic_store(&d->samplers_changed, true);
    pthread_mutex_lock(&d->lock);
    pthread_cond_signal(&d->work_ready); /* the idle queue recomputes its wake-up */
    pthread_mutex_unlock(&d->lock);
    *out = s;
    return TALLY_OK;
}

void tally_sampler_close(tally_sampler *s)
{
    if (!s)
        return;
    struct tally_device *d = s->device;
    pthread_mutex_lock(&d->listeners_lock);
    for (struct tally_sampler **p = &d->samplers; *p; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            atomic_fetch_sub_explicit(&d->sampler_count, 1, memory_order_relaxed);
            tally_listening_update(d);
            break;
        }
    }
    pthread_mutex_unlock(&d->listeners_lock);
    atomic_store(&d->samplers_changed, true);
    destroy(s);
}

uint64_t tally_sampler_interval_ns(const tally_sampler *s)
{
    return s ? s->interval_ns : 0;
}

tally_status tally_sampler_read(tally_sampler *s, tally_sample *samples, uint64_t *raw,
                                uint32_t max_samples, uint32_t *count, bool *lost)
{
    if (!s || !count || (max_samples && (!samples || !raw)))
        return TALLY_ERROR_INVALID_ARGUMENT;
    uint32_t raw_count = s->device->raw_count;
    pthread_mutex_lock(&s->lock);
    uint32_t n = s->count < max_samples ? s->count : max_samples;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (s->head + k) % s->capacity;
        samples[k] = s->headers[i];
        memcpy(&raw[(size_t)k * raw_count], &s->raw[(size_t)i * raw_count],
               raw_count * sizeof(uint64_t));
    }
    s->head = (s->head + n) % s->capacity;
    s->count -= n;
    if (lost)
        *lost = s->lost;
    s->lost = false;
    pthread_mutex_unlock(&s->lock);
    *count = n;
    return TALLY_OK;
}

tally_status tally_sampler_wait(tally_sampler *s, uint64_t timeout_ns)
{
    if (!s)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct timespec storage;
    const struct timespec *deadline = tally_deadline(timeout_ns, &storage);
    pthread_mutex_lock(&s->lock);
    while (!s->count)
        if (!tally_cond_wait(&s->ready, &s->lock, deadline))
            break;
    tally_status status = s->count ? TALLY_OK : TALLY_TIMEOUT;
    pthread_mutex_unlock(&s->lock);
    return status;
}

tally_status tally_sampler_drop_oldest(tally_sampler *s, uint32_t keep, uint32_t *dropped)
{
    if (!s)
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    uint32_t n = s->count > keep ? s->count - keep : 0;
    s->head = (s->head + n) % s->capacity;
    s->count -= n;
    pthread_mutex_unlock(&s->lock);
    if (dropped)
        *dropped = n;
    return TALLY_OK;
}

/* Virtual clock, idle queue: the queue thread does not touch the executor
 * until the next submission, and waiting for idleness ordered its last
 * writes before this read. */
static tally_status flush_virtual(struct tally_device *d, struct tally_sampler *s)
{
    uint64_t now = d->exec.gpu_ns;
    pthread_mutex_lock(&d->listeners_lock);
    ensure_baseline(d, s);
    pthread_mutex_lock(&s->lock);
    bool due = s->last_taken_ns < now;
    pthread_mutex_unlock(&s->lock);
    if (due) {
        take_sample(d, s, now, TALLY_SAMPLE_FLUSH);
        /* A boundary at this very time is covered: the next timer sample
         * must not make an empty interval. */
        if (s->next_ns <= now)
            s->next_ns = (now / s->interval_ns + 1) * s->interval_ns;
    }
    pthread_mutex_unlock(&d->listeners_lock);
    return TALLY_OK;
}

static tally_status flush_realtime(struct tally_device *d, struct tally_sampler *s,
                                   uint64_t timeout_ns)
{
    uint64_t target = tally_device_covered_gpu_ns(d);
    struct timespec storage;
    const struct timespec *deadline = tally_deadline(timeout_ns, &storage);
    pthread_mutex_lock(&s->lock);
    while (!s->taken || s->last_taken_ns < target)
        if (!tally_cond_wait(&s->ready, &s->lock, deadline))
            break;
    bool covered = s->taken && s->last_taken_ns >= target;
    pthread_mutex_unlock(&s->lock);
    return covered ? TALLY_OK : TALLY_TIMEOUT;
}

uint64_t tally_device_covered_gpu_ns(struct tally_device *d)
{
    uint64_t now = tally_device_gpu_time_ns(d);
    uint64_t executed = atomic_load_explicit(&d->published_gpu_ns, memory_order_relaxed);
    return now > executed ? now : executed;
}

tally_status tally_sampler_flush(tally_sampler *s, uint64_t timeout_ns)
{
    if (!s)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (s->device->info.clock == TALLY_CLOCK_VIRTUAL)
        return flush_virtual(s->device, s);
    return flush_realtime(s->device, s, timeout_ns);
}
