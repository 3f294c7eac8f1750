/*
 * vk_frames: a Vulkan program that knows nothing of tally, for the sampling
 * benchmark to run under `tally run`. It renders FRAMES offscreen frames on
 * the first device (lavapipe here), each one command buffer with a render
 * pass of DRAWS triangle draws and a compute dispatch, submitted and waited
 * for as a program that finishes every frame would. The device and pipelines
 * are tests/layer's vk_context, created without touching the environment, so
 * whoever starts the program decides whether the layer is active.
 *
 * After WARMUP frames it times the rest and prints one line:
 *   frames=500 wall_ns=812345678 cpu_ns=901234567
 * cpu_ns is the whole process's CPU time over the timed frames: every thread,
 * so the layer's and the sampler's work too.
 *
 * Usage: vk_frames FRAMES DRAWS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vk_context.h"

enum { WARMUP = 10, DISPATCH_GROUPS = 4 };

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void record_frame(vk_context *c, VkCommandBuffer cb, uint32_t draws)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    vkBeginCommandBuffer(cb, &begin);
    VkClearValue clear = {{{0, 0, 0, 1}}};
    VkRenderPassBeginInfo pass = {.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO,
                                  .renderPass = c->render_pass,
                                  .framebuffer = c->framebuffer,
                                  .renderArea = {{0, 0}, {VK_CONTEXT_SIZE, VK_CONTEXT_SIZE}},
                                  .clearValueCount = 1,
                                  .pClearValues = &clear};
    vkCmdBeginRenderPass(cb, &pass, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, c->triangle);
    for (uint32_t i = 0; i < draws; i++)
        vkCmdDraw(cb, 3, 1 + i % 4, 0, 0);
    vkCmdEndRenderPass(cb);
    vk_context_dispatch(c, cb, DISPATCH_GROUPS, 1, 1);
}

/* Records, submits and waits for one frame; false when the driver fails. */
static bool render_frame(vk_context *c, VkCommandBuffer cb, uint32_t draws)
{
    if (vkResetCommandBuffer(cb, 0) != VK_SUCCESS)
        return false;
    record_frame(c, cb, draws);
    return vk_context_submit(c, cb, UINT32_MAX) == VK_SUCCESS;
}

static bool parse_count(const char *text, uint32_t *out)
{
    char *end = NULL;
    unsigned long value = strtoul(text, &end, 10);
    if (*text < '1' || *text > '9' || *end || value > 1000000)
        return false;
    *out = (uint32_t)value;
    return true;
}

int main(int argc, char **argv)
{
    uint32_t frames = 0, draws = 0;
    if (argc != 3 || !parse_count(argv[1], &frames) || !parse_count(argv[2], &draws)) {
        fprintf(stderr, "usage: %s FRAMES DRAWS\n", argv[0]);
        return 2;
    }
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options)) {
        fprintf(stderr, "vk_frames: no Vulkan device\n");
        vk_context_destroy(&c);
        return 1;
    }
    VkCommandBuffer cb = vk_context_begin(&c);
    vkEndCommandBuffer(cb);
    bool ok = true;
    for (uint32_t i = 0; ok && i < WARMUP; i++)
        ok = render_frame(&c, cb, draws);
    uint64_t start = clock_ns(CLOCK_MONOTONIC), cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    for (uint32_t i = 0; ok && i < frames; i++)
        ok = render_frame(&c, cb, draws);
    uint64_t wall = clock_ns(CLOCK_MONOTONIC) - start;
    uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    vk_context_destroy(&c);
    if (!ok) {
        fprintf(stderr, "vk_frames: a frame failed\n");
        return 1;
    }
    printf("frames=%u wall_ns=%llu cpu_ns=%llu\n", frames, (unsigned long long)wall,
           (unsigned long long)cpu);
    return 0;
}
