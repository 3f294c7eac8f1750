/*
 * tally_bench's report figures:
 *  - CSV rows per second of CPU for 15 counters, rows whose values vary like
 *    a frame's (made before the clock starts): through tally_report_write
 *    (format and write, one thread), and through the engine's own path (the
 *    queue thread's hand-off through the report ring, formatting and
 *    writing on its writer thread, both threads' CPU);
 *  - a pre-recorded frame (10,000 draws of one triangle, recorded once,
 *    submitted 50 times, as engines replay frames): process CPU time, every
 *    thread, per submitted draw, with nobody listening and with a per-draw
 *    CSV report of the same 15 counters.
 */
#include "bench_report.h"
#include "bench_clock.h"
#include "bench_rows.h"
#include "bench_stats.h"
#include "tally_door.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tally/tally.h>

#include "report_ring.h"

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double user_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6;
}

static void temp_path(char *path, size_t size, const char *what)
{
    snprintf(path, size, "/tmp/tally_bench_%s_%ld.csv", what, (long)getpid());
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The engine's writer thread's sink (engine/command_report.c's write_row). */
static tally_status write_row(void *user, const tally_command_record *record,
                              const tally_value *values)
{
    return tally_report_write(user, record, values);
}

/* A CSV report of the 15 columns on a temporary file, and its rows'
 * values. */
struct rows_report {
    uint32_t count;
    struct bench_rows *table;
    tally_report *report;
    char path[128];
};

static bool rows_report_open(struct rows_report *r, const char *what)
{
    const tally_catalogue *cat = NULL;
    if (tally_backend_catalogue("simgpu", &cat) != TALLY_OK)
        return false;
    uint32_t columns[32];
    r->count = bench_rows_columns(cat, columns);
    r->table = bench_rows_make(cat, columns, r->count);
    if (!r->table)
        return false;
    temp_path(r->path, sizeof r->path, what);
    r->report = NULL;
    if (tally_report_open(r->path, TALLY_REPORT_CSV, cat, columns, r->count, &r->report) ==
        TALLY_OK)
        return true;
    bench_rows_free(r->table);
    return false;
}

/* The file's size; the report is closed already. */
static uint64_t rows_report_remove(struct rows_report *r)
{
    uint64_t size = file_size(r->path);
    remove(r->path);
    bench_rows_free(r->table);
    return size;
}

double bench_report_rows_per_second(uint64_t rows, enum bench_rows_path way, double *user_ns,
                                    double *row_bytes)
{
    struct rows_report r;
    if (!rows_report_open(&r, "rows"))
        return 0;
    report_ring *ring = NULL;
    if (way == BENCH_ROWS_ENGINE &&
        report_ring_open(r.count, &(report_ring_sink){.row = write_row, .user = r.report}, NULL,
                         &ring) != TALLY_OK) {
        tally_report_close(r.report);
        rows_report_remove(&r);
        return 0;
    }
    tally_command_record record = bench_rows_record;
    uint64_t ns = 1000000;
    size_t value_bytes = r.count * sizeof(tally_value);
    double t0 = cpu_seconds(), u0 = user_seconds();
    tally_status s = TALLY_OK;
    for (uint64_t i = 0; i < rows && s == TALLY_OK; i++) {
        bench_rows_next_record(&record, r.table, i, &ns);
        if (way == BENCH_ROWS_PUBLIC) {
            s = tally_report_write(r.report, &record, bench_rows_values(r.table, i));
            continue;
        }
        /* as the queue thread hands a row over */
        tally_value *slot = report_ring_append(ring, &record);
        if (slot)
            memcpy(slot, bench_rows_values(r.table, i), value_bytes);
    }
    if (ring && report_ring_close(ring) != TALLY_OK)
        s = TALLY_ERROR_IO;
    if (tally_report_close(r.report) != TALLY_OK)
        s = TALLY_ERROR_IO;
    double seconds = cpu_seconds() - t0;
    *user_ns = (user_seconds() - u0) * 1e9 / (double)rows;
    *row_bytes = (double)rows_report_remove(&r) / (double)rows;
    return s == TALLY_OK ? (double)rows / seconds : 0;
}

/* CPU ns per submitted draw of the pre-recorded frame. */
double bench_report_frame(bool report, uint32_t draws, uint32_t submits, uint64_t *bytes)
{
    char path[128];
    temp_path(path, sizeof path, "frame");
    tally_device_options options = {.report_path = report ? path : NULL,
                                    .report_counters = bench_report_counters};
    tally_device *device = NULL;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    if (tally_device_open(&options, &device, NULL, 0) != TALLY_OK ||
        tally_context_create(device, "vulkan", &context) != TALLY_OK ||
        tally_stream_create(context, &stream) != TALLY_OK)
        return 0;
    tally_draw_lane *lane = tally_stream_draw_lane(stream);
    tally_render_state render = {
        .width = 1920, .height = 1080, .layers = 1, .samples = 1, .color_bytes_per_pixel = 4};
    tally_stream_set_render_state(stream, &render);
    tally_packed_draw triangle = {.api_name = "vkCmdDraw",
                                  .count = 3,
                                  .instance_count = 1,
                                  .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    for (uint32_t i = 0; i < draws; i++)
        tally_stream_draw_inline(stream, lane, &triangle);
    tally_stream_end_recording(stream);
    tally_submission submission = {
        .streams = &stream, .stream_count = 1, .api_name = "vkQueueSubmit"};
    double t0 = cpu_seconds();
    for (uint32_t i = 0; i < submits; i++)
        tally_submit(device, &submission, NULL);
    tally_device_wait_idle(device);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device); /* the report's last rows are written here */
    double seconds = cpu_seconds() - t0;
    *bytes = 0;
    if (report) {
        *bytes = file_size(path);
        remove(path);
    }
    return seconds * 1e9 / ((double)draws * submits);
}

enum { FRAME_ROUNDS = 5, ROWS_ROUNDS = 5 };

/* The two row paths over interleaved rounds, so that a slow spell of a
 * shared machine falls on both alike; each figure is its median. */
static void rows_rounds(struct bench_report_figures *f)
{
    double public[ROWS_ROUNDS], public_user[ROWS_ROUNDS], engine[ROWS_ROUNDS];
    for (int r = 0; r < f->row_rounds; r++) {
        double unused_ns, unused_bytes;
        public[r] = bench_report_rows_per_second(f->rows, BENCH_ROWS_PUBLIC, &public_user[r],
                                                 &f->row_bytes);
        engine[r] =
            bench_report_rows_per_second(f->rows, BENCH_ROWS_ENGINE, &unused_ns, &unused_bytes);
    }
    f->rows_per_s = bench_median(public, f->row_rounds); /* sorted: the extremes are at the ends */
    f->rows_slowest_per_s = public[0];
    f->rows_fastest_per_s = public[f->row_rounds - 1];
    f->rows_user_ns = bench_median(public_user, f->row_rounds);
    f->engine_rows_per_s = bench_median(engine, f->row_rounds);
}

struct bench_report_figures bench_report_run(bool quick)
{
    struct bench_report_figures f = {.rows = quick ? 1000000u : 2000000u,
                                     .row_rounds = quick ? 1 : ROWS_ROUNDS,
                                     .rounds = quick ? 1 : FRAME_ROUNDS};
    double clock_before = bench_clock_ghz();
    rows_rounds(&f);
    f.clock_ghz = (clock_before + bench_clock_ghz()) / 2;
    double idle[FRAME_ROUNDS], reporting[FRAME_ROUNDS];
    for (int r = 0; r < f.rounds; r++) {
        uint64_t unused;
        idle[r] = bench_report_frame(false, 10000, 50, &unused);
        reporting[r] = bench_report_frame(true, 10000, 50, &f.frame_bytes);
    }
    f.idle_ns = bench_median(idle, f.rounds);
    f.report_ns = bench_median(reporting, f.rounds);
    return f;
}

void bench_report_describe(const struct bench_report_figures *f)
{
    printf("report:     %llu rows of %s (%.1f bytes a row) a path, %d interleaved rounds, "
           "medians;\n"
           "            frame of 10000 one-triangle draws submitted 50 times, %d rounds "
           "(%.1f MB CSV a run), process CPU\n",
           (unsigned long long)f->rows, bench_report_counters, f->row_bytes, f->row_rounds,
           f->rounds, (double)f->frame_bytes / 1e6);
}
