/*
 * tally_bench_md: what stream sampling costs a program. The same workload
 * runs side by side without sampling and while a reader thread samples
 * RenderBasic at 1 ms and at 100 us (open, wait, read, calculate, as an MDAPI
 * tool does), on a realtime-clock device. Rounds alternate the modes so the
 * machine's noise hits them alike; the median round of each is reported.
 *
 * A fourth run samples at 100 us with a reader that pauses 10 ms after each
 * read, as TALLY_SAMPLE's does.
 *
 * Usage: tally_bench_md [--quick]   (--quick: 2 rounds of 0.3 s)
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "workload.h"

#ifndef TALLY_BENCH_BUILD_TYPE
#define TALLY_BENCH_BUILD_TYPE "unknown"
#endif

struct mode {
    const char *name;
    uint32_t interval_ns; /* 0: no sampling */
    uint32_t batch_ms;    /* the reader pauses this long after each read */
};

/* The spec's loop wakes for every report; TALLY_SAMPLE's reader reads in
 * 10 ms batches (the last row). */
static const struct mode modes[] = {
    {"none", 0, 0}, {"1 ms", 1000000, 0}, {"100 us", 100000, 0}, {"100 us/b", 100000, 10}};
enum { MODES = sizeof(modes) / sizeof(modes[0]), MAX_ROUNDS = 15, WARMUP_FRAMES = 20 };

struct figures {
    double frames_per_s, cpu_ms_per_frame, reports_per_s;
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- the sampling tool ----------------------------------------------------------- */

struct sampler_thread {
    uint32_t batch_ms;
    tally_md_concurrent_group *group;
    tally_md_metric_set *set;
    atomic_bool stop;
    uint64_t reports;
    double checksum; /* keeps the calculation honest */
};

/* Reads what waits and calculates it, the last report carried to the front
 * of the buffer to open the next interval. */
static void read_and_calculate(struct sampler_thread *t, uint8_t *raw, tally_md_typed_value *out,
                               uint32_t capacity)
{
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(t->set);
    size_t width = (size_t)p->metrics_count + p->information_count;
    uint32_t carried = t->reports ? 1 : 0, count = capacity;
    if (tally_md_read_io_stream(t->group, &count, raw + (size_t)carried * p->raw_report_size, 0,
                                NULL) != TALLY_OK ||
        !count)
        return;
    uint32_t total = count + carried, rows = 0;
    tally_md_calculate_metrics(t->set, raw, (size_t)total * p->raw_report_size, out,
                               (size_t)total * width, &rows);
    t->reports += count;
    for (uint32_t r = 0; r < rows; r++)
        t->checksum += tally_md_typed_value_as_double(&out[(size_t)r * width]);
    memmove(raw, raw + (size_t)(total - 1) * p->raw_report_size, p->raw_report_size);
}

static void *sample(void *arg)
{
    struct sampler_thread *t = arg;
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(t->set);
    enum { CAPACITY = 4096 };
    uint8_t *raw = malloc((size_t)(CAPACITY + 1) * p->raw_report_size);
    tally_md_typed_value *out =
        malloc((size_t)(CAPACITY + 1) * (p->metrics_count + p->information_count) * sizeof(*out));
    const struct timespec pause = {0, (long)t->batch_ms * 1000000L};
    while (raw && out && !atomic_load(&t->stop)) {
        if (tally_md_wait_for_reports(t->group, 10) != TALLY_OK)
            continue;
        read_and_calculate(t, raw, out, CAPACITY);
        if (t->batch_ms)
            nanosleep(&pause, NULL);
    }
    free(raw);
    free(out);
    return NULL;
}

/* --- one run ------------------------------------------------------------------------- */

static int fail(const char *what, tally_status s)
{
    fprintf(stderr, "tally_bench_md: %s: %s\n", what, tally_status_string(s));
    return -1;
}

static int run(const struct workload *w, const struct mode *mode, double seconds,
               struct figures *out)
{
    tally_device_options options = {.clock = TALLY_CLOCK_REALTIME};
    tally_device *device = NULL;
    tally_md_device *md = NULL;
    tally_status s = tally_device_open(&options, &device, NULL, 0);
    if (s != TALLY_OK || (s = tally_md_device_open(device, &md)) != TALLY_OK)
        return fail("open", s);
    struct sampler_thread t = {0};
    pthread_t thread;
    if (mode->interval_ns) {
        tally_md_concurrent_group *oa = tally_md_device_get_concurrent_group(md, 0);
        t.set = tally_md_concurrent_group_get_metric_set(oa, 0);
        t.group = oa;
        t.batch_ms = mode->batch_ms;
        uint32_t interval = mode->interval_ns, size = 0;
        if ((s = tally_md_open_io_stream(oa, t.set, &interval, &size)) != TALLY_OK)
            return fail("open stream", s);
        atomic_init(&t.stop, false);
        pthread_create(&thread, NULL, sample, &t);
    }
    void *state = w->open(device);
    if (!state)
        return fail("workload", TALLY_ERROR_OUT_OF_MEMORY);
    for (int i = 0; i < WARMUP_FRAMES; i++)
        w->frame(state);
    uint64_t reports_before = t.reports; /* the reader's, read racily: only a figure */
    uint64_t start = clock_ns(CLOCK_MONOTONIC), cpu_start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t frames = 0, deadline = start + (uint64_t)(seconds * 1e9);
    while (clock_ns(CLOCK_MONOTONIC) < deadline) {
        w->frame(state);
        frames++;
    }
    uint64_t elapsed = clock_ns(CLOCK_MONOTONIC) - start;
    uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
    w->close(state);
    if (mode->interval_ns) {
        atomic_store(&t.stop, true);
        pthread_join(thread, NULL);
    }
    *out = (struct figures){frames / (elapsed / 1e9), cpu / 1e6 / frames,
                            (t.reports - reports_before) / (elapsed / 1e9)};
    tally_md_device_close(md);
    tally_device_close(device);
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int bench(const struct workload *w, int rounds, double seconds);

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int rounds = quick ? 2 : 7;
    double seconds = quick ? 0.3 : 1.5;
    const struct workload *workloads[] = {&streams_paced_workload, &streams_unpaced_workload};
    for (int i = 0; i < 2; i++)
        if (bench(workloads[i], rounds, seconds) != 0)
            return 1;
    return 0;
}

static int bench(const struct workload *w, int rounds, double seconds)
{
    double fps[MODES][MAX_ROUNDS], cpu[MODES][MAX_ROUNDS], reports[MODES][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        for (int m = 0; m < MODES; m++) {
            int k = (m + r) % MODES; /* each round starts with another mode */
            struct figures f;
            if (run(w, &modes[k], seconds, &f) != 0)
                return 1;
            fps[k][r] = f.frames_per_s;
            cpu[k][r] = f.cpu_ms_per_frame;
            reports[k][r] = f.reports_per_s;
        }
    }
    printf("\ntally_bench_md (%s build): workload \"%s\": %s\n", TALLY_BENCH_BUILD_TYPE, w->name,
           w->description);
    printf(
        "realtime clock, RenderBasic sampled by a reader thread; median of %d rounds of %.1f s\n\n",
        rounds, seconds);
    printf("%-9s %10s %11s %13s %12s %15s %13s\n", "sampling", "frames/s", "ms/frame",
           "CPU ms/frame", "reports/s", "frame overhead", "CPU overhead");
    double base = 0, base_cpu = 0;
    for (int m = 0; m < MODES; m++) {
        double f = median(fps[m], rounds), c = median(cpu[m], rounds);
        double rep = median(reports[m], rounds);
        if (m == 0)
            base = f, base_cpu = c;
        printf("%-9s %10.1f %11.3f %13.3f %12.0f %+14.1f%% %+12.1f%%\n", modes[m].name, f,
               1000.0 / f, c, rep, (base / f - 1.0) * 100.0, (c / base_cpu - 1.0) * 100.0);
    }
    return 0;
}
