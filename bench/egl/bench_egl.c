/*
 * tally_bench_egl: what EGL_BRCM_event_monitor costs and how much it keeps up
 * with, on the process's shared engine device, read through the shim's own
 * functions (linked directly).
 *
 *  1. Cost per recorded event, in two parts: on the queue thread, the wall
 *     time of executing recorded frames of draws with collection started
 *     minus the time with collection stopped; for the reader, the time of
 *     taking every record through eglGetEventDataBRCM. Each divided by the
 *     events read; best of 5 runs.
 *  2. The largest event rate the ring sustains without loss while a reader
 *     polls every millisecond: a producer thread submits frames paced to a
 *     target event rate for a while; a reader thread wakes every 1 ms and
 *     takes everything with one eglGetEventDataBRCM call. The rate doubles
 *     until data is lost or the producer cannot reach it.
 *
 * Usage: tally_bench_egl [--quick]
 */
#define EGL_EGLEXT_PROTOTYPES
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tally/egl_event_monitor.h"
#include "tally/tally.h"

#ifndef TALLY_BENCH_BUILD_TYPE
#define TALLY_BENCH_BUILD_TYPE "unknown"
#endif

#define RUNS 5
/* The ring holds 65536 records of at most 72 bytes. */
#define READ_BUFFER_BYTES (65536u * 72u)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "tally_bench_egl: %s failed (EGL error 0x%x)\n", what,
                (unsigned)eglGetError());
        exit(1);
    }
}

static struct bench {
    tally_device *device;
    tally_context *context;
    tally_stream *stream;
    unsigned char *buffer;
    EGLint record_bytes[TALLY_EVENT_KIND_COUNT]; /* header + totalDataBytes */
} bench;

/* A frame of `draws` indexed triangle lists of varying size. */
static void record_frame(uint32_t draws)
{
    for (uint32_t i = 0; i < draws; i++) {
        tally_draw draw = {.api_name = "glDrawElements",
                           .count = 300 + 30 * (i % 64),
                           .instance_count = 1,
                           .flags = TALLY_DRAW_INDEXED,
                           .index_size = 2,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        check(tally_stream_draw(bench.stream, &draw) == TALLY_OK, "tally_stream_draw");
    }
}

static void submit_frame(void)
{
    tally_submission submission = {.streams = &bench.stream,
                                   .stream_count = 1,
                                   .flags = TALLY_SUBMIT_CONSUME,
                                   .api_name = "bench"};
    check(tally_submit(bench.device, &submission, NULL) == TALLY_OK, "tally_submit");
}

static uint64_t count_records(const unsigned char *data, EGLint bytes)
{
    uint64_t records = 0;
    for (EGLint at = 0; at < bytes; records++) {
        uint32_t event;
        memcpy(&event, data + at + 16, 4);
        at += bench.record_bytes[event];
    }
    return records;
}

/* Takes everything collected; returns the records taken. */
static uint64_t drain(EGLBoolean *lost)
{
    uint64_t records = 0;
    EGLint written = 0;
    *lost = EGL_FALSE;
    do {
        EGLBoolean lost_now = EGL_FALSE;
        check(eglGetEventDataBRCM(READ_BUFFER_BYTES, bench.buffer, &written, &lost_now, NULL),
              "eglGetEventDataBRCM");
        records += count_records(bench.buffer, written);
        *lost = *lost || lost_now;
    } while (written > 0);
    return records;
}

/* --- 1. cost per recorded event ---------------------------------------------- */

struct timing {
    double execute_ns; /* submitting and running the frames */
    double read_ns;    /* taking their records */
    uint64_t events;
};

/* Frames are executed in groups that fit the ring (5 frames of 2000 draws
 * make about 60,000 events), and each group's records are read in one go. */
#define FRAMES_PER_READ 5

static struct timing run_frames(uint32_t frames, uint32_t draws, bool collecting)
{
    check(eglSetEventCollectionBRCM(collecting ? EGL_START_EVENTS_BRCM : EGL_STOP_EVENTS_BRCM),
          "eglSetEventCollectionBRCM");
    EGLBoolean lost = EGL_FALSE;
    drain(&lost);
    struct timing t = {0};
    for (uint32_t f = 0; f < frames; f++) {
        record_frame(draws);
        uint64_t start = now_ns();
        submit_frame();
        tally_device_wait_idle(bench.device);
        uint64_t executed = now_ns();
        t.execute_ns += (double)(executed - start);
        if ((f + 1) % FRAMES_PER_READ && f + 1 < frames)
            continue;
        t.events += drain(&lost);
        t.read_ns += (double)(now_ns() - executed);
        check(!lost, "collecting without loss");
    }
    return t;
}

struct cost {
    double queue_ns, reader_ns;
};

/* Best of RUNS for each side. */
static struct cost cost_per_event(bool quick)
{
    uint32_t frames = quick ? 20 : 200, draws = 2000;
    struct cost best = {1e30, 1e30};
    for (int run = 0; run < RUNS; run++) {
        struct timing off = run_frames(frames, draws, false);
        struct timing on = run_frames(frames, draws, true);
        double queue = (on.execute_ns - off.execute_ns) / (double)on.events;
        double reader = on.read_ns / (double)on.events;
        if (run == 0)
            printf("  %u frames of %u draws: %llu events; executing took %.1f ms without "
                   "collection, %.1f ms with; reading %.1f ms\n",
                   frames, draws, (unsigned long long)on.events, off.execute_ns / 1e6,
                   on.execute_ns / 1e6, on.read_ns / 1e6);
        best.queue_ns = queue < best.queue_ns ? queue : best.queue_ns;
        best.reader_ns = reader < best.reader_ns ? reader : best.reader_ns;
    }
    return best;
}

/* --- 2. sustained rate -------------------------------------------------------- */

static struct reader {
    atomic_bool stop;
    atomic_bool lost;
    atomic_uint_fast64_t records;
} reader;

static void *poll_every_millisecond(void *unused)
{
    (void)unused;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&reader.stop)) {
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        EGLint written = 0;
        EGLBoolean lost = EGL_FALSE;
        check(eglGetEventDataBRCM(READ_BUFFER_BYTES, bench.buffer, &written, &lost, NULL),
              "eglGetEventDataBRCM");
        atomic_fetch_add(&reader.records, count_records(bench.buffer, written));
        if (lost)
            atomic_store(&reader.lost, true);
    }
    return NULL;
}

/* Events of one frame of `draws`, measured. */
static uint64_t events_per_frame(uint32_t draws)
{
    return run_frames(1, draws, true).events;
}

/* Runs the producer at `rate` events/s for duration_ns; returns the rate
 * reached, and whether the reader lost data. */
static double sustain(double rate, uint32_t draws, uint64_t frame_events, uint64_t duration_ns,
                      bool *lost)
{
    EGLBoolean was_lost;
    drain(&was_lost);
    atomic_store(&reader.stop, false);
    atomic_store(&reader.lost, false);
    atomic_store(&reader.records, 0);
    pthread_t thread;
    pthread_create(&thread, NULL, poll_every_millisecond, NULL);
    double frame_period_ns = (double)frame_events / rate * 1e9;
    uint64_t start = now_ns(), produced = 0;
    for (uint64_t f = 0;; f++) {
        uint64_t due = start + (uint64_t)(frame_period_ns * (double)f);
        struct timespec at = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL); /* leaves the core free */
        if (now_ns() - start >= duration_ns)
            break;
        record_frame(draws);
        submit_frame();
        produced += frame_events;
    }
    tally_device_wait_idle(bench.device);
    uint64_t elapsed = now_ns() - start;
    atomic_store(&reader.stop, true);
    pthread_join(thread, NULL);
    EGLBoolean lost_at_end = EGL_FALSE;
    uint64_t read = atomic_load(&reader.records) + drain(&lost_at_end);
    *lost = atomic_load(&reader.lost) || lost_at_end || read != produced;
    return (double)produced / ((double)elapsed / 1e9);
}

/* Each rate gets two tries: on a shared machine the reader thread can be
 * descheduled for longer than the ring lasts, which says nothing of the ring. */
static void sustained_rate(bool quick)
{
    uint32_t draws = 100;
    uint64_t frame_events = events_per_frame(draws);
    uint64_t duration = quick ? 200000000u : 1000000000u;
    printf("  frames of %u draws, %llu events each; reader polls every 1 ms; ring of 65536\n",
           draws, (unsigned long long)frame_events);
    printf("  %14s %14s %s\n", "target ev/s", "reached ev/s", "lost");
    double best = 0;
    bool producer_limited = false;
    for (double rate = 1e6; !producer_limited; rate *= 2) {
        bool lost = true;
        double reached = 0;
        for (int attempt = 0; attempt < 2 && lost; attempt++) {
            reached = sustain(rate, draws, frame_events, duration, &lost);
            printf("  %14.0f %14.0f %s\n", rate, reached, lost ? "yes" : "no");
        }
        if (lost)
            break;
        best = reached;
        producer_limited = reached < rate * 0.9;
    }
    if (producer_limited)
        printf("  the producer (the simulated GPU executing the frames) cannot go faster\n");
    printf("largest rate without loss: %.2f M events/s%s\n", best / 1e6,
           producer_limited ? " (the producer's maximum: the ring was not the limit)" : "");
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    check(tally_device_acquire_shared(&bench.device) == TALLY_OK, "opening the device");
    check(tally_context_create(bench.device, "bench", &bench.context) == TALLY_OK,
          "tally_context_create");
    check(tally_stream_create(bench.context, &bench.stream) == TALLY_OK, "tally_stream_create");
    bench.buffer = malloc(READ_BUFFER_BYTES);
    check(bench.buffer != NULL, "malloc");
    for (EGLint e = 0; e < TALLY_EVENT_KIND_COUNT; e++) {
        EGLint data_bytes = 0;
        check(eglGetEventInfoBRCM(e, 0, NULL, NULL, &data_bytes), "eglGetEventInfoBRCM");
        bench.record_bytes[e] = TALLY_EGL_RECORD_HEADER_BYTES + data_bytes;
    }
    check(eglSetEventCollectionBRCM(EGL_ACQUIRE_EVENTS_BRCM), "acquiring the sampler");
    printf("tally_bench_egl (%s build)\n", TALLY_BENCH_BUILD_TYPE);
    printf("1. cost per recorded event\n");
    struct cost cost = cost_per_event(quick);
    printf("cost per recorded event: %.1f ns on the queue thread + %.1f ns to read = %.1f ns "
           "(best of %d)\n",
           cost.queue_ns, cost.reader_ns, cost.queue_ns + cost.reader_ns, RUNS);
    printf("2. sustained event rate\n");
    sustained_rate(quick);
    eglSetEventCollectionBRCM(EGL_RELEASE_EVENTS_BRCM);
    tally_stream_destroy(bench.stream);
    tally_context_destroy(bench.context);
    tally_device_release_shared(bench.device);
    free(bench.buffer);
    return 0;
}
