/*
 * rows_ab: two builds of the report writers, paired in time. Each library
 * (a build of writers/, see bench/rows_ab.sh) is loaded with its own
 * symbols and opens a CSV report of tally_bench's 15 counters; slices of
 * rows go to one and then the other, alternately first, and each pair of
 * slices gives a ratio of their thread CPU times. Slices adjacent in time
 * see the same state of a shared machine (the core's other hardware
 * thread, the clock), which whole runs a second apart do not.
 *
 * usage: rows_ab A.so B.so [pairs (400)] [rows a slice (20000)]
 * prints each build's median and 10th-percentile ns a row, the median and
 * quartiles of B/A over the pairs (below 1: B is faster), and in how many
 * pairs B was faster.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <tally/tally.h>

#include "bench_rows.h"
#include "bench_stats.h"

typedef tally_status open_fn(const char *, tally_report_format, const tally_catalogue *,
                             const uint32_t *, uint32_t, tally_report **);
typedef tally_status write_fn(tally_report *, const tally_command_record *, const tally_value *);
typedef tally_status close_fn(tally_report *);

/* One build's report and where its rows are. */
struct build {
    const char *library;
    write_fn *write;
    close_fn *close;
    tally_report *report;
    char path[64];
    tally_command_record record;
    uint64_t row, ns;
    tally_status status; /* the first write's that failed, else TALLY_OK */
};

static bool open_build(struct build *b, const char *library, char which, const tally_catalogue *cat,
                       const uint32_t *columns, uint32_t count)
{
    void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (!lib) {
        fprintf(stderr, "rows_ab: %s\n", dlerror());
        return false;
    }
    open_fn *open = (open_fn *)dlsym(lib, "tally_report_open");
    *b = (struct build){.library = library,
                        .write = (write_fn *)dlsym(lib, "tally_report_write"),
                        .close = (close_fn *)dlsym(lib, "tally_report_close"),
                        .record = bench_rows_record,
                        .ns = 1000000,
                        .status = TALLY_OK};
    snprintf(b->path, sizeof b->path, "/tmp/rows_ab_%c_%ld.csv", which, (long)getpid());
    if (!open || !b->write || !b->close ||
        open(b->path, TALLY_REPORT_CSV, cat, columns, count, &b->report) != TALLY_OK) {
        fprintf(stderr, "rows_ab: %s: no report\n", library);
        return false;
    }
    return true;
}

static double thread_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ns a row of the next `rows` rows. */
static double slice(struct build *b, const struct bench_rows *rows, uint64_t count)
{
    double t0 = thread_ns();
    for (uint64_t k = 0; k < count; k++, b->row++) {
        bench_rows_next_record(&b->record, rows, b->row, &b->ns);
        tally_status s = b->write(b->report, &b->record, bench_rows_values(rows, b->row));
        if (s != TALLY_OK && b->status == TALLY_OK)
            b->status = s;
    }
    return (thread_ns() - t0) / (double)count;
}

/* Per pair n: A's and B's ns a row, alternately first, and their ratio;
 * how many pairs B was faster in. */
static int run_pairs(struct build *a_build, struct build *b_build, const struct bench_rows *rows,
                     int pairs, uint64_t rows_a_slice, double *a, double *b, double *ratio)
{
    slice(a_build, rows, rows_a_slice); /* the caches and branches warmed for both */
    slice(b_build, rows, rows_a_slice);
    int b_faster = 0;
    for (int n = 0; n < pairs; n++) {
        if (n % 2) {
            b[n] = slice(b_build, rows, rows_a_slice);
            a[n] = slice(a_build, rows, rows_a_slice);
        } else {
            a[n] = slice(a_build, rows, rows_a_slice);
            b[n] = slice(b_build, rows, rows_a_slice);
        }
        ratio[n] = b[n] / a[n];
        b_faster += b[n] < a[n];
    }
    return b_faster;
}

/* Closes the build's report and removes its file: whether every row and
 * the close succeeded. */
static bool close_build(struct build *b)
{
    tally_status closed = b->close(b->report);
    remove(b->path);
    if (b->status == TALLY_OK && closed == TALLY_OK)
        return true;
    fprintf(stderr, "rows_ab: %s: the report failed (%d, %d)\n", b->library, (int)b->status,
            (int)closed);
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: rows_ab A.so B.so [pairs] [rows a slice]\n");
        return 2;
    }
    int pairs = argc > 3 ? atoi(argv[3]) : 400;
    uint64_t rows_a_slice = argc > 4 ? strtoull(argv[4], NULL, 10) : 20000;
    const tally_catalogue *cat = NULL;
    uint32_t columns[32];
    if (pairs < 1 || rows_a_slice < 1 || tally_backend_catalogue("simgpu", &cat) != TALLY_OK)
        return 2;
    uint32_t count = bench_rows_columns(cat, columns);
    struct bench_rows *rows = bench_rows_make(cat, columns, count);
    double *a = malloc(3 * (size_t)pairs * sizeof *a), *b = a + pairs, *ratio = b + pairs;
    struct build build_a, build_b;
    if (!rows || !a || !open_build(&build_a, argv[1], 'a', cat, columns, count) ||
        !open_build(&build_b, argv[2], 'b', cat, columns, count))
        return 1;
    int b_faster = run_pairs(&build_a, &build_b, rows, pairs, rows_a_slice, a, b, ratio);
    bool ok = close_build(&build_a);
    ok = close_build(&build_b) && ok;
    printf("A %s: median %.1f ns a row, 10th percentile %.1f\n", argv[1],
           bench_quantile(a, pairs, 0.5), bench_quantile(a, pairs, 0.1));
    printf("B %s: median %.1f ns a row, 10th percentile %.1f\n", argv[2],
           bench_quantile(b, pairs, 0.5), bench_quantile(b, pairs, 0.1));
    printf("B/A: median %.3f, quartiles %.3f and %.3f; B faster in %d of %d pairs\n",
           bench_quantile(ratio, pairs, 0.5), bench_quantile(ratio, pairs, 0.25),
           bench_quantile(ratio, pairs, 0.75), b_faster, pairs);
    free(a);
    bench_rows_free(rows);
    return ok ? 0 : 1;
}
