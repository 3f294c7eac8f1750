/* Inline draw recording (tally_stream_draw_inline): draws appended through a
 * stream's lane count exactly as the same draws given one by one, whatever
 * closes their runs (other commands, submissions, block ends, secondaries),
 * and a draw the queue cannot execute counts as no work. The expected
 * values are the draws' own vertex and instance counts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "fixture.h"
#include "tally_door.h"

/* More than one 1024-draw block of the engine, and not a multiple of it. */
#define MANY_DRAWS 2500u

struct lane_fixture {
    struct engine_fixture engine;
    tally_results *results; /* DrawCalls, IaVertices */
};

static int setup(void **state)
{
    struct lane_fixture *f = calloc(1, sizeof *f);
    if (!f || engine_fixture_open(&f->engine) != 0)
        return -1;
    const tally_catalogue *catalogue = tally_device_catalogue(f->engine.device);
    uint32_t counters[2];
    if (tally_catalogue_find(catalogue, "DrawCalls", &counters[0]) != TALLY_OK ||
        tally_catalogue_find(catalogue, "IaVertices", &counters[1]) != TALLY_OK ||
        tally_results_create(f->engine.device, counters, 2, 8, &f->results) != TALLY_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct lane_fixture *f = *state;
    tally_results_release(f->results);
    engine_fixture_close(&f->engine);
    free(f);
    return 0;
}

static tally_packed_draw points(uint32_t vertices)
{
    return (tally_packed_draw){.api_name = "draw",
                               .count = vertices,
                               .instance_count = 1,
                               .topology = TALLY_TOPOLOGY_POINT_LIST};
}

static void push(tally_stream *stream, tally_packed_draw draw)
{
    assert_int_equal(tally_stream_draw_inline(stream, tally_stream_draw_lane(stream), &draw),
                     TALLY_OK);
}

static void submit(struct lane_fixture *f, tally_stream *stream, uint32_t flags)
{
    tally_submission sub = {
        .streams = &stream, .stream_count = 1, .flags = flags, .api_name = "submit"};
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(f->engine.device), TALLY_OK);
}

static void expect_slot(struct lane_fixture *f, uint32_t slot, uint64_t draws, uint64_t vertices)
{
    tally_value v[2] = {0};
    assert_int_equal(tally_results_get(f->results, slot, v, 2, NULL), TALLY_OK);
    assert_int_equal(v[0].u64, draws);
    assert_int_equal(v[1].u64, vertices);
}

/* Sum of 1..n: draw i has i vertices, so a lost, repeated or misplaced
 * draw changes the total. */
static uint64_t triangle_number(uint64_t n)
{
    return n * (n + 1) / 2;
}

static void draws_across_blocks_all_count(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    for (uint32_t i = 1; i <= MANY_DRAWS; i++)
        push(s, points(i));
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_command_count(s), MANY_DRAWS + 2);
    submit(f, s, TALLY_SUBMIT_CONSUME);
    expect_slot(f, 0, MANY_DRAWS, triangle_number(MANY_DRAWS));
}

/* Markers between draws close runs: each scope holds only its own draws. */
static void runs_closed_by_markers_keep_their_draws_apart(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    for (uint32_t slot = 0; slot < 4; slot++) {
        assert_int_equal(tally_stream_marker_begin(s, f->results, slot), TALLY_OK);
        for (uint32_t i = 0; i <= slot; i++)
            push(s, points(10 * (slot + 1)));
        assert_int_equal(tally_stream_marker_end(s, f->results, slot), TALLY_OK);
        push(s, points(1000)); /* outside every scope */
    }
    submit(f, s, TALLY_SUBMIT_CONSUME);
    for (uint32_t slot = 0; slot < 4; slot++)
        expect_slot(f, slot, slot + 1, (uint64_t)(slot + 1) * 10 * (slot + 1));
}

/* A submission executes what was recorded so far; recording goes on after
 * it in a new run, and the next submission executes both. */
static void recording_goes_on_after_a_submission(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    tally_stream *scoped[2]; /* markers around it, in the same context */
    assert_int_equal(tally_stream_create(f->engine.context, &scoped[0]), TALLY_OK);
    assert_int_equal(tally_stream_create(f->engine.context, &scoped[1]), TALLY_OK);
    for (uint32_t i = 1; i <= 3; i++)
        push(s, points(i));
    assert_int_equal(tally_stream_marker_begin(scoped[0], f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(scoped[1], f->results, 0), TALLY_OK);
    tally_stream *first[] = {scoped[0], s, scoped[1]};
    tally_submission sub = {.streams = first, .stream_count = 3, .api_name = "submit"};
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_OK);
    for (uint32_t i = 4; i <= 5; i++)
        push(s, points(i));
    assert_int_equal(tally_stream_command_count(s), 5);
    assert_int_equal(tally_stream_reset(scoped[0]), TALLY_OK);
    assert_int_equal(tally_stream_reset(scoped[1]), TALLY_OK);
    assert_int_equal(tally_stream_marker_begin(scoped[0], f->results, 1), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(scoped[1], f->results, 1), TALLY_OK);
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(f->engine.device), TALLY_OK);
    expect_slot(f, 0, 3, triangle_number(3));
    expect_slot(f, 1, 5, triangle_number(5));
    tally_stream_destroy(scoped[0]);
    tally_stream_destroy(scoped[1]);
}

/* A stream re-recorded after a reset reuses its blocks: nothing of the
 * previous recording leaks into the next. */
static void a_reset_stream_records_afresh(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    for (uint32_t i = 1; i <= MANY_DRAWS; i++)
        push(s, points(i));
    assert_int_equal(tally_stream_reset(s), TALLY_OK);
    assert_int_equal(tally_stream_command_count(s), 0);
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    for (uint32_t i = 1; i <= 7; i++)
        push(s, points(i));
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    submit(f, s, 0);
    expect_slot(f, 0, 7, triangle_number(7));
}

/* A secondary's open run is closed when a primary executes it. */
static void a_secondary_with_an_open_run_executes_its_draws(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *secondary = NULL;
    assert_int_equal(tally_stream_create(f->engine.context, &secondary), TALLY_OK);
    for (uint32_t i = 1; i <= 4; i++)
        push(secondary, points(i));
    tally_stream *s = f->engine.stream;
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_execute(s, secondary), TALLY_OK);
    assert_int_equal(tally_stream_execute(s, secondary), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    submit(f, s, TALLY_SUBMIT_CONSUME);
    expect_slot(f, 0, 8, 2 * triangle_number(4));
    tally_stream_destroy(secondary);
}

/* The lane does not check draws; the queue does, and runs the rest. */
static void a_draw_the_queue_cannot_execute_counts_as_no_work(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    tally_packed_draw bad_topology = points(50);
    bad_topology.topology = TALLY_TOPOLOGY_COUNT;
    tally_packed_draw bad_index_size = points(60);
    bad_index_size.flags = TALLY_DRAW_INDEXED;
    bad_index_size.index_size = 3;
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    push(s, points(5));
    push(s, bad_topology);
    push(s, bad_index_size);
    push(s, points(6));
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    submit(f, s, TALLY_SUBMIT_CONSUME);
    expect_slot(f, 0, 2, 11);
}

/* tally_stream_draw refuses what the lane would skip, and records the rest
 * through the same lane. */
static void checked_and_inline_draws_share_a_run(void **state)
{
    struct lane_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    tally_draw checked = {.api_name = "draw", .count = 9, .instance_count = 2};
    tally_draw refused = checked;
    refused.topology = TALLY_TOPOLOGY_COUNT;
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    push(s, points(1));
    assert_int_equal(tally_stream_draw(s, &checked), TALLY_OK);
    assert_int_equal(tally_stream_draw(s, &refused), TALLY_ERROR_INVALID_ARGUMENT);
    push(s, points(2));
    assert_int_equal(tally_stream_end_recording(s), TALLY_OK);
    assert_int_equal(tally_stream_end_recording(s), TALLY_OK); /* idempotent */
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_command_count(s), 5);
    submit(f, s, TALLY_SUBMIT_CONSUME);
    expect_slot(f, 0, 3, 1 + 18 + 2);
}

static void null_arguments_are_refused(void **state)
{
    (void)state;
    tally_packed_draw draw = points(1);
    assert_null(tally_stream_draw_lane(NULL));
    assert_int_equal(tally_stream_draw_packed(NULL, &draw), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_stream_end_recording(NULL), TALLY_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(draws_across_blocks_all_count, setup, teardown),
        cmocka_unit_test_setup_teardown(runs_closed_by_markers_keep_their_draws_apart, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(recording_goes_on_after_a_submission, setup, teardown),
        cmocka_unit_test_setup_teardown(a_reset_stream_records_afresh, setup, teardown),
        cmocka_unit_test_setup_teardown(a_secondary_with_an_open_run_executes_its_draws, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_draw_the_queue_cannot_execute_counts_as_no_work, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(checked_and_inline_draws_share_a_run, setup, teardown),
        cmocka_unit_test(null_arguments_are_refused),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
