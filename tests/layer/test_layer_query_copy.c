/*
 * vkCmdCopyQueryPoolResults from a pipeline-statistics pool that the layer
 * serves under the driver backend (layer/statistics_copy.c), on lavapipe,
 * under VK_LAYER_KHRONOS_validation: for every combination of the flags the
 * specification allows (64-bit, availability, wait, partial), of first query
 * and count, of stride and destination offset, the bytes the program's own
 * copy writes equal what vkGetQueryPoolResults gives for the same queries
 * and flags, and the bytes between them are left alone. The queries cover a
 * draw outside a render pass instance, two draws inside one (their sum is
 * recorded after the instance) and a dispatch; a copy in a later submission,
 * after the layer has reset its own queries, reads the earlier run's values;
 * the program's compute pipeline stays bound across the layer's pass; and
 * validation says nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer_harness.h"
#include "vk_context.h"

enum { QUERIES = 3, AREA = 512, SENTINEL = 0xab };

/* Statistics of the pool: not contiguous, so each one's place in the
 * layer's queries (all eleven) differs from its place in the result. */
static const VkQueryPipelineStatisticFlags statistics =
    VK_QUERY_PIPELINE_STATISTIC_INPUT_ASSEMBLY_VERTICES_BIT |
    VK_QUERY_PIPELINE_STATISTIC_VERTEX_SHADER_INVOCATIONS_BIT |
    VK_QUERY_PIPELINE_STATISTIC_CLIPPING_PRIMITIVES_BIT |
    VK_QUERY_PIPELINE_STATISTIC_FRAGMENT_SHADER_INVOCATIONS_BIT |
    VK_QUERY_PIPELINE_STATISTIC_COMPUTE_SHADER_INVOCATIONS_BIT;
enum { STATISTICS = 5, CS_INDEX = 4 };

typedef struct fixture {
    vk_context c;
    unsigned messages;
    VkQueryPool pool;
    VkBuffer dst;
    VkDeviceMemory memory;
    uint8_t *mapped;
    VkDeviceSize size;
} fixture;

/* One copy of the sweep: its flags, queries, stride and offset. */
typedef struct copy_case {
    VkQueryResultFlags flags;
    uint32_t first, count;
    VkDeviceSize stride, offset;
} copy_case;

static uint32_t host_visible_type(fixture *f, uint32_t bits)
{
    VkPhysicalDeviceMemoryProperties props;
    vkGetPhysicalDeviceMemoryProperties(f->c.physical, &props);
    VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < props.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want)
            return i;
    fail_msg("no host-visible memory");
    return 0;
}

/* Synchronization validation as well as core: the layer's pass, its
 * barriers and its copy into the program's buffer must draw nothing. */
static bool synchronization_validation(void)
{
    static char dir[] = "/tmp/tally-query-copy-XXXXXX";
    if (!mkdtemp(dir))
        return false;
    char path[256];
    snprintf(path, sizeof path, "%s/vk_layer_settings.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    fputs("khronos_validation.report_flags = error,warn\n"
          "khronos_validation.enables = "
          "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT\n",
          f);
    fclose(f);
    setenv("VK_LAYER_SETTINGS_PATH", dir, 1);
    return true;
}

/* Counts validation messages, but the one synchronization validation gives
 * of the test program itself: vk_context's render pass has no external
 * dependency, so its second instance into the image transitions the layout
 * after the first one's writes (without the layer too). */
static VKAPI_ATTR VkBool32 VKAPI_CALL count_messages(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT types,
    const VkDebugUtilsMessengerCallbackDataEXT *data, void *user)
{
    if (data && data->pMessage &&
        strstr(data->pMessage, "vkCmdBeginRenderPass: Hazard WRITE_AFTER_WRITE in subpass 0 for "
                               "attachment 0 image layout transition"))
        return VK_FALSE;
    return vk_context_count_validation(severity, types, data, user);
}

static int setup(void **state)
{
    static fixture f;
    memset(&f, 0, sizeof f);
    setenv("TALLY_BACKEND", "driver", 1);
    if (!synchronization_validation())
        return -1;
    vk_context_options options = {.extra_layer = "VK_LAYER_KHRONOS_validation",
                                  .messenger = count_messages,
                                  .messenger_data = &f.messages};
    if (!vk_context_create(&f.c, &options))
        return -1;
    VkQueryPoolCreateInfo info = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                  .queryType = VK_QUERY_TYPE_PIPELINE_STATISTICS,
                                  .queryCount = QUERIES,
                                  .pipelineStatistics = statistics};
    if (vkCreateQueryPool(f.c.device, &info, NULL, &f.pool) != VK_SUCCESS)
        return -1;
    f.size = 256 * AREA;
    VkBufferCreateInfo buffer = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                                 .size = f.size,
                                 .usage = VK_BUFFER_USAGE_TRANSFER_DST_BIT};
    if (vkCreateBuffer(f.c.device, &buffer, NULL, &f.dst) != VK_SUCCESS)
        return -1;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(f.c.device, f.dst, &req);
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .allocationSize = req.size,
                                  .memoryTypeIndex = host_visible_type(&f, req.memoryTypeBits)};
    if (vkAllocateMemory(f.c.device, &alloc, NULL, &f.memory) != VK_SUCCESS ||
        vkBindBufferMemory(f.c.device, f.dst, f.memory, 0) != VK_SUCCESS ||
        vkMapMemory(f.c.device, f.memory, 0, VK_WHOLE_SIZE, 0, (void **)&f.mapped) != VK_SUCCESS)
        return -1;
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    vkDeviceWaitIdle(f->c.device);
    vkDestroyBuffer(f->c.device, f->dst, NULL);
    vkFreeMemory(f->c.device, f->memory, NULL);
    vkDestroyQueryPool(f->c.device, f->pool, NULL);
    vk_context_destroy(&f->c);
    return 0;
}

/* Query 0 around a render pass instance with one triangle, query 1 inside
 * one around two triangles, query 2 around a dispatch of 2 groups of the
 * program's compute pipeline, bound before the layer's pass ran. */
/* The program's own order between two render pass instances into one image. */
static void after_drawing(VkCommandBuffer cb)
{
    VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                         .dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                         VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0, 1, &b, 0, NULL, 0, NULL);
}

static void record_queries(fixture *f, VkCommandBuffer cb)
{
    after_drawing(cb);
    vkCmdResetQueryPool(cb, f->pool, 0, QUERIES);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, f->c.compute);
    vkCmdBeginQuery(cb, f->pool, 0, 0);
    vk_context_draw_triangle(&f->c, cb);
    vkCmdEndQuery(cb, f->pool, 0);
    after_drawing(cb);
    vk_context_begin_render_pass(&f->c, cb, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, f->c.triangle);
    vkCmdBeginQuery(cb, f->pool, 1, 0);
    vkCmdDraw(cb, 3, 1, 0, 0);
    vkCmdDraw(cb, 3, 2, 0, 0);
    vkCmdEndQuery(cb, f->pool, 1);
    vkCmdEndRenderPass(cb);
    vkCmdBeginQuery(cb, f->pool, 2, 0);
    vkCmdDispatch(cb, 2, 1, 1); /* no bind: the program's pipeline must still be bound */
    vkCmdEndQuery(cb, f->pool, 2);
}

static VkResult end_and_submit(fixture *f, VkCommandBuffer cb)
{
    VkResult r = vkEndCommandBuffer(cb);
    return r == VK_SUCCESS ? vk_context_submit(&f->c, cb, UINT32_MAX) : r;
}

static void to_host(VkCommandBuffer cb)
{
    VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                         .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b,
                         0, NULL, 0, NULL);
}

/* Every flag combination, with three query ranges, a tight and a loose
 * stride, at an odd multiple of the word as the offset. */
static size_t sweep(copy_case *cases)
{
    static const uint32_t ranges[][2] = {{0, 3}, {1, 2}, {2, 1}};
    size_t n = 0;
    for (uint32_t flags = 0; flags < 16; flags++)
        for (size_t r = 0; r < 3; r++)
            for (int loose = 0; loose < 2; loose++) {
                VkQueryResultFlags f = (flags & 1 ? VK_QUERY_RESULT_64_BIT : 0) |
                                       (flags & 2 ? VK_QUERY_RESULT_WITH_AVAILABILITY_BIT : 0) |
                                       (flags & 4 ? VK_QUERY_RESULT_WAIT_BIT : 0) |
                                       (flags & 8 ? VK_QUERY_RESULT_PARTIAL_BIT : 0);
                VkDeviceSize word = flags & 1 ? 8 : 4;
                VkDeviceSize tight = (STATISTICS + !!(flags & 2)) * word;
                cases[n] = (copy_case){f, ranges[r][0], ranges[r][1],
                                       loose ? tight + 3 * word : tight, 3 * word};
                n++;
            }
    return n;
}

/* What vkGetQueryPoolResults gives for a case, laid out as the copy lays it
 * out, over bytes of SENTINEL. */
static VkResult results(fixture *f, const copy_case *k, uint8_t *area)
{
    memset(area, SENTINEL, AREA);
    return vkGetQueryPoolResults(f->c.device, f->pool, k->first, k->count, AREA - k->offset,
                                 area + k->offset, k->stride, k->flags);
}

static void expected(fixture *f, const copy_case *k, uint8_t *area)
{
    assert_int_equal(results(f, k, area), VK_SUCCESS);
}

static void assert_copies_equal_results(fixture *f, const copy_case *cases, size_t n,
                                        const uint8_t *copied)
{
    uint8_t want[AREA];
    for (size_t i = 0; i < n; i++) {
        VkResult r = results(f, &cases[i], want);
        /* Only the last query may be unavailable (the case below). */
        assert_true(r == VK_SUCCESS ||
                    (r == VK_NOT_READY && cases[i].first + cases[i].count == QUERIES));
        if (memcmp(want, copied + i * AREA, AREA) != 0) {
            print_error("case %zu: flags 0x%x, queries %u+%u, stride %llu, offset %llu\n", i,
                        cases[i].flags, cases[i].first, cases[i].count,
                        (unsigned long long)cases[i].stride, (unsigned long long)cases[i].offset);
            for (size_t b = 0; b < 96; b += 4) {
                uint32_t w, g;
                memcpy(&w, want + b, 4);
                memcpy(&g, copied + i * AREA + b, 4);
                print_error("  +%zu want %u got %u\n", b, w, g);
            }
            fail();
        }
    }
}

static void record_copies(fixture *f, VkCommandBuffer cb, const copy_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        vkCmdCopyQueryPoolResults(cb, f->pool, cases[i].first, cases[i].count, f->dst,
                                  i * AREA + cases[i].offset, cases[i].stride, cases[i].flags);
}

/* The copy right after the queries, in the same command buffer. */
static void copy_in_the_same_command_buffer_equals_the_results(void **state)
{
    fixture *f = *state;
    copy_case cases[96];
    size_t n = sweep(cases);
    memset(f->mapped, SENTINEL, f->size);
    VkCommandBuffer cb = vk_context_begin(&f->c);
    record_queries(f, cb);
    record_copies(f, cb, cases, n);
    to_host(cb);
    assert_int_equal(end_and_submit(f, cb), VK_SUCCESS);
    assert_copies_equal_results(f, cases, n, f->mapped);
    /* The truth of the dispatch: 2 groups of the program's local size, so
     * its pipeline, not the layer's, ran it. */
    uint64_t values[STATISTICS];
    assert_int_equal(vkGetQueryPoolResults(f->c.device, f->pool, 2, 1, sizeof values, values,
                                           sizeof values, VK_QUERY_RESULT_64_BIT),
                     VK_SUCCESS);
    assert_int_equal(values[CS_INDEX], 2 * VK_CONTEXT_LOCAL_SIZE);
    uint64_t draws[STATISTICS];
    assert_int_equal(vkGetQueryPoolResults(f->c.device, f->pool, 1, 1, sizeof draws, draws,
                                           sizeof draws, VK_QUERY_RESULT_64_BIT),
                     VK_SUCCESS);
    assert_int_equal(draws[0], 9); /* 3 + 2 x 3 vertices */
    vkFreeCommandBuffers(f->c.device, f->c.pool, 1, &cb);
    assert_int_equal(f->messages, 0);
}

/* The common frame loop: one command buffer copies the previous run's
 * results, resets the queries and measures again. When it runs a second
 * time the layer has reset its own queries of that command buffer, and the
 * copy must still give the first run's values. */
static void copy_before_the_reset_reads_the_previous_run(void **state)
{
    fixture *f = *state;
    copy_case cases[96];
    size_t n = sweep(cases);
    VkCommandBuffer first = vk_context_begin(&f->c);
    record_queries(f, first);
    assert_int_equal(end_and_submit(f, first), VK_SUCCESS);
    uint8_t *before = malloc(n * AREA);
    assert_non_null(before);
    for (size_t i = 0; i < n; i++)
        expected(f, &cases[i], before + i * AREA);

    VkCommandBuffer loop = vk_context_begin(&f->c);
    record_copies(f, loop, cases, n);
    record_queries(f, loop);
    to_host(loop);
    memset(f->mapped, SENTINEL, f->size);
    assert_int_equal(end_and_submit(f, loop), VK_SUCCESS);
    /* Run it again: the copy now reads what the loop's own first run measured. */
    memset(f->mapped, SENTINEL, f->size);
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &loop};
    assert_int_equal(vkQueueSubmit(f->c.queue, 1, &submit, VK_NULL_HANDLE), VK_SUCCESS);
    assert_int_equal(vkQueueWaitIdle(f->c.queue), VK_SUCCESS);
    /* Each run measures the same work: the copies equal the results before. */
    assert_memory_equal(before, f->mapped, n * AREA);
    free(before);
    vkFreeCommandBuffers(f->c.device, f->c.pool, 1, &first);
    vkFreeCommandBuffers(f->c.device, f->c.pool, 1, &loop);
    assert_int_equal(f->messages, 0);
}

/* A copy of a query that is unavailable when it executes (reset, not yet
 * ended) writes no values without WAIT or PARTIAL, and values between 0 and
 * the final ones with PARTIAL; its availability word is 0. Here query 2 is
 * reset and never ended, so vkGetQueryPoolResults after the submission sees
 * it as the copy did. (WAIT would wait forever for it.) */
static void copy_of_an_unavailable_query_equals_the_results(void **state)
{
    fixture *f = *state;
    copy_case all[96], cases[96];
    size_t n = 0, count = sweep(all);
    for (size_t i = 0; i < count; i++)
        if (!(all[i].flags & VK_QUERY_RESULT_WAIT_BIT))
            cases[n++] = all[i];
    memset(f->mapped, SENTINEL, f->size);
    VkCommandBuffer cb = vk_context_begin(&f->c);
    after_drawing(cb);
    vkCmdResetQueryPool(cb, f->pool, 0, QUERIES);
    vkCmdBeginQuery(cb, f->pool, 0, 0);
    vk_context_draw_triangle(&f->c, cb);
    vkCmdEndQuery(cb, f->pool, 0);
    vkCmdBeginQuery(cb, f->pool, 1, 0);
    vk_context_dispatch(&f->c, cb, 1, 1, 1);
    vkCmdEndQuery(cb, f->pool, 1);
    record_copies(f, cb, cases, n);
    to_host(cb);
    assert_int_equal(end_and_submit(f, cb), VK_SUCCESS);
    assert_copies_equal_results(f, cases, n, f->mapped);
    vkFreeCommandBuffers(f->c.device, f->c.pool, 1, &cb);
    assert_int_equal(f->messages, 0);
}

/* Misuse: a copy of queries past the pool's end (invalid usage, which the
 * validation layer below tally never sees) copies the queries that exist
 * and nothing else: no fault, no validation message for the layer's copy. */
static void a_copy_past_the_pools_end_copies_the_queries_that_exist(void **state)
{
    fixture *f = *state;
    copy_case k = {VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT, 2, 1,
                   (STATISTICS + 1) * 8, 0};
    memset(f->mapped, SENTINEL, f->size);
    VkCommandBuffer cb = vk_context_begin(&f->c);
    record_queries(f, cb);
    vkCmdCopyQueryPoolResults(cb, f->pool, k.first, 1000, f->dst, 0, k.stride, k.flags);
    vkCmdCopyQueryPoolResults(cb, f->pool, 1000, 2, f->dst, AREA, k.stride, k.flags);
    to_host(cb);
    assert_int_equal(end_and_submit(f, cb), VK_SUCCESS);
    assert_copies_equal_results(f, &k, 1, f->mapped);
    for (size_t b = AREA; b < 2 * AREA; b++)
        assert_int_equal(f->mapped[b], SENTINEL);
    vkFreeCommandBuffers(f->c.device, f->c.pool, 1, &cb);
    assert_int_equal(f->messages, 0);
}

static VkCommandBuffer secondary(fixture *f, bool continues)
{
    VkCommandBufferAllocateInfo info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL,
                                        f->c.pool, VK_COMMAND_BUFFER_LEVEL_SECONDARY, 1};
    VkCommandBuffer cb = VK_NULL_HANDLE;
    assert_int_equal(vkAllocateCommandBuffers(f->c.device, &info, &cb), VK_SUCCESS);
    VkCommandBufferInheritanceInfo inherit = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO,
        .renderPass = continues ? f->c.render_pass : VK_NULL_HANDLE,
        .framebuffer = continues ? f->c.framebuffer : VK_NULL_HANDLE,
        /* The dispatch runs inside the primary's query 0. */
        .pipelineStatistics = continues ? 0 : statistics};
    VkCommandBufferBeginInfo begin = {
        .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .flags = continues ? VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT : 0,
        .pInheritanceInfo = &inherit};
    assert_int_equal(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
    return cb;
}

/* Secondaries: query 0 of the primary spans a secondary's dispatch of 3
 * groups; query 1 begins and ends in a secondary that continues a render
 * pass instance (its sum is recorded in the primary, after the instance);
 * query 2 is the primary's own triangle. */
static void copies_of_queries_in_secondaries_equal_the_results(void **state)
{
    fixture *f = *state;
    VkCommandBuffer dispatch = secondary(f, false);
    vkCmdBindPipeline(dispatch, VK_PIPELINE_BIND_POINT_COMPUTE, f->c.compute);
    vkCmdDispatch(dispatch, 3, 1, 1);
    assert_int_equal(vkEndCommandBuffer(dispatch), VK_SUCCESS);
    VkCommandBuffer draw = secondary(f, true);
    vkCmdBindPipeline(draw, VK_PIPELINE_BIND_POINT_GRAPHICS, f->c.triangle);
    vkCmdBeginQuery(draw, f->pool, 1, 0);
    vkCmdDraw(draw, 3, 1, 0, 0);
    vkCmdEndQuery(draw, f->pool, 1);
    assert_int_equal(vkEndCommandBuffer(draw), VK_SUCCESS);

    copy_case cases[96];
    size_t n = sweep(cases);
    memset(f->mapped, SENTINEL, f->size);
    VkCommandBuffer cb = vk_context_begin(&f->c);
    after_drawing(cb);
    vkCmdResetQueryPool(cb, f->pool, 0, QUERIES);
    vkCmdBeginQuery(cb, f->pool, 0, 0);
    vkCmdExecuteCommands(cb, 1, &dispatch);
    vkCmdEndQuery(cb, f->pool, 0);
    vk_context_begin_render_pass(&f->c, cb, VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS);
    vkCmdExecuteCommands(cb, 1, &draw);
    vkCmdEndRenderPass(cb);
    after_drawing(cb);
    vkCmdBeginQuery(cb, f->pool, 2, 0);
    vk_context_draw_triangle(&f->c, cb);
    vkCmdEndQuery(cb, f->pool, 2);
    record_copies(f, cb, cases, n);
    to_host(cb);
    assert_int_equal(end_and_submit(f, cb), VK_SUCCESS);
    assert_copies_equal_results(f, cases, n, f->mapped);
    uint64_t values[QUERIES][STATISTICS];
    assert_int_equal(vkGetQueryPoolResults(f->c.device, f->pool, 0, QUERIES, sizeof values, values,
                                           sizeof values[0], VK_QUERY_RESULT_64_BIT),
                     VK_SUCCESS);
    assert_int_equal(values[0][CS_INDEX], 3 * VK_CONTEXT_LOCAL_SIZE);
    assert_int_equal(values[1][0], 3);
    assert_int_equal(values[2][0], 3);
    VkCommandBuffer all[] = {cb, dispatch, draw};
    vkFreeCommandBuffers(f->c.device, f->c.pool, 3, all);
    assert_int_equal(f->messages, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_in_the_same_command_buffer_equals_the_results),
        cmocka_unit_test(copy_before_the_reset_reads_the_previous_run),
        cmocka_unit_test(copies_of_queries_in_secondaries_equal_the_results),
        cmocka_unit_test(copy_of_an_unavailable_query_equals_the_results),
        cmocka_unit_test(a_copy_past_the_pools_end_copies_the_queries_that_exist),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
