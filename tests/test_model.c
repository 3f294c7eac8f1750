/* The simgpu model against the Vulkan pipeline-statistics definitions and
 * goldens computed by hand: primitives per topology, instancing, the FIFO
 * vertex cache, compute invocations, command counts and scope times. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

/* The selection every case reads, in this order. */
enum {
    V_IA_VERTICES,
    V_IA_PRIMITIVES,
    V_VS_INVOCATIONS,
    V_VERTEX_CACHE_HITS,
    V_DRAW_CALLS,
    V_DISPATCHES,
    V_TRANSFER_COMMANDS,
    V_CS_INVOCATIONS,
    V_CS_WORKGROUPS,
    V_GPU_TIME,
    V_COUNT
};
static const char *const selection[V_COUNT] = {
    "IaVertices", "IaPrimitives",     "VsInvocations", "VertexCacheHits", "DrawCalls",
    "Dispatches", "TransferCommands", "CsInvocations", "CsWorkgroups",    "GpuTime"};

struct fixture {
    struct engine_fixture engine;
    uint32_t counters[V_COUNT];
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (!fx || engine_fixture_open(&fx->engine) != 0)
        return -1;
    const tally_catalogue *cat = tally_device_catalogue(fx->engine.device);
    for (int i = 0; i < V_COUNT; i++)
        if (tally_catalogue_find(cat, selection[i], &fx->counters[i]) != TALLY_OK)
            return -1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    engine_fixture_close(&fx->engine);
    free(fx);
    return 0;
}

static tally_results *new_results(struct fixture *fx, uint32_t slots)
{
    tally_results *results = NULL;
    assert_int_equal(
        tally_results_create(fx->engine.device, fx->counters, V_COUNT, slots, &results), TALLY_OK);
    assert_int_equal(tally_results_pass_count(results), 1);
    return results;
}

static void read_slot(tally_results *results, uint32_t slot, uint64_t v[V_COUNT])
{
    tally_value values[V_COUNT];
    assert_int_equal(tally_results_get(results, slot, values, V_COUNT, NULL), TALLY_OK);
    for (int i = 0; i < V_COUNT; i++)
        v[i] = values[i].u64;
}

/* Records one draw in its own scope, executes it and reads the values. */
static void measure_draw(struct fixture *fx, const tally_draw *draw, uint64_t v[V_COUNT])
{
    tally_results *results = new_results(fx, 1);
    assert_int_equal(tally_stream_marker_begin(fx->engine.stream, results, 0), TALLY_OK);
    assert_int_equal(tally_stream_draw(fx->engine.stream, draw), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(fx->engine.stream, results, 0), TALLY_OK);
    engine_fixture_submit(&fx->engine);
    read_slot(results, 0, v);
    tally_results_release(results);
}

static void measure_dispatch(struct fixture *fx, const tally_dispatch *d, uint64_t v[V_COUNT])
{
    tally_results *results = new_results(fx, 1);
    assert_int_equal(tally_stream_marker_begin(fx->engine.stream, results, 0), TALLY_OK);
    assert_int_equal(tally_stream_dispatch(fx->engine.stream, d), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(fx->engine.stream, results, 0), TALLY_OK);
    engine_fixture_submit(&fx->engine);
    read_slot(results, 0, v);
    tally_results_release(results);
}

struct topology_case {
    tally_topology topology;
    uint32_t vertices;
    uint8_t patch_control_points;
    uint64_t primitives; /* per instance, by the Vulkan definition, by hand */
};

/* Incomplete primitives are not counted. */
static const struct topology_case topology_cases[] = {
    {TALLY_TOPOLOGY_POINT_LIST, 7, 0, 7},
    {TALLY_TOPOLOGY_LINE_LIST, 7, 0, 3},  /* 7/2 */
    {TALLY_TOPOLOGY_LINE_STRIP, 7, 0, 6}, /* 7-1 */
    {TALLY_TOPOLOGY_LINE_STRIP, 1, 0, 0},
    {TALLY_TOPOLOGY_TRIANGLE_LIST, 8, 0, 2},  /* 8/3 */
    {TALLY_TOPOLOGY_TRIANGLE_STRIP, 7, 0, 5}, /* 7-2 */
    {TALLY_TOPOLOGY_TRIANGLE_STRIP, 2, 0, 0},
    {TALLY_TOPOLOGY_TRIANGLE_FAN, 7, 0, 5}, /* 7-2 */
    {TALLY_TOPOLOGY_TRIANGLE_FAN, 1, 0, 0},
    {TALLY_TOPOLOGY_LINE_LIST_WITH_ADJACENCY, 11, 0, 2}, /* 11/4 */
    {TALLY_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY, 9, 0, 6}, /* 9-3 */
    {TALLY_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY, 3, 0, 0},
    {TALLY_TOPOLOGY_TRIANGLE_LIST_WITH_ADJACENCY, 17, 0, 2},  /* 17/6 */
    {TALLY_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY, 11, 0, 3}, /* (11-4)/2 */
    {TALLY_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY, 6, 0, 1},
    {TALLY_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY, 5, 0, 0},
    {TALLY_TOPOLOGY_PATCH_LIST, 10, 3, 3}, /* 10/3 */
    {TALLY_TOPOLOGY_PATCH_LIST, 16, 4, 4},
};

static void every_topology_counts_complete_primitives_only(void **state)
{
    struct fixture *fx = *state;
    for (size_t i = 0; i < sizeof topology_cases / sizeof topology_cases[0]; i++) {
        const struct topology_case *c = &topology_cases[i];
        tally_draw draw = {.api_name = "draw",
                           .count = c->vertices,
                           .instance_count = 1,
                           .topology = c->topology,
                           .patch_control_points = c->patch_control_points};
        uint64_t v[V_COUNT];
        measure_draw(fx, &draw, v);
        if (v[V_IA_PRIMITIVES] != c->primitives)
            fail_msg("topology %d with %u vertices: %llu primitives, expected %llu", c->topology,
                     c->vertices, (unsigned long long)v[V_IA_PRIMITIVES],
                     (unsigned long long)c->primitives);
    }
}

static void instancing_multiplies_primitives_by_the_instance_count(void **state)
{
    struct fixture *fx = *state;
    for (size_t i = 0; i < sizeof topology_cases / sizeof topology_cases[0]; i++) {
        const struct topology_case *c = &topology_cases[i];
        tally_draw draw = {.api_name = "draw",
                           .count = c->vertices,
                           .instance_count = 3,
                           .topology = c->topology,
                           .patch_control_points = c->patch_control_points};
        uint64_t v[V_COUNT];
        measure_draw(fx, &draw, v);
        assert_int_equal(v[V_IA_PRIMITIVES], 3 * c->primitives);
    }
}

static void ia_vertices_count_every_vertex_of_every_instance_including_incomplete_ones(void **state)
{
    struct fixture *fx = *state;
    tally_draw draw = {.api_name = "draw",
                       .count = 8,
                       .instance_count = 5,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_IA_VERTICES], 40);
    assert_int_equal(v[V_IA_PRIMITIVES], 10);
}

static void non_indexed_draws_shade_every_input_vertex(void **state)
{
    struct fixture *fx = *state;
    tally_draw draw = {.api_name = "draw",
                       .count = 13,
                       .instance_count = 4,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_STRIP};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_VS_INVOCATIONS], 52);
    assert_int_equal(v[V_VERTEX_CACHE_HITS], 0);
}

static void indexed_draws_shade_each_distinct_vertex_that_fits_the_cache_once(void **state)
{
    struct fixture *fx = *state;
    static const uint16_t indices[12] = {0, 1, 2, 2, 1, 3, 0, 3, 4, 5, 6, 7};
    tally_draw draw = {.api_name = "drawIndexed",
                       .count = 12,
                       .instance_count = 2,
                       .flags = TALLY_DRAW_INDEXED,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST,
                       .index_size = 2,
                       .indices = indices};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_IA_VERTICES], 24);
    assert_int_equal(v[V_VS_INVOCATIONS], 16); /* 8 distinct x 2 instances */
    assert_int_equal(v[V_VERTEX_CACHE_HITS], 8);
    assert_int_equal(v[V_IA_PRIMITIVES], 8);
}

static void the_vertex_cache_is_a_32_entry_fifo_where_hits_do_not_refresh(void **state)
{
    struct fixture *fx = *state;
    /* 0..31 fill the cache (32 misses); 0 hits and stays the oldest entry;
     * 32 evicts 0 (miss); 0 misses again (evicts 1); 1 misses (evicts 2).
     * An LRU cache would give 34; the FIFO gives 35. */
    uint32_t indices[36];
    for (uint32_t i = 0; i < 32; i++)
        indices[i] = i;
    indices[32] = 0;
    indices[33] = 32;
    indices[34] = 0;
    indices[35] = 1;
    tally_draw draw = {.api_name = "drawIndexed",
                       .count = 36,
                       .instance_count = 3,
                       .flags = TALLY_DRAW_INDEXED,
                       .topology = TALLY_TOPOLOGY_POINT_LIST,
                       .index_size = 4,
                       .indices = indices};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_IA_VERTICES], 108);
    assert_int_equal(v[V_VS_INVOCATIONS], 35 * 3);
    assert_int_equal(v[V_VERTEX_CACHE_HITS], 108 - 105);
}

static void byte_indices_run_through_the_vertex_cache_too(void **state)
{
    struct fixture *fx = *state;
    static const uint8_t indices[6] = {200, 201, 202, 202, 201, 200};
    tally_draw draw = {.api_name = "drawIndexed",
                       .count = 6,
                       .instance_count = 1,
                       .flags = TALLY_DRAW_INDEXED,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST,
                       .index_size = 1,
                       .indices = indices};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_VS_INVOCATIONS], 3);
    assert_int_equal(v[V_VERTEX_CACHE_HITS], 3);
}

/* Replaces the fixture's device by one with the profile's text. */
static void reopen_with_profile(struct fixture *fx, const char *text)
{
    char path[] = "/tmp/tally-model-profile-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL, .profile_path = path};
    tally_device *device = NULL;
    tally_status opened = tally_device_open(&options, &device, NULL, 0);
    unlink(path);
    assert_int_equal(opened, TALLY_OK);
    engine_fixture_close(&fx->engine);
    fx->engine.device = device;
    assert_int_equal(tally_context_create(fx->engine.device, "test", &fx->engine.context),
                     TALLY_OK);
    assert_int_equal(tally_stream_create(fx->engine.context, &fx->engine.stream), TALLY_OK);
}

static void indexed_draws_without_indices_shade_at_least_one_vertex_per_instance(void **state)
{
    struct fixture *fx = *state;
    reopen_with_profile(fx, "[model]\nvertex_reuse_permille = 1000\n");
    tally_draw draw = {.api_name = "drawIndexed",
                       .count = 30,
                       .instance_count = 2,
                       .flags = TALLY_DRAW_INDEXED,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST,
                       .index_size = 4};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_VS_INVOCATIONS], 2);
    assert_int_equal(v[V_VERTEX_CACHE_HITS], 60 - 2);
}

static void distinct_indices_are_each_shaded_whatever_the_cache(void **state)
{
    struct fixture *fx = *state;
    reopen_with_profile(fx, "[model]\nvertex_cache_entries = 1\n");
    uint32_t indices[30];
    for (uint32_t i = 0; i < 30; i++)
        indices[i] = i;
    tally_draw draw = {.api_name = "drawIndexed",
                       .count = 30,
                       .instance_count = 1,
                       .flags = TALLY_DRAW_INDEXED,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST,
                       .index_size = 4,
                       .indices = indices};
    uint64_t v[V_COUNT];
    measure_draw(fx, &draw, v);
    assert_int_equal(v[V_VS_INVOCATIONS], 30);
}

static void a_dispatch_runs_groups_times_its_local_size(void **state)
{
    struct fixture *fx = *state;
    tally_dispatch d = {.api_name = "dispatch", .groups = {2, 3, 4}, .local_size = {8, 4, 2}};
    uint64_t v[V_COUNT];
    measure_dispatch(fx, &d, v);
    assert_int_equal(v[V_CS_WORKGROUPS], 24);
    assert_int_equal(v[V_CS_INVOCATIONS], 24 * 64);
    assert_int_equal(v[V_DISPATCHES], 1);
}

static void a_dispatch_without_local_size_uses_the_bound_programs(void **state)
{
    struct fixture *fx = *state;
    tally_program_desc desc = {.name = "cs"};
    desc.stages[TALLY_STAGE_COMPUTE] =
        (tally_stage_profile){.present = true, .mix = {.alu = 10}, .local_size = {16, 2, 1}};
    tally_program *program = NULL;
    assert_int_equal(tally_program_create(fx->engine.device, &desc, &program), TALLY_OK);
    assert_int_equal(tally_stream_bind_program(fx->engine.stream, program), TALLY_OK);
    tally_dispatch d = {.api_name = "dispatch", .groups = {5, 1, 1}};
    uint64_t v[V_COUNT];
    measure_dispatch(fx, &d, v);
    assert_int_equal(v[V_CS_WORKGROUPS], 5);
    assert_int_equal(v[V_CS_INVOCATIONS], 160);
    tally_program_release(program);
}

/* A program bound by one stream is not bound in the next one: each stream
 * starts with nothing bound (and the program may be gone by then). */
/* Binds a compute program of local size 16 x 2 x 1 and lets the stream hold it. */
static void bind_local_size_32_program(struct fixture *fx)
{
    tally_program_desc desc = {.name = "cs"};
    desc.stages[TALLY_STAGE_COMPUTE] =
        (tally_stage_profile){.present = true, .mix = {.alu = 10}, .local_size = {16, 2, 1}};
    tally_program *program = NULL;
    assert_int_equal(tally_program_create(fx->engine.device, &desc, &program), TALLY_OK);
    assert_int_equal(tally_stream_bind_program(fx->engine.stream, program), TALLY_OK);
    tally_program_release(program); /* the stream and its recording keep it alive */
}

static void a_program_bound_before_a_reset_is_not_bound_after_it(void **state)
{
    struct fixture *fx = *state;
    bind_local_size_32_program(fx);
    tally_dispatch d = {.api_name = "dispatch", .groups = {5, 1, 1}};
    uint64_t v[V_COUNT];
    measure_dispatch(fx, &d, v);
    assert_int_equal(v[V_CS_INVOCATIONS], 160);
    assert_int_equal(tally_stream_reset(fx->engine.stream), TALLY_OK);
    measure_dispatch(fx, &d, v); /* a command buffer reset: no program, local size 1 */
    assert_int_equal(v[V_CS_INVOCATIONS], 5);
}

/* GL and CL state outlives their submission points. */
static void a_consuming_submission_keeps_the_program_bound_in_the_next_recording(void **state)
{
    struct fixture *fx = *state;
    bind_local_size_32_program(fx);
    tally_dispatch d = {.api_name = "dispatch", .groups = {5, 1, 1}};
    uint64_t v[V_COUNT];
    for (int submission = 0; submission < 3; submission++) {
        measure_dispatch(fx, &d, v);
        assert_int_equal(v[V_CS_INVOCATIONS], 160);
    }
}

static void a_refused_stream_submission_drops_what_was_recorded(void **state)
{
    struct fixture *fx = *state;
    tally_device *other = NULL;
    assert_int_equal(tally_device_open(NULL, &other, NULL, 0), TALLY_OK);
    tally_dispatch d = {.api_name = "dispatch", .groups = {5, 1, 1}};
    assert_int_equal(tally_stream_dispatch(fx->engine.stream, &d), TALLY_OK);
    /* the stream belongs to the fixture's device, not this one */
    assert_int_equal(tally_submit_stream(other, fx->engine.stream, 0, "submit", NULL),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_stream_command_count(fx->engine.stream), 0);
    tally_device_close(other);
}

static void command_counters_count_draws_dispatches_and_transfers(void **state)
{
    struct fixture *fx = *state;
    tally_results *results = new_results(fx, 1);
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    tally_dispatch dispatch = {.api_name = "dispatch", .groups = {1, 1, 1}};
    tally_transfer transfer = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 4096};
    assert_int_equal(tally_stream_marker_begin(fx->engine.stream, results, 0), TALLY_OK);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tally_stream_draw(fx->engine.stream, &draw), TALLY_OK);
    for (int i = 0; i < 2; i++)
        assert_int_equal(tally_stream_dispatch(fx->engine.stream, &dispatch), TALLY_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(tally_stream_transfer(fx->engine.stream, &transfer), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(fx->engine.stream, results, 0), TALLY_OK);
    engine_fixture_submit(&fx->engine);
    uint64_t v[V_COUNT];
    read_slot(results, 0, v);
    assert_int_equal(v[V_DRAW_CALLS], 3);
    assert_int_equal(v[V_DISPATCHES], 2);
    assert_int_equal(v[V_TRANSFER_COMMANDS], 4);
    assert_int_equal(v[V_IA_VERTICES], 9);
    tally_results_release(results);
}

/* Reads the named counters of one scope around what record() records. */
static void measure_named(struct fixture *fx, const char *const *names, uint32_t n,
                          void (*record)(tally_stream *), uint64_t *out)
{
    const tally_catalogue *cat = tally_device_catalogue(fx->engine.device);
    uint32_t counters[8];
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(tally_catalogue_find(cat, names[i], &counters[i]), TALLY_OK);
    tally_results *results = NULL;
    assert_int_equal(tally_results_create(fx->engine.device, counters, n, 1, &results), TALLY_OK);
    assert_int_equal(tally_stream_marker_begin(fx->engine.stream, results, 0), TALLY_OK);
    record(fx->engine.stream);
    assert_int_equal(tally_stream_marker_end(fx->engine.stream, results, 0), TALLY_OK);
    engine_fixture_submit(&fx->engine);
    tally_value values[8];
    assert_int_equal(tally_results_get(results, 0, values, n, NULL), TALLY_OK);
    for (uint32_t i = 0; i < n; i++)
        out[i] = values[i].u64;
    tally_results_release(results);
}

static void record_waves(tally_stream *stream)
{
    tally_draw draw = {.api_name = "draw",
                       .count = 100,
                       .instance_count = 3,
                       .topology = TALLY_TOPOLOGY_POINT_LIST};
    tally_dispatch dispatch = {
        .api_name = "dispatch", .groups = {10, 1, 1}, .local_size = {16, 2, 1}};
    assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
    assert_int_equal(tally_stream_dispatch(stream, &dispatch), TALLY_OK);
}

static void record_copy(tally_stream *stream)
{
    tally_transfer copy = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 1000};
    assert_int_equal(tally_stream_transfer(stream, &copy), TALLY_OK);
}

/* The model divides by the profile's rates and sizes; most profiles make
 * them powers of two (which it shifts by), these do not. Hand-computed. */
static void rates_that_are_not_powers_of_two_divide_rounding_up(void **state)
{
    struct fixture *fx = *state;
    reopen_with_profile(fx, "[cores]\nwave_size = 48\n"
                            "[throughput]\nl2_requests_per_clock = 3\ndram_bytes_per_clock = 100\n"
                            "[memory]\nl2_line_bytes = 96\n");
    static const char *const waves[] = {"VsWaves", "CsWaves"};
    uint64_t w[2];
    measure_named(fx, waves, 2, record_waves, w);
    assert_int_equal(w[0], 3 * 3);  /* 3 instances of ceil(100 / 48) */
    assert_int_equal(w[1], 10 * 1); /* 10 groups of ceil(32 / 48) */

    static const char *const copy[] = {"L2CacheRequests", "DramWriteBytes", "MemoryBusyCycles",
                                       "GpuBusyCycles"};
    uint64_t c[4];
    measure_named(fx, copy, 4, record_copy, c);
    /* ceil(1000 / 96) = 11 lines read and 11 written */
    assert_int_equal(c[0], 22);
    assert_int_equal(c[1], 11 * 96);
    /* DRAM: 250 permille of the 11 read lines miss (2), every write goes
     * through: 13 lines of 96 bytes; max(ceil(22 / 3), ceil(1248 / 100)) +
     * 200 latency; then 64 cycles of command overhead */
    assert_int_equal(c[2], 13 + 200);
    assert_int_equal(c[3], 64 + 13 + 200);
}

/* The counters the repeated-draw test compares. */
static const char *const repeat_counters[] = {
    "IaVertices",       "VsInvocations", "ClipperPrimitives",     "CulledPrimitives",
    "RasterizedPixels", "FsInvocations", "ShaderAluInstructions", "GpuBusyCycles"};
enum { REPEAT_COUNTERS = sizeof repeat_counters / sizeof repeat_counters[0], REPEAT_STEPS = 60 };

struct repeat_step {
    uint32_t count, instances;
    bool cull;
    int program; /* 0: none, 1 or 2: programs of 10 or 20 ALU instructions a vertex */
};

static struct repeat_step repeat_step(uint32_t i)
{
    /* runs of repeats; 20 distinct draws in a row (12 to 31); render state
     * and program changes under an unchanged draw */
    uint32_t count = i >= 12 && i < 32 ? 3 * (i + 1) : i < 40 ? 300 : 600;
    return (struct repeat_step){count, i % 7 == 6 ? 2 : 1, i % 10 >= 5, i < 45 ? 1 : 2};
}

static tally_program *repeat_program(tally_device *device, int which)
{
    tally_program_desc desc = {.name = "p"};
    desc.stages[TALLY_STAGE_VERTEX] =
        (tally_stage_profile){.present = true, .mix = {.alu = 10u * (uint32_t)which}};
    desc.stages[TALLY_STAGE_FRAGMENT] =
        (tally_stage_profile){.present = true, .mix = {.alu = 5u * (uint32_t)which}};
    tally_program *program = NULL;
    assert_int_equal(tally_program_create(device, &desc, &program), TALLY_OK);
    return program;
}

static void record_repeat_step(tally_stream *stream, struct repeat_step step)
{
    tally_render_state render = {.width = 256,
                                 .height = 256,
                                 .layers = 1,
                                 .samples = 1,
                                 .color_bytes_per_pixel = 4,
                                 .flags = step.cull ? TALLY_RENDER_CULL : 0};
    assert_int_equal(tally_stream_set_render_state(stream, &render), TALLY_OK);
    tally_draw draw = {.api_name = "draw",
                       .count = step.count,
                       .instance_count = step.instances,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
}

static uint32_t find_counters(tally_device *device, uint32_t *counters)
{
    const tally_catalogue *cat = tally_device_catalogue(device);
    for (uint32_t i = 0; i < REPEAT_COUNTERS; i++)
        assert_int_equal(tally_catalogue_find(cat, repeat_counters[i], &counters[i]), TALLY_OK);
    return REPEAT_COUNTERS;
}

/* simgpu remembers the last draw and gives a repeat of it the same counts
 * without the model: every draw of a sequence of repeats, changes and
 * distinct draws counts as the same draw does on a fresh device, also when
 * the program was released and another made (perhaps at the same address). */
static void repeated_draws_count_as_the_same_draw_on_a_fresh_device(void **state)
{
    struct fixture *fx = *state;
    tally_device *device = fx->engine.device;
    uint32_t counters[REPEAT_COUNTERS];
    find_counters(device, counters);
    tally_results *results = NULL;
    assert_int_equal(
        tally_results_create(device, counters, REPEAT_COUNTERS, REPEAT_STEPS, &results), TALLY_OK);
    tally_program *program = NULL;
    int bound = 0;
    for (uint32_t i = 0; i < REPEAT_STEPS; i++) {
        struct repeat_step step = repeat_step(i);
        if (step.program != bound) {
            /* the old one unbound and released once its draws ran */
            assert_int_equal(tally_stream_bind_program(fx->engine.stream, NULL), TALLY_OK);
            engine_fixture_submit(&fx->engine);
            if (program)
                tally_program_release(program);
            program = repeat_program(device, step.program);
            bound = step.program;
        }
        assert_int_equal(tally_stream_bind_program(fx->engine.stream, program), TALLY_OK);
        assert_int_equal(tally_stream_marker_begin(fx->engine.stream, results, i), TALLY_OK);
        record_repeat_step(fx->engine.stream, step);
        assert_int_equal(tally_stream_marker_end(fx->engine.stream, results, i), TALLY_OK);
    }
    engine_fixture_submit(&fx->engine);
    tally_program_release(program);

    for (uint32_t i = 0; i < REPEAT_STEPS; i++) {
        struct engine_fixture fresh;
        assert_int_equal(engine_fixture_open(&fresh), 0);
        tally_results *alone = NULL;
        assert_int_equal(tally_results_create(fresh.device, counters, REPEAT_COUNTERS, 1, &alone),
                         TALLY_OK);
        struct repeat_step step = repeat_step(i);
        tally_program *p = repeat_program(fresh.device, step.program);
        assert_int_equal(tally_stream_bind_program(fresh.stream, p), TALLY_OK);
        assert_int_equal(tally_stream_marker_begin(fresh.stream, alone, 0), TALLY_OK);
        record_repeat_step(fresh.stream, step);
        assert_int_equal(tally_stream_marker_end(fresh.stream, alone, 0), TALLY_OK);
        engine_fixture_submit(&fresh);
        tally_value want[REPEAT_COUNTERS], got[REPEAT_COUNTERS];
        assert_int_equal(tally_results_get(alone, 0, want, REPEAT_COUNTERS, NULL), TALLY_OK);
        assert_int_equal(tally_results_get(results, i, got, REPEAT_COUNTERS, NULL), TALLY_OK);
        for (uint32_t c = 0; c < REPEAT_COUNTERS; c++) {
            if (got[c].u64 != want[c].u64) {
                print_error("draw %u, %s: %llu, alone %llu\n", i, repeat_counters[c],
                            (unsigned long long)got[c].u64, (unsigned long long)want[c].u64);
                fail();
            }
        }
        tally_results_release(alone);
        tally_program_release(p);
        engine_fixture_close(&fresh);
    }
    tally_results_release(results);
}

/*
 * The per-command report of repeated draws with other work between them:
 * simgpu leaves the engine's raw counts as they are for a repeat and says
 * so, and the report then keeps the previous row's values (backend.h). Every
 * row must still hold what its command counts alone on a fresh device, and
 * its GpuTime must be its own duration: at 1500 MHz a repeat's time differs
 * by the carried remainder of a nanosecond (the default profile's 1000 MHz
 * has none). Work: A and B are draws, D a
 * dispatch, T a transfer, I a draw with index data, 2 binds another
 * program (no row).
 */
static const char mixed_work[] = "AAADAATAIAABAABB2AAAD";
static const char report_selection[] =
    "IaVertices,VsInvocations,ClipperPrimitives,RasterizedPixels,FsInvocations,CsInvocations,"
    "ShaderAluInstructions,L2CacheMisses,DramWriteBytes,L2CacheHitRate,GpuTime";
enum { REPORT_VALUES = 11, REPORT_FLOAT = 9, REPORT_GPU_TIME = 10, RECORD_COLUMNS = 19 };

static void record_work(tally_stream *stream, char what)
{
    static const uint16_t indices[6] = {0, 1, 2, 2, 1, 3};
    tally_draw draw = {.api_name = "draw",
                       .count = what == 'B' ? 600 : 300,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    tally_dispatch dispatch = {
        .api_name = "dispatch", .groups = {8, 4, 1}, .local_size = {64, 1, 1}};
    tally_transfer transfer = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 65536};
    if (what == 'I')
        draw = (tally_draw){.api_name = "draw",
                            .count = 6,
                            .instance_count = 1,
                            .flags = TALLY_DRAW_INDEXED,
                            .topology = TALLY_TOPOLOGY_TRIANGLE_LIST,
                            .index_size = 2,
                            .indices = indices};
    if (what == 'D')
        assert_int_equal(tally_stream_dispatch(stream, &dispatch), TALLY_OK);
    else if (what == 'T')
        assert_int_equal(tally_stream_transfer(stream, &transfer), TALLY_OK);
    else
        assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
}

static void set_work_render(tally_stream *stream)
{
    tally_render_state render = {
        .width = 256, .height = 256, .layers = 1, .samples = 1, .color_bytes_per_pixel = 4};
    assert_int_equal(tally_stream_set_render_state(stream, &render), TALLY_OK);
}

/* What one command counts alone on a fresh device, as the report selects. */
static void work_alone(char what, int program, tally_value *values)
{
    struct engine_fixture fresh;
    assert_int_equal(engine_fixture_open(&fresh), 0);
    const tally_catalogue *cat = tally_device_catalogue(fresh.device);
    uint32_t counters[REPORT_VALUES], n = 0;
    char list[sizeof report_selection];
    memcpy(list, report_selection, sizeof list);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save))
        assert_int_equal(tally_catalogue_find(cat, tok, &counters[n++]), TALLY_OK);
    tally_results *alone = NULL;
    assert_int_equal(tally_results_create(fresh.device, counters, n, 1, &alone), TALLY_OK);
    tally_program *p = repeat_program(fresh.device, program);
    assert_int_equal(tally_stream_bind_program(fresh.stream, p), TALLY_OK);
    set_work_render(fresh.stream);
    assert_int_equal(tally_stream_marker_begin(fresh.stream, alone, 0), TALLY_OK);
    record_work(fresh.stream, what);
    assert_int_equal(tally_stream_marker_end(fresh.stream, alone, 0), TALLY_OK);
    engine_fixture_submit(&fresh);
    assert_int_equal(tally_results_get(alone, 0, values, n, NULL), TALLY_OK);
    tally_results_release(alone);
    tally_program_release(p);
    engine_fixture_close(&fresh);
}

/* The row's fields from its value columns on (the label is empty). */
static void row_values(char *line, uint64_t *duration, char **fields)
{
    char *at = line;
    for (int column = 0; column < RECORD_COLUMNS + REPORT_VALUES; column++) {
        char *comma = strchr(at, ',');
        if (comma)
            *comma = '\0';
        if (column == RECORD_COLUMNS - 1)
            *duration = strtoull(at, NULL, 10);
        if (column >= RECORD_COLUMNS)
            fields[column - RECORD_COLUMNS] = at;
        assert_true(comma || column == RECORD_COLUMNS + REPORT_VALUES - 1);
        at = comma + 1;
    }
}

static void report_rows_of_repeats_hold_each_commands_own_values(void **state)
{
    (void)state;
    char path[] = "/tmp/tally_repeats_XXXXXX.csv", profile[] = "/tmp/tally_1500mhz_XXXXXX";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    fd = mkstemp(profile);
    assert_true(fd >= 0);
    static const char clock[] = "[clock]\ncore_clock_mhz = 1500\n";
    assert_int_equal(write(fd, clock, sizeof clock - 1), (ssize_t)(sizeof clock - 1));
    close(fd);
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL,
                                    .profile_path = profile,
                                    .report_path = path,
                                    .report_counters = report_selection};
    struct engine_fixture fx = {0};
    assert_int_equal(engine_fixture_open_with(&fx, &options), 0);
    tally_program *programs[2] = {repeat_program(fx.device, 1), repeat_program(fx.device, 2)};
    assert_int_equal(tally_stream_bind_program(fx.stream, programs[0]), TALLY_OK);
    set_work_render(fx.stream);
    int program[sizeof mixed_work], bound = 1;
    for (size_t i = 0; mixed_work[i]; i++) {
        if (mixed_work[i] == '2')
            assert_int_equal(tally_stream_bind_program(fx.stream, programs[1]), TALLY_OK);
        else
            record_work(fx.stream, mixed_work[i]);
        bound = mixed_work[i] == '2' ? 2 : bound;
        program[i] = bound;
    }
    engine_fixture_submit(&fx);
    engine_fixture_close(&fx);
    tally_program_release(programs[0]);
    tally_program_release(programs[1]);

    FILE *in = fopen(path, "r");
    assert_non_null(in);
    char line[1024];
    assert_non_null(fgets(line, sizeof line, in)); /* the header */
    size_t rows = 0;
    for (size_t i = 0; mixed_work[i]; i++) {
        if (mixed_work[i] == '2')
            continue;
        assert_non_null(fgets(line, sizeof line, in));
        line[strcspn(line, "\n")] = '\0';
        uint64_t duration = 0;
        char *fields[REPORT_VALUES];
        row_values(line, &duration, fields);
        tally_value want[REPORT_VALUES];
        work_alone(mixed_work[i], program[i], want);
        for (int c = 0; c < REPORT_VALUES; c++) {
            char fixed3[400]; /* a report's floats: "%.3f" (docs/reports.md) */
            snprintf(fixed3, sizeof fixed3, "%.3f", want[c].f64);
            bool same = c == REPORT_FLOAT      ? strcmp(fields[c], fixed3) == 0
                        : c == REPORT_GPU_TIME ? strtoull(fields[c], NULL, 10) == duration
                                               : strtoull(fields[c], NULL, 10) == want[c].u64;
            if (!same) {
                print_error("command %zu (%c), column %d: %s\n", i, mixed_work[i], c, fields[c]);
                fail();
            }
        }
        rows++;
    }
    assert_int_equal(rows, strlen(mixed_work) - 1);
    fclose(in);
    unlink(path);
    unlink(profile);
}

static void scope_gpu_time_is_the_sum_of_its_commands_gpu_times(void **state)
{
    struct fixture *fx = *state;
    tally_results *outer = new_results(fx, 1);
    tally_results *each = new_results(fx, 5);
    tally_draw draw = {.api_name = "draw",
                       .count = 3000,
                       .instance_count = 2,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    tally_dispatch dispatch = {
        .api_name = "dispatch", .groups = {64, 1, 1}, .local_size = {64, 1, 1}};
    tally_transfer transfer = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 1u << 20};
    assert_int_equal(tally_stream_marker_begin(fx->engine.stream, outer, 0), TALLY_OK);
    for (uint32_t slot = 0; slot < 5; slot++) {
        assert_int_equal(tally_stream_marker_begin(fx->engine.stream, each, slot), TALLY_OK);
        if (slot % 3 == 0)
            assert_int_equal(tally_stream_draw(fx->engine.stream, &draw), TALLY_OK);
        else if (slot % 3 == 1)
            assert_int_equal(tally_stream_dispatch(fx->engine.stream, &dispatch), TALLY_OK);
        else
            assert_int_equal(tally_stream_transfer(fx->engine.stream, &transfer), TALLY_OK);
        assert_int_equal(tally_stream_marker_end(fx->engine.stream, each, slot), TALLY_OK);
    }
    assert_int_equal(tally_stream_marker_end(fx->engine.stream, outer, 0), TALLY_OK);
    engine_fixture_submit(&fx->engine);
    uint64_t sum = 0, v[V_COUNT];
    for (uint32_t slot = 0; slot < 5; slot++) {
        read_slot(each, slot, v);
        assert_true(v[V_GPU_TIME] > 0);
        sum += v[V_GPU_TIME];
    }
    read_slot(outer, 0, v);
    assert_int_equal(v[V_GPU_TIME], sum);
    tally_results_release(outer);
    tally_results_release(each);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(every_topology_counts_complete_primitives_only, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(instancing_multiplies_primitives_by_the_instance_count,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            ia_vertices_count_every_vertex_of_every_instance_including_incomplete_ones, setup,
            teardown),
        cmocka_unit_test_setup_teardown(non_indexed_draws_shade_every_input_vertex, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            indexed_draws_shade_each_distinct_vertex_that_fits_the_cache_once, setup, teardown),
        cmocka_unit_test_setup_teardown(
            the_vertex_cache_is_a_32_entry_fifo_where_hits_do_not_refresh, setup, teardown),
        cmocka_unit_test_setup_teardown(
            indexed_draws_without_indices_shade_at_least_one_vertex_per_instance, setup, teardown),
        cmocka_unit_test_setup_teardown(distinct_indices_are_each_shaded_whatever_the_cache, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(byte_indices_run_through_the_vertex_cache_too, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_dispatch_runs_groups_times_its_local_size, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_program_bound_before_a_reset_is_not_bound_after_it, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            a_consuming_submission_keeps_the_program_bound_in_the_next_recording, setup, teardown),
        cmocka_unit_test_setup_teardown(a_refused_stream_submission_drops_what_was_recorded, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_dispatch_without_local_size_uses_the_bound_programs,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(command_counters_count_draws_dispatches_and_transfers,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(rates_that_are_not_powers_of_two_divide_rounding_up, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(repeated_draws_count_as_the_same_draw_on_a_fresh_device,
                                        setup, teardown),
        cmocka_unit_test(report_rows_of_repeats_hold_each_commands_own_values),
        cmocka_unit_test_setup_teardown(scope_gpu_time_is_the_sum_of_its_commands_gpu_times, setup,
                                        teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("model", tests, NULL, NULL);
}
