/*
 * TALLY_BACKEND=driver in OpenCL's per-command report, on PoCL:
 * cl_timed_kernels (a program that knows nothing of tally) runs under the
 * shim. Every kernel takes GPU time, no more than its own event's profiling
 * span where the program measured one, also on the queue that did not ask
 * for profiling; its work-items are its global work size and its
 * work-groups the global size over the local size.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "layer_harness.h"

typedef struct run {
    run_result result;
    json_object *lines;
} run;

static int run_program(void **state)
{
    static run r;
    const char *argv[] = {CL_TIMED_KERNELS, NULL};
    const char *env[] = {"LD_PRELOAD=" CL_SHIM_PRELOAD,
                         "TALLY_BACKEND=driver",
                         "TALLY_LOG=warn",
                         "TALLY_COUNTERS=GpuTime,Dispatches,CsWorkgroups,CsInvocations",
                         "POCL_CACHE_DIR=" POCL_CACHE,
                         NULL};
    r.result = run_under_layer(argv, ACTIVATE_NONE, env);
    if (r.result.exit_code != 0 || !r.result.report) {
        fprintf(stderr, "%s\n", r.result.output);
        return -1;
    }
    r.lines = output_lines(&r.result);
    *state = &r;
    return json_object_array_length(r.lines) == 5 ? 0 : -1;
}

static int free_run(void **state)
{
    run *r = *state;
    json_object_put(r->lines);
    run_result_free(&r->result);
    return 0;
}

static const char *line_queue(json_object *line)
{
    json_object *v = NULL;
    json_object_object_get_ex(line, "queue", &v);
    return v ? json_object_get_string(v) : "";
}

/* The n-th dispatch row of the report's context (1: the profiled queue,
 * created first; 2: the plain one). */
static json_object *dispatch_of(run *r, unsigned long long context, size_t n)
{
    json_object *commands = report_commands(&r->result);
    for (size_t i = 0; commands && i < json_object_array_length(commands); i++) {
        json_object *c = json_object_array_get_idx(commands, i);
        if (!strcmp(command_text(c, "kind"), "dispatch") &&
            command_number(c, "context") == context && n-- == 0)
            return c;
    }
    return NULL;
}

/* Line i of the program and its row in the report. */
static json_object *row_of_line(run *r, size_t i)
{
    size_t before = 0;
    json_object *line = json_object_array_get_idx(r->lines, i);
    for (size_t k = 0; k < i; k++)
        before += !strcmp(line_queue(json_object_array_get_idx(r->lines, k)), line_queue(line));
    return dispatch_of(r, strcmp(line_queue(line), "profiled") ? 2 : 1, before);
}

static void every_kernel_takes_gpu_time_within_its_events_span(void **state)
{
    run *r = *state;
    for (size_t i = 0; i < json_object_array_length(r->lines); i++) {
        json_object *line = json_object_array_get_idx(r->lines, i);
        json_object *row = row_of_line(r, i);
        assert_non_null(row);
        unsigned long long gpu_time = command_value(row, "GpuTime");
        assert_true(gpu_time > 0 && gpu_time != ~0ull);
        if (!strcmp(line_queue(line), "profiled"))
            assert_true(gpu_time <= line_value(line, "span_ns"));
    }
}

static void work_items_and_groups_are_the_ndranges(void **state)
{
    run *r = *state;
    for (size_t i = 0; i < json_object_array_length(r->lines); i++) {
        json_object *line = json_object_array_get_idx(r->lines, i);
        json_object *row = row_of_line(r, i);
        assert_non_null(row);
        unsigned long long global = line_value(line, "global");
        assert_int_equal(command_value(row, "CsInvocations"), global);
        /* The first kernel's local size is PoCL's choice; the others' 64. */
        if (i > 0)
            assert_int_equal(command_value(row, "CsWorkgroups"), global / 64);
        assert_int_equal(command_value(row, "Dispatches"), 1);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kernel_takes_gpu_time_within_its_events_span),
        cmocka_unit_test(work_items_and_groups_are_the_ndranges),
    };
    return cmocka_run_group_tests(tests, run_program, free_run);
}
