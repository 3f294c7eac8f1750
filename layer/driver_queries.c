/*
 * The layer's queries around each draw and dispatch of a measuring device:
 * per command buffer, blocks of two query pools (timestamps, pipeline
 * statistics) that the command buffer keeps across recordings. Before the
 * driver's command: a bottom-of-pipe timestamp (written once everything
 * before has completed) and the start of a statistics query; after it, the
 * query's end and a second bottom-of-pipe timestamp. The command's key goes
 * into the stream, so the engine finds its results (driver_readback.c).
 *
 * Inside a multiview render pass instance each query takes as many
 * consecutive queries as the subpass has views. The queries are reset by
 * the layer's command buffer that runs before the application's batches at
 * each submission, so the application's command buffers only write them.
 */
#include "driver_measure.h"

#include "array_grow.h"

#include <stdlib.h>

static _Atomic uint32_t next_serial = 1;

static layer_measured_cb *measured_of(layer_command_buffer *cb)
{
    layer_measuring *m = cb->device->measuring;
    if (!m)
        return NULL;
    if (cb->measured)
        return cb->measured;
    uintptr_t family = (uintptr_t)object_map_get(&m->pool_families, (uint64_t)cb->pool);
    if (!family || family - 1 >= m->family_count)
        return NULL; /* a pool the layer did not see created: not measured */
    layer_measured_cb *mc = calloc(1, sizeof(*mc));
    if (mc)
        mc->family = (uint32_t)(family - 1);
    cb->measured = mc;
    return mc;
}

static void destroy_block(layer_device *device, layer_measure_block *b)
{
    if (b->timestamps)
        device->dispatch.DestroyQueryPool(device->handle, b->timestamps, NULL);
    if (b->statistics)
        device->dispatch.DestroyQueryPool(device->handle, b->statistics, NULL);
}

static bool create_block(layer_device *device, const layer_measure_family *family,
                         layer_measure_block *b)
{
    *b = (layer_measure_block){0};
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    if (family->timestamp_valid_bits) {
        info.queryType = VK_QUERY_TYPE_TIMESTAMP;
        info.queryCount = 2 * LAYER_MEASURE_BLOCK;
        if (device->dispatch.CreateQueryPool(device->handle, &info, NULL, &b->timestamps) !=
            VK_SUCCESS)
            return false;
    }
    if (family->statistics) {
        info.queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS;
        info.queryCount = LAYER_MEASURE_BLOCK;
        info.pipelineStatistics = family->statistics;
        if (device->dispatch.CreateQueryPool(device->handle, &info, NULL, &b->statistics) !=
            VK_SUCCESS) {
            destroy_block(device, b);
            return false;
        }
    }
    return true;
}

void layer_measure_begin_recording(layer_command_buffer *cb, const VkCommandBufferBeginInfo *begin)
{
    (void)begin;
    layer_measured_cb *mc = measured_of(cb);
    if (!mc)
        return;
    layer_measure_reset(cb);
    mc->serial = atomic_fetch_add(&next_serial, 1);
    if (mc->serial == 0) /* 0 never names a recording */
        mc->serial = atomic_fetch_add(&next_serial, 1);
}

void layer_measure_reset(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (!mc)
        return;
    for (uint32_t i = 0; i < mc->block_count; i++)
        mc->blocks[i].used = 0;
    mc->block = 0;
    mc->open = false;
    mc->secondary_count = 0;
    mc->serial = 0;
}

/* The pools are the device's: they go when the command buffer does. Its
 * submissions were waited for (a command buffer is freed when not pending,
 * and a readback in flight holds copies of what it reads). */
void layer_measure_free(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (!mc)
        return;
    for (uint32_t i = 0; i < mc->block_count; i++)
        destroy_block(cb->device, &mc->blocks[i]);
    free(mc->blocks);
    free(mc->secondaries);
    free(mc);
    cb->measured = NULL;
}

void layer_measure_executes(layer_command_buffer *primary, layer_command_buffer *secondary)
{
    layer_measured_cb *mc = primary->measured;
    if (!mc || !secondary->measured || !secondary->measured->serial)
        return;
    for (uint32_t i = 0; i < mc->secondary_count; i++)
        if (mc->secondaries[i] == secondary)
            return;
    if (mc->secondary_count == mc->secondary_capacity) {
        layer_command_buffer **grown = layer_array_grow(mc->secondaries, &mc->secondary_capacity,
                                                        mc->secondary_count + 1, sizeof(*grown));
        if (!grown)
            return;
        mc->secondaries = grown;
    }
    mc->secondaries[mc->secondary_count++] = secondary;
}

/* Views of the render pass instance the command buffer records in: each
 * query then takes that many consecutive queries. */
static uint32_t views_now(layer_command_buffer *cb)
{
    if (cb->render.render_pass) {
        const layer_render_pass *pass =
            object_map_get(&cb->device->render_passes, (uint64_t)cb->render.render_pass);
        if (pass && cb->render.subpass < pass->subpass_count)
            return pass->subpasses[cb->render.subpass].view_count;
        return 0;
    }
    return cb->render.view_count;
}

/* Room for `views` more commands' queries in the current block, or a next block. */
static layer_measure_block *reserve(layer_command_buffer *cb, layer_measured_cb *mc, uint32_t views)
{
    if (mc->block < mc->block_count && mc->blocks[mc->block].used + views > LAYER_MEASURE_BLOCK)
        mc->block++;
    if (mc->block < mc->block_count)
        return &mc->blocks[mc->block];
    if (mc->block_count == mc->block_capacity) {
        layer_measure_block *grown =
            layer_array_grow(mc->blocks, &mc->block_capacity, mc->block_count + 1, sizeof(*grown));
        if (!grown)
            return NULL;
        mc->blocks = grown;
    }
    layer_measuring *m = cb->device->measuring;
    if (!create_block(cb->device, &m->families[mc->family], &mc->blocks[mc->block_count]))
        return NULL;
    return &mc->blocks[mc->block_count++];
}

void layer_measure_before(layer_command_buffer *cb)
{
    layer_measured_cb *mc = measured_of(cb);
    if (!mc || !mc->serial || !cb->stream)
        return;
    uint32_t views = views_now(cb);
    views = views ? views : 1;
    layer_measure_block *b = reserve(cb, mc, views);
    if (!b || (!b->timestamps && !b->statistics))
        return;
    const struct layer_device_dispatch *d = &cb->device->dispatch;
    if (b->timestamps)
        d->CmdWriteTimestamp(cb->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b->timestamps,
                             2 * b->used);
    if (b->statistics)
        d->CmdBeginQuery(cb->handle, b->statistics, b->used, 0);
    tally_stream_measure(cb->stream, layer_measure_key(mc->serial, mc->block, b->used, views));
    mc->views = views;
    mc->open = true;
}

void layer_measure_after(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (!mc || !mc->open)
        return;
    layer_measure_block *b = &mc->blocks[mc->block];
    const struct layer_device_dispatch *d = &cb->device->dispatch;
    if (b->statistics)
        d->CmdEndQuery(cb->handle, b->statistics, b->used);
    /* The end timestamps follow the begin ones: 2 x views per command. */
    if (b->timestamps)
        d->CmdWriteTimestamp(cb->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b->timestamps,
                             2 * b->used + mc->views);
    b->used += mc->views;
    mc->open = false;
}
