/* The report's hand-off to its writer thread (engine/report_ring.h): a
 * producer faster than the sink blocks at the ring's bound, memory stays flat
 * and every row arrives once, in order, with its strings and values. A
 * white-box test: it links the ring's own source. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "report_ring.h"
#include "tally/tally.h"

#ifndef RING_TEST_ROWS
#define RING_TEST_ROWS 10000000u
#endif

enum { VALUES = 3, LABEL_EVERY = 100000 };

struct sink_state {
    report_ring *ring;
    uint64_t next;     /* the sequence expected */
    uint64_t mismatch; /* rows that were not what was pushed, 0 expected */
    uint64_t fail_at;  /* returns an error at this sequence; 0: never */
};

static void label_of(uint64_t sequence, char *out, size_t size)
{
    snprintf(out, size, "frame %llu/pass", (unsigned long long)(sequence / LABEL_EVERY));
}

/* The record fields a row shares with its neighbours, as push_rows makes
 * them, changing at different rates. */
static uint64_t frame_of(uint64_t sequence)
{
    return sequence / 7;
}
static uint64_t submission_of(uint64_t sequence)
{
    return sequence / 1000;
}
static uint32_t context_of(uint64_t sequence)
{
    return 1 + (uint32_t)(sequence / 333 % 3);
}
static const char *kind_of(uint64_t sequence)
{
    return sequence % 50 < 45 ? "draw" : "dispatch";
}

static bool row_is_as_pushed(const tally_command_record *row, const tally_value *values)
{
    uint64_t i = row->sequence;
    char label[64];
    label_of(i, label, sizeof label);
    return values[0].u64 == i && values[1].f64 == 0.5 && values[2].u64 == ~i &&
           row->begin_ns == 2 * i && row->end_ns == 2 * i + 1 && strcmp(row->label, label) == 0 &&
           strcmp(row->context_api, "vulkan") == 0 && strcmp(row->kind, kind_of(i)) == 0 &&
           row->frame == frame_of(i) && row->submission == submission_of(i) &&
           row->stream == i / 5000 && row->context == context_of(i) &&
           strcmp(row->api_name, "vkCmdDraw") == 0;
}

static tally_status checking_sink(void *user, const tally_command_record *row,
                                  const tally_value *values)
{
    struct sink_state *s = user;
    if (s->next == 1) {
        /* Hold the first row until the producer has filled every block and
         * waits: the bound is reached on every run, not by luck of timing. */
        report_ring_stats stats;
        do {
            sched_yield();
            report_ring_get_stats(s->ring, &stats);
        } while (stats.stalls == 0);
    }
    s->mismatch += row->sequence != s->next || !row_is_as_pushed(row, values);
    s->next++;
    if (s->fail_at && row->sequence == s->fail_at)
        return TALLY_ERROR_IO;
    return TALLY_OK;
}

static long max_rss_kib(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

static void push_rows(report_ring *ring, uint64_t first, uint64_t count)
{
    char label[64] = "";
    tally_command_record record = {
        .api_name = "vkCmdDraw", .context_api = "vulkan", .label = label};
    for (uint64_t i = first; i < first + count; i++) {
        if (i == first || i % LABEL_EVERY == 0)
            label_of(i, label, sizeof label);
        record.kind = kind_of(i);
        record.context = context_of(i);
        record.frame = frame_of(i);
        record.submission = submission_of(i);
        record.stream = i / 5000;
        record.sequence = i;
        record.begin_ns = 2 * i;
        record.end_ns = 2 * i + 1;
        tally_value *values = report_ring_append(ring, &record);
        assert_non_null(values);
        values[0].u64 = i;
        values[1].f64 = 0.5;
        values[2].u64 = ~i;
    }
}

static void every_row_arrives_in_order_and_memory_stays_flat(void **state)
{
    (void)state;
    struct sink_state sink = {.next = 1};
    report_ring_limits limits = {.blocks = 4, .block_bytes = 64 * 1024};
    assert_int_equal(report_ring_open(VALUES,
                                      &(report_ring_sink){.row = checking_sink, .user = &sink},
                                      &limits, &sink.ring),
                     TALLY_OK);
    const uint64_t rows = RING_TEST_ROWS, warm = rows / 10;
    push_rows(sink.ring, 1, warm);
    long rss_warm = max_rss_kib();
    push_rows(sink.ring, 1 + warm, rows - warm);
    long rss_end = max_rss_kib();
    report_ring_stats stats;
    report_ring_get_stats(sink.ring, &stats);
    assert_int_equal(report_ring_close(sink.ring), TALLY_OK);

    assert_int_equal(sink.next - 1, rows); /* none lost, none twice */
    assert_int_equal(sink.mismatch, 0);
    assert_true(stats.stalls > 0); /* the producer did wait for the sink */
    assert_true(stats.blocks_made <= 4);
    /* Nine tenths of the rows later, the peak grew by less than a megabyte:
     * 10 M rows of 3 values would be over 800 MB if they were kept. */
    assert_true(rss_end - rss_warm < 1024);
}

static void a_sink_error_stops_the_sink_and_close_returns_it(void **state)
{
    (void)state;
    struct sink_state sink = {.next = 1, .fail_at = 5000};
    report_ring_limits limits = {.blocks = 2, .block_bytes = 16 * 1024};
    assert_int_equal(report_ring_open(VALUES,
                                      &(report_ring_sink){.row = checking_sink, .user = &sink},
                                      &limits, &sink.ring),
                     TALLY_OK);
    push_rows(sink.ring, 1, 20000); /* never blocks for ever on a failed sink */
    assert_int_equal(report_ring_close(sink.ring), TALLY_ERROR_IO);
    assert_int_equal(sink.next - 1, 5000);
}

static tally_status label_sink(void *user, const tally_command_record *row,
                               const tally_value *values)
{
    (void)values;
    size_t *length = user;
    *length = strlen(row->label);
    return TALLY_OK;
}

static void a_label_larger_than_a_block_is_cut_to_fit(void **state)
{
    (void)state;
    size_t length = 0;
    report_ring *ring = NULL;
    report_ring_limits limits = {.blocks = 2, .block_bytes = 8 * 1024};
    assert_int_equal(report_ring_open(VALUES,
                                      &(report_ring_sink){.row = label_sink, .user = &length},
                                      &limits, &ring),
                     TALLY_OK);
    char *label = malloc(100000);
    assert_non_null(label);
    memset(label, 'x', 99999);
    label[99999] = '\0';
    tally_command_record record = {
        .api_name = "a", .kind = "draw", .context_api = "gl", .label = label};
    assert_non_null(report_ring_append(ring, &record));
    assert_int_equal(report_ring_close(ring), TALLY_OK);
    free(label);
    /* the three strings (the pipeline name empty) take at most a quarter of the block */
    assert_int_equal(length, 8 * 1024 / 4 - 3 - 2);
}

static void limits_that_cannot_hold_rows_are_refused(void **state)
{
    (void)state;
    report_ring *ring = (report_ring *)&ring;
    report_ring_limits limits = {.blocks = 2, .block_bytes = 1024};
    assert_int_equal(report_ring_open(VALUES, &(report_ring_sink){.row = label_sink, .user = NULL},
                                      &limits, &ring),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_null(ring);
    assert_int_equal(report_ring_close(NULL), TALLY_ERROR_INVALID_ARGUMENT);
}

struct flush_counts {
    atomic_uint rows, flushes, rows_at_flush;
};

static tally_status counting_row(void *user, const tally_command_record *row,
                                 const tally_value *values)
{
    (void)row;
    (void)values;
    struct flush_counts *c = user;
    atomic_fetch_add(&c->rows, 1);
    return TALLY_OK;
}

static tally_status counting_flush(void *user)
{
    struct flush_counts *c = user;
    atomic_store(&c->rows_at_flush, atomic_load(&c->rows));
    atomic_fetch_add(&c->flushes, 1);
    return TALLY_OK;
}

/* A few rows, far from filling a block, reach the sink and its flush once
 * they have waited the latency, and not before: a slow program's report
 * grows as it runs (issue 33, "rows reach the file at least every
 * second"). */
static void rows_that_waited_the_latency_are_handed_over_and_flushed(void **state)
{
    (void)state;
    struct flush_counts counts = {0};
    report_ring *ring = NULL;
    const uint64_t latency = 250u * 1000 * 1000;
    report_ring_sink sink = {.row = counting_row, .flush = counting_flush, .user = &counts};
    assert_int_equal(
        report_ring_open(VALUES, &sink, &(report_ring_limits){.latency_ns = latency}, &ring),
        TALLY_OK);
    assert_int_equal(report_ring_hand_over_due(ring, 1000), UINT64_MAX); /* nothing waits */
    tally_command_record record = {
        .api_name = "vkCmdDraw", .kind = "draw", .context_api = "vulkan", .label = ""};
    for (int i = 0; i < 3; i++)
        assert_non_null(report_ring_append(ring, &record));
    const uint64_t seen = 5ull * 1000 * 1000 * 1000;
    assert_int_equal(report_ring_hand_over_due(ring, seen), seen + latency);
    assert_int_equal(report_ring_hand_over_due(ring, seen + latency - 1), seen + latency);
    usleep(50 * 1000);
    assert_int_equal(atomic_load(&counts.rows), 0); /* still the producer's */
    assert_int_equal(report_ring_hand_over_due(ring, seen + latency), UINT64_MAX);
    for (int waited = 0; atomic_load(&counts.flushes) == 0 && waited < 5000; waited++)
        usleep(1000);
    assert_int_equal(atomic_load(&counts.rows_at_flush), 3);
    /* The next block's age counts from the first call that sees its rows. */
    assert_non_null(report_ring_append(ring, &record));
    assert_int_equal(report_ring_hand_over_due(ring, 2 * seen), 2 * seen + latency);
    assert_int_equal(report_ring_close(ring), TALLY_OK);
    assert_int_equal(atomic_load(&counts.rows), 4);
}

/* Through the engine: a device's CSV report has one row per draw, numbered
 * without a gap, however fast the draws were submitted. */
static void a_device_report_has_a_row_for_every_draw(void **state)
{
    (void)state;
    enum { DRAWS = 2000, SUBMITS = 100 };
    char path[] = "/tmp/tally_ring_XXXXXX.csv";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    tally_device_options options = {
        .clock = TALLY_CLOCK_VIRTUAL, .report_path = path, .report_counters = "IaVertices"};
    tally_device *device = NULL;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    assert_int_equal(tally_device_open(&options, &device, NULL, 0), TALLY_OK);
    assert_int_equal(tally_context_create(device, "vulkan", &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    tally_draw draw = {.api_name = "vkCmdDraw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    for (int i = 0; i < DRAWS; i++)
        assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
    tally_submission submission = {.streams = &stream, .stream_count = 1, .api_name = "submit"};
    for (int i = 0; i < SUBMITS; i++)
        assert_int_equal(tally_submit(device, &submission, NULL), TALLY_OK);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device);

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f)); /* the header */
    uint64_t expected = 1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long sequence = 0, vertices = 0;
        assert_int_equal(sscanf(line, "%llu,", &sequence), 1);
        assert_int_equal(sequence, expected);
        const char *last = strrchr(line, ',');
        assert_int_equal(sscanf(last + 1, "%llu", &vertices), 1);
        assert_int_equal(vertices, 3);
        expected++;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(expected - 1, (uint64_t)DRAWS * SUBMITS);
}

/* Derived counters are evaluated once for a run of commands with the same
 * inputs: a report's derived values still equal each command's own scope
 * when draws that give different values alternate with repeats. */
static void derived_values_in_a_report_equal_each_commands_own_scope(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {3, 3, 3000, 3, 3000, 3000, 300, 3, 300, 300};
    enum { DRAWS = sizeof sizes / sizeof sizes[0], DERIVED = 2 };
    char path[] = "/tmp/tally_ring_XXXXXX.csv";
    int fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL,
                                    .report_path = path,
                                    .report_counters = "L2CacheHitRate,DramBandwidth"};
    tally_device *device = NULL;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    assert_int_equal(tally_device_open(&options, &device, NULL, 0), TALLY_OK);
    assert_int_equal(tally_context_create(device, "vulkan", &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t counters[DERIVED];
    assert_int_equal(tally_catalogue_find(cat, "L2CacheHitRate", &counters[0]), TALLY_OK);
    assert_int_equal(tally_catalogue_find(cat, "DramBandwidth", &counters[1]), TALLY_OK);
    tally_results *results = NULL;
    assert_int_equal(tally_results_create(device, counters, DERIVED, DRAWS, &results), TALLY_OK);
    tally_render_state render = {
        .width = 64, .height = 64, .layers = 1, .samples = 1, .color_bytes_per_pixel = 4};
    assert_int_equal(tally_stream_set_render_state(stream, &render), TALLY_OK);
    for (uint32_t i = 0; i < DRAWS; i++) {
        tally_draw draw = {.api_name = "vkCmdDraw",
                           .count = sizes[i],
                           .instance_count = 1,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        assert_int_equal(tally_stream_marker_begin(stream, results, i), TALLY_OK);
        assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
        assert_int_equal(tally_stream_marker_end(stream, results, i), TALLY_OK);
    }
    tally_submission submission = {.streams = &stream, .stream_count = 1, .api_name = "submit"};
    assert_int_equal(tally_submit(device, &submission, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    double scope[DRAWS][DERIVED];
    for (uint32_t i = 0; i < DRAWS; i++) {
        tally_value v[DERIVED];
        assert_int_equal(tally_results_get(results, i, v, DERIVED, NULL), TALLY_OK);
        scope[i][0] = v[0].f64;
        scope[i][1] = v[1].f64;
    }
    /* the sizes do give different values, so a stale one would show */
    assert_true(scope[0][0] != scope[2][0] && scope[2][0] != scope[6][0]);
    tally_results_release(results);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device);

    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    assert_non_null(fgets(line, sizeof line, f)); /* the header */
    uint32_t rows = 0;
    while (fgets(line, sizeof line, f) && rows < DRAWS) {
        /* the last two columns, as the report writes floats: "%.3f" */
        char *last = strrchr(line, ',');
        *last = '\0';
        char *before = strrchr(line, ',');
        char expected[2][64];
        snprintf(expected[0], sizeof expected[0], "%.3f", scope[rows][0]);
        snprintf(expected[1], sizeof expected[1], "%.3f\n", scope[rows][1]);
        assert_string_equal(before + 1, expected[0]);
        assert_string_equal(last + 1, expected[1]);
        rows++;
    }
    fclose(f);
    unlink(path);
    assert_int_equal(rows, DRAWS);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_arrives_in_order_and_memory_stays_flat),
        cmocka_unit_test(a_sink_error_stops_the_sink_and_close_returns_it),
        cmocka_unit_test(a_label_larger_than_a_block_is_cut_to_fit),
        cmocka_unit_test(limits_that_cannot_hold_rows_are_refused),
        cmocka_unit_test(rows_that_waited_the_latency_are_handed_over_and_flushed),
        cmocka_unit_test(a_device_report_has_a_row_for_every_draw),
        cmocka_unit_test(derived_values_in_a_report_equal_each_commands_own_scope),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
