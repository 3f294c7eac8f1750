/*
 * tally_bench_md_vulkan: what `tally run --sample` costs a real Vulkan
 * program. vk_frames renders offscreen frames on lavapipe as a child process
 * four ways, interleaved round after round so the machine's noise hits them
 * alike:
 *   none     vk_frames alone
 *   layer    under `tally run` (Vulkan layer only, no sampling)
 *   1 ms     under `tally run --sample 1ms`
 *   100 us   under `tally run --sample 100us`
 * vk_frames times its own frame loop (wall and whole-process CPU, so the
 * layer's and the sampling thread's work count); the benchmark also times
 * each process from the outside and counts the CSV rows the sampling wrote,
 * failing when a sampled run wrote none. Medians of the rounds are reported,
 * with the spread of the frame time.
 *
 * Usage: tally_bench_md_vulkan [--quick] [--rounds N] [--frames N] [--draws N]
 */
#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TALLY_BENCH_BUILD_TYPE
#define TALLY_BENCH_BUILD_TYPE "unknown"
#endif

#define LAVAPIPE_ICD TALLY_LAVAPIPE_ICD

extern char **environ;

struct config {
    const char *name;
    bool under_tally;
    const char *sample; /* --sample INTERVAL, or NULL */
};

static const struct config configs[] = {
    {"none", false, NULL}, {"layer", true, NULL}, {"1 ms", true, "1ms"}, {"100 us", true, "100us"}};
enum { CONFIGS = sizeof(configs) / sizeof(configs[0]), MAX_ROUNDS = 31 };

struct settings {
    int rounds;
    unsigned frames, draws;
};

/* One process's figures. */
struct result {
    double ms_per_frame, cpu_ms_per_frame; /* vk_frames' timed loop */
    double process_s, process_cpu_s;       /* the whole process, from outside */
    double samples;                        /* CSV rows written */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- one run ------------------------------------------------------------------------- */

static int build_argv(const struct config *c, const struct settings *s, const char *csv,
                      char *frames, char *draws, const char **argv)
{
    int n = 0;
    if (c->under_tally) {
        static const char *const run[] = {TALLY_CLI, "run", "-q", "--no-gl", "--no-egl", "--no-cl"};
        for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
            argv[n++] = run[i];
        if (c->sample) {
            argv[n++] = "--sample";
            argv[n++] = c->sample;
            argv[n++] = "--sample-output";
            argv[n++] = csv;
        }
        argv[n++] = "--";
    }
    snprintf(frames, 16, "%u", s->frames);
    snprintf(draws, 16, "%u", s->draws);
    argv[n++] = VK_FRAMES;
    argv[n++] = frames;
    argv[n++] = draws;
    argv[n] = NULL;
    return n;
}

/* Rows after the header; -1 when the file is missing or has no header. */
static long count_rows(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long lines = 0;
    int ch, last = '\n';
    while ((ch = fgetc(f)) != EOF) {
        if (ch == '\n')
            lines++;
        last = ch;
    }
    fclose(f);
    if (last != '\n')
        lines++;
    return lines ? lines - 1 : -1;
}

static bool parse_output(const char *text, struct result *r)
{
    unsigned frames = 0;
    unsigned long long wall = 0, cpu = 0;
    if (sscanf(text, "frames=%u wall_ns=%llu cpu_ns=%llu", &frames, &wall, &cpu) != 3 || !frames)
        return false;
    r->ms_per_frame = wall / 1e6 / frames;
    r->cpu_ms_per_frame = cpu / 1e6 / frames;
    return true;
}

static int run_once(const struct config *c, const struct settings *s, const char *csv,
                    struct result *r)
{
    const char *argv[24];
    char frames[16], draws[16];
    build_argv(c, s, csv, frames, draws, argv);
    unlink(csv);
    int out[2];
    if (pipe(out) != 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    double start = now_s();
    pid_t pid;
    int spawned = posix_spawn(&pid, argv[0], &actions, NULL, (char **)argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (spawned != 0) {
        close(out[0]);
        fprintf(stderr, "tally_bench_md_vulkan: cannot start %s\n", argv[0]);
        return -1;
    }
    char text[512] = "";
    size_t used = 0;
    ssize_t got;
    while ((got = read(out[0], text + used, sizeof(text) - 1 - used)) > 0)
        used += (size_t)got;
    text[used] = '\0';
    close(out[0]);
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid)
        return -1;
    r->process_s = now_s() - start;
    r->process_cpu_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
                       usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !parse_output(text, r)) {
        fprintf(stderr, "tally_bench_md_vulkan: \"%s\" failed (status %d): %s\n", c->name, status,
                text);
        return -1;
    }
    long rows = count_rows(csv);
    if (c->sample && rows <= 0) {
        fprintf(stderr, "tally_bench_md_vulkan: \"%s\" wrote no samples to %s\n", c->name, csv);
        return -1;
    }
    r->samples = c->sample ? (double)rows : 0;
    unlink(csv);
    return 0;
}

/* --- figures ------------------------------------------------------------------------- */

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), by_value);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double column_median(const struct result *rows, int n, size_t offset)
{
    double v[MAX_ROUNDS];
    for (int i = 0; i < n; i++)
        v[i] = *(const double *)((const char *)&rows[i] + offset);
    return median(v, n);
}

static void spread(const struct result *rows, int n, double *low, double *high)
{
    *low = *high = rows[0].ms_per_frame;
    for (int i = 1; i < n; i++) {
        if (rows[i].ms_per_frame < *low)
            *low = rows[i].ms_per_frame;
        if (rows[i].ms_per_frame > *high)
            *high = rows[i].ms_per_frame;
    }
}

/* The median over rounds of a config's figure over the same round's "none":
 * the machine's load drifts slowly, so a round's runs share most of it. */
static double paired_overhead(struct result results[CONFIGS][MAX_ROUNDS], int c, int n,
                              size_t offset)
{
    double v[MAX_ROUNDS];
    for (int r = 0; r < n; r++) {
        double x = *(const double *)((const char *)&results[c][r] + offset);
        double base = *(const double *)((const char *)&results[0][r] + offset);
        v[r] = (x / base - 1) * 100;
    }
    return median(v, n);
}

static void print_table(struct result results[CONFIGS][MAX_ROUNDS], const struct settings *s)
{
    printf("\ntally_bench_md_vulkan (%s build): vk_frames on lavapipe, %u frames of %u draws "
           "and a dispatch per process,\nmedian of %d interleaved rounds; range: the fastest and "
           "slowest round's ms/frame;\n\"+\": median over rounds of the change against the same "
           "round's \"none\"\n\n",
           TALLY_BENCH_BUILD_TYPE, s->frames, s->draws, s->rounds);
    printf("%-7s %9s %13s %8s %8s %8s %9s %9s %9s\n", "config", "ms/frame", "range", "frame +",
           "CPU ms/f", "CPU +", "process s", "proc CPU", "samples");
    size_t wall = offsetof(struct result, ms_per_frame);
    size_t cpu = offsetof(struct result, cpu_ms_per_frame);
    for (int c = 0; c < CONFIGS; c++) {
        const struct result *rows = results[c];
        double low, high;
        spread(rows, s->rounds, &low, &high);
        char range[32];
        snprintf(range, sizeof(range), "%.3f-%.3f", low, high);
        printf("%-7s %9.3f %13s %+7.1f%% %8.3f %+7.1f%% %9.2f %9.2f %9.0f\n", configs[c].name,
               column_median(rows, s->rounds, wall), range,
               paired_overhead(results, c, s->rounds, wall), column_median(rows, s->rounds, cpu),
               paired_overhead(results, c, s->rounds, cpu),
               column_median(rows, s->rounds, offsetof(struct result, process_s)),
               column_median(rows, s->rounds, offsetof(struct result, process_cpu_s)),
               column_median(rows, s->rounds, offsetof(struct result, samples)));
    }
}

/* --- main ---------------------------------------------------------------------------- */

static bool parse_settings(int argc, char **argv, struct settings *s)
{
    *s = (struct settings){7, 2000, 100};
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--quick") == 0) {
            *s = (struct settings){2, 200, s->draws};
            continue;
        }
        long n = value ? strtol(value, NULL, 10) : 0;
        if (strcmp(argv[i], "--rounds") == 0 && n >= 1 && n <= MAX_ROUNDS)
            s->rounds = (int)n;
        else if (strcmp(argv[i], "--frames") == 0 && n >= 1 && n <= 1000000)
            s->frames = (unsigned)n;
        else if (strcmp(argv[i], "--draws") == 0 && n >= 1 && n <= 100000)
            s->draws = (unsigned)n;
        else
            return false;
        i++;
    }
    return true;
}

int main(int argc, char **argv)
{
    struct settings s;
    if (!parse_settings(argc, argv, &s)) {
        fprintf(stderr, "usage: %s [--quick] [--rounds N<=%d] [--frames N] [--draws N]\n", argv[0],
                MAX_ROUNDS);
        return 2;
    }
    /* Headless lavapipe, whatever the caller's environment offers. */
    setenv("VK_DRIVER_FILES", LAVAPIPE_ICD, 1);
    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    char dir[] = "/tmp/tally_bench_md_vulkan_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    char csv[sizeof(dir) + 16];
    snprintf(csv, sizeof(csv), "%s/samples.csv", dir);
    static struct result results[CONFIGS][MAX_ROUNDS];
    int status = 0;
    for (int r = 0; r < s.rounds && !status; r++) {
        for (int k = 0; k < CONFIGS && !status; k++) {
            int c = (k + r) % CONFIGS; /* each round starts with another config */
            status = run_once(&configs[c], &s, csv, &results[c][r]);
        }
        fprintf(stderr, "round %d/%d done\n", r + 1, s.rounds);
    }
    rmdir(dir);
    if (status)
        return 1;
    print_table(results, &s);
    return 0;
}
