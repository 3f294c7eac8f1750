/* EGL_BRCM_event_monitor as a program linked against the shim sees it: the
 * extension string, the entry points, every function's rules and errors as the
 * specification states them, and the records of work fed to the shared device. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define EGL_EGLEXT_PROTOTYPES
#include "egl_fixture.h"

static bool lists_extension(const char *extensions, const char *name)
{
    size_t length = strlen(name);
    for (const char *p = extensions; p && (p = strstr(p, name)); p += length)
        if ((p == extensions || p[-1] == ' ') && (p[length] == '\0' || p[length] == ' '))
            return true;
    return false;
}

static void the_extension_is_listed_once_for_an_initialized_display(void **state)
{
    struct egl_fixture *fx = *state;
    const char *extensions = eglQueryString(fx->display, EGL_EXTENSIONS);
    assert_non_null(extensions);
    assert_true(lists_extension(extensions, "EGL_BRCM_event_monitor"));
    const char *first = strstr(extensions, "EGL_BRCM_event_monitor");
    assert_null(strstr(first + 1, "EGL_BRCM_event_monitor"));
    assert_true(lists_extension(extensions, "EGL_KHR_surfaceless_context")); /* the driver's */
    assert_int_equal(eglGetError(), EGL_SUCCESS);
}

static void the_extension_is_not_a_client_extension(void **state)
{
    (void)state;
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    assert_non_null(client);
    assert_false(lists_extension(client, "EGL_BRCM_event_monitor"));
}

static void an_uninitialized_display_gets_the_drivers_error(void **state)
{
    struct egl_fixture *fx = *state;
    eglTerminate(fx->display);
    assert_null(eglQueryString(fx->display, EGL_EXTENSIONS));
    assert_int_equal(eglGetError(), EGL_NOT_INITIALIZED);
    assert_true(eglInitialize(fx->display, NULL, NULL));
}

static void get_proc_address_hands_out_the_functions_a_linked_program_calls(void **state)
{
    (void)state;
    struct brcm brcm;
    brcm_load(&brcm);
    assert_ptr_equal(brcm.constant, eglGetEventConstantBRCM);
    assert_ptr_equal(brcm.track_info, eglGetEventTrackInfoBRCM);
    assert_ptr_equal(brcm.event_info, eglGetEventInfoBRCM);
    assert_ptr_equal(brcm.field_info, eglGetEventDataFieldInfoBRCM);
    assert_ptr_equal(brcm.collection, eglSetEventCollectionBRCM);
    assert_ptr_equal(brcm.data, eglGetEventDataBRCM);
    /* glvnd answers these from its own exports; the wrappers must win */
    assert_ptr_equal(eglGetProcAddress("eglQueryString"), eglQueryString);
    assert_ptr_equal(eglGetProcAddress("eglGetError"), eglGetError);
    /* everything else is the driver's */
    assert_non_null(eglGetProcAddress("eglCreateContext"));
    assert_null(eglGetProcAddress("eglNoSuchFunctionBRCM"));
}

static void constants_count_the_engines_tracks_and_event_kinds(void **state)
{
    struct egl_fixture *fx = *state;
    assert_int_equal(eglGetEventConstantBRCM(EGL_NUM_EVENT_TRACKS_BRCM),
                     tally_timeline_track_count(fx->device));
    assert_int_equal(eglGetEventConstantBRCM(EGL_NUM_EVENTS_BRCM), TALLY_EVENT_KIND_COUNT);
    assert_int_equal(eglGetError(), EGL_SUCCESS);
    assert_int_equal(eglGetEventConstantBRCM(EGL_START_EVENTS_BRCM), -1);
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_int_equal(eglGetError(), EGL_SUCCESS); /* read once, then gone */
}

/* The longest name of any track, event or field, with its NUL, by asking for
 * every name through the extension itself. */
static void the_max_string_length_holds_every_name(void **state)
{
    (void)state;
    EGLint max = eglGetEventConstantBRCM(EGL_MAX_EVENT_STRING_LEN_BRCM);
    size_t longest = 0;
    char name[256];
    for (EGLint t = 0; t < eglGetEventConstantBRCM(EGL_NUM_EVENT_TRACKS_BRCM); t++) {
        assert_true(eglGetEventTrackInfoBRCM(t, sizeof name, name));
        longest = strlen(name) > longest ? strlen(name) : longest;
    }
    for (EGLint e = 0; e < eglGetEventConstantBRCM(EGL_NUM_EVENTS_BRCM); e++) {
        EGLint fields = 0;
        assert_true(eglGetEventInfoBRCM(e, sizeof name, name, &fields, NULL));
        longest = strlen(name) > longest ? strlen(name) : longest;
        for (EGLint f = 0; f < fields; f++) {
            assert_true(eglGetEventDataFieldInfoBRCM(e, f, sizeof name, name, NULL, NULL));
            longest = strlen(name) > longest ? strlen(name) : longest;
        }
    }
    assert_int_equal(max, (EGLint)longest + 1);
}

/* The tracks are the driver, the queue, then simgpu's hardware units in the
 * order backends/simgpu/catalogue.toml lists them: written out here by hand. */
static void track_names_are_the_driver_the_queue_and_simgpus_units(void **state)
{
    (void)state;
    static const char *const expected[] = {"Driver",     "Queue",   "Geometry", "Shader",
                                           "Rasterizer", "Texture", "Memory"};
    const EGLint count = (EGLint)(sizeof expected / sizeof expected[0]);
    char name[64];
    for (EGLint t = 0; t < count; t++) {
        memset(name, 0, sizeof name);
        assert_true(eglGetEventTrackInfoBRCM(t, sizeof name, name));
        assert_string_equal(name, expected[t]);
    }
    assert_false(eglGetEventTrackInfoBRCM(count, sizeof name, name));
}

/* "A maximum of nameStrSize characters will be copied into the buffer
 * including a null termination." */
static void names_are_cut_to_the_buffer_with_their_nul(void **state)
{
    (void)state;
    char buffer[8];
    memset(buffer, 'x', sizeof buffer);
    assert_true(eglGetEventTrackInfoBRCM(TALLY_TRACK_DRIVER, 4, buffer));
    assert_memory_equal(buffer, "Dri\0xxxx", 8);
    memset(buffer, 'x', sizeof buffer);
    assert_true(eglGetEventInfoBRCM(TALLY_EVENT_KIND_SUBMISSION, 1, buffer, NULL, NULL));
    assert_memory_equal(buffer, "\0xxxxxxx", 8);
    memset(buffer, 'x', sizeof buffer);
    assert_true(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DRAW, 0, 0, buffer, NULL, NULL));
    assert_memory_equal(buffer, "xxxxxxxx", 8); /* size 0: no name */
    assert_true(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DRAW, 0, 8, NULL, NULL, NULL));
    assert_true(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DRAW, 0, 8, buffer, NULL, NULL));
    assert_string_equal(buffer, "vertice");
}

static void invalid_indices_are_bad_parameters(void **state)
{
    struct egl_fixture *fx = *state;
    char name[64] = "untouched";
    EGLint tracks = (EGLint)tally_timeline_track_count(fx->device);
    EGLint fields = 99, total = 99, bytes = 99;
    EGLBoolean is_signed = 99;
    assert_false(eglGetEventTrackInfoBRCM(tracks, sizeof name, name));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventTrackInfoBRCM(-1, sizeof name, name));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventInfoBRCM(TALLY_EVENT_KIND_COUNT, sizeof name, name, &fields, &total));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventInfoBRCM(-1, sizeof name, name, &fields, &total));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_COUNT, 0, sizeof name, name,
                                              &is_signed, &bytes));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DRAW, 5, sizeof name, name,
                                              &is_signed, &bytes));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DRAW, -1, sizeof name, name,
                                              &is_signed, &bytes));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    /* a negative buffer size is no size at all */
    assert_false(eglGetEventTrackInfoBRCM(0, -1, name));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_string_equal(name, "untouched");
    assert_int_equal(fields, 99);
    assert_int_equal(total, 99);
    assert_int_equal(is_signed, 99);
    assert_int_equal(bytes, 99);
}

/* Sizes by hand: Draw is u64 vertices, u32 instances, u64 primitives, u32
 * indexed, u32 topology; Dispatch six u32s. */
static void events_describe_their_fields(void **state)
{
    (void)state;
    char name[64];
    EGLint fields = 0, total = 0, bytes = 0;
    EGLBoolean is_signed = EGL_TRUE;
    assert_true(eglGetEventInfoBRCM(TALLY_EVENT_KIND_DRAW, sizeof name, name, &fields, &total));
    assert_string_equal(name, "Draw");
    assert_int_equal(fields, 5);
    assert_int_equal(total, 8 + 4 + 8 + 4 + 4);
    static const char *const draw_fields[] = {"vertices", "instances", "primitives"};
    static const EGLint draw_bytes[] = {8, 4, 8};
    for (EGLint f = 0; f < 3; f++) {
        assert_true(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DRAW, f, sizeof name, name,
                                                 &is_signed, &bytes));
        assert_string_equal(name, draw_fields[f]);
        assert_int_equal(is_signed, EGL_FALSE);
        assert_int_equal(bytes, draw_bytes[f]);
    }
    assert_true(eglGetEventInfoBRCM(TALLY_EVENT_KIND_DISPATCH, sizeof name, name, &fields, &total));
    assert_string_equal(name, "Dispatch");
    assert_int_equal(fields, 6);
    assert_int_equal(total, 24);
    static const char *const dispatch_fields[] = {"groups_x",     "groups_y",     "groups_z",
                                                  "local_size_x", "local_size_y", "local_size_z"};
    for (EGLint f = 0; f < 6; f++) {
        assert_true(eglGetEventDataFieldInfoBRCM(TALLY_EVENT_KIND_DISPATCH, f, sizeof name, name,
                                                 NULL, &bytes));
        assert_string_equal(name, dispatch_fields[f]);
        assert_int_equal(bytes, 4);
    }
    static const char *const kinds[] = {"Draw",  "Dispatch", "Transfer", "Submission",
                                        "Frame", "Flush",    "UnitBusy"};
    for (EGLint e = 0; e < TALLY_EVENT_KIND_COUNT; e++) {
        assert_true(eglGetEventInfoBRCM(e, sizeof name, name, NULL, NULL));
        assert_string_equal(name, kinds[e]);
    }
}

static void collection_rejects_an_unknown_pname(void **state)
{
    (void)state;
    assert_false(eglSetEventCollectionBRCM(EGL_NUM_EVENTS_BRCM));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglSetEventCollectionBRCM(0));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
}

static void the_sampler_must_be_acquired_before_use(void **state)
{
    (void)state;
    EGLint written = -1;
    assert_false(eglSetEventCollectionBRCM(EGL_START_EVENTS_BRCM));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    assert_false(eglSetEventCollectionBRCM(EGL_STOP_EVENTS_BRCM));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    assert_false(eglSetEventCollectionBRCM(EGL_RELEASE_EVENTS_BRCM));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    assert_false(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    assert_int_equal(written, -1);
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM)); /* ours already */
    assert_true(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(written, 0);
    assert_true(eglSetEventCollectionBRCM(EGL_RELEASE_EVENTS_BRCM));
    assert_false(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
}

static void data_arguments_are_checked(void **state)
{
    (void)state;
    unsigned char buffer[64];
    EGLint written = 0;
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    assert_false(eglGetEventDataBRCM(-1, buffer, &written, NULL, NULL));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_false(eglGetEventDataBRCM(sizeof buffer, buffer, NULL, NULL, NULL));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
}

static void start_collecting(void)
{
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    assert_true(eglSetEventCollectionBRCM(EGL_START_EVENTS_BRCM));
}

#define DRAWS 5

/* Vertices x instances and complete primitives x instances, by hand. */
static const struct {
    uint32_t count, instances;
    uint8_t topology;
    uint64_t vertices, primitives;
} draws[DRAWS] = {
    {30, 1, TALLY_TOPOLOGY_TRIANGLE_LIST, 30, 10},  {31, 2, TALLY_TOPOLOGY_TRIANGLE_LIST, 62, 20},
    {10, 3, TALLY_TOPOLOGY_TRIANGLE_STRIP, 30, 24}, {9, 4, TALLY_TOPOLOGY_LINE_LIST, 36, 16},
    {7, 1, TALLY_TOPOLOGY_POINT_LIST, 7, 7},
};

static void draws_read_back_as_begin_end_pairs_with_their_fields(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    for (int i = 0; i < DRAWS; i++)
        egl_fixture_draw(fx, draws[i].count, draws[i].instances, draws[i].topology);
    egl_fixture_submit(fx);
    static struct egl_record records[4096];
    EGLBoolean lost = EGL_TRUE;
    size_t n = egl_records_read_all(&brcm, records, 4096, &lost);
    assert_false(lost);
    size_t seen = 0;
    uint64_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (records[i].event != TALLY_EVENT_KIND_DRAW || records[i].type != 0)
            continue;
        const struct egl_record *begin = &records[i], *end = NULL;
        for (size_t j = i + 1; j < n && !end; j++)
            if (records[j].id == begin->id && records[j].track == begin->track)
                end = &records[j];
        assert_non_null(end);
        assert_int_equal(end->type, 1);
        assert_int_equal(end->event, TALLY_EVENT_KIND_DRAW);
        assert_int_equal(begin->track, TALLY_TRACK_QUEUE);
        assert_true(begin->timestamp_us >= last);
        assert_true(end->timestamp_us >= begin->timestamp_us);
        last = end->timestamp_us;
        assert_true(seen < DRAWS);
        assert_int_equal(begin->field_count, 5);
        assert_int_equal(begin->fields[0], draws[seen].vertices);
        assert_int_equal(begin->fields[1], draws[seen].instances);
        assert_int_equal(begin->fields[2], draws[seen].primitives);
        assert_int_equal(begin->fields[4], draws[seen].topology);
        assert_memory_equal(end->fields, begin->fields, sizeof begin->fields);
        seen++;
    }
    assert_int_equal(seen, DRAWS);
}

/* Timestamps are the engine's GPU nanoseconds in whole microseconds; the
 * virtual clock makes them comparable with what the engine itself says. */
static void timestamps_are_gpu_microseconds_up_to_now(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    for (int i = 0; i < 200; i++)
        egl_fixture_draw(fx, 30000, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    uint64_t gpu_now_ns = tally_device_gpu_time_ns(fx->device);
    EGLint size = 0;
    assert_true(eglGetEventDataBRCM(0, NULL, &size, NULL, NULL));
    unsigned char *data = malloc((size_t)size);
    assert_non_null(data);
    EGLuint64BRCM now = 0;
    EGLint written = 0;
    assert_true(eglGetEventDataBRCM(size, data, &written, NULL, &now));
    static struct egl_record records[8192];
    size_t n = egl_records_decode(&brcm, data, (size_t)written, records, 8192);
    free(data);
    assert_int_equal(now, gpu_now_ns / 1000);
    assert_true(records[n - 1].timestamp_us <= now);
    assert_true(records[n - 1].timestamp_us > 0);
    /* the last event is the submission's end, at the GPU time reached */
    assert_int_equal(records[n - 1].event, TALLY_EVENT_KIND_SUBMISSION);
    assert_int_equal(records[n - 1].type, 1);
    assert_int_equal(records[n - 1].timestamp_us, gpu_now_ns / 1000);
}

static void dispatches_carry_group_counts_and_local_size(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    tally_dispatch dispatch = {
        .api_name = "glDispatchCompute", .groups = {4, 3, 2}, .local_size = {8, 8, 1}};
    assert_int_equal(tally_stream_dispatch(fx->stream, &dispatch), TALLY_OK);
    egl_fixture_submit(fx);
    static struct egl_record records[256];
    size_t n = egl_records_read_all(&brcm, records, 256, NULL);
    size_t found = 0;
    for (size_t i = 0; i < n; i++) {
        if (records[i].event != TALLY_EVENT_KIND_DISPATCH)
            continue;
        static const uint64_t expected[6] = {4, 3, 2, 8, 8, 1};
        assert_int_equal(records[i].field_count, 6);
        assert_memory_equal(records[i].fields, expected, sizeof expected);
        found++;
    }
    assert_int_equal(found, 2); /* its begin and its end */
}

static size_t count_kind(const struct egl_record *records, size_t n, uint32_t kind, uint32_t track)
{
    size_t found = 0;
    for (size_t i = 0; i < n; i++)
        found += records[i].event == kind && records[i].track == track;
    return found;
}

static void submissions_frames_and_flushes_have_events(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    assert_int_equal(tally_stream_frame_boundary(fx->stream), TALLY_OK);
    tally_submission swap = {.streams = &fx->stream,
                             .stream_count = 1,
                             .flags = TALLY_SUBMIT_CONSUME,
                             .api_name = "eglSwapBuffers"};
    assert_int_equal(tally_submit(fx->device, &swap, NULL), TALLY_OK);
    egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    tally_submission flush = swap;
    flush.api_name = "glFlush";
    flush.flags |= TALLY_SUBMIT_FLUSH;
    assert_int_equal(tally_submit(fx->device, &flush, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
    static struct egl_record records[256];
    size_t n = egl_records_read_all(&brcm, records, 256, NULL);
    /* the driver saw two submissions, a frame end and a flush; the queue ran
     * the two submissions (a begin and an end each) */
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_SUBMISSION, TALLY_TRACK_DRIVER), 2);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_SUBMISSION, TALLY_TRACK_QUEUE), 4);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_FRAME, TALLY_TRACK_DRIVER), 1);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_FRAME, TALLY_TRACK_QUEUE), 0);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_FLUSH, TALLY_TRACK_DRIVER), 1);
    for (size_t i = 0; i < n; i++) {
        if (records[i].event != TALLY_EVENT_KIND_FLUSH &&
            records[i].event != TALLY_EVENT_KIND_FRAME)
            continue;
        assert_int_equal(records[i].type, 2);
        uint32_t context_field = records[i].event == TALLY_EVENT_KIND_FLUSH ? 0 : 1;
        assert_int_equal(records[i].fields[context_field], tally_context_id(fx->context));
    }
    /* a front end may report a driver-side happening of its own */
    uint64_t flush_fields[1] = {tally_context_id(fx->context)};
    tally_timeline_emit(fx->device, TALLY_EVENT_KIND_FLUSH, TALLY_EVENT_INSTANT, flush_fields, 1);
    n = egl_records_read_all(&brcm, records, 256, NULL);
    assert_int_equal(n, 1);
    assert_int_equal(records[0].event, TALLY_EVENT_KIND_FLUSH);
    assert_int_equal(records[0].track, TALLY_TRACK_DRIVER);
    assert_int_equal(records[0].type, 2);
    assert_int_equal(records[0].fields[0], tally_context_id(fx->context));
    /* a draw keeps its hardware units busy: spans on their tracks */
    size_t unit_spans = 0;
    egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    n = egl_records_read_all(&brcm, records, 256, NULL);
    for (uint32_t t = TALLY_TRACK_FIRST_UNIT; t < tally_timeline_track_count(fx->device); t++)
        unit_spans += count_kind(records, n, TALLY_EVENT_KIND_UNIT_BUSY, t);
    assert_true(unit_spans >= 2);
}

/* "a maximum of dataBufferBytes will be copied ... Data not collected by this
 * call will be available when called again": whole records only. */
static void a_small_buffer_takes_whole_records_and_leaves_the_rest(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    for (int i = 0; i < DRAWS; i++)
        egl_fixture_draw(fx, draws[i].count, draws[i].instances, draws[i].topology);
    egl_fixture_submit(fx);
    EGLint total = 0, again = 0;
    assert_true(eglGetEventDataBRCM(0, NULL, &total, NULL, NULL));
    assert_true(eglGetEventDataBRCM(0, (void *)&again, &again, NULL, NULL)); /* size 0: a query */
    assert_int_equal(again, total);
    unsigned char *all = malloc((size_t)total);
    assert_non_null(all);
    /* The first records are the driver's submission instant (24 + 20
     * bytes) and the queue's submission begin (44): 50 bytes hold one. */
    unsigned char small[50];
    memset(small, 0xee, sizeof small);
    EGLint written = 0, got = 0;
    assert_true(eglGetEventDataBRCM(sizeof small, small, &written, NULL, NULL));
    assert_int_equal(written, 44);
    assert_int_equal(small[44], 0xee);
    memcpy(all, small, 44);
    got = 44;
    assert_true(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(written, total - 44);
    assert_true(eglGetEventDataBRCM(10, small, &written, NULL, NULL)); /* no record fits */
    assert_int_equal(written, 0);
    while (got < total) {
        assert_true(eglGetEventDataBRCM(100, all + got, &written, NULL, NULL));
        assert_true(written > 0 && written <= 100);
        got += written;
    }
    assert_int_equal(got, total);
    static struct egl_record records[512];
    size_t n = egl_records_decode(&brcm, all, (size_t)total, records, 512);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_DRAW, TALLY_TRACK_QUEUE), 2 * DRAWS);
    free(all);
    assert_true(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(written, 0);
}

static void stopping_keeps_what_was_collected_and_takes_nothing_new(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    assert_true(eglSetEventCollectionBRCM(EGL_STOP_EVENTS_BRCM));
    for (int i = 0; i < 4; i++)
        egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    assert_true(eglSetEventCollectionBRCM(EGL_START_EVENTS_BRCM)); /* resumes */
    egl_fixture_draw(fx, 6, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    static struct egl_record records[512];
    EGLBoolean lost = EGL_TRUE;
    size_t n = egl_records_read_all(&brcm, records, 512, &lost);
    assert_false(lost);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_DRAW, TALLY_TRACK_QUEUE), 4);
    assert_int_equal(count_kind(records, n, TALLY_EVENT_KIND_SUBMISSION, TALLY_TRACK_DRIVER), 2);
}

static void releasing_drops_what_was_not_read(void **state)
{
    struct egl_fixture *fx = *state;
    start_collecting();
    egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    assert_true(eglSetEventCollectionBRCM(EGL_RELEASE_EVENTS_BRCM));
    assert_true(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM));
    EGLint written = -1;
    assert_true(eglGetEventDataBRCM(0, NULL, &written, NULL, NULL));
    assert_int_equal(written, 0);
}

/* Far more events than the ring holds: the oldest are kept whole and the
 * loss is reported once. */
static void overflow_sets_lost_data_and_keeps_what_fit(void **state)
{
    struct egl_fixture *fx = *state;
    struct brcm brcm;
    brcm_load(&brcm);
    start_collecting();
    for (int i = 0; i < 40000; i++)
        egl_fixture_draw(fx, 3, 1, TALLY_TOPOLOGY_TRIANGLE_LIST);
    egl_fixture_submit(fx);
    EGLint size = 0;
    EGLBoolean lost = EGL_FALSE;
    assert_true(eglGetEventDataBRCM(0, NULL, &size, &lost, NULL));
    assert_true(lost); /* a query reports it too, and leaves it */
    unsigned char *data = malloc((size_t)size);
    assert_non_null(data);
    EGLint written = 0;
    lost = EGL_FALSE;
    assert_true(eglGetEventDataBRCM(size, data, &written, &lost, NULL));
    assert_true(lost);
    assert_int_equal(written, size);
    struct egl_record *records = calloc(70000, sizeof *records);
    assert_non_null(records);
    size_t n = egl_records_decode(&brcm, data, (size_t)written, records, 70000);
    assert_int_equal(n, 65536); /* the ring's capacity, docs/egl.md */
    /* what was kept is the start of the run, in order: submission instant and
     * begin, then the first draw */
    assert_int_equal(records[0].event, TALLY_EVENT_KIND_SUBMISSION);
    assert_int_equal(records[1].event, TALLY_EVENT_KIND_SUBMISSION);
    assert_int_equal(records[2].event, TALLY_EVENT_KIND_DRAW);
    assert_int_equal(records[2].fields[0], 3);
    for (size_t i = 1; i < n; i++)
        assert_true(records[i].track != TALLY_TRACK_QUEUE ||
                    records[i].timestamp_us >= records[1].timestamp_us);
    free(records);
    free(data);
    lost = EGL_TRUE;
    assert_true(eglGetEventDataBRCM(0, NULL, &size, &lost, NULL));
    assert_false(lost);
    assert_int_equal(size, 0);
}

/* EGL reports the outcome of a thread's last call: the shim's own errors go
 * through eglGetError, and a later driver error is not hidden by them. */
static void a_later_driver_error_wins_over_the_shims(void **state)
{
    struct egl_fixture *fx = *state;
    assert_false(eglGetEventTrackInfoBRCM(-1, 0, NULL));
    assert_false(eglDestroySurface(fx->display, (EGLSurface)(uintptr_t)0x1234));
    assert_int_equal(eglGetError(), EGL_BAD_SURFACE);
    assert_int_equal(eglGetError(), EGL_SUCCESS);
}

static void a_shim_call_supersedes_an_earlier_driver_error(void **state)
{
    struct egl_fixture *fx = *state;
    assert_false(eglDestroySurface(fx->display, (EGLSurface)(uintptr_t)0x1234));
    assert_false(eglGetEventTrackInfoBRCM(-1, 0, NULL));
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER);
    assert_int_equal(eglGetError(), EGL_SUCCESS);
    assert_false(eglDestroySurface(fx->display, (EGLSurface)(uintptr_t)0x1234));
    assert_true(eglGetEventTrackInfoBRCM(0, 0, NULL));
    assert_int_equal(eglGetError(), EGL_SUCCESS);
}

/* Every EGL call sets the error: a driver call that succeeds after a shim
 * error leaves EGL_SUCCESS (the shim once kept reporting its stale error). */
static void a_later_driver_success_clears_the_shims_error(void **state)
{
    struct egl_fixture *fx = *state;
    EGLint configs = 0;
    assert_false(eglGetEventTrackInfoBRCM(-1, 0, NULL));
    assert_true(eglGetConfigs(fx->display, NULL, 0, &configs));
    assert_int_equal(eglGetError(), EGL_SUCCESS);
    assert_false(eglSetEventCollectionBRCM(EGL_START_EVENTS_BRCM)); /* not acquired */
    assert_true(eglGetConfigs(fx->display, NULL, 0, &configs));
    assert_int_equal(eglGetError(), EGL_SUCCESS);
    assert_false(eglGetEventTrackInfoBRCM(-1, 0, NULL));
    (void)eglGetCurrentContext(); /* a call that cannot fail sets EGL_SUCCESS too */
    assert_int_equal(eglGetError(), EGL_SUCCESS);
    /* With no driver call in between, the shim's error is the last outcome. */
    assert_false(eglSetEventCollectionBRCM(EGL_START_EVENTS_BRCM));
    assert_int_equal(eglGetError(), EGL_BAD_ACCESS);
    assert_int_equal(eglGetError(), EGL_SUCCESS);
}

static void *fail_on_another_thread(void *unused)
{
    (void)unused;
    assert_false(eglSetEventCollectionBRCM(0));
    return (void *)(intptr_t)eglGetError();
}

static void errors_belong_to_the_thread_that_made_them(void **state)
{
    (void)state;
    assert_false(eglGetEventInfoBRCM(-1, 0, NULL, NULL, NULL));
    pthread_t thread;
    void *error = NULL;
    assert_int_equal(pthread_create(&thread, NULL, fail_on_another_thread, NULL), 0);
    assert_int_equal(pthread_join(thread, &error), 0);
    assert_int_equal((intptr_t)error, EGL_BAD_PARAMETER);
    assert_int_equal(eglGetError(), EGL_BAD_PARAMETER); /* this thread's own, still there */
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_extension_is_listed_once_for_an_initialized_display,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(the_extension_is_not_a_client_extension, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(an_uninitialized_display_gets_the_drivers_error,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(
            get_proc_address_hands_out_the_functions_a_linked_program_calls, egl_fixture_setup,
            egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(constants_count_the_engines_tracks_and_event_kinds,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(the_max_string_length_holds_every_name, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(track_names_are_the_driver_the_queue_and_simgpus_units,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(names_are_cut_to_the_buffer_with_their_nul,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(invalid_indices_are_bad_parameters, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(events_describe_their_fields, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(collection_rejects_an_unknown_pname, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(the_sampler_must_be_acquired_before_use, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(data_arguments_are_checked, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(draws_read_back_as_begin_end_pairs_with_their_fields,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(timestamps_are_gpu_microseconds_up_to_now,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(dispatches_carry_group_counts_and_local_size,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(submissions_frames_and_flushes_have_events,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_small_buffer_takes_whole_records_and_leaves_the_rest,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(stopping_keeps_what_was_collected_and_takes_nothing_new,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(releasing_drops_what_was_not_read, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(overflow_sets_lost_data_and_keeps_what_fit,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_later_driver_error_wins_over_the_shims, egl_fixture_setup,
                                        egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_later_driver_success_clears_the_shims_error,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(a_shim_call_supersedes_an_earlier_driver_error,
                                        egl_fixture_setup, egl_fixture_teardown),
        cmocka_unit_test_setup_teardown(errors_belong_to_the_thread_that_made_them,
                                        egl_fixture_setup, egl_fixture_teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
