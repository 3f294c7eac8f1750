/*
 * A Vulkan program that ends in the ways a careless program does, under the
 * layer (vk_context.h activates it), for the exit-path tests:
 *
 *   fork      draws, forks a child that only calls exit(0), checks that the
 *             child ended as it would without tally, then draws again and
 *             exits normally.
 *   threads   a second thread submits draws in a loop while the main
 *             thread calls exit(0).
 *   in-flight submits a draw behind an event the host never sets, so the
 *             GPU never finishes it, and returns from main without waiting.
 *   until-killed  draws and waits, round after round, saying each round
 *             (exit_paths_say_round), until a signal ends it.
 *
 * Exits 0 when the program's own part went as planned.
 */
#include "exit_paths.h"
#include "vk_context.h"

#include <string.h>

static vk_context vk;

static VkCommandBuffer recorded_draw(VkEvent wait_for)
{
    VkCommandBuffer cb = vk_context_begin(&vk);
    if (wait_for)
        vkCmdWaitEvents(cb, 1, &wait_for, VK_PIPELINE_STAGE_HOST_BIT,
                        VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0, NULL, 0, NULL, 0, NULL);
    vk_context_draw_triangle(&vk, cb);
    vkEndCommandBuffer(cb);
    return cb;
}

static bool submit(VkCommandBuffer cb)
{
    VkSubmitInfo info = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    return vkQueueSubmit(vk.queue, 1, &info, VK_NULL_HANDLE) == VK_SUCCESS;
}

static bool draw_and_wait(void)
{
    return submit(recorded_draw(VK_NULL_HANDLE)) && vkQueueWaitIdle(vk.queue) == VK_SUCCESS;
}

static void child_exits(void)
{
    exit(0);
}

static int fork_mode(void)
{
    if (!draw_and_wait())
        return 1;
    if (!exit_paths_fork(child_exits))
        return 1;
    if (!draw_and_wait())
        return 1;
    vk_context_destroy(&vk);
    return 0;
}

static void submit_one(void *cb)
{
    submit(cb);
    vkQueueWaitIdle(vk.queue);
}

static int threads_mode(void)
{
    static struct exit_paths_loop loop = {.work = submit_one};
    loop.user = recorded_draw(VK_NULL_HANDLE);
    if (!exit_paths_start_loop(&loop, 20))
        return 1;
    exit(0);
}

static int in_flight_mode(void)
{
    VkEventCreateInfo info = {.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent never_set;
    if (vkCreateEvent(vk.device, &info, NULL, &never_set) != VK_SUCCESS)
        return 1;
    return draw_and_wait() && submit(recorded_draw(never_set)) ? 0 : 1;
}

static int until_killed_mode(void)
{
    VkCommandBuffer cb = recorded_draw(VK_NULL_HANDLE);
    for (unsigned round = 1;; round++) {
        if (!submit(cb) || vkQueueWaitIdle(vk.queue) != VK_SUCCESS)
            return 1;
        exit_paths_say_round(round);
        exit_paths_sleep_ms(2);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: vk_exit_paths fork|threads|in-flight|until-killed\n");
        return 2;
    }
    /* Before tally's exit handlers, so it runs after them. */
    if (strcmp(argv[1], "threads") == 0)
        atexit(exit_paths_linger);
    /* The environment is the test's (ctest sets the layer's). */
    if (!vk_context_create(&vk, &(vk_context_options){.keep_environment = true})) {
        fprintf(stderr, "vk_exit_paths: no Vulkan device\n");
        return 1;
    }
    if (strcmp(argv[1], "fork") == 0)
        return fork_mode();
    if (strcmp(argv[1], "threads") == 0)
        return threads_mode();
    if (strcmp(argv[1], "in-flight") == 0)
        return in_flight_mode();
    if (strcmp(argv[1], "until-killed") == 0)
        return until_killed_mode();
    return 2;
}
