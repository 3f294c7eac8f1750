/*
 * Queue submissions in the order the application made them, frame
 * boundaries at presents, and queue debug labels.
 */
#include "driver_measure.h"
#include "layer_state.h"

#include <stdlib.h>
#include <string.h>

enum { STACK_STREAMS = 32 };

/* Queues may submit from several threads: the latest sequence number only grows. */
static void note_submitted(layer_device *device, uint64_t seqno)
{
    uint64_t seen = atomic_load(&device->last_seqno);
    while (seen < seqno && !atomic_compare_exchange_weak(&device->last_seqno, &seen, seqno))
        ;
}

static uint32_t pass_index_of(const void *pNext)
{
    for (const VkBaseInStructure *s = pNext; s; s = s->pNext)
        if (s->sType == VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR)
            return ((const VkPerformanceQuerySubmitInfoKHR *)s)->counterPassIndex;
    return 0;
}

/* The layer's command buffers of a submission: one batch before the
 * application's (the reset of the driver backend's queries) and one after
 * (the copy of indirect parameters, the copy of the queries' results). */
typedef struct layer_extra {
    VkCommandBuffer before; /* VK_NULL_HANDLE: none */
    VkCommandBuffer after[2];
    uint32_t after_count;
} layer_extra;

/* A submission's batches, VkSubmitInfo or VkSubmitInfo2 alike. */
typedef struct batches {
    const void *batch;
    size_t batch_size;
    uint32_t count;
    uint32_t (*command_buffer_count)(const void *batch);
    VkCommandBuffer (*command_buffer_at)(const void *batch, uint32_t i);
    uint32_t (*pass_index)(const void *batch);
    /* Writes the batch's first `at` command buffers, with its waits, into
     * *first, and the rest, with its signals, into *second; false if its
     * pNext chain holds what cannot be split that way. */
    bool (*split)(const void *batch, uint32_t at, void *first, void *second);
    /* Submits the batches to the driver, with the layer's own command
     * buffers around them (see layer_extra); false if those batches could
     * not be built, and nothing was submitted. */
    bool (*submit)(layer_device *device, VkQueue queue, const struct batches *b, VkFence fence,
                   const struct layer_extra *extra, VkResult *result);
} batches;

static const void *batch_at(const batches *b, uint32_t i)
{
    return (const char *)b->batch + i * b->batch_size;
}

/* One engine submission per batch: its command buffers' streams in order. */
static void submit_batch(layer_device *device, const char *api_name, const batches *b,
                         uint32_t index, uint64_t submitted_ns, layer_readback *readback,
                         layer_measure_readback *measured)
{
    const void *batch = batch_at(b, index);
    uint32_t count = b->command_buffer_count(batch);
    tally_stream *stack[STACK_STREAMS];
    tally_stream **streams = count <= STACK_STREAMS ? stack : malloc(count * sizeof(*streams));
    if (!streams)
        return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        layer_command_buffer *cb =
            layer_command_buffer_find(device, b->command_buffer_at(batch, i));
        if (cb && cb->stream)
            streams[n++] = cb->stream;
    }
    tally_submission submission = {
        .streams = streams,
        .stream_count = n,
        .pass_index = b->pass_index(batch),
        .api_name = api_name,
        .indirect_reader = readback ? layer_readback_reader(readback) : NULL,
        .measurement_reader = measured ? layer_measure_readback_reader(measured) : NULL,
        .issued_ns = submitted_ns,
    };
    if (readback)
        layer_readback_ref(readback);
    if (measured)
        layer_measure_readback_ref(measured);
    uint64_t seqno = 0;
    if (tally_submit(device->engine, &submission, &seqno) == TALLY_OK) {
        note_submitted(device, seqno);
        if (measured)
            layer_measure_readback_note(measured, seqno);
    } else {
        layer_readback_release(readback);
        layer_measure_readback_release(measured);
    }
    if (streams != stack)
        free(streams);
}

/* The copy of the submission's indirect parameters, if it has any. */
static layer_readback *prepare_readback(layer_device *device, VkQueue queue, const batches *b)
{
    enum { STACK_BUFFERS = 64 };
    const layer_command_buffer *stack[STACK_BUFFERS];
    const layer_command_buffer **with_indirect = stack;
    size_t n = 0, capacity = STACK_BUFFERS;
    for (uint32_t i = 0; i < b->count; i++) {
        const void *batch = batch_at(b, i);
        for (uint32_t j = 0; j < b->command_buffer_count(batch); j++) {
            layer_command_buffer *cb =
                layer_command_buffer_find(device, b->command_buffer_at(batch, j));
            if (!cb || !cb->indirect.count)
                continue;
            if (n == capacity) {
                capacity *= 2;
                const layer_command_buffer **grown = malloc(capacity * sizeof(*grown));
                if (!grown)
                    break;
                memcpy(grown, with_indirect, n * sizeof(*grown));
                if (with_indirect != stack)
                    free(with_indirect);
                with_indirect = grown;
            }
            with_indirect[n++] = cb;
        }
    }
    layer_readback *readback = n ? layer_readback_prepare(device, queue, with_indirect, n) : NULL;
    if (with_indirect != stack)
        free(with_indirect);
    return readback;
}

/* The reset and copy of the driver backend's queries, if the submission
 * measured anything. */
static layer_measure_readback *prepare_measure(layer_device *device, VkQueue queue,
                                               const batches *b)
{
    enum { STACK_BUFFERS = 64 };
    layer_command_buffer *stack[STACK_BUFFERS];
    layer_command_buffer **measured = stack;
    uint32_t n = 0, capacity = STACK_BUFFERS;
    for (uint32_t i = 0; i < b->count; i++) {
        const void *batch = batch_at(b, i);
        for (uint32_t j = 0; j < b->command_buffer_count(batch); j++) {
            layer_command_buffer *cb =
                layer_command_buffer_find(device, b->command_buffer_at(batch, j));
            if (!cb || !cb->measured)
                continue;
            if (n == capacity) {
                layer_command_buffer **grown = malloc(2 * capacity * sizeof(*grown));
                if (!grown)
                    break;
                memcpy(grown, measured, n * sizeof(*grown));
                if (measured != stack)
                    free(measured);
                measured = grown;
                capacity *= 2;
            }
            measured[n++] = cb;
        }
    }
    layer_measure_readback *rb =
        n ? layer_measure_readback_prepare(device, queue, measured, n) : NULL;
    if (measured != stack)
        free(measured);
    return rb;
}

static uint32_t submit_info_command_buffer_count(const void *batch)
{
    return ((const VkSubmitInfo *)batch)->commandBufferCount;
}

static VkCommandBuffer submit_info_command_buffer(const void *batch, uint32_t i)
{
    return ((const VkSubmitInfo *)batch)->pCommandBuffers[i];
}

static uint32_t submit_info_pass_index(const void *batch)
{
    return pass_index_of(((const VkSubmitInfo *)batch)->pNext);
}

static uint32_t submit_info2_command_buffer_count(const void *batch)
{
    return ((const VkSubmitInfo2 *)batch)->commandBufferInfoCount;
}

static VkCommandBuffer submit_info2_command_buffer(const void *batch, uint32_t i)
{
    return ((const VkSubmitInfo2 *)batch)->pCommandBufferInfos[i].commandBuffer;
}

static uint32_t submit_info2_pass_index(const void *batch)
{
    return pass_index_of(((const VkSubmitInfo2 *)batch)->pNext);
}

/* Only a performance query's pass index, which both halves carry, may ride
 * along a batch the layer splits. */
static bool splittable_chain(const void *pNext)
{
    for (const VkBaseInStructure *s = pNext; s; s = s->pNext)
        if (s->sType != VK_STRUCTURE_TYPE_PERFORMANCE_QUERY_SUBMIT_INFO_KHR)
            return false;
    return true;
}

static bool submit_info_split(const void *batch, uint32_t at, void *first, void *second)
{
    const VkSubmitInfo *whole = batch;
    if (!splittable_chain(whole->pNext))
        return false;
    VkSubmitInfo *head = first, *tail = second;
    *head = *whole;
    head->commandBufferCount = at;
    head->signalSemaphoreCount = 0;
    head->pSignalSemaphores = NULL;
    *tail = *whole;
    tail->waitSemaphoreCount = 0;
    tail->pWaitSemaphores = NULL;
    tail->pWaitDstStageMask = NULL;
    tail->commandBufferCount = whole->commandBufferCount - at;
    tail->pCommandBuffers = whole->pCommandBuffers + at;
    return true;
}

static bool submit_info2_split(const void *batch, uint32_t at, void *first, void *second)
{
    const VkSubmitInfo2 *whole = batch;
    if (!splittable_chain(whole->pNext))
        return false;
    VkSubmitInfo2 *head = first, *tail = second;
    *head = *whole;
    head->commandBufferInfoCount = at;
    head->signalSemaphoreInfoCount = 0;
    head->pSignalSemaphoreInfos = NULL;
    *tail = *whole;
    tail->waitSemaphoreInfoCount = 0;
    tail->pWaitSemaphoreInfos = NULL;
    tail->commandBufferInfoCount = whole->commandBufferInfoCount - at;
    tail->pCommandBufferInfos = whole->pCommandBufferInfos + at;
    return true;
}

/* Where a measured command buffer of simultaneous use comes again in the
 * submission (its queries would be written twice with no reset between). */
static bool find_repeat(layer_device *device, const batches *b, uint32_t *at_batch, uint32_t *at_cb)
{
    for (uint32_t i = 0; i < b->count; i++) {
        const void *batch = batch_at(b, i);
        for (uint32_t j = 0; j < b->command_buffer_count(batch); j++) {
            VkCommandBuffer handle = b->command_buffer_at(batch, j);
            layer_command_buffer *cb = layer_command_buffer_find(device, handle);
            if (!cb || !cb->measured || !cb->measured->serial || !cb->measured->simultaneous)
                continue;
            for (uint32_t pi = 0; pi <= i; pi++) {
                const void *earlier = batch_at(b, pi);
                uint32_t end = pi == i ? j : b->command_buffer_count(earlier);
                for (uint32_t pj = 0; pj < end; pj++)
                    if (b->command_buffer_at(earlier, pj) == handle) {
                        *at_batch = i;
                        *at_cb = j;
                        return true;
                    }
            }
        }
    }
    return false;
}

static VkResult submit(VkQueue queue, const batches *b, VkFence fence, const char *api_name);

/* The submission in two: up to the repeat (with no fence), then from it,
 * each with the reset and copy of its own queries. false if the repeat's
 * batch cannot be split, and nothing was submitted. */
static bool submit_in_two(VkQueue queue, const batches *b, uint32_t at_batch, uint32_t at_cb,
                          VkFence fence, const char *api_name, VkResult *result)
{
    char *storage = malloc((b->count + 1) * b->batch_size);
    if (!storage)
        return false;
    char *first = storage, *second = storage + (at_batch + 1) * b->batch_size;
    memcpy(first, b->batch, at_batch * b->batch_size);
    uint32_t first_count = at_batch, second_count = b->count - at_batch;
    if (at_cb == 0) {
        memcpy(second, batch_at(b, at_batch), second_count * b->batch_size);
    } else {
        if (!b->split(batch_at(b, at_batch), at_cb, first + at_batch * b->batch_size, second)) {
            free(storage);
            return false;
        }
        first_count++;
        memcpy(second + b->batch_size, batch_at(b, at_batch + 1),
               (second_count - 1) * b->batch_size);
    }
    batches head = *b, tail = *b;
    head.batch = first;
    head.count = first_count;
    tail.batch = second;
    tail.count = second_count;
    *result = submit(queue, &head, VK_NULL_HANDLE, api_name);
    if (*result == VK_SUCCESS)
        *result = submit(queue, &tail, fence, api_name);
    free(storage);
    return true;
}

static void submit_batches(layer_device *device, const char *api_name, const batches *b,
                           uint64_t submitted_ns, layer_readback *readback,
                           layer_measure_readback *measured)
{
    for (uint32_t i = 0; i < b->count; i++)
        submit_batch(device, api_name, b, i, submitted_ns, readback, measured);
}

static bool no_extra(const layer_extra *extra)
{
    return !extra->before && !extra->after_count;
}

static bool submit_info_submit(layer_device *device, VkQueue queue, const batches *b, VkFence fence,
                               const layer_extra *extra, VkResult *result)
{
    if (no_extra(extra)) {
        *result = device->dispatch.QueueSubmit(queue, b->count, b->batch, fence);
        return true;
    }
    VkSubmitInfo *all = malloc((b->count + 2) * sizeof(*all));
    if (!all)
        return false;
    uint32_t n = 0;
    if (extra->before)
        all[n++] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                  .commandBufferCount = 1,
                                  .pCommandBuffers = &extra->before};
    memcpy(all + n, b->batch, b->count * sizeof(*all));
    n += b->count;
    if (extra->after_count)
        all[n++] = (VkSubmitInfo){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                                  .commandBufferCount = extra->after_count,
                                  .pCommandBuffers = extra->after};
    *result = device->dispatch.QueueSubmit(queue, n, all, fence);
    free(all);
    return true;
}

static bool submit_info2_submit(layer_device *device, VkQueue queue, const batches *b,
                                VkFence fence, const layer_extra *extra, VkResult *result)
{
    if (no_extra(extra)) {
        *result = device->dispatch.QueueSubmit2(queue, b->count, b->batch, fence);
        return true;
    }
    VkSubmitInfo2 *all = malloc((b->count + 2) * sizeof(*all));
    if (!all)
        return false;
    VkCommandBufferSubmitInfo before = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                        .commandBuffer = extra->before};
    VkCommandBufferSubmitInfo after[2];
    for (uint32_t i = 0; i < extra->after_count; i++)
        after[i] =
            (VkCommandBufferSubmitInfo){.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO,
                                        .commandBuffer = extra->after[i]};
    uint32_t n = 0;
    if (extra->before)
        all[n++] = (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                                   .commandBufferInfoCount = 1,
                                   .pCommandBufferInfos = &before};
    memcpy(all + n, b->batch, b->count * sizeof(*all));
    n += b->count;
    if (extra->after_count)
        all[n++] = (VkSubmitInfo2){.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO_2,
                                   .commandBufferInfoCount = extra->after_count,
                                   .pCommandBufferInfos = after};
    *result = device->dispatch.QueueSubmit2(queue, n, all, fence);
    free(all);
    return true;
}

/* The driver's submission (with the copy of indirect parameters when there
 * are any), then one engine submission per batch. */
static VkResult submit(VkQueue queue, const batches *b, VkFence fence, const char *api_name)
{
    layer_device *device = layer_device_of(queue);
    uint32_t at_batch, at_cb;
    if (device->measuring && find_repeat(device, b, &at_batch, &at_cb)) {
        VkResult result;
        if (submit_in_two(queue, b, at_batch, at_cb, fence, api_name, &result))
            return result;
        if (!atomic_exchange(&device->measuring->said_unsplit, true))
            tally_log(TALLY_LOG_WARN,
                      "Vulkan layer: a submission repeats a command buffer of simultaneous use "
                      "in a batch whose pNext chain the layer cannot split; its measurements "
                      "there are not reliable");
    }
    layer_readback *readback = device->engine ? prepare_readback(device, queue, b) : NULL;
    layer_measure_readback *measured = device->measuring ? prepare_measure(device, queue, b) : NULL;
    layer_extra extra = {0};
    if (readback)
        extra.after[extra.after_count++] = layer_readback_command_buffer(readback);
    if (measured) {
        extra.before = layer_measure_readback_before(measured);
        extra.after[extra.after_count++] = layer_measure_readback_after(measured);
    }
    VkResult result;
    uint64_t submitted_ns =
        device->engine ? tally_monotonic_ns() : 0; /* before the GPU can start */
    bool extended = !no_extra(&extra) && b->submit(device, queue, b, fence, &extra, &result);
    if (!extended) /* without the layer's batches, rather than not at all */
        b->submit(device, queue, b, fence, &(layer_extra){0}, &result);
    if (result == VK_SUCCESS && device->engine) {
        bool copied = extended && readback && layer_readback_submitted(readback, queue);
        bool read = extended && measured && layer_measure_readback_submitted(measured, queue);
        submit_batches(device, api_name, b, submitted_ns, copied ? readback : NULL,
                       read ? measured : NULL);
    }
    layer_readback_release(readback);
    layer_measure_readback_release(measured);
    return result;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkQueueSubmit(VkQueue queue, uint32_t submitCount,
                                                  const VkSubmitInfo *pSubmits, VkFence fence)
{
    batches b = {pSubmits,
                 sizeof(*pSubmits),
                 submitCount,
                 submit_info_command_buffer_count,
                 submit_info_command_buffer,
                 submit_info_pass_index,
                 submit_info_split,
                 submit_info_submit};
    return submit(queue, &b, fence, "vkQueueSubmit");
}

static VkResult submit2(VkQueue queue, uint32_t submitCount, const VkSubmitInfo2 *pSubmits,
                        VkFence fence, const char *api_name)
{
    batches b = {pSubmits,
                 sizeof(*pSubmits),
                 submitCount,
                 submit_info2_command_buffer_count,
                 submit_info2_command_buffer,
                 submit_info2_pass_index,
                 submit_info2_split,
                 submit_info2_submit};
    return submit(queue, &b, fence, api_name);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkQueueSubmit2(VkQueue queue, uint32_t submitCount,
                                                   const VkSubmitInfo2 *pSubmits, VkFence fence)
{
    return submit2(queue, submitCount, pSubmits, fence, "vkQueueSubmit2");
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkQueueSubmit2KHR(VkQueue queue, uint32_t submitCount,
                                                      const VkSubmitInfo2 *pSubmits, VkFence fence)
{
    return submit2(queue, submitCount, pSubmits, fence, "vkQueueSubmit2KHR");
}

/* Queue-level events ride on the device's own stream, submitted at once. */
typedef tally_status (*queue_event)(tally_stream *stream, const void *argument);

static void queue_event_submit(layer_device *device, const char *api_name, queue_event record,
                               const void *argument)
{
    if (!device->engine)
        return;
    pthread_mutex_lock(&device->queue_lock);
    uint64_t seqno = 0;
    if (record(device->queue_stream, argument) == TALLY_OK &&
        tally_submit_stream(device->engine, device->queue_stream, 0, api_name, &seqno) == TALLY_OK)
        note_submitted(device, seqno);
    pthread_mutex_unlock(&device->queue_lock);
}

static tally_status record_frame_boundary(tally_stream *stream, const void *argument)
{
    (void)argument;
    return tally_stream_frame_boundary(stream);
}

static tally_status record_label_push(tally_stream *stream, const void *argument)
{
    return tally_stream_label_push(stream, argument);
}

static tally_status record_label_pop(tally_stream *stream, const void *argument)
{
    (void)argument;
    return tally_stream_label_pop(stream);
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkQueuePresentKHR(VkQueue queue,
                                                      const VkPresentInfoKHR *pPresentInfo)
{
    layer_device *device = layer_device_of(queue);
    VkResult result = device->dispatch.QueuePresentKHR(queue, pPresentInfo);
    /* A frame ends whenever the present was queued, even when the swapchain is suboptimal or out of
     * date. */
    queue_event_submit(device, "vkQueuePresentKHR", record_frame_boundary, NULL);
    return result;
}

VKAPI_ATTR void VKAPI_CALL
hook_vkQueueBeginDebugUtilsLabelEXT(VkQueue queue, const VkDebugUtilsLabelEXT *pLabelInfo)
{
    layer_device *device = layer_device_of(queue);
    device->dispatch.QueueBeginDebugUtilsLabelEXT(queue, pLabelInfo);
    if (pLabelInfo && pLabelInfo->pLabelName)
        queue_event_submit(device, "vkQueueBeginDebugUtilsLabelEXT", record_label_push,
                           pLabelInfo->pLabelName);
}

VKAPI_ATTR void VKAPI_CALL hook_vkQueueEndDebugUtilsLabelEXT(VkQueue queue)
{
    layer_device *device = layer_device_of(queue);
    device->dispatch.QueueEndDebugUtilsLabelEXT(queue);
    queue_event_submit(device, "vkQueueEndDebugUtilsLabelEXT", record_label_pop, NULL);
}
