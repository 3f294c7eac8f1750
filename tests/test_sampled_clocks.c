/* Sampled clocks against physical bounds: the cycles a sample spans and the
 * busy cycles in them, on both clocks (docs/engine.md, "What a sample's
 * counters mean"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <time.h>

#include "fixture.h"

enum { MAX_SAMPLES = 16384 };

struct samples {
    tally_sample *headers;
    uint64_t *raw;
    uint32_t count, raw_count;
    uint32_t clocks, busy, memory_busy; /* raw slots */
};

static uint32_t raw_slot(const tally_catalogue *cat, const char *symbol)
{
    uint32_t index = 0;
    assert_int_equal(tally_catalogue_find(cat, symbol, &index), TALLY_OK);
    return tally_catalogue_counter(cat, index)->raw_index;
}

/* Every sample the sampler holds once it covers what was submitted. */
static void read_all(tally_device *device, tally_sampler *sampler, struct samples *s)
{
    const tally_catalogue *cat = tally_device_catalogue(device);
    s->raw_count = tally_catalogue_raw_count(cat);
    s->clocks = raw_slot(cat, "GpuCoreClocks");
    s->busy = raw_slot(cat, "GpuBusyCycles");
    s->memory_busy = raw_slot(cat, "MemoryBusyCycles");
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    assert_int_equal(tally_sampler_flush(sampler, 2000000000u), TALLY_OK);
    s->headers = calloc(MAX_SAMPLES, sizeof *s->headers);
    s->raw = calloc((size_t)MAX_SAMPLES * s->raw_count, sizeof *s->raw);
    assert_non_null(s->headers);
    assert_non_null(s->raw);
    bool lost = true;
    assert_int_equal(tally_sampler_read(sampler, s->headers, s->raw, MAX_SAMPLES, &s->count, &lost),
                     TALLY_OK);
    assert_false(lost);
}

static uint64_t growth(const struct samples *s, uint32_t i, uint32_t slot)
{
    uint64_t now = s->raw[(size_t)i * s->raw_count + slot];
    uint64_t before = s->raw[(size_t)(i - 1) * s->raw_count + slot];
    assert_true(now >= before); /* a cumulative counter never goes back */
    return now - before;
}

/* Each sample's clocks are its span times the core clock (one cycle of
 * rounding either way), and no unit is busy longer than that. */
static void assert_within_bounds(const struct samples *s)
{
    for (uint32_t i = 1; i < s->count; i++) {
        uint64_t span = s->headers[i].timestamp_ns - s->headers[i - 1].timestamp_ns;
        uint64_t cycles = span * (s->headers[i].core_frequency_hz / 1000000u) / 1000u;
        uint64_t clocks = growth(s, i, s->clocks);
        assert_in_range(clocks, cycles ? cycles - 1 : 0, cycles + 1);
        assert_true(growth(s, i, s->busy) <= clocks);
        assert_true(growth(s, i, s->memory_busy) <= clocks);
    }
}

static void release(struct samples *s)
{
    free(s->headers);
    free(s->raw);
}

/* Virtual clock: a copy that takes many intervals keeps the GPU busy in
 * every one of them; its busy cycles are not all in the sample at its end. */
static void a_long_command_is_busy_in_every_sample_it_spans(void **state)
{
    struct engine_fixture *fx = *state;
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(fx->device, 1000, MAX_SAMPLES, &sampler), TALLY_OK);
    tally_transfer x = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 16u << 20};
    assert_int_equal(tally_stream_transfer(fx->stream, &x), TALLY_OK);
    engine_fixture_submit(fx);
    struct samples s = {0};
    read_all(fx->device, sampler, &s);
    assert_true(s.count >= 4); /* the copy spans several intervals */
    assert_within_bounds(&s);
    for (uint32_t i = 1; i < s.count; i++)
        assert_int_equal(growth(&s, i, s.busy), growth(&s, i, s.clocks));
    release(&s);
    tally_sampler_close(sampler);
}

/* Realtime clock: samples taken while the GPU idles count the clock's
 * cycles forward; none reads 0 and none holds every cycle since the device
 * opened, and a draw after the idleness keeps them within bounds. */
static void idle_samples_count_the_elapsed_clocks(void **state)
{
    (void)state;
    tally_device_options options = {.clock = TALLY_CLOCK_REALTIME};
    struct engine_fixture fx = {0};
    assert_int_equal(engine_fixture_open_with(&fx, &options), 0);
    const struct timespec pause = {0, 5000000};
    nanosleep(&pause, NULL); /* the device's clock runs ahead of the sampler */
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(fx.device, 1000000, MAX_SAMPLES, &sampler), TALLY_OK);
    nanosleep(&pause, NULL); /* idle samples */
    tally_draw d = {.api_name = "draw",
                    .count = 30000,
                    .instance_count = 1,
                    .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_draw(fx.stream, &d), TALLY_OK);
    engine_fixture_submit(&fx);
    nanosleep(&pause, NULL); /* idle samples after work */
    struct samples s = {0};
    read_all(fx.device, sampler, &s);
    assert_true(s.count >= 3);
    assert_within_bounds(&s);
    uint64_t busy = s.raw[(size_t)(s.count - 1) * s.raw_count + s.busy] - s.raw[s.busy];
    assert_true(busy > 0); /* the draw is in the samples */
    release(&s);
    tally_sampler_close(sampler);
    engine_fixture_close(&fx);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_long_command_is_busy_in_every_sample_it_spans,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test(idle_samples_count_the_elapsed_clocks),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("sampled_clocks", tests, NULL, NULL);
}
