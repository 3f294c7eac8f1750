/* Held measured submissions (engine/door/tally_held.h) under a door of the
 * test's own: a fake GPU whose commands complete when the test says so.
 * What reaches the engine is read back from its timeline: under the driver
 * backend on the virtual clock, each draw's span on the queue lasts exactly
 * its measured time, and a draw without one lasts 0. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "fixture.h"
#include "tally_held.h"

enum { MAX_COMMANDS = 16 };

/* The fake GPU: every command the test recorded, its measured duration,
 * whether it completed, and how often the door read it. */
struct fake_gpu {
    uint64_t duration_ns[MAX_COMMANDS];
    bool completed[MAX_COMMANDS];
    uint32_t reads[MAX_COMMANDS];
    uint32_t recorded;
    uint32_t released; /* payloads given back to the door */
    uint32_t readied;  /* polls that had something to submit */
};

struct fixture {
    struct engine_fixture engine;
    tally_subscription *timeline;
    struct fake_gpu gpu;
    tally_held_queue held;
};

/* The door's part of a recording: where its commands start on the fake GPU. */
struct payload {
    uint32_t first;
};

static bool read_completed(void *user, tally_held *h, bool force)
{
    struct fake_gpu *gpu = user;
    const struct payload *p = h->payload;
    for (; h->read < h->count; h->read++) {
        uint32_t command = p->first + h->read;
        if (!force && !gpu->completed[command])
            return false;
        gpu->reads[command]++;
        h->values[h->read] = (tally_measurement){.valid = TALLY_MEASURE_TIME,
                                                 .begin_ns = 1000,
                                                 .end_ns = 1000 + gpu->duration_ns[command]};
    }
    return true;
}

static void count_ready(void *user)
{
    ((struct fake_gpu *)user)->readied++;
}

static uint64_t began_unknown(void *user, tally_held *h)
{
    (void)user, (void)h;
    return 0;
}

static void free_payload(void *user, tally_held *h)
{
    ((struct fake_gpu *)user)->released++;
    free(h->payload);
}

static const tally_held_door fake_door = {.read = read_completed,
                                          .ready = count_ready,
                                          .prepare = began_unknown,
                                          .release = free_payload};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof *f);
    tally_device_options options = {.backend = "driver", .clock = TALLY_CLOCK_VIRTUAL};
    if (!f || tally_device_open(&options, &f->engine.device, NULL, 0) != TALLY_OK ||
        tally_context_create(f->engine.device, "test", &f->engine.context) != TALLY_OK ||
        tally_stream_create(f->engine.context, &f->engine.stream) != TALLY_OK ||
        tally_timeline_subscribe(f->engine.device, 4096, &f->timeline) != TALLY_OK)
        return -1;
    f->held = (tally_held_queue){.door = &fake_door, .user = &f->gpu};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tally_timeline_unsubscribe(f->timeline);
    engine_fixture_close(&f->engine);
    free(f);
    return 0;
}

/* Records one measured draw per duration and holds the recording. */
static void hold_draws(struct fixture *f, const uint64_t *durations, uint32_t count)
{
    struct payload *p = malloc(sizeof *p);
    assert_non_null(p);
    p->first = f->gpu.recorded;
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    for (uint32_t i = 0; i < count; i++) {
        assert_int_equal(tally_stream_measure(f->engine.stream, i), TALLY_OK);
        assert_int_equal(tally_stream_draw(f->engine.stream, &draw), TALLY_OK);
        f->gpu.duration_ns[f->gpu.recorded++] = durations[i];
    }
    tally_stream *held = f->engine.stream;
    assert_non_null(tally_held_push(&f->held, f->engine.context, &f->engine.stream, "submit", 0,
                                    count, true, p));
    assert_ptr_not_equal(f->engine.stream, held); /* the door records on into a fresh one */
}

/* The engine executed exactly `count` draws, lasting `expected`, in order. */
static void assert_executed(struct fixture *f, const uint64_t *expected, uint32_t count)
{
    monotonic_span spans[MAX_COMMANDS];
    uint32_t n = queue_spans_monotonic(f->engine.device, f->timeline, 1u << TALLY_EVENT_KIND_DRAW,
                                       spans, MAX_COMMANDS);
    assert_int_equal(n, count);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(spans[i].end - spans[i].begin, expected[i]);
}

static void a_later_recording_read_first_waits_for_the_earlier_one(void **state)
{
    struct fixture *f = *state;
    hold_draws(f, (const uint64_t[]){100}, 1);
    hold_draws(f, (const uint64_t[]){200}, 1);
    f->gpu.completed[1] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 0);
    assert_executed(f, NULL, 0);
    assert_int_equal(tally_completed_seqno(f->engine.device), 0);
    assert_int_equal(f->gpu.readied, 0);

    f->gpu.completed[0] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 2); /* the second submission's seqno */
    assert_executed(f, (const uint64_t[]){100, 200}, 2);
    assert_true(tally_held_empty(&f->held));
    assert_int_equal(f->gpu.released, 2);
    assert_int_equal(f->gpu.readied, 1); /* once for the poll, not per submission */
}

static void a_reader_goes_on_from_where_it_stopped(void **state)
{
    struct fixture *f = *state;
    hold_draws(f, (const uint64_t[]){100, 200, 300}, 3);
    f->gpu.completed[0] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 0);
    f->gpu.completed[1] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 0);
    f->gpu.completed[2] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 1);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(f->gpu.reads[i], 1); /* none read again */
    assert_executed(f, (const uint64_t[]){100, 200, 300}, 3);
}

static void a_forced_poll_reads_what_has_not_completed(void **state)
{
    struct fixture *f = *state;
    hold_draws(f, (const uint64_t[]){100, 200}, 2);
    assert_int_equal(tally_held_poll(&f->held, true), 1);
    assert_executed(f, (const uint64_t[]){100, 200}, 2);
}

static void draining_submits_what_was_read_and_counts_the_rest_lost(void **state)
{
    struct fixture *f = *state;
    hold_draws(f, (const uint64_t[]){100, 200, 300}, 3);
    hold_draws(f, (const uint64_t[]){400, 500}, 2);
    f->gpu.completed[0] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 0);
    assert_int_equal(tally_held_drain(&f->held), 4); /* 2 of the first, both of the second */
    assert_true(tally_held_empty(&f->held));
    assert_int_equal(f->gpu.released, 2);
    /* An unread draw takes no time. */
    assert_executed(f, (const uint64_t[]){100, 0, 0, 0, 0}, 5);
}

static void a_discarded_recording_never_reaches_the_engine(void **state)
{
    struct fixture *f = *state;
    hold_draws(f, (const uint64_t[]){100}, 1);
    hold_draws(f, (const uint64_t[]){200}, 1);
    hold_draws(f, (const uint64_t[]){300}, 1);
    tally_held_discard(&f->held, f->held.first->next); /* within */
    tally_held_discard(&f->held, f->held.last);        /* at the end */
    assert_int_equal(f->gpu.released, 2);
    hold_draws(f, (const uint64_t[]){400}, 1);
    for (uint32_t i = 0; i < 4; i++)
        f->gpu.completed[i] = true;
    assert_int_equal(tally_held_poll(&f->held, false), 2);
    assert_executed(f, (const uint64_t[]){100, 400}, 2);
}

static void a_moved_queue_keeps_its_order_behind_the_other(void **state)
{
    struct fixture *f = *state;
    hold_draws(f, (const uint64_t[]){100}, 1);
    tally_held_queue mine = f->held;
    f->held = (tally_held_queue){.door = &fake_door, .user = &f->gpu};
    hold_draws(f, (const uint64_t[]){200}, 1);
    tally_held_move(&mine, &f->held);
    assert_true(tally_held_empty(&f->held));
    f->gpu.completed[0] = f->gpu.completed[1] = true;
    assert_int_equal(tally_held_poll(&mine, false), 2);
    assert_executed(f, (const uint64_t[]){100, 200}, 2);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_later_recording_read_first_waits_for_the_earlier_one,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_reader_goes_on_from_where_it_stopped, setup, teardown),
        cmocka_unit_test_setup_teardown(a_forced_poll_reads_what_has_not_completed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(draining_submits_what_was_read_and_counts_the_rest_lost,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_discarded_recording_never_reaches_the_engine, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_moved_queue_keeps_its_order_behind_the_other, setup,
                                        teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("held_submissions", tests, NULL, NULL);
}
