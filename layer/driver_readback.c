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
 * The application's thread never waits on the GPU for any of this.
 */
#include "driver_measure.h"

#include "array_grow.h"

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
    layer_device *device;
    uint32_t family;
    VkCommandPool pool;
    VkCommandBuffer before, after;
    VkFence fence;
    VkBuffer buffer;
    VkDeviceMemory memory;
    const uint8_t *mapped;
    VkDeviceSize capacity, used;
    measure_entry *entries;
    uint32_t entry_count, entry_capacity;
    double period;          /* ns per timestamp tick */
    atomic_uint refs;       /* the submitting thread's, and each engine submission's */
    _Atomic uint64_t seqno; /* the latest engine submission that reads it */
    bool fence_submitted;   /* and not yet waited for and reset */
    bool copied;            /* the fence signalled: the results are in the buffer */
    tally_measurement_reader reader;
    struct layer_measure_readback *next; /* in the free or the in-flight list */
};

static void reader_wait(void *user);
static bool reader_read(void *user, uint64_t key, tally_measurement *measurement);
static void reader_release(void *user);

static void readback_destroy(layer_measure_readback *rb)
{
    layer_device *device = rb->device;
    VkDevice handle = device->handle;
    if (rb->buffer)
        device->dispatch.DestroyBuffer(handle, rb->buffer, NULL);
    if (rb->memory)
        device->dispatch.FreeMemory(handle, rb->memory, NULL);
    if (rb->fence)
        device->dispatch.DestroyFence(handle, rb->fence, NULL);
    if (rb->pool)
        device->dispatch.DestroyCommandPool(handle, rb->pool, NULL);
    free(rb->entries);
    free(rb);
}

static bool allocate_command_buffer(layer_measure_readback *rb, VkCommandBuffer *out)
{
    layer_device *device = rb->device;
    VkCommandBufferAllocateInfo allocate = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = rb->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    /* The layer's command buffers are dispatchable: the loader's data goes in them. */
    return device->dispatch.AllocateCommandBuffers(device->handle, &allocate, out) == VK_SUCCESS &&
           device->set_loader_data && device->set_loader_data(device->handle, *out) == VK_SUCCESS;
}

static layer_measure_readback *readback_create(layer_device *device, uint32_t family)
{
    layer_measure_readback *rb = calloc(1, sizeof(*rb));
    if (!rb)
        return NULL;
    rb->device = device;
    rb->family = family;
    rb->period = device->measuring->timestamp_period;
    rb->reader = (tally_measurement_reader){reader_wait, reader_read, reader_release, rb};
    /* Both command buffers are recorded again at each use: the pool is reset whole. */
    VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = family,
    };
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (device->dispatch.CreateCommandPool(device->handle, &pool_info, NULL, &rb->pool) !=
            VK_SUCCESS ||
        device->dispatch.CreateFence(device->handle, &fence_info, NULL, &rb->fence) != VK_SUCCESS ||
        !allocate_command_buffer(rb, &rb->before) || !allocate_command_buffer(rb, &rb->after)) {
        readback_destroy(rb);
        return NULL;
    }
    return rb;
}

static layer_measure_readback *readback_acquire(layer_device *device, uint32_t family)
{
    layer_measuring *m = device->measuring;
    pthread_mutex_lock(&m->lock);
    layer_measure_readback **link = &m->free_readbacks;
    while (*link && (*link)->family != family)
        link = &(*link)->next;
    layer_measure_readback *rb = *link;
    if (rb)
        *link = rb->next;
    pthread_mutex_unlock(&m->lock);
    if (!rb && !(rb = readback_create(device, family)))
        return NULL;
    rb->next = NULL;
    atomic_store(&rb->refs, 1);
    atomic_store(&rb->seqno, 0);
    rb->entry_count = 0;
    rb->used = 0;
    rb->copied = false;
    return rb;
}

static void unlink_in_flight(layer_measuring *m, layer_measure_readback *rb)
{
    for (layer_measure_readback **link = &m->in_flight; *link; link = &(*link)->next)
        if (*link == rb) {
            *link = rb->next;
            return;
        }
}

/* The last reference gives it back, its fence unsignalled again. */
static void readback_unref(layer_measure_readback *rb)
{
    if (atomic_fetch_sub_explicit(&rb->refs, 1, memory_order_acq_rel) != 1)
        return;
    layer_device *device = rb->device;
    layer_measuring *m = device->measuring;
    pthread_mutex_lock(&m->lock);
    unlink_in_flight(m, rb);
    pthread_mutex_unlock(&m->lock);
    if (rb->fence_submitted) {
        device->dispatch.WaitForFences(device->handle, 1, &rb->fence, VK_TRUE, UINT64_MAX);
        device->dispatch.ResetFences(device->handle, 1, &rb->fence);
        rb->fence_submitted = false;
    }
    pthread_mutex_lock(&m->lock);
    rb->next = m->free_readbacks;
    m->free_readbacks = rb;
    pthread_mutex_unlock(&m->lock);
}

void layer_measure_readbacks_destroy_all(layer_device *device)
{
    layer_measuring *m = device->measuring;
    for (layer_measure_readback *rb = m->free_readbacks, *next; rb; rb = next) {
        next = rb->next;
        readback_destroy(rb);
    }
    m->free_readbacks = NULL;
}

static uint32_t host_memory_type(layer_device *device, uint32_t allowed)
{
    VkPhysicalDeviceMemoryProperties properties;
    device->instance->dispatch.GetPhysicalDeviceMemoryProperties(device->physical_device,
                                                                 &properties);
    const VkMemoryPropertyFlags wanted =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < properties.memoryTypeCount; i++)
        if ((allowed & (1u << i)) && (properties.memoryTypes[i].propertyFlags & wanted) == wanted)
            return i;
    return UINT32_MAX;
}

static bool reserve_buffer(layer_measure_readback *rb, VkDeviceSize size)
{
    if (size <= rb->capacity)
        return true;
    layer_device *device = rb->device;
    VkDevice handle = device->handle;
    if (rb->buffer) {
        device->dispatch.DestroyBuffer(handle, rb->buffer, NULL);
        device->dispatch.FreeMemory(handle, rb->memory, NULL);
        rb->buffer = VK_NULL_HANDLE;
        rb->memory = VK_NULL_HANDLE;
        rb->capacity = 0;
    }
    /* One allocation of a size drivers like (validation's best practices
     * call smaller ones wasteful): about ten thousand commands' results. */
    VkDeviceSize capacity = 1 << 20;
    while (capacity < size)
        capacity *= 2;
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = capacity,
        .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    if (device->dispatch.CreateBuffer(handle, &info, NULL, &rb->buffer) != VK_SUCCESS)
        return false;
    VkMemoryRequirements needs;
    device->dispatch.GetBufferMemoryRequirements(handle, rb->buffer, &needs);
    VkMemoryAllocateInfo allocate = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = needs.size,
        .memoryTypeIndex = host_memory_type(device, needs.memoryTypeBits),
    };
    void *mapped = NULL;
    if (allocate.memoryTypeIndex == UINT32_MAX ||
        device->dispatch.AllocateMemory(handle, &allocate, NULL, &rb->memory) != VK_SUCCESS ||
        device->dispatch.BindBufferMemory(handle, rb->buffer, rb->memory, 0) != VK_SUCCESS ||
        device->dispatch.MapMemory(handle, rb->memory, 0, VK_WHOLE_SIZE, 0, &mapped) != VK_SUCCESS)
        return false; /* what was made is freed with the readback */
    rb->mapped = mapped;
    rb->capacity = capacity;
    return true;
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
    if (!mc || !mc->serial || mc->family != rb->family || seen(rb, mc->serial))
        return;
    const layer_measure_family *family = &rb->device->measuring->families[mc->family];
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
        e->timestamps_at = rb->used;
        rb->used += block->timestamps ? 2 * sizeof(uint64_t) * block->used : 0;
        e->statistics_at = rb->used;
        rb->used += sizeof(uint64_t) * e->statistic_count * block->used;
    }
}

static bool begin(layer_device *device, VkCommandBuffer cb)
{
    VkCommandBufferBeginInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    return device->dispatch.BeginCommandBuffer(cb, &info) == VK_SUCCESS;
}

static bool record(layer_measure_readback *rb)
{
    layer_device *device = rb->device;
    const struct layer_device_dispatch *d = &device->dispatch;
    if (d->ResetCommandPool(device->handle, rb->pool, 0) != VK_SUCCESS ||
        !begin(device, rb->before) || !begin(device, rb->after))
        return false;
    const VkQueryResultFlags flags = VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT;
    for (uint32_t i = 0; i < rb->entry_count; i++) {
        const measure_entry *e = &rb->entries[i];
        if (e->timestamp_pool) {
            d->CmdResetQueryPool(rb->before, e->timestamp_pool, 0, 2 * e->used);
            d->CmdCopyQueryPoolResults(rb->after, e->timestamp_pool, 0, 2 * e->used, rb->buffer,
                                       e->timestamps_at, sizeof(uint64_t), flags);
        }
        if (e->statistics_pool) {
            d->CmdResetQueryPool(rb->before, e->statistics_pool, 0, e->used);
            d->CmdCopyQueryPoolResults(rb->after, e->statistics_pool, 0, e->used, rb->buffer,
                                       e->statistics_at, sizeof(uint64_t) * e->statistic_count,
                                       flags);
        }
    }
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    d->CmdPipelineBarrier(rb->after, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0,
                          1, &to_host, 0, NULL, 0, NULL);
    return d->EndCommandBuffer(rb->before) == VK_SUCCESS &&
           d->EndCommandBuffer(rb->after) == VK_SUCCESS;
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
    if (!rb->entry_count || !reserve_buffer(rb, rb->used) || !record(rb)) {
        readback_unref(rb);
        return NULL;
    }
    qsort(rb->entries, rb->entry_count, sizeof(*rb->entries), compare_entries);
    return rb;
}

VkCommandBuffer layer_measure_readback_before(const layer_measure_readback *rb)
{
    return rb->before;
}

VkCommandBuffer layer_measure_readback_after(const layer_measure_readback *rb)
{
    return rb->after;
}

bool layer_measure_readback_submitted(layer_measure_readback *rb, VkQueue queue)
{
    layer_device *device = rb->device;
    rb->fence_submitted = device->dispatch.QueueSubmit(queue, 0, NULL, rb->fence) == VK_SUCCESS;
    if (!rb->fence_submitted) /* nothing else tells when the command buffers are free again */
        device->dispatch.QueueWaitIdle(queue);
    return rb->fence_submitted;
}

const tally_measurement_reader *layer_measure_readback_reader(const layer_measure_readback *rb)
{
    return &rb->reader;
}

void layer_measure_readback_ref(layer_measure_readback *rb)
{
    atomic_fetch_add_explicit(&rb->refs, 1, memory_order_relaxed);
}

void layer_measure_readback_note(layer_measure_readback *rb, uint64_t seqno)
{
    layer_measuring *m = rb->device->measuring;
    pthread_mutex_lock(&m->lock);
    if (!atomic_load(&rb->seqno)) {
        rb->next = m->in_flight;
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
    for (layer_measure_readback *rb = m->in_flight; rb; rb = rb->next) {
        uint64_t seqno = atomic_load(&rb->seqno);
        if (seqno > done &&
            device->dispatch.GetFenceStatus(device->handle, rb->fence) == VK_SUCCESS)
            done = seqno;
    }
    pthread_mutex_unlock(&m->lock);
    if (done)
        tally_wait_seqno(device->engine, done, UINT64_MAX);
}

static void reader_wait(void *user)
{
    layer_measure_readback *rb = user;
    if (!rb->copied && rb->fence_submitted)
        rb->copied = rb->device->dispatch.WaitForFences(rb->device->handle, 1, &rb->fence, VK_TRUE,
                                                        UINT64_MAX) == VK_SUCCESS;
}

static uint64_t word(const layer_measure_readback *rb, VkDeviceSize at)
{
    uint64_t value;
    memcpy(&value, rb->mapped + at, sizeof(value));
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
    const measure_entry *e = rb->copied ? bsearch(&wanted, rb->entries, rb->entry_count,
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
