/*
 * tally_bench's report figures:
 *  - CSV rows per second of CPU for 15 counters: tally_report_write (format
 *    and write, one thread) of rows whose values vary like a frame's;
 *  - a pre-recorded frame (10,000 draws of one triangle, recorded once,
 *    submitted 50 times, as engines replay frames): process CPU time, every
 *    thread, per submitted draw, with nobody listening and with a per-draw
 *    CSV report of the same 15 counters.
 */
#include "bench_report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <tally/tally.h>

const char bench_report_counters[] =
    "GpuTime,IaVertices,IaPrimitives,VsInvocations,ClipperPrimitives,RasterizedPixels,"
    "FsInvocations,CsInvocations,ShaderAluInstructions,L2CacheMisses,DramReadBytes,"
    "DramWriteBytes,DrawCalls,GpuBusy,L2CacheHitRate";

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

double bench_report_rows_per_second(uint64_t rows, double *user_ns, double *row_bytes)
{
    const tally_catalogue *cat = NULL;
    if (tally_backend_catalogue("simgpu", &cat) != TALLY_OK)
        return 0;
    uint32_t columns[32], count = 0;
    char list[sizeof bench_report_counters];
    memcpy(list, bench_report_counters, sizeof list);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && count < 32;
         tok = strtok_r(NULL, ",", &save))
        if (tally_catalogue_find(cat, tok, &columns[count]) == TALLY_OK)
            count++;
    char path[128];
    temp_path(path, sizeof path, "rows");
    tally_report *report = NULL;
    if (tally_report_open(path, TALLY_REPORT_CSV, cat, columns, count, &report) != TALLY_OK)
        return 0;
    tally_value values[32];
    tally_command_record record = {.api_name = "vkCmdDrawIndexed",
                                   .kind = "draw",
                                   .context = 1,
                                   .context_api = "vulkan",
                                   .submission = 1,
                                   .stream = 1,
                                   .label = "frame/opaque"};
    bool floating[32];
    for (uint32_t c = 0; c < count; c++)
        floating[c] = tally_catalogue_counter(cat, columns[c])->storage == TALLY_STORAGE_FLOAT64;
    uint64_t ns = 1000000;
    double t0 = cpu_seconds(), u0 = user_seconds();
    for (uint64_t i = 0; i < rows; i++) {
        /* A frame's spread: sizes from a few to thousands, a new submission
         * every 1000 draws, ratios that change with the draw. */
        uint64_t size = 3 + (i * 2654435761u >> 7) % 6000;
        record.sequence = i + 1;
        record.submission = 1 + i / 1000;
        record.begin_ns = ns;
        ns += 200 + size / 4;
        record.end_ns = ns;
        for (uint32_t c = 0; c < count; c++) {
            if (floating[c])
                values[c].f64 = 100.0 * (double)(size % 97) / 97.0;
            else
                values[c].u64 = size * (c + 1);
        }
        if (tally_report_write(report, &record, values) != TALLY_OK)
            break;
    }
    tally_status s = tally_report_close(report);
    double seconds = cpu_seconds() - t0;
    *user_ns = (user_seconds() - u0) * 1e9 / (double)rows;
    *row_bytes = (double)file_size(path) / (double)rows;
    remove(path);
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

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

enum { FRAME_ROUNDS = 5 };

struct bench_report_figures bench_report_run(bool quick)
{
    struct bench_report_figures f = {.rows = quick ? 1000000u : 5000000u,
                                     .rounds = quick ? 1 : FRAME_ROUNDS};
    f.rows_per_s = bench_report_rows_per_second(f.rows, &f.rows_user_ns, &f.row_bytes);
    double idle[FRAME_ROUNDS], reporting[FRAME_ROUNDS];
    for (int r = 0; r < f.rounds; r++) {
        uint64_t unused;
        idle[r] = bench_report_frame(false, 10000, 50, &unused);
        reporting[r] = bench_report_frame(true, 10000, 50, &f.frame_bytes);
    }
    f.idle_ns = median(idle, f.rounds);
    f.report_ns = median(reporting, f.rounds);
    return f;
}

void bench_report_describe(const struct bench_report_figures *f)
{
    printf("report:     %llu rows of %s (%.1f bytes a row);\n"
           "            frame of 10000 one-triangle draws submitted 50 times, %d rounds "
           "(%.1f MB CSV a run), process CPU\n",
           (unsigned long long)f->rows, bench_report_counters, f->row_bytes, f->rounds,
           (double)f->frame_bytes / 1e6);
}
