/* The events read through EGL_BRCM_event_monitor and the Chrome trace the
 * engine writes for the same run (TALLY_TRACE) describe the same commands at
 * the same times. Every command span of the records (draw, dispatch,
 * transfer) is a slice of the trace, in the same order, on the same track,
 * at the same microsecond, named for its command (not its kind) and with its
 * report row's keys (frame, sequence) as arguments; every other span and
 * instant is the trace's too, with the same name and fields, but for the
 * driver's view of a submission, which is named for the API call that made
 * it. The units' busy spans are not in the trace: their counters are. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egl_fixture.h"

#define MAX_RECORDS 4096

struct happening {
    char phase; /* 'X' span, 'i' instant */
    uint32_t track;
    char name[64];
    uint64_t begin_us, end_us;
    uint32_t field_count;
    char field_names[8][64];
    uint64_t fields[8];
};

/* The spans and instants the records describe, in the order the ends and
 * instants arrive (the trace writes a span when it ends). */
static size_t happenings_of_records(const struct brcm *brcm, const struct egl_record *records,
                                    size_t n, struct happening *out)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        const struct egl_record *r = &records[i];
        if (r->type == 0)
            continue;
        struct happening *h = &out[count++];
        memset(h, 0, sizeof *h);
        h->phase = r->type == 1 ? 'X' : 'i';
        h->track = r->track;
        h->begin_us = h->end_us = r->timestamp_us;
        if (r->type == 1) {
            const struct egl_record *begin = NULL;
            for (size_t j = i; j-- > 0 && !begin;)
                if (records[j].type == 0 && records[j].id == r->id && records[j].track == r->track)
                    begin = &records[j];
            assert_non_null(begin);
            assert_int_equal(begin->event, r->event);
            h->begin_us = begin->timestamp_us;
        }
        assert_true(brcm->event_info((EGLint)r->event, sizeof h->name, h->name, NULL, NULL));
        h->field_count = r->field_count;
        for (uint32_t f = 0; f < r->field_count; f++) {
            assert_true(brcm->field_info((EGLint)r->event, (EGLint)f, sizeof h->field_names[f],
                                         h->field_names[f], NULL, NULL));
            h->fields[f] = r->fields[f];
        }
    }
    return count;
}

/* "12.345" microseconds as integer nanoseconds. */
static uint64_t trace_ns(json_object *event, const char *key)
{
    json_object *value = NULL;
    assert_true(json_object_object_get_ex(event, key, &value));
    return (uint64_t)llround(json_object_get_double(value) * 1000.0);
}

/* A submission as the driver saw it is the API call that made it, and is
 * named for the call. */
static bool is_call(const struct happening *h)
{
    return h->track == TALLY_TRACK_DRIVER && strcmp(h->name, "Submission") == 0;
}

static void assert_same(const struct happening *h, json_object *event)
{
    json_object *value = NULL;
    assert_true(json_object_object_get_ex(event, "tid", &value));
    assert_int_equal(json_object_get_int64(value), (int64_t)h->track + 1);
    assert_true(json_object_object_get_ex(event, "name", &value));
    if (is_call(h))
        assert_string_not_equal(json_object_get_string(value), h->name);
    else
        assert_string_equal(json_object_get_string(value), h->name);
    uint64_t begin_ns = trace_ns(event, "ts");
    uint64_t end_ns = h->phase == 'X' ? begin_ns + trace_ns(event, "dur") : begin_ns;
    assert_int_equal(begin_ns / 1000, h->begin_us);
    assert_int_equal(end_ns / 1000, h->end_us);
    json_object *args = NULL;
    assert_true(json_object_object_get_ex(event, "args", &args));
    assert_int_equal(json_object_object_length(args), h->field_count);
    for (uint32_t f = 0; f < h->field_count; f++) {
        assert_true(json_object_object_get_ex(args, h->field_names[f], &value));
        assert_int_equal((uint64_t)json_object_get_int64(value), h->fields[f]);
    }
}

static bool is_command(const struct happening *h)
{
    return strcmp(h->name, "Draw") == 0 || strcmp(h->name, "Dispatch") == 0 ||
           strcmp(h->name, "Transfer") == 0;
}

/* A command's slice: where and when the records say, its row's keys in
 * order of execution. */
static void assert_command(const struct happening *h, json_object *event, uint64_t *sequence)
{
    json_object *value = NULL, *args = NULL;
    assert_true(json_object_object_get_ex(event, "tid", &value));
    assert_int_equal(json_object_get_int64(value), (int64_t)h->track + 1);
    assert_true(json_object_object_get_ex(event, "name", &value));
    assert_string_not_equal(json_object_get_string(value), h->name);
    uint64_t begin_ns = trace_ns(event, "ts"), end_ns = begin_ns + trace_ns(event, "dur");
    assert_int_equal(begin_ns / 1000, h->begin_us);
    assert_int_equal(end_ns / 1000, h->end_us);
    assert_true(json_object_object_get_ex(event, "args", &args));
    assert_int_equal(json_object_object_length(args), 2);
    assert_true(json_object_object_get_ex(args, "frame", &value));
    assert_true(json_object_object_get_ex(args, "sequence", &value));
    assert_true((uint64_t)json_object_get_int64(value) > *sequence);
    *sequence = (uint64_t)json_object_get_int64(value);
}

/* Whether a trace event is a command's slice: it carries its row's keys. */
static bool has_sequence(json_object *event)
{
    json_object *args = NULL, *sequence = NULL;
    return json_object_object_get_ex(event, "args", &args) &&
           json_object_object_get_ex(args, "sequence", &sequence);
}

/* The next happening of the kind the trace event is, skipping the units'. */
static size_t next_of_kind(const struct happening *expected, size_t count, size_t from,
                           bool command)
{
    while (from < count &&
           (is_command(&expected[from]) != command || strcmp(expected[from].name, "UnitBusy") == 0))
        from++;
    return from;
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *in = fopen(path, "rb");
    assert_non_null(in);
    unsigned char *data = malloc(1 << 20);
    assert_non_null(data);
    *size = fread(data, 1, 1 << 20, in);
    fclose(in);
    return data;
}

static void records_and_the_trace_describe_the_same_commands_at_the_same_times(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    char trace_path[128], records_path[128], trace_env[160];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", fx->runtime_dir);
    snprintf(records_path, sizeof records_path, "%s/records.bin", fx->runtime_dir);
    snprintf(trace_env, sizeof trace_env, "TALLY_TRACE=%s", trace_path);
    const char *const args[] = {"timeline", records_path, NULL};
    const char *const env[] = {trace_env, NULL};
    assert_int_equal(egl_probe_run(args, env), 0);

    size_t bytes = 0;
    unsigned char *data = read_file(records_path, &bytes);
    static struct egl_record records[MAX_RECORDS];
    size_t n = egl_records_decode(&brcm, data, bytes, records, MAX_RECORDS);
    free(data);
    static struct happening expected[MAX_RECORDS];
    size_t count = happenings_of_records(&brcm, records, n, expected);

    json_object *trace = json_object_from_file(trace_path);
    assert_non_null(trace);
    json_object *events = NULL;
    assert_true(json_object_object_get_ex(trace, "traceEvents", &events));
    /* Commands reach the trace as they run, the rest of the timeline after
     * each submission: each kind keeps its own order. */
    size_t next_command = 0, next_other = 0, draws = 0, dispatches = 0, frames = 0,
           driver_submissions = 0;
    uint64_t sequence = 0;
    for (size_t i = 0; i < json_object_array_length(events); i++) {
        json_object *event = json_object_array_get_idx(events, i), *phase = NULL;
        assert_true(json_object_object_get_ex(event, "ph", &phase));
        const char *ph = json_object_get_string(phase);
        if (strcmp(ph, "X") != 0 && strcmp(ph, "i") != 0)
            continue; /* names of tracks, counters */
        bool command = has_sequence(event);
        size_t *next = command ? &next_command : &next_other;
        *next = next_of_kind(expected, count, *next, command);
        assert_true(*next < count);
        const struct happening *h = &expected[(*next)++];
        assert_int_equal(ph[0], h->phase);
        if (command)
            assert_command(h, event, &sequence);
        else
            assert_same(h, event);
        draws += strcmp(h->name, "Draw") == 0;
        dispatches += strcmp(h->name, "Dispatch") == 0;
        /* frame ends and submissions as the driver saw them: the Driver track */
        bool on_driver = h->track == TALLY_TRACK_DRIVER;
        frames += strcmp(h->name, "Frame") == 0 && on_driver;
        driver_submissions += strcmp(h->name, "Submission") == 0 && on_driver;
    }
    assert_int_equal(next_of_kind(expected, count, next_command, true), count);
    assert_int_equal(next_of_kind(expected, count, next_other, false), count);
    assert_int_equal(draws, 12); /* 6 draws in each of 2 frames */
    assert_int_equal(dispatches, 2);
    assert_int_equal(frames, 2);
    assert_int_equal(driver_submissions, 2);
    json_object_put(trace);
    unlink(trace_path);
    unlink(records_path);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            records_and_the_trace_describe_the_same_commands_at_the_same_times, egl_fixture_setup,
            egl_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
