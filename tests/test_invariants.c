/* The invariants of DESIGN.md on randomised command streams (fixed seeds, a
 * private xorshift generator): every command is measured in its own slot with
 * every counter selected, and every sample is checked. The same stream gives
 * bit-identical raw values on every run and every device. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tally/tally.h"

#define COMMANDS 80u
#define PROGRAMS 6u

struct rng {
    uint64_t s;
};

static uint64_t next(struct rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return r->s = x;
}

static uint32_t below(struct rng *r, uint32_t n)
{
    return (uint32_t)(next(r) % n);
}
static bool coin(struct rng *r)
{
    return next(r) & 1u;
}

/* What the test knows about each measured command, independently. */
struct expectation {
    int type;                /* 0 draw, 1 dispatch, 2 transfer */
    uint64_t area;           /* width * height * layers of the render state */
    uint64_t cs_invocations; /* groups x local size, dispatches only */
    uint64_t cs_groups;
};

struct run {
    tally_device *device;
    tally_context *context;
    tally_stream *stream;
    tally_results *results; /* COMMANDS slots, then one around everything */
    uint32_t pass_count;
    struct expectation expect[COMMANDS];
};

static void random_mix(struct rng *r, tally_instruction_mix *mix)
{
    mix->alu = below(r, 64);
    mix->tex = below(r, 8);
    mix->load = below(r, 8);
    mix->store = below(r, 4);
    mix->branch = below(r, 8);
}

static void random_program_desc(struct rng *r, tally_program_desc *desc)
{
    memset(desc, 0, sizeof *desc);
    desc->name = "random";
    for (int s = 0; s < TALLY_STAGE_COUNT; s++) {
        tally_stage_profile *p = &desc->stages[s];
        p->present =
            s == TALLY_STAGE_VERTEX || s == TALLY_STAGE_COMPUTE ? below(r, 4) != 0 : coin(r);
        random_mix(r, &p->mix);
        p->input_bytes = below(r, 3) ? below(r, 64) : 0;
        p->output_vertices = below(r, 5);
        p->invocations = below(r, 4);
        p->output_primitives = below(r, 4);
        p->discards = coin(r);
        for (int i = 0; i < 3; i++)
            p->local_size[i] = below(r, 3) ? below(r, 17) : 0;
    }
}

static uint64_t local_size_of(const tally_dispatch *d, const tally_program_desc *bound)
{
    const tally_stage_profile *cs = bound && bound->stages[TALLY_STAGE_COMPUTE].present
                                        ? &bound->stages[TALLY_STAGE_COMPUTE]
                                        : NULL;
    uint64_t local = 1;
    for (int i = 0; i < 3; i++) {
        uint32_t size = d->local_size[i] ? d->local_size[i] : cs ? cs->local_size[i] : 1;
        local *= size ? size : 1;
    }
    return local;
}

static void open_device(tally_device **device)
{
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL};
    char error[256];
    assert_int_equal(tally_device_open(&options, device, error, sizeof error), TALLY_OK);
}

/* Records the stream the seed describes and executes it for every pass. */
static void execute_random_stream(struct run *run, tally_device *device, uint64_t seed)
{
    memset(run, 0, sizeof *run);
    run->device = device;
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t n = tally_catalogue_counter_count(cat);
    uint32_t *all = malloc(n * sizeof *all);
    assert_non_null(all);
    for (uint32_t i = 0; i < n; i++)
        all[i] = i;
    assert_int_equal(tally_context_create(device, "random", &run->context), TALLY_OK);
    assert_int_equal(tally_stream_create(run->context, &run->stream), TALLY_OK);
    assert_int_equal(tally_results_create(device, all, n, COMMANDS + 1, &run->results), TALLY_OK);
    free(all);
    run->pass_count = tally_results_pass_count(run->results);
    assert_true(run->pass_count >= 1);

    struct rng r = {seed};
    tally_program_desc descs[PROGRAMS];
    tally_program *programs[PROGRAMS];
    for (uint32_t i = 0; i < PROGRAMS; i++) {
        random_program_desc(&r, &descs[i]);
        assert_int_equal(tally_program_create(device, &descs[i], &programs[i]), TALLY_OK);
    }
    const tally_program_desc *bound = NULL;
    tally_render_state rs = {.layers = 1, .samples = 1};
    uint64_t area = 0;
    tally_stream *s = run->stream;
    /* Every execution starts from the same state: the context's program and
     * render state may carry over from the previous execution (GL-like). */
    assert_int_equal(tally_stream_bind_program(s, NULL), TALLY_OK);
    assert_int_equal(tally_stream_set_render_state(s, &rs), TALLY_OK);
    assert_int_equal(tally_stream_marker_begin(s, run->results, COMMANDS), TALLY_OK);
    for (uint32_t c = 0; c < COMMANDS; c++) {
        if (below(&r, 4) == 0) {
            uint32_t p = below(&r, PROGRAMS + 1);
            assert_int_equal(tally_stream_bind_program(s, p < PROGRAMS ? programs[p] : NULL),
                             TALLY_OK);
            bound = p < PROGRAMS ? &descs[p] : NULL;
        }
        if (below(&r, 4) == 0) {
            static const uint32_t samples[] = {1, 2, 4, 8};
            rs = (tally_render_state){.width = 1 + below(&r, 512),
                                      .height = 1 + below(&r, 512),
                                      .layers = 1 + below(&r, 3),
                                      .samples = samples[below(&r, 4)],
                                      .color_bytes_per_pixel = below(&r, 17),
                                      .depth_bytes_per_sample = below(&r, 5),
                                      .flags = below(&r, 64)};
            assert_int_equal(tally_stream_set_render_state(s, &rs), TALLY_OK);
            area = (uint64_t)rs.width * rs.height * rs.layers;
        }
        struct expectation *e = &run->expect[c];
        e->area = area;
        assert_int_equal(tally_stream_marker_begin(s, run->results, c), TALLY_OK);
        uint32_t kind = below(&r, 10);
        if (kind < 6) {
            static const uint8_t sizes[] = {1, 2, 4};
            uint32_t indices[3000];
            tally_draw d = {.api_name = "draw",
                            .count = 1 + below(&r, 3000),
                            .instance_count = 1 + below(&r, 4),
                            .first = below(&r, 100),
                            .topology = (uint8_t)below(&r, TALLY_TOPOLOGY_COUNT),
                            .patch_control_points = (uint8_t)(1 + below(&r, 8))};
            if (coin(&r)) {
                d.flags = TALLY_DRAW_INDEXED;
                d.index_size = sizes[below(&r, 3)];
                uint32_t range = 1 + below(&r, d.index_size == 1 ? 256 : 200);
                for (uint32_t i = 0; i < d.count; i++) {
                    uint32_t v = below(&r, range);
                    if (d.index_size == 1)
                        ((uint8_t *)indices)[i] = (uint8_t)v;
                    else if (d.index_size == 2)
                        ((uint16_t *)indices)[i] = (uint16_t)v;
                    else
                        indices[i] = v;
                }
                d.indices = coin(&r) || below(&r, 4) ? indices : NULL;
            }
            e->type = 0;
            assert_int_equal(tally_stream_draw(s, &d), TALLY_OK);
        } else if (kind < 8) {
            tally_dispatch d = {.api_name = "dispatch",
                                .groups = {1 + below(&r, 16), 1 + below(&r, 4), 1 + below(&r, 2)}};
            if (coin(&r))
                for (int i = 0; i < 3; i++)
                    d.local_size[i] = below(&r, 9);
            e->type = 1;
            e->cs_groups = (uint64_t)d.groups[0] * d.groups[1] * d.groups[2];
            e->cs_invocations = e->cs_groups * local_size_of(&d, bound);
            assert_int_equal(tally_stream_dispatch(s, &d), TALLY_OK);
        } else {
            tally_transfer x = {
                .api_name = "transfer", .kind = below(&r, 4), .bytes = 1 + below(&r, 1u << 22)};
            e->type = 2;
            assert_int_equal(tally_stream_transfer(s, &x), TALLY_OK);
        }
        assert_int_equal(tally_stream_marker_end(s, run->results, c), TALLY_OK);
    }
    assert_int_equal(tally_stream_marker_end(s, run->results, COMMANDS), TALLY_OK);
    for (uint32_t i = 0; i < PROGRAMS; i++)
        tally_program_release(programs[i]);

    for (uint32_t p = 0; p < run->pass_count; p++) {
        tally_submission sub = {
            .streams = &run->stream, .stream_count = 1, .pass_index = p, .api_name = "submit"};
        assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    }
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
}

static void finish_run(struct run *run)
{
    tally_results_release(run->results);
    tally_stream_destroy(run->stream);
    tally_context_destroy(run->context);
}

static uint32_t raw_of(const tally_catalogue *cat, const char *symbol)
{
    uint32_t index = 0;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    uint32_t raw = tally_catalogue_counter(cat, index)->raw_index;
    assert_int_not_equal(raw, TALLY_NOT_RAW);
    return raw;
}

static uint64_t *read_raw(struct run *run, uint32_t slot)
{
    uint32_t n = tally_catalogue_raw_count(tally_device_catalogue(run->device));
    uint64_t *raw = calloc(n, sizeof *raw);
    assert_non_null(raw);
    assert_int_equal(tally_results_get_raw(run->results, slot, raw, n), TALLY_OK);
    return raw;
}

static void check_invariants(uint64_t seed)
{
    tally_device *device = NULL;
    open_device(&device);
    struct run run;
    execute_random_stream(&run, device, seed);
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t n = tally_catalogue_counter_count(cat);
    tally_value *values = calloc(n, sizeof *values);
    assert_non_null(values);
    uint32_t gpu_time = raw_of(cat, "GpuTime"), clocks = raw_of(cat, "GpuCoreClocks"),
             busy = raw_of(cat, "GpuBusyCycles"), l2_req = raw_of(cat, "L2CacheRequests"),
             l2_hit = raw_of(cat, "L2CacheHits"), l2_miss = raw_of(cat, "L2CacheMisses"),
             texels = raw_of(cat, "TexelsFetched"), tex_hit = raw_of(cat, "TexL1Hits"),
             tex_miss = raw_of(cat, "TexL1Misses"), vs = raw_of(cat, "VsInvocations"),
             ia = raw_of(cat, "IaVertices"), fs = raw_of(cat, "FsInvocations"),
             covered = raw_of(cat, "CoveredSamples"), pixels = raw_of(cat, "RasterizedPixels"),
             cs = raw_of(cat, "CsInvocations"), groups = raw_of(cat, "CsWorkgroups");
    uint64_t time_sum = 0;
    for (uint32_t slot = 0; slot < COMMANDS; slot++) {
        const struct expectation *e = &run.expect[slot];
        assert_int_equal(tally_results_get(run.results, slot, values, n, NULL), TALLY_OK);
        for (uint32_t i = 0; i < n; i++) {
            const tally_counter_info *c = tally_catalogue_counter(cat, i);
            if (c->unit != TALLY_UNIT_PERCENTAGE)
                continue;
            double v = c->storage == TALLY_STORAGE_FLOAT64 || c->storage == TALLY_STORAGE_FLOAT32
                           ? values[i].f64
                           : (double)values[i].u64;
            if (!(v >= 0.0 && v <= 100.0))
                fail_msg("seed %llu slot %u: %s = %g", (unsigned long long)seed, slot, c->symbol,
                         v);
        }
        uint64_t *raw = read_raw(&run, slot);
        assert_int_equal(raw[l2_hit] + raw[l2_miss], raw[l2_req]);
        assert_int_equal(raw[tex_hit] + raw[tex_miss], raw[texels]);
        assert_true(raw[vs] <= raw[ia]);
        assert_true(raw[fs] <= raw[covered]);
        assert_true(raw[pixels] <= e->area);
        assert_int_equal(raw[cs], e->cs_invocations);
        assert_int_equal(raw[groups], e->cs_groups);
        for (uint32_t u = 0; u < tally_catalogue_unit_count(cat); u++) {
            uint32_t unit_busy = tally_catalogue_unit(cat, u)->busy_raw_index;
            if (unit_busy != TALLY_NOT_RAW)
                assert_true(raw[unit_busy] <= raw[busy]);
        }
        assert_true(raw[busy] <= raw[clocks]);
        time_sum += raw[gpu_time];
        free(raw);
    }
    uint64_t *whole = read_raw(&run, COMMANDS);
    assert_int_equal(whole[gpu_time], time_sum);
    free(whole);
    free(values);
    finish_run(&run);
    tally_device_close(device);
}

static void invariants_hold_for_every_command_of_random_stream_1(void **state)
{
    (void)state;
    check_invariants(0x9e3779b97f4a7c15ull);
}

static void invariants_hold_for_every_command_of_random_stream_2(void **state)
{
    (void)state;
    check_invariants(0x2545f4914f6cdd1dull);
}

static void invariants_hold_for_every_command_of_random_stream_3(void **state)
{
    (void)state;
    check_invariants(12345);
}

static void the_same_stream_gives_identical_raw_values_on_every_run_and_device(void **state)
{
    (void)state;
    tally_device *first = NULL, *second = NULL;
    open_device(&first);
    open_device(&second);
    uint32_t n = tally_catalogue_raw_count(tally_device_catalogue(first));
    struct run a, b, c;
    execute_random_stream(&a, first, 777);
    execute_random_stream(&b, first, 777);
    execute_random_stream(&c, second, 777);
    for (uint32_t slot = 0; slot <= COMMANDS; slot++) {
        uint64_t *ra = read_raw(&a, slot), *rb = read_raw(&b, slot), *rc = read_raw(&c, slot);
        assert_memory_equal(ra, rb, n * sizeof *ra);
        assert_memory_equal(ra, rc, n * sizeof *ra);
        free(ra);
        free(rb);
        free(rc);
    }
    finish_run(&a);
    finish_run(&b);
    finish_run(&c);
    tally_device_close(first);
    tally_device_close(second);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(invariants_hold_for_every_command_of_random_stream_1),
        cmocka_unit_test(invariants_hold_for_every_command_of_random_stream_2),
        cmocka_unit_test(invariants_hold_for_every_command_of_random_stream_3),
        cmocka_unit_test(the_same_stream_gives_identical_raw_values_on_every_run_and_device),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("invariants", tests, NULL, NULL);
}
