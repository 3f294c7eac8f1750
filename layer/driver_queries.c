/*
 * The layer's queries around the draws and dispatches of a measuring
 * device: per command buffer, blocks of two query pools (timestamps,
 * pipeline statistics) that the command buffer keeps across recordings.
 * Before the driver's command: a bottom-of-pipe timestamp (written once
 * everything before has completed) and the start of a statistics query;
 * after it, the query's end and a second bottom-of-pipe timestamp. The
 * command's key goes into the stream, so the engine finds its results
 * (driver_readback.c).
 *
 * At a coarser granularity (TALLY_GRANULARITY) one such measurement, a
 * group, brackets several commands: it begins before the first draw or
 * dispatch that finds none open, which carries its key
 * (tally_stream_measure_group), and ends where Vulkan or exactness needs
 * it to: a query begun inside a render pass instance must end in the same
 * subpass, none may be active across vkCmdExecuteCommands, and the
 * application's queries that the layer serves must see whole groups.
 * "render-pass" also ends a group outside render passes at the next
 * instance's begin; "command-buffer" begins one before an instance that it
 * can run through (one subpass, inline, no multiview, no suspension, no
 * served queries on the device) and lets it run on.
 *
 * Inside a multiview render pass instance each query takes as many
 * consecutive queries as the subpass has views. The queries are reset by
 * the layer's command buffer that runs before the application's batches at
 * each submission, so the application's command buffers only write them.
 * A command buffer of simultaneous use may run twice before that reset
 * comes again. A primary repeated in one submission is submitted in parts
 * that each run it once (submission.c). A secondary may run twice in one
 * execution of a primary, with no place for a reset in between: secondaries
 * of simultaneous use are not measured.
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
    layer_command_buffer_ready(cb);
    return mc;
}

static void destroy_block(layer_device *device, layer_measure_block *b)
{
    if (b->timestamps)
        device->dispatch.DestroyQueryPool(device->handle, b->timestamps, NULL);
    if (b->statistics)
        device->dispatch.DestroyQueryPool(device->handle, b->statistics, NULL);
    layer_copy_buffer_destroy(device, &b->mirror);
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
    layer_measured_cb *mc = measured_of(cb);
    if (!mc)
        return;
    layer_measure_reset(cb);
    layer_measuring *m = cb->device->measuring;
    bool simultaneous = begin->flags & VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT;
    if (simultaneous && cb->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY) {
        if (!atomic_exchange(&m->said_simultaneous, true))
            tally_log(TALLY_LOG_WARN,
                      "Vulkan layer: secondary command buffers begun with SIMULTANEOUS_USE are "
                      "not measured (one primary may execute them twice, with no reset of their "
                      "queries in between); their commands count, with no GpuTime or statistics");
        return; /* serial 0: no queries */
    }
    mc->simultaneous = simultaneous; /* submission.c splits a submission that repeats it */
    /* A secondary that continues a render pass instance records inside it. */
    mc->inside = cb->level == VK_COMMAND_BUFFER_LEVEL_SECONDARY && begin->pInheritanceInfo &&
                 (begin->flags & VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT);
    mc->serial = atomic_fetch_add(&next_serial, 1);
    if (mc->serial == 0) /* 0 never names a recording */
        mc->serial = atomic_fetch_add(&next_serial, 1);
}

void layer_measure_reset(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (!mc)
        return;
    layer_copy_cb_reset(cb);
    for (uint32_t i = 0; i < mc->block_count; i++)
        mc->blocks[i].used = 0;
    mc->block = 0;
    mc->open = false;
    mc->carried = false;
    mc->inside = false;
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
    layer_copy_cb_free(cb);
    for (uint32_t i = 0; i < mc->block_count; i++)
        destroy_block(cb->device, &mc->blocks[i]);
    free(mc->blocks);
    free(mc->secondaries);
    free(mc);
    cb->measured = NULL;
    layer_command_buffer_ready(cb);
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

/* Begins a measurement of `views` views: the begin timestamps and the
 * statistics query. */
static bool open_group(layer_command_buffer *cb, layer_measured_cb *mc, uint32_t views)
{
    layer_measure_block *b = reserve(cb, mc, views);
    if (!b || (!b->timestamps && !b->statistics))
        return false;
    const struct layer_device_dispatch *d = &cb->device->dispatch;
    if (b->timestamps)
        d->CmdWriteTimestamp(cb->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b->timestamps,
                             2 * b->used);
    if (b->statistics)
        d->CmdBeginQuery(cb->handle, b->statistics, b->used, 0);
    mc->key = layer_measure_key(mc->serial, mc->block, b->used, views);
    mc->views = views;
    mc->open = true;
    mc->carried = false;
    mc->outside = !mc->inside;
    return true;
}

static void close_group(layer_command_buffer *cb, layer_measured_cb *mc)
{
    if (!mc->open)
        return;
    layer_measure_block *b = &mc->blocks[mc->block];
    const struct layer_device_dispatch *d = &cb->device->dispatch;
    if (b->statistics)
        d->CmdEndQuery(cb->handle, b->statistics, b->used);
    /* The end timestamps follow the begin ones: 2 x views per measurement. */
    if (b->timestamps)
        d->CmdWriteTimestamp(cb->handle, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, b->timestamps,
                             2 * b->used + mc->views);
    b->used += mc->views;
    mc->open = false;
    if (mc->carried && cb->device->measuring->granularity != TALLY_GRANULARITY_COMMAND)
        tally_stream_measure_end(cb->stream);
}

void layer_measure_before(layer_command_buffer *cb)
{
    layer_measured_cb *mc = measured_of(cb);
    if (!mc || !mc->serial || !cb->stream)
        return;
    if (!mc->open) {
        uint32_t views = views_now(cb);
        if (!open_group(cb, mc, views ? views : 1))
            return;
    }
    if (mc->carried)
        return;
    if (cb->device->measuring->granularity == TALLY_GRANULARITY_COMMAND)
        tally_stream_measure(cb->stream, mc->key);
    else
        tally_stream_measure_group(cb->stream, mc->key);
    mc->carried = true;
}

void layer_measure_after(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (mc && mc->open && cb->device->measuring->granularity == TALLY_GRANULARITY_COMMAND)
        close_group(cb, mc);
}

/* The command buffer's measured state when it groups commands; NULL at
 * "command" granularity (each command's measurement ends with it). */
static layer_measured_cb *grouping(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (!mc || !mc->serial || cb->device->measuring->granularity == TALLY_GRANULARITY_COMMAND)
        return NULL;
    return mc;
}

void layer_measure_pass_begin(layer_command_buffer *cb, bool spannable)
{
    layer_measured_cb *mc = grouping(cb);
    if (!mc)
        return;
    layer_measuring *m = cb->device->measuring;
    bool span = spannable && m->granularity == TALLY_GRANULARITY_COMMAND_BUFFER &&
                !atomic_load(&m->serves_queries) && cb->stream;
    if (!span)
        close_group(cb, mc);
    else if (!mc->open)
        open_group(cb, mc, 1); /* outside, to run through the instance */
    mc->inside = true;
}

/* A group begun in this subpass ends in it; one begun outside runs on. */
void layer_measure_pass_next(layer_command_buffer *cb)
{
    layer_measured_cb *mc = grouping(cb);
    if (mc && mc->open && !mc->outside)
        close_group(cb, mc);
}

void layer_measure_pass_end(layer_command_buffer *cb)
{
    layer_measured_cb *mc = grouping(cb);
    if (!mc)
        return;
    if (mc->open && !mc->outside)
        close_group(cb, mc);
    mc->inside = false;
}

void layer_measure_split(layer_command_buffer *cb)
{
    layer_measured_cb *mc = grouping(cb);
    if (!mc || !mc->open)
        return;
    if (mc->inside && mc->outside) {
        /* Begun outside the instance, it cannot end inside. Spanning waits
         * for no served query on the device, so only a pool made after this
         * instance began can get here: its query takes the group whole. */
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            tally_log(TALLY_LOG_WARN,
                      "Vulkan layer: a query the layer serves began inside a render "
                      "pass instance a measurement runs through; it reads whole "
                      "measurements");
        return;
    }
    close_group(cb, mc);
}

void layer_measure_split_at_timestamp(layer_command_buffer *cb)
{
    layer_measured_cb *mc = grouping(cb);
    if (mc && mc->open && !(mc->inside && mc->outside))
        close_group(cb, mc); /* one running through an instance takes it inside */
}

void layer_measure_serving_queries(layer_device *device)
{
    if (device->measuring)
        atomic_store(&device->measuring->serves_queries, true);
}
