/*
 * bench_summary: how fast `tally summary` reads a large report, and how
 * little memory it takes doing so (issue 34, item 4). It writes a report of
 * ROWS rows (10 million unless told) through tally_report_write, with the
 * 15 counters and values of tally_bench's report figures (bench_rows.c), a
 * frame every 1000 rows and 64 labels, then runs `tally summary` on it
 * (and `tally diff --write-baseline`, which sums every counter per frame)
 * in a child process on one CPU, and prints for each the rows per second
 * of wall time and of CPU time, and the child's peak resident memory
 * (getrusage's ru_maxrss, through wait4).
 *
 * Usage: bench_summary [--rows N] [--keep] [--tally PATH]
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <tally/tally.h>

#include "bench_rows.h"

enum { ROWS_PER_FRAME = 1000, LABELS = 64 };

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The report, with a sidecar saying what made it. */
static bool write_report(const char *path, uint64_t rows)
{
    const tally_catalogue *cat = NULL;
    if (tally_backend_catalogue("simgpu", &cat) != TALLY_OK)
        return false;
    uint32_t columns[32];
    uint32_t count = bench_rows_columns(cat, columns);
    struct bench_rows *table = bench_rows_make(cat, columns, count);
    tally_report *report = NULL;
    if (!table ||
        tally_report_open(path, TALLY_REPORT_CSV, cat, columns, count, &report) != TALLY_OK) {
        bench_rows_free(table);
        return false;
    }
    tally_report_metadata metadata = {.tally_version = "bench",
                                      .backend = "simgpu",
                                      .device = "bench_summary",
                                      .clock = "virtual",
                                      .program = "bench_summary",
                                      .arguments = ""};
    tally_report_describe(report, &metadata);
    char labels[LABELS][32];
    for (int i = 0; i < LABELS; i++)
        snprintf(labels[i], sizeof labels[i], "frame/pass %d", i);
    tally_command_record record = bench_rows_record;
    uint64_t ns = 0;
    tally_status s = TALLY_OK;
    for (uint64_t i = 0; i < rows && s == TALLY_OK; i++) {
        bench_rows_next_record(&record, table, i, &ns);
        record.frame = i / ROWS_PER_FRAME;
        record.label = labels[(i * 7) % LABELS];
        s = tally_report_write(report, &record, bench_rows_values(table, i));
    }
    bench_rows_free(table);
    return tally_report_close(report) == TALLY_OK && s == TALLY_OK;
}

struct child_figures {
    double wall_s, cpu_s;
    long max_rss_kib;
};

/* Runs argv on the first CPU this process may use, output to /dev/null. */
static bool run_pinned(char *const *argv, struct child_figures *f)
{
    cpu_set_t allowed, one;
    sched_getaffinity(0, sizeof allowed, &allowed);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &allowed)) {
            CPU_SET(c, &one);
            break;
        }
    }
    fflush(stdout); /* or the child's copy of the buffer prints it again */
    double start = now_seconds();
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        sched_setaffinity(0, sizeof one, &one);
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) != pid)
        return false;
    f->wall_s = now_seconds() - start;
    f->cpu_s = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 +
               (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec / 1e6;
    f->max_rss_kib = usage.ru_maxrss;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void describe(const char *what, uint64_t rows, const struct child_figures *f)
{
    printf("%-34s %8.2f s wall  %6.2f M rows/s wall  %6.2f M rows/s CPU  peak RSS %6.1f MiB\n",
           what, f->wall_s, (double)rows / f->wall_s / 1e6, (double)rows / f->cpu_s / 1e6,
           (double)f->max_rss_kib / 1024);
}

int main(int argc, char **argv)
{
    uint64_t rows = 10000000;
    bool keep = false;
    const char *tally = TALLY_CLI;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
            rows = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else if (strcmp(argv[i], "--tally") == 0 && i + 1 < argc)
            tally = argv[++i];
        else {
            fprintf(stderr, "usage: bench_summary [--rows N] [--keep] [--tally PATH]\n");
            return 2;
        }
    }
    char report[128], meta[128], baseline[128];
    snprintf(report, sizeof report, "/tmp/bench_summary_%ld.csv", (long)getpid());
    snprintf(meta, sizeof meta, "/tmp/bench_summary_%ld.meta.csv", (long)getpid());
    snprintf(baseline, sizeof baseline, "/tmp/bench_summary_%ld.baseline.csv", (long)getpid());
    double start = now_seconds();
    if (!write_report(report, rows)) {
        fprintf(stderr, "bench_summary: cannot write %s: %s\n", report, strerror(errno));
        return 1;
    }
    struct stat st;
    stat(report, &st);
    printf("report: %" PRIu64 " rows, 15 counters, %" PRIu64 " frames, %d labels, %.0f MB CSV "
           "(written in %.1f s)\n",
           rows, (rows + ROWS_PER_FRAME - 1) / ROWS_PER_FRAME, LABELS, (double)st.st_size / 1e6,
           now_seconds() - start);
    printf("tally: %s, build type %s, one CPU\n", tally, TALLY_BENCH_BUILD_TYPE);
    char *summary[] = {(char *)tally, "summary", report, NULL};
    char *write[] = {(char *)tally, "diff", "--write-baseline", baseline, report, NULL};
    struct child_figures f;
    int status = 0;
    if (run_pinned(summary, &f))
        describe("tally summary", rows, &f);
    else
        status = 1;
    if (run_pinned(write, &f))
        describe("tally diff --write-baseline", rows, &f);
    else
        status = 1;
    if (status)
        fprintf(stderr, "bench_summary: a command failed\n");
    if (!keep) {
        remove(report);
        remove(meta);
    }
    remove(baseline);
    return status;
}
