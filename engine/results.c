/*
 * Results objects: slots of raw deltas filled by marker commands on the queue
 * thread and read by any thread. Each object has its own lock, taken once per
 * marker end and per read, never per draw.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* A scope begun and never ended (its results object released mid-scope)
 * stops keeping the device listening. */
static void close_open_scopes(struct tally_results *r)
{
    if (!r->slots || !r->device)
        return;
    for (uint32_t i = 0; i < r->slot_count; i++)
        if (r->slots[i].open)
            atomic_fetch_sub_explicit(&r->device->open_scopes, 1, memory_order_relaxed);
}

static void destroy(struct tally_results *r)
{
    close_open_scopes(r);
    pthread_mutex_destroy(&r->lock);
    free(r->counters);
    free(r->pass_of);
    free(r->slots);
    free(r->begin);
    free(r->values);
    free(r);
}

static tally_status allocate(struct tally_results *r, uint32_t count, uint32_t raw_count)
{
    size_t cells = (size_t)r->slot_count * raw_count;
    r->counters = malloc((count ? count : 1) * sizeof(uint32_t));
    r->pass_of = malloc((count ? count : 1) * sizeof(uint32_t));
    r->slots = calloc(r->slot_count, sizeof(*r->slots));
    r->begin = calloc(cells ? cells : 1, sizeof(uint64_t));
    r->values = calloc(cells ? cells : 1, sizeof(uint64_t));
    if (!r->counters || !r->pass_of || !r->slots || !r->begin || !r->values)
        return TALLY_ERROR_OUT_OF_MEMORY;
    return TALLY_OK;
}

tally_status tally_results_create(tally_device *device, const uint32_t *counters, uint32_t count,
                                  uint32_t slot_count, tally_results **out)
{
    if (!device || !out || !slot_count || (count && !counters))
        return TALLY_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    uint32_t passes;
    tally_status s = tally_plan_passes(device->catalogue, counters, count, NULL, &passes);
    if (s != TALLY_OK)
        return s;
    if (passes > 32)
        return TALLY_ERROR_OVER_CAPACITY; /* passes_done is a 32-bit mask */
    struct tally_results *r = calloc(1, sizeof(*r));
    if (!r)
        return TALLY_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&r->lock, NULL);
    r->slot_count = slot_count;
    if (allocate(r, count, device->raw_count) != TALLY_OK) {
        destroy(r);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    if (count)
        memcpy(r->counters, counters, count * sizeof(uint32_t));
    tally_plan_passes(device->catalogue, r->counters, count, r->pass_of, &r->pass_count);
    atomic_init(&r->refs, 1);
    r->device = device;
    r->counter_count = count;
    *out = r;
    return TALLY_OK;
}

void tally_results_ref(struct tally_results *results)
{
    atomic_fetch_add_explicit(&results->refs, 1, memory_order_relaxed);
}

void tally_results_release(tally_results *results)
{
    if (results && atomic_fetch_sub_explicit(&results->refs, 1, memory_order_acq_rel) == 1)
        destroy(results);
}

uint32_t tally_results_slot_count(const tally_results *r)
{
    return r ? r->slot_count : 0;
}
uint32_t tally_results_counter_count(const tally_results *r)
{
    return r ? r->counter_count : 0;
}
const uint32_t *tally_results_counters(const tally_results *r)
{
    return r ? r->counters : NULL;
}
uint32_t tally_results_pass_count(const tally_results *r)
{
    return r ? r->pass_count : 0;
}

uint32_t tally_results_counter_pass(const tally_results *r, uint32_t position)
{
    return r && position < r->counter_count ? r->pass_of[position] : 0;
}

static uint32_t all_passes(const struct tally_results *r)
{
    return r->pass_count >= 32 ? UINT32_MAX : (1u << (r->pass_count ? r->pass_count : 1)) - 1;
}

tally_status tally_results_reset(tally_results *r, uint32_t first, uint32_t count)
{
    if (!r || first >= r->slot_count || count > r->slot_count - first)
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&r->lock);
    for (uint32_t i = first; i < first + count; i++) {
        atomic_store_explicit(&r->slots[i].available, 0, memory_order_relaxed);
        r->slots[i].passes_done = 0;
    }
    pthread_mutex_unlock(&r->lock);
    return TALLY_OK;
}

void tally_results_begin(struct tally_results *r, uint32_t slot, const uint64_t *snapshot,
                         uint64_t gpu_ns)
{
    uint32_t raw_count = r->device->raw_count;
    pthread_mutex_lock(&r->lock);
    memcpy(&r->begin[(size_t)slot * raw_count], snapshot, raw_count * sizeof(uint64_t));
    r->slots[slot].begin_ns = gpu_ns;
    if (!r->slots[slot].open) {
        r->slots[slot].open = true;
        atomic_fetch_add_explicit(&r->device->open_scopes, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&r->lock);
}

void tally_results_end(struct tally_results *r, uint32_t slot, const uint64_t *snapshot,
                       uint64_t gpu_ns, uint32_t context_id, uint32_t pass_index)
{
    uint32_t raw_count = r->device->raw_count;
    pthread_mutex_lock(&r->lock);
    const uint64_t *begin = &r->begin[(size_t)slot * raw_count];
    uint64_t *values = &r->values[(size_t)slot * raw_count];
    for (uint32_t i = 0; i < raw_count; i++)
        values[i] = snapshot[i] - begin[i];
    struct tally_slot *s = &r->slots[slot];
    if (s->open) {
        s->open = false;
        atomic_fetch_sub_explicit(&r->device->open_scopes, 1, memory_order_relaxed);
    }
    s->end_ns = gpu_ns;
    s->context_id = context_id;
    if (pass_index < 32)
        s->passes_done |= 1u << pass_index;
    bool complete = (s->passes_done & all_passes(r)) == all_passes(r);
    atomic_store_explicit(&s->available, complete, memory_order_release);
    pthread_mutex_unlock(&r->lock);
}

static void fill_values(struct tally_results *r, uint32_t slot, tally_value *values, uint32_t count)
{
    const uint64_t *raw = &r->values[(size_t)slot * r->device->raw_count];
    for (uint32_t i = 0; i < count; i++)
        tally_catalogue_evaluate(r->device->catalogue, r->counters[i], raw, r->device->constants,
                                 &values[i]);
}

tally_status tally_results_get(tally_results *r, uint32_t slot, tally_value *values,
                               uint32_t value_count, tally_slot_info *info)
{
    if (!r || slot >= r->slot_count || (value_count && !values))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!atomic_load_explicit(&r->slots[slot].available, memory_order_acquire))
        return TALLY_NOT_READY;
    uint32_t n = value_count < r->counter_count ? value_count : r->counter_count;
    pthread_mutex_lock(&r->lock);
    fill_values(r, slot, values, n);
    if (info)
        *info = (tally_slot_info){r->slots[slot].begin_ns, r->slots[slot].end_ns,
                                  r->slots[slot].context_id, r->slots[slot].passes_done};
    pthread_mutex_unlock(&r->lock);
    return value_count < r->counter_count ? TALLY_INCOMPLETE : TALLY_OK;
}

tally_status tally_results_get_raw(tally_results *r, uint32_t slot, uint64_t *raw,
                                   uint32_t raw_count)
{
    if (!r || slot >= r->slot_count || !raw || raw_count < r->device->raw_count)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!atomic_load_explicit(&r->slots[slot].available, memory_order_acquire))
        return TALLY_NOT_READY;
    pthread_mutex_lock(&r->lock);
    memcpy(raw, &r->values[(size_t)slot * r->device->raw_count],
           r->device->raw_count * sizeof(uint64_t));
    pthread_mutex_unlock(&r->lock);
    return TALLY_OK;
}

tally_status tally_results_wait(tally_results *r, uint32_t slot, uint64_t timeout_ns)
{
    if (!r || slot >= r->slot_count)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_device *d = r->device;
    struct timespec storage;
    const struct timespec *deadline = tally_deadline(timeout_ns, &storage);
    /* An inherited device executes nothing here; a drained one, nothing more. */
    if (!tally_device_inherited(d)) {
        pthread_mutex_lock(&d->lock);
        if (!atomic_load_explicit(&r->slots[slot].available, memory_order_acquire))
            pthread_cond_signal(&d->work_ready); /* someone waits: the queue lingers no more */
        while (!atomic_load_explicit(&r->slots[slot].available, memory_order_acquire) &&
               !d->drained)
            if (!tally_cond_wait(&d->progress, &d->lock, deadline))
                break;
        pthread_mutex_unlock(&d->lock);
    }
    return atomic_load_explicit(&r->slots[slot].available, memory_order_acquire) ? TALLY_OK
                                                                                 : TALLY_TIMEOUT;
}
