/*
 * Reading the layer's queries back, per submission of a measuring device.
 * The application's batches are bracketed by two command buffers of the
 * layer's: one before them resets the queries their command buffers (and
 * the secondaries those execute) will write, one after copies the results
 * into a host-visible buffer (vkCmdCopyQueryPoolResults waits for each
 * query). Query commands on one queue execute in submission order, so the
 * reset, the writes and the copy need no barrier between them, and a later
 * submission's reset cannot overtake this one's copy. An empty submission
 * then signals the layer's fence; the engine's queue thread waits for it
 * (tally_measurement_reader) and reads each command's measurement by key.
 * The application's thread never waits on the GPU for any of this. The
 * buffer, the two command buffers and the fence are host_readback.h's; what
 * is this file's is which queries are reset and copied where, and how the
 * reader turns them into measurements.
 */
#include "driver_measure.h"

#include "array_grow.h"
#include "host_readback.h"

#include <stdlib.h>
#include <string.h>

/* One block of one command buffer's recording, as copied into the buffer. */
typedef struct measure_entry {
    uint32_t serial, block, used;
    uint32_t statistic_count;
    VkQueryPipelineStatisticFlags statistics;
    uint64_t timestamp_mask; /* 0: no timestamps */
    VkDeviceSize timestamps_at, statistics_at;
    VkQueryPool timestamp_pool, statistics_pool;
} measure_entry;

struct layer_measure_readback {
    layer_host_readback host; /* first: the free list holds it */
    measure_entry *entries;
    uint32_t entry_count, entry_capacity;
    double period; /* ns per timestamp tick */
    /* Sampled once the fence signalled, close after the timestamps it
     * places on CLOCK_MONOTONIC (driver_calibration.c); not valid: none. */
    layer_calibration calibration;
    _Atomic uint64_t seqno; /* the latest engine submission that reads it */
    tally_measurement_reader reader;
    struct layer_measure_readback *next_in_flight; /* in layer_measuring.in_flight */
};

static void reader_wait(void *user);
static bool reader_read(void *user, uint64_t key, tally_measurement *measurement);
static void reader_release(void *user);

static void readback_destroy(layer_host_readback *host)
{
    layer_measure_readback *rb = (layer_measure_readback *)host;
    layer_host_readback_fini(host);
    free(rb->entries);
    free(rb);
}

/* Two command buffers: the resets before the application's batches, the
 * copies after them. */
static layer_host_readback *readback_create(layer_device *device, uint32_t family)
{
    layer_measure_readback *rb = calloc(1, sizeof(*rb));
    if (!rb)
        return NULL;
    rb->period = device->measuring->timestamp_period;
    rb->reader = (tally_measurement_reader){reader_wait, reader_read, reader_release, rb};
    if (!layer_host_readback_init(&rb->host, device, family, 2)) {
        readback_destroy(&rb->host);
        return NULL;
    }
    return &rb->host;
}

static layer_measure_readback *readback_acquire(layer_device *device, uint32_t family)
{
    layer_measuring *m = device->measuring;
    layer_measure_readback *rb = (layer_measure_readback *)layer_host_readback_acquire(
        &m->free_readbacks, &m->lock, device, family, readback_create);
    if (!rb)
        return NULL;
    rb->next_in_flight = NULL;
    atomic_store(&rb->seqno, 0);
    rb->entry_count = 0;
    rb->calibration.valid = false;
    return rb;
}

static void unlink_in_flight(layer_measuring *m, layer_measure_readback *rb)
{
    for (layer_measure_readback **link = &m->in_flight; *link; link = &(*link)->next_in_flight)
        if (*link == rb) {
            *link = rb->next_in_flight;
            return;
        }
}

/* The last reference gives it back, its fence unsignalled again. */
static void readback_unref(layer_measure_readback *rb)
{
    if (!layer_host_readback_unref(&rb->host))
        return;
    layer_measuring *m = rb->host.device->measuring;
    pthread_mutex_lock(&m->lock);
    unlink_in_flight(m, rb);
    pthread_mutex_unlock(&m->lock);
    layer_host_readback_recycle(&rb->host, &m->free_readbacks, &m->lock);
}

void layer_measure_readbacks_destroy_all(layer_device *device)
{
    layer_host_readback_destroy_all(&device->measuring->free_readbacks, readback_destroy);
}

static bool seen(const layer_measure_readback *rb, uint32_t serial)
{
    for (uint32_t i = 0; i < rb->entry_count; i++)
        if (rb->entries[i].serial == serial)
            return true;
    return false;
}

/* The blocks a recording wrote, placed in the buffer. */
static void plan_recording(layer_measure_readback *rb, const layer_command_buffer *cb)
{
    const layer_measured_cb *mc = cb->measured;
    if (!mc || !mc->serial || mc->family != rb->host.family || seen(rb, mc->serial))
        return;
    const layer_measure_family *family = &rb->host.device->measuring->families[mc->family];
    for (uint32_t b = 0; b < mc->block_count && mc->blocks[b].used; b++) {
        const layer_measure_block *block = &mc->blocks[b];
        if (rb->entry_count == rb->entry_capacity) {
            measure_entry *grown = layer_array_grow(rb->entries, &rb->entry_capacity,
                                                    rb->entry_count + 1, sizeof(*grown));
            if (!grown)
                return;
            rb->entries = grown;
        }
        measure_entry *e = &rb->entries[rb->entry_count++];
        uint32_t bits = family->timestamp_valid_bits;
        *e = (measure_entry){
            .serial = mc->serial,
            .block = b,
            .used = block->used,
            .statistics = block->statistics ? family->statistics : 0,
            .statistic_count =
                block->statistics ? (uint32_t)__builtin_popcount(family->statistics) : 0,
            .timestamp_mask = !block->timestamps ? 0
                              : bits >= 64       ? ~0ull
                                                 : (1ull << bits) - 1,
            .timestamp_pool = block->timestamps,
            .statistics_pool = block->statistics,
        };
        /* 64-bit results: at multiples of 8 (vkCmdCopyQueryPoolResults). */
        e->timestamps_at = layer_host_readback_place(
            &rb->host, block->timestamps ? 2 * sizeof(uint64_t) * block->used : 0, 8);
        e->statistics_at = layer_host_readback_place(
            &rb->host, sizeof(uint64_t) * e->statistic_count * block->used, 8);
    }
}

static bool record(layer_measure_readback *rb)
{
    const struct layer_device_dispatch *d = &rb->host.device->dispatch;
    VkCommandBuffer before = rb->host.command_buffers[0], after = rb->host.command_buffers[1];
    if (!layer_host_readback_begin(&rb->host))
        return false;
    const VkQueryResultFlags flags = VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT;
    for (uint32_t i = 0; i < rb->entry_count; i++) {
        const measure_entry *e = &rb->entries[i];
        if (e->timestamp_pool) {
            d->CmdResetQueryPool(before, e->timestamp_pool, 0, 2 * e->used);
            d->CmdCopyQueryPoolResults(after, e->timestamp_pool, 0, 2 * e->used, rb->host.buffer,
                                       e->timestamps_at, sizeof(uint64_t), flags);
        }
        if (e->statistics_pool) {
            d->CmdResetQueryPool(before, e->statistics_pool, 0, e->used);
            d->CmdCopyQueryPoolResults(after, e->statistics_pool, 0, e->used, rb->host.buffer,
                                       e->statistics_at, sizeof(uint64_t) * e->statistic_count,
                                       flags);
        }
    }
    return layer_host_readback_end(&rb->host);
}

static int compare_entries(const void *a, const void *b)
{
    const measure_entry *x = a, *y = b;
    if (x->serial != y->serial)
        return x->serial < y->serial ? -1 : 1;
    return (x->block > y->block) - (x->block < y->block);
}

layer_measure_readback *layer_measure_readback_prepare(layer_device *device, VkQueue queue,
                                                       layer_command_buffer *const *cbs,
                                                       uint32_t count)
{
    uintptr_t family = (uintptr_t)object_map_get(&device->queues, (uint64_t)(uintptr_t)queue);
    if (!device->measuring || !count || !family)
        return NULL;
    layer_measure_readback *rb = readback_acquire(device, (uint32_t)(family - 1));
    if (!rb)
        return NULL;
    for (uint32_t i = 0; i < count; i++) {
        plan_recording(rb, cbs[i]);
        const layer_measured_cb *mc = cbs[i]->measured;
        for (uint32_t s = 0; mc && s < mc->secondary_count; s++)
            plan_recording(rb, mc->secondaries[s]);
    }
    if (!rb->entry_count || !layer_host_readback_reserve(&rb->host) || !record(rb)) {
        readback_unref(rb);
        return NULL;
    }
    qsort(rb->entries, rb->entry_count, sizeof(*rb->entries), compare_entries);
    return rb;
}

VkCommandBuffer layer_measure_readback_before(const layer_measure_readback *rb)
{
    return rb->host.command_buffers[0];
}

VkCommandBuffer layer_measure_readback_after(const layer_measure_readback *rb)
{
    return rb->host.command_buffers[1];
}

bool layer_measure_readback_submitted(layer_measure_readback *rb, VkQueue queue)
{
    return layer_host_readback_submitted(&rb->host, queue);
}

const tally_measurement_reader *layer_measure_readback_reader(const layer_measure_readback *rb)
{
    return &rb->reader;
}

void layer_measure_readback_ref(layer_measure_readback *rb)
{
    layer_host_readback_ref(&rb->host);
}

void layer_measure_readback_note(layer_measure_readback *rb, uint64_t seqno)
{
    layer_measuring *m = rb->host.device->measuring;
    pthread_mutex_lock(&m->lock);
    if (!atomic_load(&rb->seqno)) {
        rb->next_in_flight = m->in_flight;
        m->in_flight = rb;
    }
    atomic_store(&rb->seqno, seqno);
    pthread_mutex_unlock(&m->lock);
}

void layer_measure_readback_release(layer_measure_readback *rb)
{
    if (rb)
        readback_unref(rb);
}

void layer_measure_catch_up(layer_device *device)
{
    layer_measuring *m = device->measuring;
    if (!m || !device->engine)
        return;
    uint64_t done = 0;
    pthread_mutex_lock(&m->lock);
    for (layer_measure_readback *rb = m->in_flight; rb; rb = rb->next_in_flight) {
        uint64_t seqno = atomic_load(&rb->seqno);
        if (seqno > done &&
            device->dispatch.GetFenceStatus(device->handle, rb->host.fence) == VK_SUCCESS)
            done = seqno;
    }
    pthread_mutex_unlock(&m->lock);
    if (done)
        tally_wait_seqno(device->engine, done, UINT64_MAX);
}

static void reader_wait(void *user)
{
    layer_measure_readback *rb = user;
    layer_host_readback_wait(&rb->host);
    if (!rb->calibration.valid) /* once, for every engine submission of it */
        layer_calibration_sample(rb->host.device, &rb->calibration);
}

static uint64_t word(const layer_measure_readback *rb, VkDeviceSize at)
{
    uint64_t value;
    memcpy(&value, rb->host.mapped + at, sizeof(value));
    return value;
}

static uint64_t ticks_to_ns(const layer_measure_readback *rb, uint64_t ticks)
{
    return (uint64_t)((long double)ticks * rb->period);
}

static bool reader_read(void *user, uint64_t key, tally_measurement *out)
{
    const layer_measure_readback *rb = user;
    measure_entry wanted = {.serial = (uint32_t)(key >> 32),
                            .block = (uint32_t)(key >> 14) & 0x3ffff};
    const measure_entry *e = rb->host.copied ? bsearch(&wanted, rb->entries, rb->entry_count,
                                                       sizeof(*rb->entries), compare_entries)
                                             : NULL;
    uint32_t index = key & 511, views = ((key >> 9) & 31) + 1;
    if (!e || index + views > e->used)
        return false;
    memset(out, 0, sizeof(*out));
    if (e->timestamp_mask) {
        /* Each command's begin timestamps, then its end ones; in multiview the
         * first of each holds the time. */
        VkDeviceSize at = e->timestamps_at + sizeof(uint64_t) * 2 * index;
        out->begin_ns = ticks_to_ns(rb, word(rb, at) & e->timestamp_mask);
        out->end_ns = ticks_to_ns(rb, word(rb, at + sizeof(uint64_t) * views) & e->timestamp_mask);
        out->valid |= TALLY_MEASURE_TIME;
        layer_calibration_place(&rb->calibration, word(rb, at),
                                word(rb, at + sizeof(uint64_t) * views), e->timestamp_mask,
                                rb->period, out);
    }
    /* Statistics come in bit order of the pool's; multiview spreads them over its queries. */
    uint32_t k = 0;
    for (uint32_t bit = 0; bit < TALLY_STATISTIC_COUNT; bit++) {
        if (!(e->statistics & (1u << bit)))
            continue;
        for (uint32_t v = 0; v < views; v++)
            out->statistics[bit] +=
                word(rb, e->statistics_at +
                             sizeof(uint64_t) * ((uint64_t)e->statistic_count * (index + v) + k));
        out->valid |= 1u << bit;
        k++;
    }
    return true;
}

static void reader_release(void *user)
{
    readback_unref(user);
}
