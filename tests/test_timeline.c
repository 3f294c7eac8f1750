/* The device timeline (subscriptions, event shapes, tracks, kinds) and the
 * periodic sampler on a virtual clock. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static void a_full_subscription_keeps_the_oldest_events_and_reports_the_loss(void **state)
{
    struct engine_fixture *fx = *state;
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 8, &sub), TALLY_OK);
    tally_draw draw = {.api_name = "draw",
                       .count = 30,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    for (int i = 0; i < 10; i++)
        assert_int_equal(tally_stream_draw(fx->stream, &draw), TALLY_OK);
    engine_fixture_submit(fx);
    assert_int_equal(tally_timeline_pending(sub), 8);
    tally_event events[16];
    uint32_t count = 0;
    bool lost = false;
    assert_int_equal(tally_timeline_read(sub, events, 16, &count, &lost), TALLY_OK);
    assert_int_equal(count, 8);
    assert_true(lost);
    /* the oldest: the submission's instant on the driver and its begin on the queue */
    assert_int_equal(events[0].kind, TALLY_EVENT_KIND_SUBMISSION);
    assert_int_equal(events[0].track, TALLY_TRACK_DRIVER);
    assert_int_equal(events[1].kind, TALLY_EVENT_KIND_SUBMISSION);
    assert_int_equal(events[1].type, TALLY_EVENT_BEGIN);
    assert_int_equal(events[2].kind, TALLY_EVENT_KIND_DRAW);
    assert_int_equal(events[2].type, TALLY_EVENT_BEGIN);
    lost = true;
    assert_int_equal(tally_timeline_read(sub, events, 16, &count, &lost), TALLY_OK);
    assert_false(lost);
    assert_int_equal(count, 0);
    tally_timeline_unsubscribe(sub);
}

static void draw_events_pair_begin_and_end_with_fields_of_the_draw(void **state)
{
    struct engine_fixture *fx = *state;
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 4096, &sub), TALLY_OK);
    /* vertices x instances, and complete primitives x instances, by hand */
    static const struct {
        uint32_t count, instances;
        uint8_t topology;
        uint64_t vertices, primitives;
    } draws[] = {
        {30, 1, TALLY_TOPOLOGY_TRIANGLE_LIST, 30, 10},
        {31, 2, TALLY_TOPOLOGY_TRIANGLE_LIST, 62, 20},
        {10, 3, TALLY_TOPOLOGY_TRIANGLE_STRIP, 30, 24},
        {9, 4, TALLY_TOPOLOGY_LINE_LIST, 36, 16},
    };
    for (size_t i = 0; i < 4; i++) {
        tally_draw d = {.api_name = "draw",
                        .count = draws[i].count,
                        .instance_count = draws[i].instances,
                        .topology = draws[i].topology};
        assert_int_equal(tally_stream_draw(fx->stream, &d), TALLY_OK);
    }
    engine_fixture_submit(fx);
    tally_event events[4096];
    uint32_t count = 0;
    bool lost = true;
    assert_int_equal(tally_timeline_read(sub, events, 4096, &count, &lost), TALLY_OK);
    assert_false(lost);
    size_t seen = 0;
    uint64_t last_ts = 0;
    for (uint32_t i = 0; i < count; i++) {
        const tally_event *ev = &events[i];
        if (ev->kind != TALLY_EVENT_KIND_DRAW)
            continue;
        assert_int_equal(ev->track, TALLY_TRACK_QUEUE);
        assert_int_equal(ev->type, TALLY_EVENT_BEGIN);
        assert_true(seen < 4);
        uint32_t j = i + 1;
        while (j < count && !(events[j].kind == TALLY_EVENT_KIND_DRAW))
            j++;
        assert_true(j < count);
        const tally_event *end = &events[j];
        assert_int_equal(end->type, TALLY_EVENT_END);
        assert_int_equal(end->id, ev->id);
        assert_true(ev->timestamp_ns >= last_ts);
        assert_true(end->timestamp_ns >= ev->timestamp_ns);
        last_ts = end->timestamp_ns;
        assert_int_equal(ev->fields[0], draws[seen].vertices);
        assert_int_equal(ev->fields[1], draws[seen].instances);
        assert_int_equal(ev->fields[2], draws[seen].primitives);
        assert_int_equal(end->fields[0], draws[seen].vertices);
        seen++;
        i = j;
    }
    assert_int_equal(seen, 4);
    tally_timeline_unsubscribe(sub);
}

static void tracks_are_the_driver_the_queue_then_each_unit(void **state)
{
    struct engine_fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->device);
    uint32_t units = tally_catalogue_unit_count(cat);
    assert_int_equal(tally_timeline_track_count(fx->device), 2 + units);
    assert_string_equal(tally_timeline_track_name(fx->device, TALLY_TRACK_DRIVER), "Driver");
    assert_string_equal(tally_timeline_track_name(fx->device, TALLY_TRACK_QUEUE), "Queue");
    for (uint32_t u = 0; u < units; u++)
        assert_string_equal(tally_timeline_track_name(fx->device, TALLY_TRACK_FIRST_UNIT + u),
                            tally_catalogue_unit(cat, u)->symbol);
    assert_string_equal(tally_timeline_track_name(fx->device, TALLY_TRACK_FIRST_UNIT), "Geometry");
    assert_null(tally_timeline_track_name(fx->device, 2 + units));
}

static void the_draw_kind_describes_its_fields(void **state)
{
    (void)state;
    const tally_event_kind_info *k = tally_event_kind_get(TALLY_EVENT_KIND_DRAW);
    assert_non_null(k);
    assert_string_equal(k->name, "Draw");
    assert_int_equal(k->field_count, 5);
    assert_string_equal(k->fields[0].name, "vertices");
    assert_int_equal(k->fields[0].bytes, 8);
    assert_string_equal(k->fields[1].name, "instances");
    assert_string_equal(k->fields[2].name, "primitives");
    assert_false(k->fields[0].is_signed);
    assert_null(tally_event_kind_get(TALLY_EVENT_KIND_COUNT));
}

static void samples_fall_on_interval_boundaries_and_account_for_all_work(void **state)
{
    struct engine_fixture *fx = *state;
    const tally_catalogue *cat = tally_device_catalogue(fx->device);
    uint32_t raw_count = tally_catalogue_raw_count(cat);
    uint32_t ia = 0;
    assert_int_equal(tally_catalogue_find(cat, "IaVertices", &ia), TALLY_OK);
    uint32_t ia_raw = tally_catalogue_counter(cat, ia)->raw_index;
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(fx->device, 1000, 4096, &sampler), TALLY_OK);
    assert_int_equal(tally_sampler_interval_ns(sampler), 1000);
    uint64_t total = 0;
    for (uint32_t i = 0; i < 20; i++) {
        tally_draw d = {.api_name = "draw",
                        .count = 300 + i,
                        .instance_count = 2,
                        .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        assert_int_equal(tally_stream_draw(fx->stream, &d), TALLY_OK);
        total += (300 + i) * 2;
    }
    /* pushes the clock past at least one more boundary after the draws */
    tally_transfer x = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 64u << 20};
    assert_int_equal(tally_stream_transfer(fx->stream, &x), TALLY_OK);
    engine_fixture_submit(fx);

    enum { MAX = 8192 };
    tally_sample *samples = calloc(MAX, sizeof *samples);
    uint64_t *raw = calloc((size_t)MAX * raw_count, sizeof *raw);
    assert_non_null(samples);
    assert_non_null(raw);
    uint32_t count = 0;
    bool lost = true;
    assert_int_equal(tally_sampler_read(sampler, samples, raw, MAX, &count, &lost), TALLY_OK);
    assert_false(lost);
    assert_true(count >= 2);
    for (uint32_t i = 1; i < count; i++) {
        assert_int_equal(samples[i].timestamp_ns % 1000, 0);
        assert_true(samples[i].timestamp_ns >= samples[i - 1].timestamp_ns);
        assert_int_equal(samples[i].reason, TALLY_SAMPLE_TIMER);
    }
    uint64_t first = raw[ia_raw], last = raw[(size_t)(count - 1) * raw_count + ia_raw];
    assert_int_equal(last - first, total);
    free(samples);
    free(raw);
    tally_sampler_close(sampler);
}

static void a_sampler_interval_below_the_minimum_is_invalid(void **state)
{
    struct engine_fixture *fx = *state;
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(fx->device, 10, 16, &sampler),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(
        tally_sampler_open(fx->device, TALLY_SAMPLER_MIN_INTERVAL_NS - 1, 16, &sampler),
        TALLY_ERROR_INVALID_ARGUMENT);
}

static void a_full_sampler_drops_new_samples_and_reports_the_loss(void **state)
{
    struct engine_fixture *fx = *state;
    uint32_t raw_count = tally_catalogue_raw_count(tally_device_catalogue(fx->device));
    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(fx->device, 1000, 2, &sampler), TALLY_OK);
    tally_transfer x = {.api_name = "copy", .kind = TALLY_TRANSFER_COPY, .bytes = 1u << 20};
    for (int i = 0; i < 10; i++)
        assert_int_equal(tally_stream_transfer(fx->stream, &x), TALLY_OK);
    engine_fixture_submit(fx);
    tally_sample samples[4];
    uint64_t *raw = calloc(4 * (size_t)raw_count, sizeof *raw);
    assert_non_null(raw);
    uint32_t count = 0;
    bool lost = false;
    assert_int_equal(tally_sampler_read(sampler, samples, raw, 4, &count, &lost), TALLY_OK);
    assert_int_equal(count, 2);
    assert_true(lost);
    assert_int_equal(tally_sampler_read(sampler, samples, raw, 4, &count, &lost), TALLY_OK);
    assert_false(lost);
    free(raw);
    tally_sampler_close(sampler);
}

static void record_draws(struct engine_fixture *fx, int n)
{
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    for (int i = 0; i < n; i++)
        assert_int_equal(tally_stream_draw(fx->stream, &draw), TALLY_OK);
}

static void peeking_copies_events_without_taking_them(void **state)
{
    struct engine_fixture *fx = *state;
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 4, &sub), TALLY_OK);
    record_draws(fx, 3);
    engine_fixture_submit(fx);
    tally_event peeked[4], read[4];
    uint32_t count = 0;
    bool lost = false;
    assert_int_equal(tally_timeline_peek(sub, 1, peeked, 4, &count, &lost), TALLY_OK);
    assert_int_equal(count, 3); /* 4 kept, the first skipped */
    assert_true(lost);
    assert_int_equal(tally_timeline_pending(sub), 4);
    assert_int_equal(tally_timeline_read(sub, read, 4, &count, &lost), TALLY_OK);
    assert_int_equal(count, 4);
    assert_true(lost); /* peeking left it set */
    assert_memory_equal(&read[1], &peeked[0], 3 * sizeof(tally_event));
    assert_int_equal(tally_timeline_peek(sub, 0, peeked, 4, &count, NULL), TALLY_OK);
    assert_int_equal(count, 0);
    tally_timeline_unsubscribe(sub);
}

static void a_paused_subscription_keeps_its_events_and_takes_no_new_ones(void **state)
{
    struct engine_fixture *fx = *state;
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 4096, &sub), TALLY_OK);
    record_draws(fx, 1);
    engine_fixture_submit(fx);
    uint32_t before = tally_timeline_pending(sub);
    assert_true(before > 0);
    tally_timeline_set_paused(sub, true);
    record_draws(fx, 5);
    engine_fixture_submit(fx);
    assert_int_equal(tally_timeline_pending(sub), before);
    tally_timeline_set_paused(sub, false);
    record_draws(fx, 1);
    engine_fixture_submit(fx);
    tally_event events[4096];
    uint32_t count = 0;
    bool lost = true;
    assert_int_equal(tally_timeline_read(sub, events, 4096, &count, &lost), TALLY_OK);
    assert_false(lost);
    assert_int_equal(count, 2 * before);
    tally_timeline_unsubscribe(sub);
}

/* A client matching begins to ends by id alone (EGL_BRCM_event_monitor's
 * rule) must find exactly one partner; a submission carries its own count of
 * commands on both ends. */
static void spans_of_a_track_have_ids_of_their_own(void **state)
{
    struct engine_fixture *fx = *state;
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 4096, &sub), TALLY_OK);
    for (int s = 0; s < 3; s++) {
        record_draws(fx, 2);
        engine_fixture_submit(fx);
    }
    tally_event events[4096];
    uint32_t count = 0;
    assert_int_equal(tally_timeline_read(sub, events, 4096, &count, NULL), TALLY_OK);
    uint32_t submissions = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (events[i].track != TALLY_TRACK_QUEUE || events[i].type != TALLY_EVENT_BEGIN)
            continue;
        uint32_t ends = 0;
        for (uint32_t j = i + 1; j < count; j++) {
            if (events[j].track != TALLY_TRACK_QUEUE || events[j].id != events[i].id)
                continue;
            assert_int_equal(events[j].type, TALLY_EVENT_END);
            assert_int_equal(events[j].kind, events[i].kind);
            assert_memory_equal(events[j].fields, events[i].fields, sizeof(events[i].fields));
            ends++;
        }
        assert_int_equal(ends, 1);
        if (events[i].kind == TALLY_EVENT_KIND_SUBMISSION) {
            assert_int_equal(events[i].fields[2], 2);
            submissions++;
        }
    }
    assert_int_equal(submissions, 3);
    tally_timeline_unsubscribe(sub);
}

static void submit_as(struct engine_fixture *fx, const char *api_name, uint32_t flags)
{
    tally_submission sub = {.streams = &fx->stream,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME | flags,
                            .api_name = api_name};
    assert_int_equal(tally_submit(fx->device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
}

/* Submissions, flushes and frames are the driver's: instants on the Driver
 * track at the time the submission was handed over (on the virtual clock,
 * when the queue took it: its span on the Queue begins then), not when the
 * GPU reached them. The queue keeps its own span of each submission. */
static void submissions_flushes_and_frames_are_on_the_driver_track(void **state)
{
    struct engine_fixture *fx = *state;
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 4096, &sub), TALLY_OK);
    record_draws(fx, 2);
    assert_int_equal(tally_stream_frame_boundary(fx->stream), TALLY_OK);
    submit_as(fx, "eglSwapBuffers", 0);
    record_draws(fx, 1);
    submit_as(fx, "glFlush", TALLY_SUBMIT_FLUSH);
    record_draws(fx, 1);
    submit_as(fx, "vkQueueSubmit", 0);
    tally_event events[4096];
    uint32_t count = 0;
    assert_int_equal(tally_timeline_read(sub, events, 4096, &count, NULL), TALLY_OK);
    static const uint32_t driver_kinds[] = {TALLY_EVENT_KIND_SUBMISSION, TALLY_EVENT_KIND_FRAME,
                                            TALLY_EVENT_KIND_SUBMISSION, TALLY_EVENT_KIND_FLUSH,
                                            TALLY_EVENT_KIND_SUBMISSION};
    static const uint32_t driver_submission[] = {0, 0, 1, 1, 2};
    uint64_t queue_begins[3] = {0};
    uint32_t driver = 0, queue_submissions = 0;
    const tally_event *on_driver[5] = {NULL};
    for (uint32_t i = 0; i < count; i++) {
        const tally_event *ev = &events[i];
        if (ev->track == TALLY_TRACK_QUEUE && ev->kind == TALLY_EVENT_KIND_SUBMISSION &&
            ev->type == TALLY_EVENT_BEGIN) {
            assert_true(queue_submissions < 3);
            queue_begins[queue_submissions++] = ev->timestamp_ns;
        }
        if (ev->kind == TALLY_EVENT_KIND_FRAME || ev->kind == TALLY_EVENT_KIND_FLUSH)
            assert_int_equal(ev->track, TALLY_TRACK_DRIVER);
        if (ev->track != TALLY_TRACK_DRIVER)
            continue;
        assert_true(driver < 5);
        assert_int_equal(ev->kind, driver_kinds[driver]);
        assert_int_equal(ev->type, TALLY_EVENT_INSTANT);
        on_driver[driver++] = ev;
    }
    assert_int_equal(driver, 5);
    assert_int_equal(queue_submissions, 3);
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(on_driver[i]->timestamp_ns, queue_begins[driver_submission[i]]);
    assert_true(queue_begins[1] > queue_begins[0]); /* the frame's draws ran in between */
    uint32_t context = tally_context_id(fx->context);
    assert_int_equal(on_driver[1]->fields[0], 0); /* the context's first frame */
    assert_int_equal(on_driver[1]->fields[1], context);
    assert_int_equal(on_driver[3]->fields[0], context);
    assert_int_equal(on_driver[2]->fields[0], on_driver[0]->fields[0] + 1); /* seqnos */
    tally_timeline_unsubscribe(sub);
}

/* On the realtime clock, the driver's instants are at the CPU time of the
 * API call that submitted: between the clock read before and after it. */
static void driver_instants_are_at_the_time_of_the_submitting_call(void **state)
{
    (void)state;
    struct engine_fixture fx = {0};
    tally_device_options options = {.clock = TALLY_CLOCK_REALTIME};
    assert_int_equal(engine_fixture_open_with(&fx, &options), 0);
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx.device, 4096, &sub), TALLY_OK);
    record_draws(&fx, 2);
    assert_int_equal(tally_stream_frame_boundary(fx.stream), TALLY_OK);
    uint64_t before = tally_device_gpu_time_ns(fx.device);
    tally_submission submission = {.streams = &fx.stream,
                                   .stream_count = 1,
                                   .flags = TALLY_SUBMIT_CONSUME | TALLY_SUBMIT_FLUSH,
                                   .api_name = "glFinish"};
    assert_int_equal(tally_submit(fx.device, &submission, NULL), TALLY_OK);
    uint64_t after = tally_device_gpu_time_ns(fx.device);
    assert_int_equal(tally_device_wait_idle(fx.device), TALLY_OK);
    tally_event events[256];
    uint32_t count = 0, driver = 0;
    assert_int_equal(tally_timeline_read(sub, events, 256, &count, NULL), TALLY_OK);
    for (uint32_t i = 0; i < count; i++) {
        if (events[i].track != TALLY_TRACK_DRIVER)
            continue;
        assert_true(events[i].timestamp_ns >= before);
        assert_true(events[i].timestamp_ns <= after);
        driver++;
    }
    assert_int_equal(driver, 3); /* the submission, its flush and its frame */
    tally_timeline_unsubscribe(sub);
    engine_fixture_close(&fx);
}

/* A dispatch that names no local size ran with its program's (or 1s): the
 * event says what applied. */
static void dispatch_events_carry_the_local_size_that_applied(void **state)
{
    struct engine_fixture *fx = *state;
    tally_program_desc desc = {.name = "cs"};
    desc.stages[TALLY_STAGE_COMPUTE] =
        (tally_stage_profile){.present = true, .local_size = {4, 2, 1}};
    tally_program *program = NULL;
    assert_int_equal(tally_program_create(fx->device, &desc, &program), TALLY_OK);
    tally_subscription *sub = NULL;
    assert_int_equal(tally_timeline_subscribe(fx->device, 4096, &sub), TALLY_OK);
    tally_dispatch dispatch = {.api_name = "dispatch", .groups = {5, 6, 7}};
    assert_int_equal(tally_stream_dispatch(fx->stream, &dispatch), TALLY_OK);
    assert_int_equal(tally_stream_bind_program(fx->stream, program), TALLY_OK);
    assert_int_equal(tally_stream_dispatch(fx->stream, &dispatch), TALLY_OK);
    dispatch.local_size[0] = 16;
    assert_int_equal(tally_stream_dispatch(fx->stream, &dispatch), TALLY_OK);
    engine_fixture_submit(fx);
    tally_program_release(program);
    tally_event events[4096];
    uint32_t count = 0;
    assert_int_equal(tally_timeline_read(sub, events, 4096, &count, NULL), TALLY_OK);
    static const uint64_t expected[3][6] = {
        {5, 6, 7, 1, 1, 1}, {5, 6, 7, 4, 2, 1}, {5, 6, 7, 16, 2, 1}};
    uint32_t seen = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (events[i].kind != TALLY_EVENT_KIND_DISPATCH || events[i].type != TALLY_EVENT_BEGIN)
            continue;
        assert_true(seen < 3);
        assert_memory_equal(events[i].fields, expected[seen], sizeof expected[seen]);
        seen++;
    }
    assert_int_equal(seen, 3);
    tally_timeline_unsubscribe(sub);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_full_subscription_keeps_the_oldest_events_and_reports_the_loss, engine_fixture_setup,
            engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(draw_events_pair_begin_and_end_with_fields_of_the_draw,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(tracks_are_the_driver_the_queue_then_each_unit,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test(the_draw_kind_describes_its_fields),
        cmocka_unit_test_setup_teardown(peeking_copies_events_without_taking_them,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(
            a_paused_subscription_keeps_its_events_and_takes_no_new_ones, engine_fixture_setup,
            engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(dispatch_events_carry_the_local_size_that_applied,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(submissions_flushes_and_frames_are_on_the_driver_track,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test(driver_instants_are_at_the_time_of_the_submitting_call),
        cmocka_unit_test_setup_teardown(spans_of_a_track_have_ids_of_their_own,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(
            samples_fall_on_interval_boundaries_and_account_for_all_work, engine_fixture_setup,
            engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_sampler_interval_below_the_minimum_is_invalid,
                                        engine_fixture_setup, engine_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_full_sampler_drops_new_samples_and_reports_the_loss,
                                        engine_fixture_setup, engine_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("timeline", tests, NULL, NULL);
}
