/*
 * tally_bench: the engine's two performance figures.
 *
 *  1. Recording cost: nanoseconds to append one command to a stream
 *     (tally_stream_draw, tally_stream_dispatch). Best of 5 runs.
 *  2. simgpu throughput: simulated draws per second on one core, for a
 *     recorded frame of a realistic command mix submitted repeatedly to a
 *     virtual-clock device; plain, with a timeline reader, and with a
 *     per-command CSV report (the last two are informative).
 *  3. The per-draw report (bench_report.c): CSV rows per second of CPU for 15
 *     counters, and the CPU per submitted draw of a pre-recorded frame with
 *     nobody listening and with the report; median of interleaved rounds.
 *
 * Usage: tally_bench [--quick] [--report]
 *   --quick:  about 10x fewer iterations
 *   --report: only the per-draw report's figures (3.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tally/tally.h>

#include "bench_report.h"
#include "engine.h"

#ifndef TALLY_BENCH_BUILD_TYPE
#define TALLY_BENCH_BUILD_TYPE "unknown"
#endif

#define RECORD_RUNS 5
#define RECORD_TARGET_NS 20.0
#define THROUGHPUT_TARGET 2.0e6
#define ROWS_TARGET 3.0e6

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, tally_status s)
{
    fprintf(stderr, "tally_bench: %s: %s\n", what, tally_status_string(s));
    exit(1);
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        tally_status s_ = (call);                                                                  \
        if (s_ != TALLY_OK)                                                                        \
            die(#call, s_);                                                                        \
    } while (0)

static tally_device *open_device(const char *report_path)
{
    tally_device_options options = {0};
    options.clock = TALLY_CLOCK_VIRTUAL;
    options.report_path = report_path;
    tally_device *device = NULL;
    char error[256] = "";
    tally_status s = tally_device_open(&options, &device, error, sizeof(error));
    if (s != TALLY_OK) {
        fprintf(stderr, "tally_bench: cannot open device: %s\n",
                error[0] ? error : tally_status_string(s));
        exit(1);
    }
    return device;
}

/* ---- 1. recording cost ------------------------------------------------- */

static const tally_draw record_draw = {
    .api_name = "vkCmdDrawIndexed",
    .count = 3000,
    .instance_count = 1,
    .flags = TALLY_DRAW_INDEXED,
    .topology = TALLY_TOPOLOGY_TRIANGLE_LIST,
    .index_size = 2,
};

static const tally_dispatch record_dispatch = {
    .api_name = "vkCmdDispatch",
    .groups = {80, 45, 1},
    .local_size = {16, 16, 1},
};

enum record_kind { RECORD_DRAW, RECORD_DISPATCH };

/* Best ns per command over RECORD_RUNS runs of `total` appends. */
static double bench_record(tally_stream *stream, enum record_kind kind, uint64_t total,
                           uint64_t reset_every)
{
    double best = 1e30;
    for (int run = 0; run < RECORD_RUNS; run++) {
        CHECK(tally_stream_reset(stream));
        uint64_t t0 = now_ns();
        for (uint64_t done = 0; done < total; done += reset_every) {
            uint64_t n = total - done < reset_every ? total - done : reset_every;
            if (kind == RECORD_DRAW) {
                for (uint64_t i = 0; i < n; i++)
                    if (tally_stream_draw(stream, &record_draw) != TALLY_OK)
                        die("tally_stream_draw", TALLY_ERROR_OUT_OF_MEMORY);
            } else {
                for (uint64_t i = 0; i < n; i++)
                    if (tally_stream_dispatch(stream, &record_dispatch) != TALLY_OK)
                        die("tally_stream_dispatch", TALLY_ERROR_OUT_OF_MEMORY);
            }
            CHECK(tally_stream_reset(stream));
        }
        double ns = (double)(now_ns() - t0) / (double)total;
        if (ns < best)
            best = ns;
    }
    return best;
}

/* ---- 2. simgpu throughput ---------------------------------------------- */

static uint32_t rng_state = 0x2545f491u;
static uint32_t rng(void)
{
    /* xorshift32: the same frame on every run */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}
static uint32_t rng_range(uint32_t lo, uint32_t hi)
{
    return lo + rng() % (hi - lo + 1);
}

static const tally_program_desc opaque_desc = {
    .name = "opaque",
    .stages = {[TALLY_STAGE_VERTEX] = {.present = true, .mix = {28, 0, 3, 0, 1}, .input_bytes = 32},
               [TALLY_STAGE_FRAGMENT] = {.present = true, .mix = {64, 4, 1, 0, 3}}},
};
static const tally_program_desc foliage_desc = {
    .name = "foliage",
    .stages = {[TALLY_STAGE_VERTEX] = {.present = true, .mix = {36, 1, 4, 0, 2}, .input_bytes = 48},
               [TALLY_STAGE_FRAGMENT] = {.present = true,
                                         .mix = {40, 2, 0, 0, 4},
                                         .discards = true}},
};
static const tally_program_desc compute_desc = {
    .name = "lighting",
    .stages = {[TALLY_STAGE_COMPUTE] = {.present = true,
                                        .mix = {90, 6, 8, 2, 6},
                                        .local_size = {8, 8, 1}}},
};

static const tally_render_state render_opaque = {
    .width = 1920,
    .height = 1080,
    .layers = 1,
    .samples = 1,
    .color_bytes_per_pixel = 8,
    .depth_bytes_per_sample = 4,
    .flags = TALLY_RENDER_DEPTH_TEST | TALLY_RENDER_DEPTH_WRITE | TALLY_RENDER_CULL,
};
static const tally_render_state render_blend = {
    .width = 1920,
    .height = 1080,
    .layers = 1,
    .samples = 1,
    .color_bytes_per_pixel = 8,
    .depth_bytes_per_sample = 4,
    .flags = TALLY_RENDER_DEPTH_TEST | TALLY_RENDER_DEPTH_WRITE | TALLY_RENDER_BLEND,
};

static const char *const marker_counters[] = {"GpuTime", "IaVertices", "FsInvocations",
                                              "ShaderAluInstructions"};
#define MARKER_COUNTERS (sizeof(marker_counters) / sizeof(marker_counters[0]))

struct frame_counts {
    uint64_t work;                                /* draws + dispatches + transfers */
    uint64_t draws, dispatches, transfers, state; /* state: binds, render states, markers */
};

static void record_one_draw(tally_stream *s)
{
    tally_draw d = {.instance_count = 1};
    uint32_t r = rng() % 100;
    if (r < 75) { /* indexed triangle list, no index data: the profile's reuse ratio */
        d.api_name = "vkCmdDrawIndexed";
        d.count = rng_range(100, 2000) * 3;
        d.first = rng_range(0, 1u << 16) * 3;
        d.flags = TALLY_DRAW_INDEXED;
        d.topology = TALLY_TOPOLOGY_TRIANGLE_LIST;
        d.index_size = (rng() & 7) ? 2 : 4;
    } else if (r < 93) { /* non-indexed strip */
        d.api_name = "vkCmdDraw";
        d.count = rng_range(4, 256);
        d.topology = TALLY_TOPOLOGY_TRIANGLE_STRIP;
    } else { /* instanced indexed list */
        d.api_name = "vkCmdDrawIndexed";
        d.count = rng_range(40, 400) * 3;
        d.instance_count = rng_range(16, 256);
        d.flags = TALLY_DRAW_INDEXED;
        d.topology = TALLY_TOPOLOGY_TRIANGLE_LIST;
        d.index_size = 2;
    }
    CHECK(tally_stream_draw(s, &d));
}

static void record_one_dispatch(tally_stream *s)
{
    tally_dispatch d = {.api_name = "vkCmdDispatch",
                        .groups = {rng_range(1, 240), rng_range(1, 135), 1}};
    CHECK(tally_stream_dispatch(s, &d));
}

static void record_one_transfer(tally_stream *s)
{
    static const tally_transfer_kind kinds[] = {TALLY_TRANSFER_COPY, TALLY_TRANSFER_WRITE,
                                                TALLY_TRANSFER_FILL, TALLY_TRANSFER_COPY};
    tally_transfer t = {.api_name = "vkCmdCopyBuffer",
                        .kind = kinds[rng() % 4],
                        .bytes = (uint64_t)rng_range(1, 1024) * 1024};
    CHECK(tally_stream_transfer(s, &t));
}

/*
 * The frame, in blocks of 100 work commands inside one marker pair:
 * 90 draws, 8 dispatches, 2 transfers, in the order
 *   [bind raster] 45 draws, transfer, [bind compute] 4 dispatches,
 *   [bind raster] 45 draws, transfer, [bind compute] 4 dispatches
 * with the raster program alternating between two programs and the render
 * state switching between opaque and blended every 10 blocks.
 */
static struct frame_counts record_frame(tally_stream *s, uint64_t work_commands,
                                        tally_program *opaque, tally_program *foliage,
                                        tally_program *compute, tally_results *results,
                                        uint32_t slots)
{
    struct frame_counts fc = {0};
    uint64_t blocks = work_commands / 100;
    for (uint64_t b = 0; b < blocks; b++) {
        if (b % 10 == 0) {
            CHECK(tally_stream_set_render_state(s, (b / 10) % 4 == 3 ? &render_blend
                                                                     : &render_opaque));
            fc.state++;
        }
        uint32_t slot = (uint32_t)(b % slots);
        CHECK(tally_stream_marker_begin(s, results, slot));
        fc.state++;
        for (int half = 0; half < 2; half++) {
            CHECK(tally_stream_bind_program(s, (rng() & 3) ? opaque : foliage));
            fc.state++;
            for (int i = 0; i < 45; i++)
                record_one_draw(s);
            record_one_transfer(s);
            CHECK(tally_stream_bind_program(s, compute));
            fc.state++;
            for (int i = 0; i < 4; i++)
                record_one_dispatch(s);
        }
        fc.draws += 90;
        fc.dispatches += 8;
        fc.transfers += 2;
        CHECK(tally_stream_marker_end(s, results, slot));
        fc.state++;
    }
    fc.work = fc.draws + fc.dispatches + fc.transfers;
    return fc;
}

enum throughput_mode { PLAIN, TIMELINE, REPORT };

struct throughput {
    double draws_per_s;
    double seconds;
    uint64_t draws;
    uint64_t events, bytes;
    bool lost;
    struct frame_counts fc;
};

static struct throughput bench_throughput(enum throughput_mode mode, uint64_t work_commands,
                                          uint32_t submits)
{
    char report_path[64] = "";
    if (mode == REPORT)
        snprintf(report_path, sizeof(report_path), "/tmp/tally_bench_%ld.csv", (long)getpid());
    tally_device *device = open_device(mode == REPORT ? report_path : NULL);
    const tally_catalogue *cat = tally_device_catalogue(device);

    uint32_t ids[MARKER_COUNTERS];
    for (uint32_t k = 0; k < MARKER_COUNTERS; k++)
        CHECK(tally_catalogue_find(cat, marker_counters[k], &ids[k]));

    tally_context *context;
    tally_stream *stream;
    tally_program *opaque, *foliage, *compute;
    tally_results *results;
    const uint32_t slots = 64;
    CHECK(tally_context_create(device, "bench", &context));
    CHECK(tally_stream_create(context, &stream));
    CHECK(tally_program_create(device, &opaque_desc, &opaque));
    CHECK(tally_program_create(device, &foliage_desc, &foliage));
    CHECK(tally_program_create(device, &compute_desc, &compute));
    CHECK(tally_results_create(device, ids, MARKER_COUNTERS, slots, &results));

    rng_state = 0x2545f491u;
    struct throughput t = {0};
    t.fc = record_frame(stream, work_commands, opaque, foliage, compute, results, slots);

    tally_subscription *sub = NULL;
    if (mode == TIMELINE)
        CHECK(tally_timeline_subscribe(device, 1u << 20, &sub));

    tally_submission submission = {
        .streams = &stream, .stream_count = 1, .api_name = "vkQueueSubmit"};
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; i < submits; i++)
        CHECK(tally_submit(device, &submission, NULL));
    CHECK(tally_device_wait_idle(device));
    uint64_t t1 = now_ns();

    if (sub) {
        enum { CHUNK = 4096 };
        tally_event *events = malloc(CHUNK * sizeof(*events));
        if (!events)
            die("malloc", TALLY_ERROR_OUT_OF_MEMORY);
        uint32_t n;
        bool lost = false;
        do {
            bool l = false;
            CHECK(tally_timeline_read(sub, events, CHUNK, &n, &l));
            t.events += n;
            lost |= l;
        } while (n > 0);
        t.lost = lost;
        free(events);
        tally_timeline_unsubscribe(sub);
    }

    /* The markers' results must have arrived: a sanity check of the run. */
    tally_value values[MARKER_COUNTERS];
    CHECK(tally_results_wait(results, 0, UINT64_MAX));
    tally_status gs = tally_results_get(results, 0, values, MARKER_COUNTERS, NULL);
    if (gs != TALLY_OK)
        die("tally_results_get", gs);

    tally_results_release(results);
    tally_program_release(opaque);
    tally_program_release(foliage);
    tally_program_release(compute);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device);

    if (mode == REPORT) {
        FILE *f = fopen(report_path, "rb");
        if (f) {
            fseek(f, 0, SEEK_END);
            t.bytes = (uint64_t)ftell(f);
            fclose(f);
        }
        remove(report_path);
    }

    t.draws = t.fc.draws * submits;
    t.seconds = (double)(t1 - t0) / 1e9;
    t.draws_per_s = (double)t.draws / t.seconds;
    return t;
}

/* ---- output ------------------------------------------------------------ */

static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf(out, size, "%s", colon);
                out[strcspn(out, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

static void row(const char *metric, const char *value, const char *target, const char *verdict)
{
    printf("%-44s %16s %12s  %s\n", metric, value, target, verdict);
}

int main(int argc, char **argv)
{
    bool quick = false, report_only = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            quick = true;
        } else if (strcmp(argv[i], "--report") == 0) {
            report_only = true;
        } else {
            fprintf(stderr, "usage: tally_bench [--quick] [--report]\n");
            return 2;
        }
    }
    const uint64_t record_total = quick ? 1000000u : 10000000u;
    const uint64_t record_reset = 1000000u;
    const uint64_t frame_work = 100000u;
    const uint32_t submits = quick ? 2u : 20u;
    const uint32_t report_submits = quick ? 1u : 5u;

    char cpu[256];
    cpu_model(cpu, sizeof(cpu));
    tally_device *device = open_device(NULL);
    tally_device_info info;
    tally_device_get_info(device, &info);
    printf("tally_bench%s\n", quick ? " --quick" : "");
    printf("cpu:        %s (%ld online)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    printf("build type: %s%s\n", TALLY_BENCH_BUILD_TYPE,
#ifdef NDEBUG
           " (NDEBUG)"
#else
           " (assertions on)"
#endif
    );
    printf("device:     %s on %s, virtual clock\n\n", info.backend, info.name);

    /* 3. the report, measured first: rounds interleave idle and reporting runs */
    struct bench_report_figures rf = bench_report_run(quick);

    char v[64], tgt[32];
    bool ok = true;
    if (!report_only) {
        /* 1. recording */
        tally_context *context;
        tally_stream *stream;
        CHECK(tally_context_create(device, "bench", &context));
        CHECK(tally_stream_create(context, &stream));
        double draw_ns = bench_record(stream, RECORD_DRAW, record_total, record_reset);
        double dispatch_ns = bench_record(stream, RECORD_DISPATCH, record_total, record_reset);
        tally_stream_destroy(stream);
        tally_context_destroy(context);

        /* 2. throughput */
        struct throughput plain = bench_throughput(PLAIN, frame_work, submits);
        struct throughput timeline = bench_throughput(TIMELINE, frame_work, submits);
        struct throughput report = bench_throughput(REPORT, frame_work, report_submits);

        printf("recording: %llu appends per run, stream reset every %llu, best of %d runs\n",
               (unsigned long long)record_total, (unsigned long long)record_reset, RECORD_RUNS);
        const struct frame_counts *fc = &plain.fc;
        printf("throughput: frame of %llu commands (%llu draws %.0f%%, %llu dispatches %.0f%%, "
               "%llu transfers %.0f%%) + %llu state/marker commands;\n"
               "            submitted %u times (report: %u), not consumed; draws only counted\n",
               (unsigned long long)fc->work, (unsigned long long)fc->draws,
               100.0 * (double)fc->draws / (double)fc->work, (unsigned long long)fc->dispatches,
               100.0 * (double)fc->dispatches / (double)fc->work, (unsigned long long)fc->transfers,
               100.0 * (double)fc->transfers / (double)fc->work, (unsigned long long)fc->state,
               submits, report_submits);
        printf("timeline:   %llu events drained%s; report: %.1f MB CSV\n",
               (unsigned long long)timeline.events,
               timeline.lost ? " (ring full, events dropped)" : "", (double)report.bytes / 1e6);
        bench_report_describe(&rf);
        printf("\n");
        row("metric", "value", "target", "result");
        row("--------------------------------------------", "----------------", "------------",
            "------");
        snprintf(v, sizeof(v), "%.2f ns", draw_ns);
        snprintf(tgt, sizeof(tgt), "<= %.0f ns", RECORD_TARGET_NS);
        row("record tally_stream_draw (ns/command)", v, tgt,
            draw_ns <= RECORD_TARGET_NS ? "PASS" : "FAIL");
        ok &= draw_ns <= RECORD_TARGET_NS;
        snprintf(v, sizeof(v), "%.2f ns", dispatch_ns);
        row("record tally_stream_dispatch (ns/command)", v, tgt,
            dispatch_ns <= RECORD_TARGET_NS ? "PASS" : "FAIL");
        ok &= dispatch_ns <= RECORD_TARGET_NS;
        snprintf(v, sizeof(v), "%.3f M/s", plain.draws_per_s / 1e6);
        snprintf(tgt, sizeof(tgt), ">= %.0f M/s", THROUGHPUT_TARGET / 1e6);
        row("simgpu draws/s, realistic mix", v, tgt,
            plain.draws_per_s >= THROUGHPUT_TARGET ? "PASS" : "FAIL");
        ok &= plain.draws_per_s >= THROUGHPUT_TARGET;
        snprintf(v, sizeof(v), "%.3f M/s", timeline.draws_per_s / 1e6);
        row("simgpu draws/s, timeline subscribed", v, "-", "info");
        snprintf(v, sizeof(v), "%.3f M/s", report.draws_per_s / 1e6);
        row("simgpu draws/s, per-command CSV report", v, "-", "info");
    } else {
        bench_report_describe(&rf);
        printf("\n");
        row("metric", "value", "target", "result");
        row("--------------------------------------------", "----------------", "------------",
            "------");
    }
    tally_device_close(device);
    snprintf(v, sizeof(v), "%.2f M/s", rf.rows_per_s / 1e6);
    snprintf(tgt, sizeof(tgt), ">= %.0f M/s", ROWS_TARGET / 1e6);
    row("CSV rows/s of CPU, 15 counters", v, tgt, rf.rows_per_s >= ROWS_TARGET ? "PASS" : "FAIL");
    ok &= rf.rows_per_s >= ROWS_TARGET;
    snprintf(v, sizeof(v), "%.2f to %.2f", rf.rows_slowest_per_s / 1e6,
             rf.rows_fastest_per_s / 1e6);
    row("  its rounds, slowest to fastest (M/s)", v, "-", "info");
    snprintf(v, sizeof(v), "%.1f ns", rf.rows_user_ns);
    row("  of which user CPU ns per row", v, "-", "info");
    if (rf.clock_ghz > 0 && rf.rows_per_s > 0 && rf.rows_fastest_per_s > 0) {
        snprintf(v, sizeof(v), "%.2f GHz", rf.clock_ghz);
        row("  the clock (a multiply chain, around them)", v, "-", "info");
        snprintf(v, sizeof(v), "%.0f, %.0f", rf.clock_ghz * 1e9 / rf.rows_per_s,
                 rf.clock_ghz * 1e9 / rf.rows_fastest_per_s);
        /* the target at this clock */
        snprintf(tgt, sizeof(tgt), "<= %.0f", rf.clock_ghz * 1e9 / ROWS_TARGET);
        row("  CPU cycles a row: median, fastest round", v, tgt, "info");
    }
    snprintf(v, sizeof(v), "%.2f M/s", rf.engine_rows_per_s / 1e6);
    row("  the same through the engine's ring", v, "-", "info");
    snprintf(v, sizeof(v), "%.1f ns", rf.idle_ns);
    row("frame CPU ns per submitted draw, idle", v, "-", "info");
    snprintf(v, sizeof(v), "%.1f ns", rf.report_ns);
    row("frame CPU ns per submitted draw, CSV report", v, "-", "info");
    return ok ? 0 : 1;
}
