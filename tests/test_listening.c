/* Listening: with nothing listening the queue does not simulate submitted
 * work (the virtual clock, which advances only by simulated work, shows it);
 * every kind of listener makes it simulate, and a listener that starts later
 * sees the work executed after it started. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "tally_door.h"

static const tally_draw triangles = {.api_name = "draw",
                                     .count = 300,
                                     .instance_count = 1,
                                     .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};

static void draw(struct engine_fixture *fx, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(tally_stream_draw(fx->stream, &triangles), TALLY_OK);
}

static uint64_t clock_after(struct engine_fixture *fx)
{
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
    return tally_device_gpu_time_ns(fx->device);
}

static tally_results *ia_vertices_results(tally_device *device, uint32_t slots)
{
    uint32_t index;
    assert_int_equal(tally_catalogue_find(tally_device_catalogue(device), "IaVertices", &index),
                     TALLY_OK);
    tally_results *results = NULL;
    assert_int_equal(tally_results_create(device, &index, 1, slots, &results), TALLY_OK);
    return results;
}

static uint64_t ia_vertices(tally_results *results, uint32_t slot)
{
    tally_value value = {0};
    assert_int_equal(tally_results_wait(results, slot, UINT64_MAX), TALLY_OK);
    assert_int_equal(tally_results_get(results, slot, &value, 1, NULL), TALLY_OK);
    return value.u64;
}

static void unobserved_work_is_not_simulated(void **state)
{
    struct engine_fixture *fx = *state;
    assert_false(tally_stream_observed(fx->stream));
    draw(fx, 100);
    engine_fixture_submit(fx);
    assert_int_equal(clock_after(fx), 0);
}

/* What front ends ask before a costly read that only counting needs. */
static void a_stream_is_observed_while_a_scope_it_recorded_is_open(void **state)
{
    struct engine_fixture *fx = *state;
    tally_results *results = ia_vertices_results(fx->device, 2);
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 0), TALLY_OK);
    assert_true(tally_stream_observed(fx->stream));
    engine_fixture_submit(fx); /* the scope stays open across the submission */
    assert_true(tally_stream_observed(fx->stream));
    /* A scope counts its own context's work: the device has no listener of
     * its whole work (the front ends know their own scopes). */
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
    assert_false(tally_device_listening(fx->device));
    assert_int_equal(tally_stream_marker_end(fx->stream, results, 0), TALLY_OK);
    engine_fixture_submit(fx);
    assert_false(tally_stream_observed(fx->stream));
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 1), TALLY_OK);
    assert_int_equal(tally_stream_reset(fx->stream), TALLY_OK); /* the begin is gone */
    assert_false(tally_stream_observed(fx->stream));
    tally_results_release(results);
}

static void a_scope_sees_the_work_after_it_begins(void **state)
{
    struct engine_fixture *fx = *state;
    tally_results *results = ia_vertices_results(fx->device, 1);
    draw(fx, 10); /* before the scope: nobody listens */
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 0), TALLY_OK);
    draw(fx, 3);
    assert_int_equal(tally_stream_marker_end(fx->stream, results, 0), TALLY_OK);
    draw(fx, 10); /* after it */
    engine_fixture_submit(fx);
    assert_int_equal(ia_vertices(results, 0), 3 * 300);
    uint64_t scoped = clock_after(fx);
    assert_true(scoped > 0);

    /* The same three draws alone take the same time: nothing outside the
     * scope ran. */
    tally_results_release(results);
    engine_fixture_close(fx);
    assert_int_equal(engine_fixture_open(fx), 0);
    results = ia_vertices_results(fx->device, 1);
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 0), TALLY_OK);
    draw(fx, 3);
    assert_int_equal(tally_stream_marker_end(fx->stream, results, 0), TALLY_OK);
    engine_fixture_submit(fx);
    assert_int_equal(clock_after(fx), scoped);
    tally_results_release(results);
}

static void a_scope_open_across_submissions_counts_the_work_of_both(void **state)
{
    struct engine_fixture *fx = *state;
    tally_results *results = ia_vertices_results(fx->device, 1);
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 0), TALLY_OK);
    draw(fx, 2);
    engine_fixture_submit(fx);
    draw(fx, 5);
    assert_int_equal(tally_stream_marker_end(fx->stream, results, 0), TALLY_OK);
    engine_fixture_submit(fx);
    assert_int_equal(ia_vertices(results, 0), 7 * 300);
    tally_results_release(results);
}

static void a_scope_of_another_context_counts_only_its_own_work(void **state)
{
    struct engine_fixture *fx = *state;
    tally_context *other_context;
    tally_stream *other;
    assert_int_equal(tally_context_create(fx->device, "other", &other_context), TALLY_OK);
    assert_int_equal(tally_stream_create(other_context, &other), TALLY_OK);
    tally_results *results = ia_vertices_results(fx->device, 1);
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 0), TALLY_OK);
    draw(fx, 1);
    engine_fixture_submit(fx);
    /* The other context's work runs while the scope is open, simulated and
     * counted to its own context only. */
    assert_int_equal(tally_stream_draw(other, &triangles), TALLY_OK);
    assert_int_equal(tally_submit_stream(fx->device, other, 0, "submit", NULL), TALLY_OK);
    draw(fx, 1);
    assert_int_equal(tally_stream_marker_end(fx->stream, results, 0), TALLY_OK);
    engine_fixture_submit(fx);
    assert_int_equal(ia_vertices(results, 0), 2 * 300);
    tally_results_release(results);
    tally_stream_destroy(other);
    tally_context_destroy(other_context);
}

static void a_released_results_object_with_an_open_scope_stops_listening(void **state)
{
    struct engine_fixture *fx = *state;
    tally_results *results = ia_vertices_results(fx->device, 1);
    assert_int_equal(tally_stream_marker_begin(fx->stream, results, 0), TALLY_OK);
    draw(fx, 1);
    engine_fixture_submit(fx); /* consumed: the stream holds the results no more */
    uint64_t open = clock_after(fx);
    assert_true(open > 0);
    tally_results_release(results);
    draw(fx, 100);
    engine_fixture_submit(fx);
    assert_int_equal(clock_after(fx), open);
}

static void a_timeline_reader_that_starts_later_sees_only_later_work(void **state)
{
    struct engine_fixture *fx = *state;
    draw(fx, 4);
    engine_fixture_submit(fx);
    assert_false(tally_device_listening(fx->device));
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 1024, &sub), TALLY_OK);
    assert_true(tally_device_listening(fx->device));
    draw(fx, 3);
    engine_fixture_submit(fx);
    tally_event events[1024];
    uint32_t count = 0, draws = 0;
    assert_int_equal(tally_timeline_read(sub, events, 1024, &count, NULL), TALLY_OK);
    for (uint32_t i = 0; i < count; i++)
        draws += events[i].kind == TALLY_EVENT_KIND_DRAW && events[i].type == TALLY_EVENT_BEGIN;
    assert_int_equal(draws, 3);
    assert_true(clock_after(fx) > 0);

    /* Paused, it listens no more. */
    tally_timeline_set_paused(sub, true);
    assert_false(tally_device_listening(fx->device));
    uint64_t paused = clock_after(fx);
    draw(fx, 3);
    engine_fixture_submit(fx);
    assert_int_equal(clock_after(fx), paused);
    tally_timeline_set_paused(sub, false);
    assert_true(tally_device_listening(fx->device));
    tally_timeline_unsubscribe(sub);
    assert_false(tally_device_listening(fx->device));
}

static void a_sampler_listens(void **state)
{
    struct engine_fixture *fx = *state;
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(fx->device, 1000000, 16, &sampler), TALLY_OK);
    assert_true(tally_stream_observed(fx->stream));
    assert_true(tally_device_listening(fx->device));
    assert_true(tally_listening_now(tally_device_listeners(fx->device)));
    draw(fx, 3);
    engine_fixture_submit(fx);
    assert_true(clock_after(fx) > 0);
    tally_sampler_close(sampler);
    assert_false(tally_stream_observed(fx->stream));
    assert_false(tally_device_listening(fx->device));
    uint64_t closed = clock_after(fx);
    draw(fx, 3);
    engine_fixture_submit(fx);
    assert_int_equal(clock_after(fx), closed);
}

/* A device writing a report to a new file of /tmp, named in path. */
static tally_device *open_reporting(char path[static 32])
{
    strcpy(path, "/tmp/tally_listening_XXXXXX.csv");
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL, .report_path = path};
    tally_device *device = NULL;
    assert_int_equal(tally_device_open(&options, &device, NULL, 0), TALLY_OK);
    return device;
}

static void a_report_listens(void **state)
{
    (void)state;
    char path[32];
    struct engine_fixture fx = {.device = open_reporting(path)};
    assert_int_equal(tally_context_create(fx.device, "test", &fx.context), TALLY_OK);
    assert_int_equal(tally_stream_create(fx.context, &fx.stream), TALLY_OK);
    assert_true(tally_stream_observed(fx.stream));
    assert_true(tally_device_listening(fx.device));
    draw(&fx, 3);
    engine_fixture_submit(&fx);
    assert_true(clock_after(&fx) > 0);
    engine_fixture_close(&fx);
    unlink(path);
}

/* A door may still hold the listeners when the device closes (a thread
 * drawing while another exits): they read "nobody" from then on, and stay
 * readable (ASan: no use after free). */
static void the_listeners_outlive_their_device(void **state)
{
    (void)state;
    char path[32];
    tally_device *device = open_reporting(path);
    const tally_listeners *listeners = tally_device_listeners(device);
    assert_true(tally_listening_now(listeners));
    tally_device_close(device);
    assert_false(tally_listening_now(listeners));
    assert_false(tally_listening_now(tally_device_listeners(NULL)));
    unlink(path);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(unobserved_work_is_not_simulated, engine_fixture_setup,
                                        engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_scope_sees_the_work_after_it_begins, engine_fixture_setup,
                                        engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_stream_is_observed_while_a_scope_it_recorded_is_open,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_scope_open_across_submissions_counts_the_work_of_both,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_scope_of_another_context_counts_only_its_own_work,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(
            a_released_results_object_with_an_open_scope_stops_listening, engine_fixture_setup,
            engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_timeline_reader_that_starts_later_sees_only_later_work,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_sampler_listens, engine_fixture_setup,
                                        engine_fixture_teardown),
        cmocka_unit_test(a_report_listens),
        cmocka_unit_test(the_listeners_outlive_their_device),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
