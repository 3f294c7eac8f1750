/* tally_measurements_to_monotonic against hand-computed times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tally/tally.h"

/* GPU 1000 ns was CLOCK_MONOTONIC 5000 ns, within 10 ns. */
static const tally_clock_pair pair = {.gpu_ns = 1000, .monotonic_ns = 5000, .deviation_ns = 10};

static tally_measurement timed(uint64_t begin, uint64_t end)
{
    return (tally_measurement){.valid = TALLY_MEASURE_TIME, .begin_ns = begin, .end_ns = end};
}

static void times_move_by_the_pairs_offset(void **state)
{
    (void)state;
    tally_measurement v[2] = {timed(1100, 1200), timed(900, 1000)};
    assert_int_equal(tally_measurements_to_monotonic(&pair, v, 2, 9000), 4900);
    assert_int_equal(v[0].begin_ns, 5100);
    assert_int_equal(v[0].end_ns, 5200);
    assert_int_equal(v[1].begin_ns, 4900); /* before the pair: a negative offset */
    assert_int_equal(v[1].end_ns, 5000);
    assert_true(v[0].valid & TALLY_MEASURE_TIME_MONOTONIC);
    assert_true(v[1].valid & TALLY_MEASURE_TIME_MONOTONIC);
}

/* Read at 5195, a time put at 5200 lies 5 ns late, within the deviation:
 * every converted time moves back by 5. */
static void times_within_the_deviation_end_by_the_read(void **state)
{
    (void)state;
    tally_measurement v[2] = {timed(1100, 1150), timed(1150, 1200)};
    assert_int_equal(tally_measurements_to_monotonic(&pair, v, 2, 5195), 5095);
    assert_int_equal(v[0].begin_ns, 5095);
    assert_int_equal(v[0].end_ns, 5145);
    assert_int_equal(v[1].begin_ns, 5145);
    assert_int_equal(v[1].end_ns, 5195);
}

/* Beyond the deviation, or before CLOCK_MONOTONIC began, or without a time:
 * left as they were, unflagged. */
static void untrustworthy_times_are_left_alone(void **state)
{
    (void)state;
    tally_measurement v[3] = {
        timed(1100, 1300), timed(0, 100), {.valid = TALLY_MEASURE_STATISTICS, .begin_ns = 1100}};
    const tally_clock_pair early = {.gpu_ns = 10000, .monotonic_ns = 50, .deviation_ns = 0};
    assert_int_equal(tally_measurements_to_monotonic(&pair, v, 1, 5195), 0);
    assert_int_equal(tally_measurements_to_monotonic(&early, v + 1, 2, 60), 0);
    assert_int_equal(v[0].begin_ns, 1100);
    assert_int_equal(v[0].end_ns, 1300);
    assert_int_equal(v[1].end_ns, 100);
    assert_int_equal(v[2].begin_ns, 1100);
    for (int i = 0; i < 3; i++)
        assert_false(v[i].valid & TALLY_MEASURE_TIME_MONOTONIC);
    assert_int_equal(tally_measurements_to_monotonic(NULL, v, 1, 0), 0);
}

/* A GPU time read between CLOCK_MONOTONIC 1000 and 1011 lies within 5.5 ns
 * of the midpoint: the pair takes 1005, deviation 6 (rounded up, so the
 * true time is always within it). */
static void a_bracket_pairs_its_midpoint(void **state)
{
    (void)state;
    tally_clock_pair pair = tally_clock_pair_bracketed(77, 1000, 1011);
    assert_int_equal(pair.gpu_ns, 77);
    assert_int_equal(pair.monotonic_ns, 1005);
    assert_int_equal(pair.deviation_ns, 6);
    pair = tally_clock_pair_bracketed(9, 2000, 2000);
    assert_int_equal(pair.monotonic_ns, 2000);
    assert_int_equal(pair.deviation_ns, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(times_move_by_the_pairs_offset),
        cmocka_unit_test(times_within_the_deviation_end_by_the_read),
        cmocka_unit_test(untrustworthy_times_are_left_alone),
        cmocka_unit_test(a_bracket_pairs_its_midpoint),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
