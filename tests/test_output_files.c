/*
 * The files a device writes (TALLY_OUTPUT, TALLY_TRACE, TALLY_SAMPLE_OUTPUT)
 * and the options that shape them (TALLY_COUNTERS, TALLY_SAMPLE), as a user
 * meets them: a device node or FIFO is written into and never replaced, an
 * unusable path is refused with the path and the system's reason, a killed
 * program leaves nothing behind, two outputs never share a file, and the
 * counter list and sampling interval say what they do with odd values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fixture.h"
#include "tally/tally.h"

struct fixture {
    char dir[64];
    char path[256];
};

static int make_dir(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    strcpy(fx->dir, "/tmp/tally-outputs-XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    *state = fx;
    return 0;
}

static int remove_dir(void **state)
{
    struct fixture *fx = *state;
    remove_tree(fx->dir);
    free(fx);
    return 0;
}

static const char *path_in(struct fixture *fx, const char *name)
{
    snprintf(fx->path, sizeof fx->path, "%s/%s", fx->dir, name);
    return fx->path;
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = calloc(1, 1 << 20);
    fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    return text;
}

/* Opens a device with the options; the device or NULL, the message in error. */
static tally_device *open_device(const tally_device_options *options, char *error, size_t size)
{
    tally_device_options o = *options;
    o.clock = TALLY_CLOCK_VIRTUAL;
    tally_device *device = NULL;
    error[0] = '\0';
    tally_device_open(&o, &device, error, size);
    return device;
}

/* One draw through the device, so its report has a row. */
static void draw_once(tally_device *device)
{
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    assert_int_equal(tally_context_create(device, "test", &context), TALLY_OK);
    assert_int_equal(tally_stream_create(context, &stream), TALLY_OK);
    tally_draw draw = {.api_name = "draw",
                       .count = 3,
                       .instance_count = 1,
                       .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
    assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
    tally_submission sub = {.streams = &stream, .stream_count = 1, .api_name = "test"};
    assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
}

/* --- device nodes and FIFOs ----------------------------------------------------- */

struct reader {
    int fd;
    char text[1 << 16];
};

static void *read_fifo(void *arg)
{
    struct reader *r = arg;
    size_t used = 0;
    for (ssize_t n; (n = read(r->fd, r->text + used, sizeof(r->text) - 1 - used)) > 0;)
        used += (size_t)n; /* until the writer closes it */
    return NULL;
}

static void a_fifo_is_written_into_and_stays_a_fifo(void **state)
{
    struct fixture *fx = *state;
    const char *fifo = path_in(fx, "report.csv");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* A reader first, so the writer finds one; it reads once the writer is there. */
    static struct reader r;
    memset(&r, 0, sizeof r);
    r.fd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(r.fd >= 0);
    char error[256];
    tally_device *device =
        open_device(&(tally_device_options){.report_path = fifo}, error, sizeof error);
    assert_non_null(device);
    assert_int_equal(fcntl(r.fd, F_SETFL, 0), 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, read_fifo, &r), 0);
    draw_once(device);
    assert_int_equal(tally_device_finish(device), TALLY_OK);
    pthread_join(thread, NULL);
    close(r.fd);
    assert_non_null(strstr(r.text, "sequence,kind,api_name"));
    /* after the identity columns (pid, the submitting thread, no pipeline) */
    assert_non_null(strstr(r.text, "\n1,draw,draw,1,test,0,1,1,,"));
    assert_non_null(strstr(r.text, ",0,,0000000000000000,0,0,0,265,265,265,3,1,3,"));
    struct stat st;
    assert_int_equal(stat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(directory_entry_count(fx->dir), 1);
}

static void a_fifo_that_no_process_reads_is_refused_at_once(void **state)
{
    struct fixture *fx = *state;
    const char *fifo = path_in(fx, "trace.json");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char error[256];
    assert_null(open_device(&(tally_device_options){.trace_path = fifo}, error, sizeof error));
    assert_non_null(strstr(error, fifo));
    assert_non_null(strstr(error, "no process has it open for reading"));
    struct stat st;
    assert_int_equal(stat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

/* A character device of the given numbers in the test's directory, or
 * false where this user may not make one (the real /dev is never used: a
 * regression would replace it). */
static bool make_device(const char *path, unsigned major_number, unsigned minor_number)
{
    if (mknod(path, S_IFCHR | 0666, makedev(major_number, minor_number)) != 0)
        return false;
    int fd = open(path, O_WRONLY); /* a file system mounted nodev refuses it */
    if (fd < 0)
        return false;
    close(fd);
    return true;
}

static void a_device_node_is_written_into_and_not_replaced(void **state)
{
    struct fixture *fx = *state;
    const char *null_device = path_in(fx, "null");
    if (!make_device(null_device, 1, 3))
        skip();
    char error[256];
    tally_device *device =
        open_device(&(tally_device_options){.report_path = null_device}, error, sizeof error);
    assert_non_null(device);
    draw_once(device);
    assert_int_equal(tally_device_finish(device), TALLY_OK);
    struct stat st;
    assert_int_equal(stat(null_device, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
    assert_int_equal(directory_entry_count(fx->dir), 1);
}

/* The header is written at open, so a destination that takes no bytes is
 * refused then, with the system's reason, before any work is counted. */
static void a_full_device_is_refused_at_open_and_says_why(void **state)
{
    struct fixture *fx = *state;
    const char *full = path_in(fx, "full");
    if (!make_device(full, 1, 7)) /* /dev/full: every write is ENOSPC */
        skip();
    char error[256];
    assert_null(open_device(&(tally_device_options){.report_path = full}, error, sizeof error));
    assert_non_null(strstr(error, "No space left on device"));
    struct stat st;
    assert_int_equal(stat(full, &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

/* --- unusable paths --------------------------------------------------------------- */

static void a_missing_directory_is_named_with_the_system_reason(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "no/such/dir/report.csv");
    char error[512];
    assert_null(open_device(&(tally_device_options){.report_path = path}, error, sizeof error));
    assert_non_null(strstr(error, path));
    assert_non_null(strstr(error, "No such file or directory"));
}

static void a_directory_is_refused_before_anything_is_written(void **state)
{
    struct fixture *fx = *state;
    char error[512];
    assert_null(open_device(&(tally_device_options){.trace_path = fx->dir}, error, sizeof error));
    assert_non_null(strstr(error, fx->dir));
    assert_non_null(strstr(error, "Is a directory"));
    assert_int_equal(directory_entry_count(fx->dir), 0);
}

static void a_permission_problem_is_named_with_the_system_reason(void **state)
{
    struct fixture *fx = *state;
    if (geteuid() == 0)
        skip(); /* root may write anywhere */
    const char *locked = path_in(fx, "locked");
    assert_int_equal(mkdir(locked, 0500), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/report.csv", locked);
    char error[512];
    assert_null(open_device(&(tally_device_options){.report_path = path}, error, sizeof error));
    assert_non_null(strstr(error, path));
    assert_non_null(strstr(error, "Permission denied"));
}

/* --- a killed program ------------------------------------------------------------ */

/* A CSV report is written live: killed, the program leaves the file with
 * its header and every row flushed before the kill, each whole, and no
 * temporary file beside it. */
static void a_killed_program_leaves_its_csv_rows_and_no_temporary_file(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "report.csv");
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        const tally_catalogue *cat = NULL;
        uint32_t column = 0;
        tally_report *report = NULL;
        tally_backend_catalogue("simgpu", &cat);
        if (tally_report_open(path, TALLY_REPORT_CSV, cat, &column, 1, &report) != TALLY_OK)
            _exit(1);
        tally_command_record record = {
            .api_name = "draw", .kind = "draw", .context_api = "t", .label = ""};
        tally_value value = {.u64 = 1};
        for (int i = 0; i < 20000; i++)
            tally_report_write(report, &record, &value);
        tally_report_flush(report);
        for (int i = 0; i < 7; i++) /* buffered, never flushed: lost with the kill */
            tally_report_write(report, &record, &value);
        raise(SIGKILL);
        _exit(2);
    }
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(directory_entry_count(fx->dir), 1);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int rows = -1; /* the header */
    while (fgets(line, sizeof line, f)) {
        assert_non_null(strchr(line, '\n')); /* every line whole */
        rows++;
    }
    fclose(f);
    assert_int_equal(rows, 20000);
}

/* --- outputs that name the same file ----------------------------------------------- */

static void output_and_trace_naming_one_file_keep_the_report(void **state)
{
    struct fixture *fx = *state;
    char report[300], trace[300];
    snprintf(report, sizeof report, "%s/out.json", fx->dir);
    snprintf(trace, sizeof trace, "%s/./out.json", fx->dir); /* another spelling */
    char error[256];
    tally_device *device = open_device(
        &(tally_device_options){.report_path = report, .trace_path = trace}, error, sizeof error);
    assert_non_null(device);
    draw_once(device);
    assert_int_equal(tally_device_finish(device), TALLY_OK);
    char *text = read_text(report);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"commands\""));
    assert_null(strstr(text, "traceEvents"));
    free(text);
    assert_int_equal(directory_entry_count(fx->dir), 1);
}

/* --- TALLY_COUNTERS ---------------------------------------------------------------- */

/* The CSV header of a report of one draw with the counter list. */
static char *header_for(struct fixture *fx, const char *counters)
{
    const char *path = path_in(fx, "columns.csv");
    char error[256];
    tally_device *device =
        open_device(&(tally_device_options){.report_path = path, .report_counters = counters},
                    error, sizeof error);
    assert_non_null(device);
    assert_int_equal(tally_device_finish(device), TALLY_OK);
    char *text = read_text(path);
    assert_non_null(text);
    *strchr(text, '\n') = '\0';
    return text;
}

static unsigned columns_named(const char *header, const char *symbol)
{
    unsigned n = 0;
    size_t length = strlen(symbol);
    for (const char *at = header; (at = strstr(at, symbol)); at += length)
        n += at[-1] == ',' && (at[length] == ',' || at[length] == '\0');
    return n;
}

static unsigned column_count(const char *header)
{
    unsigned n = 1;
    for (const char *c = header; *c; c++)
        n += *c == ',';
    return n;
}

enum { RECORD_COLUMNS = 19 }; /* sequence ... duration_ns */

static void a_counter_listed_twice_gets_one_column(void **state)
{
    char *header = header_for(*state, "GpuTime,DrawCalls,GpuTime, DrawCalls");
    assert_int_equal(columns_named(header, "GpuTime"), 1);
    assert_int_equal(columns_named(header, "DrawCalls"), 1);
    assert_int_equal(column_count(header), RECORD_COLUMNS + 2);
    free(header);
}

static void all_with_more_names_is_every_counter_once(void **state)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    char *header = header_for(*state, "all,GpuTime");
    assert_int_equal(columns_named(header, "GpuTime"), 1);
    assert_int_equal(column_count(header), RECORD_COLUMNS + tally_catalogue_counter_count(cat));
    free(header);
}

static void an_empty_counter_list_gives_the_default_columns(void **state)
{
    char *empty = header_for(*state, " , ");
    char *unset = header_for(*state, NULL);
    assert_string_equal(empty, unset);
    assert_int_equal(columns_named(empty, "GpuTime"), 1);
    free(empty);
    free(unset);
}

/* stderr goes to a file of the fixture's folder from log_begin on; log_end
 * puts it back and returns what was written (the caller frees it). */
static int log_begin(struct fixture *fx)
{
    const char *log = path_in(fx, "stderr.txt");
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static char *log_end(struct fixture *fx, int saved)
{
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text = read_text(path_in(fx, "stderr.txt"));
    assert_non_null(text);
    return text;
}

static unsigned lines_of(const char *text)
{
    unsigned n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* What a device with a report logs about this counter list. */
static char *log_of_counter_list(struct fixture *fx, const char *counters)
{
    char report[256];
    snprintf(report, sizeof report, "%s", path_in(fx, "columns.csv"));
    int saved = log_begin(fx);
    char error[256];
    tally_device *device =
        open_device(&(tally_device_options){.report_path = report, .report_counters = counters},
                    error, sizeof error);
    tally_status s = tally_device_finish(device);
    char *log = log_end(fx, saved);
    assert_non_null(device);
    assert_int_equal(s, TALLY_OK);
    return log;
}

static void a_misspelt_counter_is_said_with_the_nearest_names(void **state)
{
    char *log = log_of_counter_list(*state, "GpuTime,IaVertice");
    assert_string_equal(log, "tally: TALLY_COUNTERS: no counter named \"IaVertice\" (did you mean "
                             "IaVertices?); skipped\n");
    free(log);
}

/* 10,000 names that name nothing once gave 10,001 lines on the program's
 * stderr: three are named, the rest counted. */
static void ten_thousand_unknown_names_are_said_in_a_few_lines(void **state)
{
    enum { NAMES = 10000 };
    char *list = malloc(NAMES * 16 + 16);
    size_t used = (size_t)sprintf(list, "GpuTime");
    for (int i = 0; i < NAMES; i++)
        used += (size_t)sprintf(list + used, ",NoSuch%d", i);
    char *log = log_of_counter_list(*state, list);
    assert_int_equal(lines_of(log), 4);
    assert_non_null(strstr(log, "no counter named \"NoSuch0\""));
    assert_non_null(strstr(log, "no counter named \"NoSuch2\""));
    assert_null(strstr(log, "NoSuch3"));
    assert_non_null(strstr(log, "tally: ... and 9997 more names of the counter list skipped\n"));
    free(log);
    free(list);
}

/* A terminal's escape sequence in the environment is shown, never sent. */
static void control_characters_from_the_environment_are_escaped(void **state)
{
    char *log = log_of_counter_list(*state, "GpuTime,\x1b]0;title\x07\x1b[2J,\xc2\x9b"
                                            "1m");
    assert_null(strchr(log, '\x1b'));
    assert_null(strchr(log, '\x07'));
    assert_null(strstr(log, "\xc2\x9b"));
    assert_non_null(strstr(log, "no counter named \"\\x1b]0;title\\x07\\x1b[2J\""));
    assert_non_null(strstr(log, "no counter named \"\\xc2\\x9b1m\""));
    free(log);
}

/* --- TALLY_SAMPLE ------------------------------------------------------------------- */

/* What the shared device logs when opened and released with this
 * environment, stderr captured in a file. */
static char *log_of_shared_device(struct fixture *fx, const char *sample)
{
    int saved = log_begin(fx);
    setenv("TALLY_SAMPLE", sample, 1);
    tally_device *device = NULL;
    tally_status s = tally_device_acquire_shared(&device);
    tally_device_release_shared(device);
    unsetenv("TALLY_SAMPLE");
    char *text = log_end(fx, saved);
    assert_int_equal(s, TALLY_OK);
    return text;
}

static void a_sampling_interval_past_the_limit_says_the_limit(void **state)
{
    char *log = log_of_shared_device(*state, "5s");
    assert_non_null(strstr(log, "\"5s\" is longer than the longest interval, 4.294967295 s"));
    assert_null(strstr(log, "not an interval"));
    free(log);
}

static void a_sampling_interval_of_no_time_says_so(void **state)
{
    char *log = log_of_shared_device(*state, "0ms");
    assert_non_null(strstr(log, "\"0ms\" is no time"));
    free(log);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    setenv("TALLY_LOG", "warn", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_fifo_is_written_into_and_stays_a_fifo, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_fifo_that_no_process_reads_is_refused_at_once, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_device_node_is_written_into_and_not_replaced, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_full_device_is_refused_at_open_and_says_why, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_missing_directory_is_named_with_the_system_reason,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_directory_is_refused_before_anything_is_written, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_permission_problem_is_named_with_the_system_reason,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_killed_program_leaves_its_csv_rows_and_no_temporary_file,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(output_and_trace_naming_one_file_keep_the_report, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_counter_listed_twice_gets_one_column, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(all_with_more_names_is_every_counter_once, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(an_empty_counter_list_gives_the_default_columns, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_misspelt_counter_is_said_with_the_nearest_names, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(ten_thousand_unknown_names_are_said_in_a_few_lines,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(control_characters_from_the_environment_are_escaped,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_sampling_interval_past_the_limit_says_the_limit, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_sampling_interval_of_no_time_says_so, make_dir,
                                        remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
