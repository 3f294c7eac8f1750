/*
 * Queue submissions in the order the application made them, frame
 * boundaries at presents, and queue debug labels.
 */
#include "layer_state.h"

#include <stdlib.h>

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

/* One engine submission per batch: its command buffers' streams in order. */
static void submit_batch(layer_device *device, const char *api_name, uint32_t pass_index,
                         uint32_t count,
                         VkCommandBuffer (*command_buffer_at)(const void *, uint32_t),
                         const void *batch)
{
    tally_stream *stack[STACK_STREAMS];
    tally_stream **streams = count <= STACK_STREAMS ? stack : malloc(count * sizeof(*streams));
    if (!streams)
        return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        layer_command_buffer *cb = layer_command_buffer_find(device, command_buffer_at(batch, i));
        if (cb && cb->stream)
            streams[n++] = cb->stream;
    }
    tally_submission submission = {
        .streams = streams,
        .stream_count = n,
        .pass_index = pass_index,
        .api_name = api_name,
    };
    uint64_t seqno = 0;
    if (tally_submit(device->engine, &submission, &seqno) == TALLY_OK)
        note_submitted(device, seqno);
    if (streams != stack)
        free(streams);
}

static VkCommandBuffer submit_info_command_buffer(const void *batch, uint32_t i)
{
    return ((const VkSubmitInfo *)batch)->pCommandBuffers[i];
}

static VkCommandBuffer submit_info2_command_buffer(const void *batch, uint32_t i)
{
    return ((const VkSubmitInfo2 *)batch)->pCommandBufferInfos[i].commandBuffer;
}

VKAPI_ATTR VkResult VKAPI_CALL hook_vkQueueSubmit(VkQueue queue, uint32_t submitCount,
                                                  const VkSubmitInfo *pSubmits, VkFence fence)
{
    layer_device *device = layer_device_of(queue);
    VkResult result = device->dispatch.QueueSubmit(queue, submitCount, pSubmits, fence);
    if (result != VK_SUCCESS || !device->engine)
        return result;
    for (uint32_t i = 0; i < submitCount; i++)
        submit_batch(device, "vkQueueSubmit", pass_index_of(pSubmits[i].pNext),
                     pSubmits[i].commandBufferCount, submit_info_command_buffer, &pSubmits[i]);
    return result;
}

static VkResult submit2(VkQueue queue, uint32_t submitCount, const VkSubmitInfo2 *pSubmits,
                        VkFence fence, const char *api_name)
{
    layer_device *device = layer_device_of(queue);
    VkResult result = device->dispatch.QueueSubmit2(queue, submitCount, pSubmits, fence);
    if (result != VK_SUCCESS || !device->engine)
        return result;
    for (uint32_t i = 0; i < submitCount; i++)
        submit_batch(device, api_name, pass_index_of(pSubmits[i].pNext),
                     pSubmits[i].commandBufferInfoCount, submit_info2_command_buffer, &pSubmits[i]);
    return result;
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
    if (record(device->queue_stream, argument) == TALLY_OK) {
        tally_submission submission = {
            .streams = &device->queue_stream,
            .stream_count = 1,
            .flags = TALLY_SUBMIT_CONSUME,
            .api_name = api_name,
        };
        uint64_t seqno = 0;
        if (tally_submit(device->engine, &submission, &seqno) == TALLY_OK)
            note_submitted(device, seqno);
    }
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
