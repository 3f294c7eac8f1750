/*
 * Reading indirect parameters back. A submission whose command buffers hold
 * indirect commands gets one more batch, the layer's: a barrier after all
 * earlier work, then a copy of every command's records (and count) into a
 * host-visible buffer. The copy rides in the application's vkQueueSubmit, so
 * the application's fence covers it and no buffer it copies can be destroyed
 * under it. An empty submission then signals the layer's fence, which the
 * engine's queue thread waits on before it executes the submission and asks
 * for the records (tally_indirect_reader). The values read are those at the
 * end of the submission: what the draws read, unless the application rewrote
 * them between the draws and the end of the submission.
 *
 * What the layer does here is valid usage and what the validation layer's
 * best practices ask for: the barrier names the stages and accesses that can
 * write a buffer on the queue's family (never ALL_COMMANDS), each readback's
 * memory is one block of at least READBACK_BLOCK bytes that its buffer is
 * carved from (no small allocations), its command pool is reset whole (no
 * resettable command buffers), and a buffer goes before its memory.
 */
#include "array_grow.h"
#include "layer_state.h"

#include <stdlib.h>
#include <string.h>

/* The smallest memory block a readback allocates: above the sizes best
 * practices call small (256 KiB for an allocation, 1 MiB for one that a
 * single buffer takes whole), and room for 32768 draw records. */
#define READBACK_BLOCK ((VkDeviceSize)1 << 20)

typedef struct readback_entry {
    uint64_t key;
    VkDeviceSize at;       /* of the records, in the readback buffer */
    VkDeviceSize count_at; /* of the count, when `counted` */
    uint32_t max_count, stride;
    bool counted;
} readback_entry;

struct layer_readback {
    layer_device *device;
    uint32_t family;
    VkCommandPool pool;
    VkCommandBuffer command_buffer;
    VkFence fence;
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize memory_size; /* the block; the buffer takes `capacity` of it */
    const uint8_t *mapped;
    VkDeviceSize capacity, used;
    /* What can have written indirect parameters on this queue family. */
    VkPipelineStageFlags writer_stages;
    VkAccessFlags writer_access;
    readback_entry *entries;
    uint32_t entry_count, entry_capacity;
    atomic_uint refs;     /* the submitting thread's, and each engine submission's */
    bool fence_submitted; /* and not yet waited for and reset */
    bool copied;          /* the fence signalled: the records are in the buffer */
    tally_indirect_reader reader;
    struct layer_readback *next_free;
};

/* The buffer first: it must not outlive the memory bound to it. */
static void release_storage(layer_readback *rb)
{
    layer_device *device = rb->device;
    if (rb->buffer)
        device->dispatch.DestroyBuffer(device->handle, rb->buffer, NULL);
    if (rb->memory)
        device->dispatch.FreeMemory(device->handle, rb->memory, NULL);
    rb->buffer = VK_NULL_HANDLE;
    rb->memory = VK_NULL_HANDLE;
    rb->mapped = NULL;
    rb->capacity = rb->memory_size = 0;
}

static void readback_destroy(layer_readback *rb)
{
    layer_device *device = rb->device;
    VkDevice handle = device->handle;
    release_storage(rb);
    if (rb->fence)
        device->dispatch.DestroyFence(handle, rb->fence, NULL);
    if (rb->pool)
        device->dispatch.DestroyCommandPool(handle, rb->pool, NULL); /* frees its command buffer */
    free(rb->entries);
    free(rb);
}

static void reader_wait(void *user);
static bool reader_read(void *user, uint64_t key, tally_indirect_records *records);
static void reader_release(void *user);

/* The stages (and their accesses) that can write a buffer on queues of the
 * family, as far as the device enabled them: transfers, and shader storage
 * writes of the stages the family runs. Host writes before the submission
 * are visible to it without a barrier. */
static void note_writers(layer_readback *rb, uint32_t family)
{
    layer_device *device = rb->device;
    uint32_t count = 0;
    VkQueueFamilyProperties families[16];
    device->instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(device->physical_device,
                                                                      &count, NULL);
    if (count > 16)
        count = 16;
    device->instance->dispatch.GetPhysicalDeviceQueueFamilyProperties(device->physical_device,
                                                                      &count, families);
    VkQueueFlags flags = family < count ? families[family].queueFlags : 0;
    rb->writer_stages = VK_PIPELINE_STAGE_TRANSFER_BIT;
    rb->writer_access = VK_ACCESS_TRANSFER_WRITE_BIT;
    if (flags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT))
        rb->writer_access |= VK_ACCESS_SHADER_WRITE_BIT;
    if (flags & VK_QUEUE_COMPUTE_BIT)
        rb->writer_stages |= VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    if (!(flags & VK_QUEUE_GRAPHICS_BIT))
        return;
    rb->writer_stages |=
        VK_PIPELINE_STAGE_VERTEX_SHADER_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT;
    if (device->geometry_shader)
        rb->writer_stages |= VK_PIPELINE_STAGE_GEOMETRY_SHADER_BIT;
    if (device->tessellation_shader)
        rb->writer_stages |= VK_PIPELINE_STAGE_TESSELLATION_CONTROL_SHADER_BIT |
                             VK_PIPELINE_STAGE_TESSELLATION_EVALUATION_SHADER_BIT;
    if (layer_extension_enabled(&device->extensions, LAYER_EXT_EXT_transform_feedback)) {
        rb->writer_stages |= VK_PIPELINE_STAGE_TRANSFORM_FEEDBACK_BIT_EXT;
        rb->writer_access |= VK_ACCESS_TRANSFORM_FEEDBACK_WRITE_BIT_EXT;
    }
}

static layer_readback *readback_create(layer_device *device, uint32_t family)
{
    layer_readback *rb = calloc(1, sizeof(*rb));
    if (!rb)
        return NULL;
    rb->device = device;
    rb->family = family;
    rb->reader = (tally_indirect_reader){reader_wait, reader_read, reader_release, rb};
    note_writers(rb, family);
    VkDevice handle = device->handle;
    /* One command buffer per pool: resetting the pool resets it. */
    VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = family,
    };
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (device->dispatch.CreateCommandPool(handle, &pool_info, NULL, &rb->pool) != VK_SUCCESS ||
        device->dispatch.CreateFence(handle, &fence_info, NULL, &rb->fence) != VK_SUCCESS) {
        readback_destroy(rb);
        return NULL;
    }
    VkCommandBufferAllocateInfo allocate = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = rb->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = 1,
    };
    /* The layer's command buffer is dispatchable: the loader's data goes in it. */
    if (device->dispatch.AllocateCommandBuffers(handle, &allocate, &rb->command_buffer) !=
            VK_SUCCESS ||
        !device->set_loader_data ||
        device->set_loader_data(handle, rb->command_buffer) != VK_SUCCESS) {
        readback_destroy(rb);
        return NULL;
    }
    return rb;
}

/* A free readback of the family, or a new one. */
static layer_readback *readback_acquire(layer_device *device, uint32_t family)
{
    pthread_mutex_lock(&device->readback_lock);
    layer_readback **link = &device->free_readbacks;
    while (*link && (*link)->family != family)
        link = &(*link)->next_free;
    layer_readback *rb = *link;
    if (rb)
        *link = rb->next_free;
    pthread_mutex_unlock(&device->readback_lock);
    if (!rb && !(rb = readback_create(device, family)))
        return NULL;
    atomic_store(&rb->refs, 1);
    rb->entry_count = 0;
    rb->used = 0;
    rb->copied = false;
    return rb;
}

/* The last reference gives it back, its fence unsignalled again. */
static void readback_unref(layer_readback *rb)
{
    if (atomic_fetch_sub_explicit(&rb->refs, 1, memory_order_acq_rel) != 1)
        return;
    layer_device *device = rb->device;
    if (rb->fence_submitted) {
        device->dispatch.WaitForFences(device->handle, 1, &rb->fence, VK_TRUE, UINT64_MAX);
        device->dispatch.ResetFences(device->handle, 1, &rb->fence);
        rb->fence_submitted = false;
    }
    pthread_mutex_lock(&device->readback_lock);
    rb->next_free = device->free_readbacks;
    device->free_readbacks = rb;
    pthread_mutex_unlock(&device->readback_lock);
}

void layer_readbacks_destroy_all(layer_device *device)
{
    for (layer_readback *rb = device->free_readbacks, *next; rb; rb = next) {
        next = rb->next_free;
        readback_destroy(rb);
    }
    device->free_readbacks = NULL;
}

/* Every implementation has a host-visible, host-coherent memory type. */
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

static bool create_buffer(layer_readback *rb, VkDeviceSize capacity)
{
    layer_device *device = rb->device;
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = capacity,
        .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
    };
    return device->dispatch.CreateBuffer(device->handle, &info, NULL, &rb->buffer) == VK_SUCCESS;
}

/* A buffer of at least `size` bytes, carved from the readback's block; a
 * larger block (doubling) only when the block cannot hold it. */
static bool reserve_buffer(layer_readback *rb, VkDeviceSize size)
{
    if (size <= rb->capacity)
        return true;
    layer_device *device = rb->device;
    VkDevice handle = device->handle;
    VkDeviceSize capacity = 4096;
    while (capacity < size && capacity <= (VkDeviceSize)1 << 62)
        capacity *= 2;
    if (capacity < size)
        return false;
    if (rb->buffer) { /* a buffer of the new size, in the same block if it fits */
        device->dispatch.DestroyBuffer(handle, rb->buffer, NULL);
        rb->buffer = VK_NULL_HANDLE;
        rb->capacity = 0;
    }
    if (!create_buffer(rb, capacity))
        return false;
    VkMemoryRequirements needs;
    device->dispatch.GetBufferMemoryRequirements(handle, rb->buffer, &needs);
    if (needs.size > rb->memory_size) {
        VkBuffer buffer = rb->buffer; /* kept: release_storage takes the old block */
        rb->buffer = VK_NULL_HANDLE;
        release_storage(rb);
        rb->buffer = buffer;
        VkMemoryAllocateInfo allocate = {
            .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .allocationSize = needs.size > READBACK_BLOCK ? needs.size * 2 : READBACK_BLOCK,
            .memoryTypeIndex = host_memory_type(device, needs.memoryTypeBits),
        };
        void *mapped = NULL;
        if (allocate.memoryTypeIndex == UINT32_MAX ||
            device->dispatch.AllocateMemory(handle, &allocate, NULL, &rb->memory) != VK_SUCCESS ||
            device->dispatch.MapMemory(handle, rb->memory, 0, VK_WHOLE_SIZE, 0, &mapped) !=
                VK_SUCCESS)
            return false; /* what was made is freed with the readback */
        rb->memory_size = allocate.allocationSize;
        rb->mapped = mapped;
    }
    if (device->dispatch.BindBufferMemory(handle, rb->buffer, rb->memory, 0) != VK_SUCCESS)
        return false;
    rb->capacity = capacity;
    return true;
}

static readback_entry *add_entry(layer_readback *rb)
{
    if (rb->entry_count == rb->entry_capacity) {
        readback_entry *entries = layer_array_grow(rb->entries, &rb->entry_capacity,
                                                   (uint64_t)rb->entry_count + 1, sizeof(*entries));
        if (!entries)
            return NULL;
        rb->entries = entries;
    }
    return &rb->entries[rb->entry_count++];
}

/* Where in the readback buffer `size` bytes go, 4-byte aligned as records are. */
static VkDeviceSize place(layer_readback *rb, VkDeviceSize size)
{
    VkDeviceSize at = rb->used;
    rb->used += (size + 3) & ~(VkDeviceSize)3;
    return at;
}

/* The records of a command that lie inside its buffer: a valid command's
 * all lie inside, and an invalid one reads no further than the buffer. */
static uint32_t records_inside(const layer_indirect_command *c, const layer_buffer *buffer)
{
    if (!buffer || c->offset > buffer->size || buffer->size - c->offset < c->record_size)
        return 0;
    if (c->max_count <= 1 || c->stride == 0)
        return c->max_count ? 1 : 0;
    VkDeviceSize fit = (buffer->size - c->offset - c->record_size) / c->stride + 1;
    return fit < c->max_count ? (uint32_t)fit : c->max_count;
}

static void plan_entry(layer_readback *rb, const layer_indirect_command *c)
{
    layer_device *device = rb->device;
    uint32_t count = records_inside(c, object_map_get(&device->buffers, (uint64_t)c->buffer));
    const layer_buffer *count_buffer =
        c->count_buffer ? object_map_get(&device->buffers, (uint64_t)c->count_buffer) : NULL;
    bool counted = c->count_buffer != VK_NULL_HANDLE;
    if (!count || (counted && (!count_buffer || c->count_offset > count_buffer->size ||
                               count_buffer->size - c->count_offset < sizeof(uint32_t))))
        return; /* never read: the command counts as unknown */
    readback_entry *e = add_entry(rb);
    if (!e)
        return;
    *e = (readback_entry){
        .key = c->key, .max_count = count, .stride = c->stride, .counted = counted};
    e->at = place(rb, (VkDeviceSize)(count - 1) * c->stride + c->record_size);
    if (counted)
        e->count_at = place(rb, sizeof(uint32_t));
}

static void copy(layer_readback *rb, VkBuffer from, VkDeviceSize offset, VkDeviceSize to,
                 VkDeviceSize size)
{
    VkBufferCopy region = {.srcOffset = offset, .dstOffset = to, .size = size};
    rb->device->dispatch.CmdCopyBuffer(rb->command_buffer, from, rb->buffer, 1, &region);
}

static void barrier(layer_readback *rb, VkPipelineStageFlags from, VkAccessFlags written,
                    VkPipelineStageFlags to, VkAccessFlags read)
{
    VkMemoryBarrier memory = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = written, .dstAccessMask = read};
    rb->device->dispatch.CmdPipelineBarrier(rb->command_buffer, from, to, 0, 1, &memory, 0, NULL, 0,
                                            NULL);
}

static bool record_copies(layer_readback *rb, const layer_command_buffer *const *cbs,
                          uint32_t count)
{
    layer_device *device = rb->device;
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    /* Its last use is over: the fence was waited for before it came back. */
    if (device->dispatch.ResetCommandPool(device->handle, rb->pool, 0) != VK_SUCCESS ||
        device->dispatch.BeginCommandBuffer(rb->command_buffer, &begin) != VK_SUCCESS)
        return false;
    /* After everything submitted before, whatever wrote the parameters. */
    barrier(rb, rb->writer_stages, rb->writer_access, VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_TRANSFER_READ_BIT);
    uint32_t e = 0;
    for (uint32_t i = 0; i < count; i++) {
        for (uint32_t j = 0; j < cbs[i]->indirect.count; j++) {
            const layer_indirect_command *c = &cbs[i]->indirect.items[j];
            if (e == rb->entry_count || rb->entries[e].key != c->key)
                continue; /* not planned */
            const readback_entry *entry = &rb->entries[e++];
            copy(rb, c->buffer, c->offset, entry->at,
                 (VkDeviceSize)(entry->max_count - 1) * c->stride + c->record_size);
            if (entry->counted)
                copy(rb, c->count_buffer, c->count_offset, entry->count_at, sizeof(uint32_t));
        }
    }
    barrier(rb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
            VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    return device->dispatch.EndCommandBuffer(rb->command_buffer) == VK_SUCCESS;
}

static int compare_entries(const void *a, const void *b)
{
    uint64_t x = ((const readback_entry *)a)->key, y = ((const readback_entry *)b)->key;
    return (x > y) - (x < y);
}

layer_readback *layer_readback_prepare(layer_device *device, VkQueue queue,
                                       const layer_command_buffer *const *command_buffers,
                                       uint32_t count)
{
    uintptr_t family = (uintptr_t)object_map_get(&device->queues, (uint64_t)(uintptr_t)queue);
    if (!count || !family)
        return NULL;
    layer_readback *rb = readback_acquire(device, (uint32_t)(family - 1));
    if (!rb)
        return NULL;
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < command_buffers[i]->indirect.count; j++)
            plan_entry(rb, &command_buffers[i]->indirect.items[j]);
    if (!rb->entry_count || !reserve_buffer(rb, rb->used) ||
        !record_copies(rb, command_buffers, count)) {
        readback_unref(rb);
        return NULL;
    }
    /* Planned in recording order, which record_copies walks; read by key. */
    qsort(rb->entries, rb->entry_count, sizeof(*rb->entries), compare_entries);
    return rb;
}

VkCommandBuffer layer_readback_command_buffer(const layer_readback *readback)
{
    return readback->command_buffer;
}

bool layer_readback_submitted(layer_readback *rb, VkQueue queue)
{
    layer_device *device = rb->device;
    /* Signals once everything submitted to the queue before, the copy included, is done. */
    rb->fence_submitted = device->dispatch.QueueSubmit(queue, 0, NULL, rb->fence) == VK_SUCCESS;
    /* Without the fence, nothing else tells when the copy's command buffer
     * may be recorded again. */
    if (!rb->fence_submitted)
        device->dispatch.QueueWaitIdle(queue);
    return rb->fence_submitted;
}

const tally_indirect_reader *layer_readback_reader(const layer_readback *readback)
{
    return &readback->reader;
}

void layer_readback_release(layer_readback *readback)
{
    if (readback)
        readback_unref(readback);
}

/* The engine takes one reference per submission it accepted with the reader. */
void layer_readback_ref(layer_readback *readback)
{
    atomic_fetch_add_explicit(&readback->refs, 1, memory_order_relaxed);
}

static void reader_wait(void *user)
{
    layer_readback *rb = user;
    if (!rb->copied)
        rb->copied = rb->device->dispatch.WaitForFences(rb->device->handle, 1, &rb->fence, VK_TRUE,
                                                        UINT64_MAX) == VK_SUCCESS;
}

static bool reader_read(void *user, uint64_t key, tally_indirect_records *records)
{
    const layer_readback *rb = user;
    readback_entry wanted = {.key = key};
    const readback_entry *e = rb->copied ? bsearch(&wanted, rb->entries, rb->entry_count,
                                                   sizeof(*rb->entries), compare_entries)
                                         : NULL;
    if (!e)
        return false;
    uint32_t count = e->max_count;
    if (e->counted) {
        uint32_t written;
        memcpy(&written, rb->mapped + e->count_at, sizeof(written));
        count = written < count ? written : count;
    }
    *records =
        (tally_indirect_records){.data = rb->mapped + e->at, .count = count, .stride = e->stride};
    return true;
}

static void reader_release(void *user)
{
    readback_unref(user);
}
