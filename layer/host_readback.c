/*
 * The layer's readbacks' common part (host_readback.h): their Vulkan
 * objects, their free lists and their fence. What it does is valid usage
 * and what the validation layer's best practices ask for: the memory is one
 * block of at least READBACK_BLOCK bytes that the buffer is carved from (no
 * small allocations), the command pool is transient and reset whole (no
 * resettable command buffers), the buffer goes before its memory, and the
 * barrier to the host names only the copies' stage and access.
 */
#include "host_readback.h"

#include <stdlib.h>

/* The smallest memory block a readback allocates: above the sizes best
 * practices call small (256 KiB for an allocation, 1 MiB for one that a
 * single buffer takes whole), and room for 32768 draw records or about ten
 * thousand commands' query results. */
#define READBACK_BLOCK ((VkDeviceSize)1 << 20)

/* The buffer first: it must not outlive the memory bound to it. */
static void release_storage(layer_host_readback *rb)
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

bool layer_host_readback_init(layer_host_readback *rb, layer_device *device, uint32_t family,
                              uint32_t command_buffer_count)
{
    rb->device = device;
    rb->family = family;
    atomic_store(&rb->refs, 1);
    VkDevice handle = device->handle;
    /* Its command buffers are recorded again at each use: the pool is reset whole. */
    VkCommandPoolCreateInfo pool_info = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
        .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT,
        .queueFamilyIndex = family,
    };
    VkFenceCreateInfo fence_info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if (command_buffer_count > LAYER_HOST_READBACK_MAX_COMMAND_BUFFERS ||
        device->dispatch.CreateCommandPool(handle, &pool_info, NULL, &rb->pool) != VK_SUCCESS ||
        device->dispatch.CreateFence(handle, &fence_info, NULL, &rb->fence) != VK_SUCCESS)
        return false;
    VkCommandBufferAllocateInfo allocate = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
        .commandPool = rb->pool,
        .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
        .commandBufferCount = command_buffer_count,
    };
    if (device->dispatch.AllocateCommandBuffers(handle, &allocate, rb->command_buffers) !=
            VK_SUCCESS ||
        !device->set_loader_data)
        return false;
    rb->command_buffer_count = command_buffer_count;
    /* The layer's command buffers are dispatchable: the loader's data goes in them. */
    for (uint32_t i = 0; i < command_buffer_count; i++)
        if (device->set_loader_data(handle, rb->command_buffers[i]) != VK_SUCCESS)
            return false;
    return true;
}

void layer_host_readback_fini(layer_host_readback *rb)
{
    layer_device *device = rb->device;
    if (!device)
        return; /* _init never ran */
    release_storage(rb);
    if (rb->fence)
        device->dispatch.DestroyFence(device->handle, rb->fence, NULL);
    if (rb->pool) /* frees its command buffers */
        device->dispatch.DestroyCommandPool(device->handle, rb->pool, NULL);
}

/* How long one wait on a fence lasts before it looks at the engine's
 * deadline again. */
#define WAIT_SLICE_NS (50ull * 1000 * 1000)

/*
 * Waits for the readback's fence: with no limit, except once the engine
 * stops at exit with work in flight (tally_device_stop), when the wait ends
 * by its deadline. A GPU that will never finish (the driver's own threads
 * may be gone by then) must not hang the exit; what it had not copied is
 * simply not read. The device may begin to stop while a wait already runs,
 * so the wait goes in slices that each look at the deadline again.
 */
static VkResult wait_for_fence(layer_host_readback *rb)
{
    layer_device *device = rb->device;
    for (;;) {
        uint64_t remaining = UINT64_MAX;
        uint64_t deadline = tally_device_wait_deadline_ns(device->engine);
        if (deadline != UINT64_MAX) {
            uint64_t now = tally_monotonic_ns();
            remaining = deadline > now ? deadline - now : 0;
        }
        uint64_t slice = remaining < WAIT_SLICE_NS ? remaining : WAIT_SLICE_NS;
        VkResult r = device->dispatch.WaitForFences(device->handle, 1, &rb->fence, VK_TRUE, slice);
        if (r != VK_TIMEOUT || remaining <= WAIT_SLICE_NS)
            return r;
    }
}

layer_host_readback *layer_host_readback_acquire(layer_host_readback **free_list,
                                                 pthread_mutex_t *lock, layer_device *device,
                                                 uint32_t family, layer_host_readback_create create)
{
    pthread_mutex_lock(lock);
    layer_host_readback **link = free_list;
    while (*link && (*link)->family != family)
        link = &(*link)->next_free;
    layer_host_readback *rb = *link;
    if (rb)
        *link = rb->next_free;
    pthread_mutex_unlock(lock);
    if (!rb && !(rb = create(device, family)))
        return NULL;
    rb->next_free = NULL;
    atomic_store(&rb->refs, 1);
    rb->used = 0;
    rb->copied = false;
    return rb;
}

/* The engine takes one reference per submission it accepted with the reader. */
void layer_host_readback_ref(layer_host_readback *rb)
{
    atomic_fetch_add_explicit(&rb->refs, 1, memory_order_relaxed);
}

bool layer_host_readback_unref(layer_host_readback *rb)
{
    return atomic_fetch_sub_explicit(&rb->refs, 1, memory_order_acq_rel) == 1;
}

void layer_host_readback_recycle(layer_host_readback *rb, layer_host_readback **free_list,
                                 pthread_mutex_t *lock)
{
    layer_device *device = rb->device;
    if (rb->fence_submitted) {
        /* Past the deadline its command buffers may still be pending: it is
         * never used again, nor freed (the process is exiting). */
        if (wait_for_fence(rb) == VK_TIMEOUT)
            return;
        device->dispatch.ResetFences(device->handle, 1, &rb->fence);
        rb->fence_submitted = false;
    }
    pthread_mutex_lock(lock);
    rb->next_free = *free_list;
    *free_list = rb;
    pthread_mutex_unlock(lock);
}

void layer_host_readback_destroy_all(layer_host_readback **free_list,
                                     layer_host_readback_destroy destroy)
{
    for (layer_host_readback *rb = *free_list, *next; rb; rb = next) {
        next = rb->next_free;
        destroy(rb);
    }
    *free_list = NULL;
}

VkDeviceSize layer_host_readback_place(layer_host_readback *rb, VkDeviceSize size,
                                       VkDeviceSize align)
{
    VkDeviceSize at = rb->used;
    rb->used += (size + align - 1) & ~(align - 1);
    return at;
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

static bool create_buffer(layer_host_readback *rb, VkDeviceSize capacity)
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

/* A buffer of at least `used` bytes, carved from the readback's block; a
 * larger block (doubling) only when the block cannot hold it. */
bool layer_host_readback_reserve(layer_host_readback *rb)
{
    VkDeviceSize size = rb->used;
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

bool layer_host_readback_begin(layer_host_readback *rb)
{
    layer_device *device = rb->device;
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
    };
    /* Their last use is over: the fence was waited for before it came back. */
    if (device->dispatch.ResetCommandPool(device->handle, rb->pool, 0) != VK_SUCCESS)
        return false;
    for (uint32_t i = 0; i < rb->command_buffer_count; i++)
        if (device->dispatch.BeginCommandBuffer(rb->command_buffers[i], &begin) != VK_SUCCESS)
            return false;
    return true;
}

bool layer_host_readback_end(layer_host_readback *rb)
{
    const struct layer_device_dispatch *d = &rb->device->dispatch;
    VkMemoryBarrier to_host = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                               .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                               .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    d->CmdPipelineBarrier(rb->command_buffers[rb->command_buffer_count - 1],
                          VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                          &to_host, 0, NULL, 0, NULL);
    for (uint32_t i = 0; i < rb->command_buffer_count; i++)
        if (d->EndCommandBuffer(rb->command_buffers[i]) != VK_SUCCESS)
            return false;
    return true;
}

bool layer_host_readback_submitted(layer_host_readback *rb, VkQueue queue)
{
    layer_device *device = rb->device;
    /* Signals once everything submitted to the queue before, the copies included, is done. */
    rb->fence_submitted = device->dispatch.QueueSubmit(queue, 0, NULL, rb->fence) == VK_SUCCESS;
    /* Without the fence, nothing else tells when the command buffers may be
     * recorded again. */
    if (!rb->fence_submitted)
        device->dispatch.QueueWaitIdle(queue);
    return rb->fence_submitted;
}

bool layer_host_readback_wait(layer_host_readback *rb)
{
    if (!rb->copied && rb->fence_submitted)
        rb->copied = wait_for_fence(rb) == VK_SUCCESS;
    return rb->copied;
}
