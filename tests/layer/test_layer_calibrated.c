/*
 * GPU timestamps on CLOCK_MONOTONIC under TALLY_BACKEND=driver and the
 * realtime clock, on lavapipe (which offers VK_EXT_calibrated_timestamps
 * with the DEVICE and CLOCK_MONOTONIC domains). The truth is the program's
 * own CLOCK_MONOTONIC: read just before its vkQueueSubmit, just before it
 * lets the GPU start (the batch waits for a timeline semaphore the host
 * signals) and just after its fence wait. Calibrated, every command of the
 * engine's timeline (what traces, EGL_BRCM and Metrics Discovery read) lies
 * between the release and the fence wait; placed by the fallback
 * correlation, it lies between the submit and the fence wait, and the first
 * command lands at the submit, before the GPU could start. The fallback is
 * reached by VK_LAYER_TALLYTEST_hide_calibration below tally's layer, which
 * hides the extension or the CLOCK_MONOTONIC domain from it, and by
 * TALLY_CALIBRATE=0.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tally/tally.h"
#include "vk_context.h"
#include "fixture.h"

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct fixture {
    vk_context vk;
    tally_device *engine;
    tally_subscription *timeline;
} fixture;

/* The context under the driver backend, the layer below tally's hiding
 * `hide` (NULL: nothing, and no test layer), and a reader of the engine's
 * timeline. */
static int open_fixture(void **state, const char *hide, bool app_enables_extension)
{
    static fixture f;
    memset(&f, 0, sizeof(f));
    setenv("TALLY_BACKEND", "driver", 1);
    setenv("TALLY_CLOCK", "realtime", 1);
    unsetenv("TALLY_OUTPUT");
    unsetenv("TALLY_TRACE");
    unsetenv("TALLY_CALIBRATE");
    if (hide && strcmp(hide, "calibrate=0") == 0) {
        setenv("TALLY_CALIBRATE", "0", 1); /* the option, not a test layer */
        hide = NULL;
    }
    if (hide) {
        /* The loader then searches VK_LAYER_PATH alone, so tally's manifest
         * is named there too; loader 1.3.239 stacks the layers it enables in
         * the order it found them, so tally's comes first, above. */
        setenv("VK_LAYER_PATH", TALLY_BUILD_DIR "/share/vulkan/explicit_layer.d:" HIDE_LAYER_DIR,
               1);
        setenv("TALLY_TEST_HIDE", hide, 1);
    }
    vk_context_options options = {
        .extra_layer = hide ? "VK_LAYER_TALLYTEST_hide_calibration" : NULL,
        .timeline_semaphore = true,
        .calibrated_timestamps = app_enables_extension,
    };
    if (!vk_context_create(&f.vk, &options))
        return -1;
    /* The device the layer opened (its first user): the same shared one. */
    if (tally_device_acquire_shared(&f.engine) != TALLY_OK ||
        tally_timeline_subscribe(f.engine, 4096, &f.timeline) != TALLY_OK)
        return -1;
    *state = &f;
    return 0;
}

static int open_calibrated(void **state)
{
    return open_fixture(state, NULL, false);
}

static int open_without_extension(void **state)
{
    return open_fixture(state, "extension", false);
}

static int open_without_monotonic_domain(void **state)
{
    return open_fixture(state, "monotonic", false);
}

static int open_with_calibration_off(void **state)
{
    return open_fixture(state, "calibrate=0", false);
}

static int open_with_application_extension(void **state)
{
    return open_fixture(state, NULL, true);
}

static int close_fixture(void **state)
{
    fixture *f = *state;
    tally_timeline_unsubscribe(f->timeline);
    tally_device_release_shared(f->engine);
    vk_context_destroy(&f->vk);
    return 0;
}

/* CLOCK_MONOTONIC as the program read it around one submission. */
typedef struct window {
    uint64_t submitted; /* before vkQueueSubmit */
    uint64_t released;  /* before the host signalled the semaphore the batch waits for */
    uint64_t finished;  /* after vkWaitForFences returned */
} window;

/* A draw and a dispatch in one batch that waits for the host's signal. */
static window submit_gated(fixture *f)
{
    VkCommandBuffer cb = vk_context_begin(&f->vk);
    vk_context_draw_triangle(&f->vk, cb);
    vk_context_dispatch(&f->vk, cb, 4, 1, 1);
    assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
    VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO, NULL,
                                      VK_SEMAPHORE_TYPE_TIMELINE, 0};
    VkSemaphoreCreateInfo semaphore_info = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type, 0};
    VkSemaphore gate;
    assert_int_equal(vkCreateSemaphore(f->vk.device, &semaphore_info, NULL, &gate), VK_SUCCESS);
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
    VkFence fence;
    assert_int_equal(vkCreateFence(f->vk.device, &fence_info, NULL, &fence), VK_SUCCESS);
    const uint64_t open_value = 1;
    VkTimelineSemaphoreSubmitInfo values = {
        .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
        .waitSemaphoreValueCount = 1,
        .pWaitSemaphoreValues = &open_value,
    };
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                           .pNext = &values,
                           .waitSemaphoreCount = 1,
                           .pWaitSemaphores = &gate,
                           .pWaitDstStageMask = &stage,
                           .commandBufferCount = 1,
                           .pCommandBuffers = &cb};
    window w;
    w.submitted = monotonic_ns();
    assert_int_equal(vkQueueSubmit(f->vk.queue, 1, &submit, fence), VK_SUCCESS);
    w.released = monotonic_ns();
    VkSemaphoreSignalInfo signal = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, NULL, gate,
                                    open_value};
    assert_int_equal(vkSignalSemaphore(f->vk.device, &signal), VK_SUCCESS);
    assert_int_equal(vkWaitForFences(f->vk.device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    w.finished = monotonic_ns();
    vkDestroyFence(f->vk.device, fence, NULL);
    vkDestroySemaphore(f->vk.device, gate, NULL);
    vkFreeCommandBuffers(f->vk.device, f->vk.pool, 1, &cb);
    return w;
}

typedef monotonic_span span;

/* The queue's draw and dispatch spans on CLOCK_MONOTONIC, once the engine
 * executed everything submitted. */
static uint32_t command_spans(fixture *f, span *spans, uint32_t max)
{
    return queue_spans_monotonic(f->engine, f->timeline,
                                 1u << TALLY_EVENT_KIND_DRAW | 1u << TALLY_EVENT_KIND_DISPATCH,
                                 spans, max);
}

static void calibrated_commands_lie_between_the_gpus_release_and_the_fence_wait(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 3; round++) {
        window w = submit_gated(f);
        span spans[8];
        assert_int_equal(command_spans(f, spans, 8), 2); /* the draw, the dispatch */
        for (uint32_t i = 0; i < 2; i++) {
            assert_true(spans[i].begin >= w.released);
            assert_true(spans[i].end >= spans[i].begin);
            assert_true(spans[i].end <= w.finished);
        }
        assert_true(spans[1].begin >= spans[0].end);
    }
}

/* The correlation: within the submission's window, and the first command
 * where the engine's clock stood at the submit, before the GPU could start. */
static void check_placed(fixture *f)
{
    for (int round = 0; round < 3; round++) {
        window w = submit_gated(f);
        span spans[8];
        assert_int_equal(command_spans(f, spans, 8), 2);
        for (uint32_t i = 0; i < 2; i++) {
            assert_true(spans[i].begin >= w.submitted);
            assert_true(spans[i].end >= spans[i].begin);
            assert_true(spans[i].end <= w.finished);
        }
        assert_true(spans[1].begin >= spans[0].end);
        assert_true(spans[0].begin < w.released);
    }
}

static void without_the_extension_commands_are_placed_within_submit_and_fence_wait(void **state)
{
    check_placed(*state);
}

static void
without_the_monotonic_domain_commands_are_placed_within_submit_and_fence_wait(void **state)
{
    check_placed(*state);
}

static int open_finishing_driver(void **state)
{
    return open_fixture(state, "finish", false);
}

/*
 * A driver may run the work before vkQueueSubmit returns (the test layer
 * below tally's waits for the queue to go idle inside it): the engine's
 * clock starts the submission at the application's call, not after the
 * driver's, so each command keeps the GPU time it measured. Were the
 * submission started when the driver returned, every command would end
 * before it began, and take none.
 */
static void work_the_driver_finished_inside_the_submit_keeps_its_gpu_time(void **state)
{
    fixture *f = *state;
    for (int round = 0; round < 3; round++) {
        VkCommandBuffer cb = vk_context_begin(&f->vk);
        vk_context_draw_triangle(&f->vk, cb);
        vk_context_dispatch(&f->vk, cb, 4, 1, 1);
        assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
        VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                               .commandBufferCount = 1,
                               .pCommandBuffers = &cb};
        uint64_t submitted = monotonic_ns();
        assert_int_equal(vkQueueSubmit(f->vk.queue, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
        uint64_t returned = monotonic_ns();
        assert_int_equal(vkQueueWaitIdle(f->vk.queue), VK_SUCCESS);
        vkFreeCommandBuffers(f->vk.device, f->vk.pool, 1, &cb);
        span spans[8];
        assert_int_equal(command_spans(f, spans, 8), 2);
        for (uint32_t i = 0; i < 2; i++) {
            assert_true(spans[i].begin >= submitted);
            assert_true(spans[i].end > spans[i].begin);
            assert_true(spans[i].end <= returned);
        }
    }
}

static void with_calibration_off_commands_are_placed_within_submit_and_fence_wait(void **state)
{
    check_placed(*state);
}

/* lavapipe answers NULL for the command of an extension the device did not
 * enable (as the specification requires); the layer enabled it for itself. */
static void
the_application_is_not_handed_the_command_of_an_extension_it_did_not_enable(void **state)
{
    fixture *f = *state;
    assert_null(vkGetDeviceProcAddr(f->vk.device, "vkGetCalibratedTimestampsEXT"));
}

static void an_application_that_enabled_the_extension_calibrates_as_without_the_layer(void **state)
{
    fixture *f = *state;
    PFN_vkGetCalibratedTimestampsEXT calibrate =
        (PFN_vkGetCalibratedTimestampsEXT)vkGetDeviceProcAddr(f->vk.device,
                                                              "vkGetCalibratedTimestampsEXT");
    assert_non_null(calibrate);
    const VkCalibratedTimestampInfoEXT infos[1] = {
        {VK_STRUCTURE_TYPE_CALIBRATED_TIMESTAMP_INFO_EXT, NULL, VK_TIME_DOMAIN_CLOCK_MONOTONIC_EXT},
    };
    uint64_t value = 0, deviation = 0;
    uint64_t before = monotonic_ns();
    assert_int_equal(calibrate(f->vk.device, 1, infos, &value, &deviation), VK_SUCCESS);
    uint64_t after = monotonic_ns();
    assert_true(value + deviation >= before && value <= after + deviation);
    /* And the layer's own calibration goes on beside it. */
    window w = submit_gated(f);
    span spans[8];
    assert_int_equal(command_spans(f, spans, 8), 2);
    assert_true(spans[0].begin >= w.released && spans[1].end <= w.finished);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            calibrated_commands_lie_between_the_gpus_release_and_the_fence_wait, open_calibrated,
            close_fixture),
        cmocka_unit_test_setup_teardown(
            without_the_extension_commands_are_placed_within_submit_and_fence_wait,
            open_without_extension, close_fixture),
        cmocka_unit_test_setup_teardown(
            without_the_monotonic_domain_commands_are_placed_within_submit_and_fence_wait,
            open_without_monotonic_domain, close_fixture),
        cmocka_unit_test_setup_teardown(
            with_calibration_off_commands_are_placed_within_submit_and_fence_wait,
            open_with_calibration_off, close_fixture),
        cmocka_unit_test_setup_teardown(
            the_application_is_not_handed_the_command_of_an_extension_it_did_not_enable,
            open_calibrated, close_fixture),
        cmocka_unit_test_setup_teardown(
            an_application_that_enabled_the_extension_calibrates_as_without_the_layer,
            open_with_application_extension, close_fixture),
        cmocka_unit_test_setup_teardown(
            work_the_driver_finished_inside_the_submit_keeps_its_gpu_time, open_finishing_driver,
            close_fixture),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
