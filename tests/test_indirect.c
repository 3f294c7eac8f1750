/* Indirect commands (tally_stream_indirect): the queue asks the submission's
 * reader for each command's records after waiting for it, runs one draw or
 * dispatch per record with the record's values, and releases the reader once
 * per submission. The expected values are the records' own. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

enum { COUNTERS = 3 }; /* DrawCalls, IaVertices, CsInvocations */

/* Records in memory as a front end would have read them back. */
struct fake_reader {
    uint32_t words[64];
    uint32_t count, stride;
    uint64_t known_key; /* read() answers this key only */
    int waits, reads, releases;
    int reads_before_wait; /* the reader was asked before it waited */
};

static void fake_wait(void *user)
{
    ((struct fake_reader *)user)->waits++;
}

static bool fake_read(void *user, uint64_t key, tally_indirect_records *records)
{
    struct fake_reader *f = user;
    f->reads++;
    f->reads_before_wait += f->waits == 0;
    if (key != f->known_key)
        return false;
    *records = (tally_indirect_records){f->words, f->count, f->stride};
    return true;
}

static void fake_release(void *user)
{
    ((struct fake_reader *)user)->releases++;
}

struct indirect_fixture {
    struct engine_fixture engine;
    tally_results *results; /* DrawCalls, IaVertices, CsInvocations */
    struct fake_reader fake;
    tally_indirect_reader reader;
};

static int setup(void **state)
{
    struct indirect_fixture *f = calloc(1, sizeof *f);
    if (!f || engine_fixture_open(&f->engine) != 0)
        return -1;
    const tally_catalogue *catalogue = tally_device_catalogue(f->engine.device);
    uint32_t counters[COUNTERS];
    if (tally_catalogue_find(catalogue, "DrawCalls", &counters[0]) != TALLY_OK ||
        tally_catalogue_find(catalogue, "IaVertices", &counters[1]) != TALLY_OK ||
        tally_catalogue_find(catalogue, "CsInvocations", &counters[2]) != TALLY_OK ||
        tally_results_create(f->engine.device, counters, COUNTERS, 4, &f->results) != TALLY_OK)
        return -1;
    f->fake.known_key = 7;
    f->reader = (tally_indirect_reader){fake_wait, fake_read, fake_release, &f->fake};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct indirect_fixture *f = *state;
    tally_results_release(f->results);
    engine_fixture_close(&f->engine);
    free(f);
    return 0;
}

/* Records one indirect command of `layout` and `key` between markers of slot 0, and submits it. */
static void run_one(struct indirect_fixture *f, tally_indirect_layout layout, uint64_t key,
                    const tally_indirect_reader *reader)
{
    tally_stream *s = f->engine.stream;
    tally_indirect command = {.api_name = "indirect",
                              .key = key,
                              .layout = layout,
                              .topology = TALLY_TOPOLOGY_POINT_LIST,
                              .index_size = 4};
    assert_int_equal(tally_stream_marker_begin(s, f->results, 0), TALLY_OK);
    assert_int_equal(tally_stream_indirect(s, &command), TALLY_OK);
    assert_int_equal(tally_stream_marker_end(s, f->results, 0), TALLY_OK);
    tally_submission sub = {.streams = &s,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME,
                            .api_name = "submit",
                            .indirect_reader = reader};
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(f->engine.device), TALLY_OK);
}

static void expect(struct indirect_fixture *f, uint64_t draws, uint64_t vertices,
                   uint64_t invocations)
{
    tally_value v[COUNTERS] = {0};
    assert_int_equal(tally_results_get(f->results, 0, v, COUNTERS, NULL), TALLY_OK);
    assert_int_equal(v[0].u64, draws);
    assert_int_equal(v[1].u64, vertices);
    assert_int_equal(v[2].u64, invocations);
}

/* Two draws 8 words apart: 5 vertices x 3 instances, then 7 x 1. */
static void draws_run_once_per_record_with_its_values(void **state)
{
    struct indirect_fixture *f = *state;
    const uint32_t records[] = {5, 3, 0, 0, 0, 0, 0, 0, 7, 1, 2, 0};
    memcpy(f->fake.words, records, sizeof(records));
    f->fake.count = 2;
    f->fake.stride = 32;
    run_one(f, TALLY_INDIRECT_DRAW, 7, &f->reader);
    expect(f, 2, 5 * 3 + 7, 0);
    assert_int_equal(f->fake.waits, 1);
    assert_int_equal(f->fake.reads, 1);
    assert_int_equal(f->fake.reads_before_wait, 0);
    assert_int_equal(f->fake.releases, 1);
}

/* Indexed records have five words: the instance count is the second. */
static void indexed_records_have_their_own_layout(void **state)
{
    struct indirect_fixture *f = *state;
    const uint32_t record[] = {12, 4, 0, (uint32_t)-3, 1};
    memcpy(f->fake.words, record, sizeof(record));
    f->fake.count = 1;
    run_one(f, TALLY_INDIRECT_DRAW_INDEXED, 7, &f->reader);
    expect(f, 1, 12 * 4, 0);
}

/* A dispatch of 2x3x4 groups with no program bound: a local size of 1. */
static void a_dispatch_record_gives_its_groups(void **state)
{
    struct indirect_fixture *f = *state;
    const uint32_t record[] = {2, 3, 4};
    memcpy(f->fake.words, record, sizeof(record));
    f->fake.count = 1;
    run_one(f, TALLY_INDIRECT_DISPATCH, 7, &f->reader);
    expect(f, 0, 0, 2 * 3 * 4);
}

/* A count of zero (an indirect-count command whose count is 0) runs nothing. */
static void zero_records_run_nothing(void **state)
{
    struct indirect_fixture *f = *state;
    f->fake.count = 0;
    run_one(f, TALLY_INDIRECT_DRAW, 7, &f->reader);
    expect(f, 0, 0, 0);
}

/* Unknown parameters still show the API call: one draw of no work. */
static void without_records_the_command_is_one_draw_of_no_work(void **state)
{
    struct indirect_fixture *f = *state;
    run_one(f, TALLY_INDIRECT_DRAW, 8, &f->reader); /* a key the reader does not know */
    expect(f, 1, 0, 0);
    assert_int_equal(f->fake.releases, 1);
    run_one(f, TALLY_INDIRECT_DRAW, 7, NULL); /* no reader at all */
    expect(f, 1, 0, 0);
    assert_int_equal(f->fake.reads, 1);
}

/* Records closer than their size overlap: the front end's mistake, run as nothing. */
static void overlapping_records_run_nothing(void **state)
{
    struct indirect_fixture *f = *state;
    f->fake.words[0] = 5;
    f->fake.words[1] = 1;
    f->fake.count = 2;
    f->fake.stride = 8;
    run_one(f, TALLY_INDIRECT_DRAW, 7, &f->reader);
    expect(f, 0, 0, 0);
}

static void bad_input_is_refused(void **state)
{
    struct indirect_fixture *f = *state;
    tally_stream *s = f->engine.stream;
    tally_indirect bad_layout = {.api_name = "x", .layout = TALLY_INDIRECT_LAYOUT_COUNT};
    tally_indirect bad_topology = {.api_name = "x", .topology = TALLY_TOPOLOGY_COUNT};
    tally_indirect bad_index_size = {.api_name = "x", .layout = TALLY_INDIRECT_DRAW_INDEXED};
    assert_int_equal(tally_stream_indirect(s, &bad_layout), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_stream_indirect(s, &bad_topology), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_stream_indirect(s, &bad_index_size), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_stream_indirect(NULL, &bad_layout), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_stream_command_count(s), 0);
    tally_indirect_reader no_read = {.release = fake_release, .user = &f->fake};
    tally_submission sub = {
        .streams = &s, .stream_count = 1, .api_name = "submit", .indirect_reader = &no_read};
    assert_int_equal(tally_submit(f->engine.device, &sub, NULL), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(f->fake.releases, 0); /* a refused submission releases nothing */
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(draws_run_once_per_record_with_its_values, setup, teardown),
        cmocka_unit_test_setup_teardown(indexed_records_have_their_own_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(a_dispatch_record_gives_its_groups, setup, teardown),
        cmocka_unit_test_setup_teardown(zero_records_run_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(without_records_the_command_is_one_draw_of_no_work, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(overlapping_records_run_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_input_is_refused, setup, teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
