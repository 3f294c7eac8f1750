/* The queue: concurrent submitters lose, mix up or duplicate nothing; waits
 * and reads report the documented statuses; a stream can be reset while its
 * submission is pending; a stopped device refuses work and ends every wait,
 * a reader's wait on the GPU at the stop's deadline. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

#define THREADS 4
#define SUBMISSIONS 200

static uint32_t ia_vertices_index(tally_device *device)
{
    uint32_t index = 0;
    assert_int_equal(tally_catalogue_find(tally_device_catalogue(device), "IaVertices", &index),
                     TALLY_OK);
    return index;
}

struct submitter {
    tally_device *device;
    uint32_t vertices;
    tally_results *results;
    int failures; /* statuses other than OK seen by the thread */
};

static void *submit_many(void *arg)
{
    struct submitter *s = arg;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    if (tally_context_create(s->device, "thread", &context) != TALLY_OK ||
        tally_stream_create(context, &stream) != TALLY_OK) {
        s->failures++;
        return NULL;
    }
    tally_draw draw = {.api_name = "draw",
                       .count = s->vertices,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_POINT_LIST};
    tally_submission sub = {
        .streams = &stream, .stream_count = 1, .flags = TALLY_SUBMIT_CONSUME, .api_name = "submit"};
    for (uint32_t i = 0; i < SUBMISSIONS; i++) {
        s->failures += tally_stream_marker_begin(stream, s->results, i) != TALLY_OK;
        s->failures += tally_stream_draw(stream, &draw) != TALLY_OK;
        s->failures += tally_stream_marker_end(stream, s->results, i) != TALLY_OK;
        s->failures += tally_submit(s->device, &sub, NULL) != TALLY_OK;
    }
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    return NULL;
}

static void concurrent_submitters_each_get_exactly_their_own_values(void **state)
{
    (void)state;
    tally_device *device = open_virtual_device();
    uint32_t ia = ia_vertices_index(device);
    struct submitter s[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        s[t] = (struct submitter){.device = device, .vertices = 100u + 37u * (uint32_t)t};
        assert_int_equal(tally_results_create(device, &ia, 1, SUBMISSIONS, &s[t].results),
                         TALLY_OK);
    }
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&threads[t], NULL, submit_many, &s[t]), 0);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(s[t].failures, 0);
        for (uint32_t i = 0; i < SUBMISSIONS; i++) {
            tally_value v = {0};
            assert_int_equal(tally_results_get(s[t].results, i, &v, 1, NULL), TALLY_OK);
            if (v.u64 != s[t].vertices)
                fail_msg("thread %d slot %u holds %llu, expected %u", t, i,
                         (unsigned long long)v.u64, s[t].vertices);
        }
        tally_results_release(s[t].results);
    }
    assert_int_equal(tally_completed_seqno(device), THREADS * SUBMISSIONS);
    tally_device_close(device);
}

struct single {
    struct engine_fixture engine;
    tally_results *results;
};

static int setup(void **state)
{
    struct single *f = calloc(1, sizeof *f);
    if (!f || engine_fixture_open(&f->engine) != 0)
        return -1;
    uint32_t ia = 0;
    if (tally_catalogue_find(tally_device_catalogue(f->engine.device), "IaVertices", &ia) !=
            TALLY_OK ||
        tally_results_create(f->engine.device, &ia, 1, 4, &f->results) != TALLY_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct single *f = *state;
    tally_results_release(f->results);
    engine_fixture_close(&f->engine);
    free(f);
    return 0;
}

/* A reader whose GPU finishes when the test opens the gate: the queue thread
 * holds the submission in its wait until then. */
struct gated_reader {
    atomic_int waits, releases;
    atomic_bool open;
};

static void wait_for_the_gate(void *user)
{
    struct gated_reader *r = user;
    atomic_fetch_add(&r->waits, 1);
    while (!atomic_load(&r->open))
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
}

static bool read_nothing(void *user, uint64_t key, tally_measurement *measurement)
{
    (void)user, (void)key, (void)measurement;
    return false;
}

static void count_gated_release(void *user)
{
    atomic_fetch_add(&((struct gated_reader *)user)->releases, 1);
}

/* One draw, submitted with reader as its measurement reader; its seqno. */
static uint64_t submit_a_draw_read_by(struct single *f, tally_measurement_reader *reader)
{
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_draw(f->engine.stream, &draw), TALLY_OK);
    tally_submission sub = {.streams = &f->engine.stream,
                            .stream_count = 1,
                            .api_name = "submit",
                            .measurement_reader = reader};
    uint64_t seqno = 0;
    assert_int_equal(tally_submit(f->engine.device, &sub, &seqno), TALLY_OK);
    return seqno;
}

/* A zero timeout polls: TIMEOUT while the submission is held on the queue
 * thread (it cannot have completed), OK once it has. */
static void a_zero_timeout_wait_times_out_on_pending_work_and_is_ok_on_done_work(void **state)
{
    struct single *f = *state;
    struct gated_reader r = {0};
    tally_measurement_reader reader = {wait_for_the_gate, read_nothing, count_gated_release, &r};
    uint64_t seqno = submit_a_draw_read_by(f, &reader);
    while (atomic_load(&r.waits) == 0) /* the queue thread holds the submission */
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, 0), TALLY_TIMEOUT);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, 20000000), TALLY_TIMEOUT);
    assert_true(tally_completed_seqno(f->engine.device) < seqno);
    atomic_store(&r.open, true);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, UINT64_MAX), TALLY_OK);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, 0), TALLY_OK);
    assert_int_equal(tally_completed_seqno(f->engine.device), seqno);
    assert_int_equal(atomic_load(&r.releases), 1);
}

static void waiting_on_a_never_submitted_seqno_is_an_invalid_argument(void **state)
{
    struct single *f = *state;
    tally_submission sub = {.streams = &f->engine.stream, .stream_count = 1, .api_name = "submit"};
    uint64_t seqno = 0;
    assert_int_equal(tally_submit(f->engine.device, &sub, &seqno), TALLY_OK);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno + 1, 0),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno + 1000, 1000000),
                     TALLY_ERROR_INVALID_ARGUMENT);
}

static void seqnos_increase_by_one_per_submission(void **state)
{
    struct single *f = *state;
    tally_submission sub = {.streams = &f->engine.stream, .stream_count = 1, .api_name = "submit"};
    uint64_t first = 0, second = 0;
    assert_int_equal(tally_submit(f->engine.device, &sub, &first), TALLY_OK);
    assert_int_equal(tally_submit(f->engine.device, &sub, &second), TALLY_OK);
    assert_int_equal(second, first + 1);
}

static void waiting_on_a_slot_without_an_end_marker_times_out(void **state)
{
    struct single *f = *state;
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_marker_begin(f->engine.stream, f->results, 1), TALLY_OK);
    assert_int_equal(tally_stream_draw(f->engine.stream, &draw), TALLY_OK);
    tally_submission sub = {.streams = &f->engine.stream, .stream_count = 1, .api_name = "submit"};
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(f->engine.device), TALLY_OK);
    assert_int_equal(tally_results_wait(f->results, 1, 20000000), TALLY_TIMEOUT);
}

static void reading_an_unexecuted_slot_is_not_ready(void **state)
{
    struct single *f = *state;
    tally_value v = {0};
    assert_int_equal(tally_results_get(f->results, 2, &v, 1, NULL), TALLY_NOT_READY);
    uint64_t raw[64];
    assert_int_equal(tally_results_get_raw(f->results, 2, raw, 64), TALLY_NOT_READY);
}

static void resetting_a_stream_after_submit_does_not_disturb_the_pending_execution(void **state)
{
    struct single *f = *state;
    tally_draw draw = {.api_name = "draw",
                       .count = 77,
                       .instance_count = 3,
                       .topology = TALLY_TOPOLOGY_POINT_LIST};
    assert_int_equal(tally_stream_marker_begin(f->engine.stream, f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_draw(f->engine.stream, &draw), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(f->engine.stream, f->results, 0), TALLY_OK);
    tally_submission sub = {.streams = &f->engine.stream, .stream_count = 1, .api_name = "submit"};
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_stream_reset(f->engine.stream), TALLY_OK);
    assert_int_equal(tally_stream_command_count(f->engine.stream), 0);
    tally_draw other = {
        .api_name = "draw", .count = 5, .instance_count = 1, .topology = TALLY_TOPOLOGY_POINT_LIST};
    assert_int_equal(tally_stream_draw(f->engine.stream, &other), TALLY_OK);
    assert_int_equal(tally_results_wait(f->results, 0, UINT64_MAX), TALLY_OK);
    tally_value v = {0};
    assert_int_equal(tally_results_get(f->results, 0, &v, 1, NULL), TALLY_OK);
    assert_int_equal(v.u64, 231);
}

static void a_stopped_device_refuses_submissions_and_ends_waits(void **state)
{
    struct single *f = *state;
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_marker_begin(f->engine.stream, f->results, 3), TALLY_OK);
    assert_int_equal(tally_stream_draw(f->engine.stream, &draw), TALLY_OK);
    tally_submission sub = {.streams = &f->engine.stream, .stream_count = 1, .api_name = "submit"};
    uint64_t seqno = 0;
    assert_int_equal(tally_submit(f->engine.device, &sub, &seqno), TALLY_OK);
    assert_int_equal(tally_device_stop(f->engine.device, UINT64_MAX), TALLY_OK);
    assert_int_equal(tally_completed_seqno(f->engine.device), seqno); /* executed first */
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_ERROR_INVALID_STATE);
    /* The slot never ends: a wait without a limit returns all the same. */
    assert_int_equal(tally_results_wait(f->results, 3, UINT64_MAX), TALLY_TIMEOUT);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, UINT64_MAX), TALLY_OK);
    assert_int_equal(tally_device_stop(f->engine.device, UINT64_MAX),
                     TALLY_OK); /* again: nothing */
}

/* A reader whose GPU never finishes: its wait ends only at the deadline. */
struct stuck_reader {
    tally_device *device;
    atomic_int waits, releases;
};

static void wait_until_the_deadline(void *user)
{
    struct stuck_reader *r = user;
    atomic_fetch_add(&r->waits, 1);
    for (;;) {
        uint64_t deadline = tally_device_wait_deadline_ns(r->device);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (deadline != UINT64_MAX &&
            (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec >= deadline)
            return;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

static void count_release(void *user)
{
    atomic_fetch_add(&((struct stuck_reader *)user)->releases, 1);
}

static void stopping_ends_a_readers_wait_on_the_gpu_by_the_deadline(void **state)
{
    struct single *f = *state;
    struct stuck_reader r = {.device = f->engine.device};
    tally_measurement_reader reader = {wait_until_the_deadline, read_nothing, count_release, &r};
    submit_a_draw_read_by(f, &reader);
    while (atomic_load(&r.waits) == 0) /* the queue thread waits already */
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    assert_int_equal(tally_device_wait_deadline_ns(f->engine.device), UINT64_MAX);
    struct timespec before, after;
    clock_gettime(CLOCK_MONOTONIC, &before);
    assert_int_equal(tally_device_stop(f->engine.device, 100000000), TALLY_OK);
    clock_gettime(CLOCK_MONOTONIC, &after);
    double seconds =
        (double)(after.tv_sec - before.tv_sec) + (after.tv_nsec - before.tv_nsec) / 1e9;
    assert_true(seconds >= 0.09 && seconds < 10);
    assert_int_equal(atomic_load(&r.releases), 1);
    assert_int_equal(tally_completed_seqno(f->engine.device), 1);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(concurrent_submitters_each_get_exactly_their_own_values),
        cmocka_unit_test_setup_teardown(
            a_zero_timeout_wait_times_out_on_pending_work_and_is_ok_on_done_work, setup, teardown),
        cmocka_unit_test_setup_teardown(waiting_on_a_never_submitted_seqno_is_an_invalid_argument,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(seqnos_increase_by_one_per_submission, setup, teardown),
        cmocka_unit_test_setup_teardown(waiting_on_a_slot_without_an_end_marker_times_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reading_an_unexecuted_slot_is_not_ready, setup, teardown),
        cmocka_unit_test_setup_teardown(
            resetting_a_stream_after_submit_does_not_disturb_the_pending_execution, setup,
            teardown),
        cmocka_unit_test_setup_teardown(a_stopped_device_refuses_submissions_and_ends_waits, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(stopping_ends_a_readers_wait_on_the_gpu_by_the_deadline,
                                        setup, teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
