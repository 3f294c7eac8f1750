/* Pending programs (tally_program_create_pending): a stream binds one at
 * once, the queue holds back what is bound to it until another thread
 * completes it, and then counts with the completed profile. Expected
 * values: groups x local size invocations, x the profile's ALU count. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>

#include "fixture.h"

enum { COUNTERS = 2 }; /* CsInvocations, ShaderAluInstructions */

struct pending_fixture {
    struct engine_fixture engine;
    tally_results *results;
};

static int setup(void **state)
{
    struct pending_fixture *f = calloc(1, sizeof *f);
    if (!f || engine_fixture_open(&f->engine) != 0)
        return -1;
    const tally_catalogue *catalogue = tally_device_catalogue(f->engine.device);
    uint32_t counters[COUNTERS];
    if (tally_catalogue_find(catalogue, "CsInvocations", &counters[0]) != TALLY_OK ||
        tally_catalogue_find(catalogue, "ShaderAluInstructions", &counters[1]) != TALLY_OK ||
        tally_results_create(f->engine.device, counters, COUNTERS, 1, &f->results) != TALLY_OK)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct pending_fixture *f = *state;
    tally_results_release(f->results);
    engine_fixture_close(&f->engine);
    free(f);
    return 0;
}

/* A compute stage of local size 4x2x1 and 10 ALU instructions. */
static tally_program_desc compute_profile(void)
{
    tally_program_desc desc = {0};
    desc.stages[TALLY_STAGE_COMPUTE].present = true;
    desc.stages[TALLY_STAGE_COMPUTE].mix.alu = 10;
    desc.stages[TALLY_STAGE_COMPUTE].local_size[0] = 4;
    desc.stages[TALLY_STAGE_COMPUTE].local_size[1] = 2;
    desc.stages[TALLY_STAGE_COMPUTE].local_size[2] = 1;
    return desc;
}

struct completion {
    tally_program *program;
    tally_status status;
};

static void *complete_later(void *arg)
{
    struct completion *c = arg;
    tally_program_desc desc = compute_profile();
    c->status = tally_program_complete(c->program, &desc);
    return NULL;
}

static void work_bound_to_it_waits_and_counts_the_completed_profile(void **state)
{
    struct pending_fixture *f = *state;
    tally_program *program = NULL;
    assert_int_equal(tally_program_create_pending(f->engine.device, "pending", &program), TALLY_OK);
    tally_stream *s = f->engine.stream;
    tally_dispatch dispatch = {.api_name = "dispatch", .groups = {3, 1, 1}};
    assert_int_equal(tally_stream_bind_program(s, program), TALLY_OK);
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_dispatch(s, &dispatch), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    tally_submission sub = {
        .streams = &s, .stream_count = 1, .flags = TALLY_SUBMIT_CONSUME, .api_name = "submit"};
    uint64_t seqno = 0;
    assert_int_equal(tally_submit(f->engine.device, &sub, &seqno), TALLY_OK);
    /* The queue cannot run the dispatch before the profile exists. */
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, 50 * 1000 * 1000), TALLY_TIMEOUT);
    struct completion c = {.program = program};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, complete_later, &c), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(c.status, TALLY_OK);
    assert_int_equal(tally_wait_seqno(f->engine.device, seqno, UINT64_MAX), TALLY_OK);
    tally_value v[COUNTERS] = {0};
    assert_int_equal(tally_results_get(f->results, 0, v, COUNTERS, NULL), TALLY_OK);
    assert_int_equal(v[0].u64, 3 * 4 * 2);
    assert_int_equal(v[1].u64, 3 * 4 * 2 * 10);
    tally_program_release(program);
}

static void a_program_completes_once(void **state)
{
    struct pending_fixture *f = *state;
    tally_program_desc desc = compute_profile();
    tally_program *pending = NULL, *ready = NULL;
    assert_int_equal(tally_program_create_pending(f->engine.device, NULL, &pending), TALLY_OK);
    assert_int_equal(tally_program_complete(pending, &desc), TALLY_OK);
    assert_int_equal(tally_program_complete(pending, &desc), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_program_create(f->engine.device, &desc, &ready), TALLY_OK);
    assert_int_equal(tally_program_complete(ready, &desc), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_program_complete(NULL, &desc), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_program_complete(pending, NULL), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_program_create_pending(NULL, NULL, &pending),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_program_create_pending(f->engine.device, NULL, NULL),
                     TALLY_ERROR_INVALID_ARGUMENT);
    tally_program_release(pending);
    tally_program_release(ready);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(work_bound_to_it_waits_and_counts_the_completed_profile,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_program_completes_once, setup, teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
