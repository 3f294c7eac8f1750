/* Sampling from the environment (what `tally run --sample` sets up): the
 * shared device samples TALLY_SAMPLE_SET at TALLY_SAMPLE and writes CSV rows
 * whose columns add up to the totals of the same work, plus counter tracks
 * in the trace; bad values are ignored. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tally/tally.h>

static char dir[64];
static char csv_path[128];

static void clear_environment(void)
{
    static const char *names[] = {"TALLY_SAMPLE", "TALLY_SAMPLE_SET", "TALLY_SAMPLE_OUTPUT",
                                  "TALLY_TRACE",  "TALLY_OUTPUT",     "TALLY_CLOCK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

static int setup(void **state)
{
    (void)state;
    clear_environment();
    strcpy(dir, "/tmp/tally-md-env-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(csv_path, sizeof csv_path, "%s/samples.csv", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    clear_environment();
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", dir);
    return system(command) == 0 ? 0 : -1;
}

/* --- the work, and its totals through a query ------------------------------------- */

enum { DRAWS = 300, VERTICES = 600 };

static const char *const summed[] = {"DrawCalls", "VsInvocations", "PsInvocations",
                                     "RasterizedPixels", "ShaderAluInstructions"};
enum { SUMMED = sizeof summed / sizeof summed[0] };

/* Runs the work on the shared device and returns its totals of `summed`. */
static void run_work(uint64_t totals[SUMMED])
{
    tally_device *device = NULL;
    assert_int_equal(tally_device_acquire_shared(&device), TALLY_OK);
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t counters[SUMMED];
    for (int i = 0; i < SUMMED; i++)
        assert_int_equal(tally_catalogue_find(cat, summed[i], &counters[i]), TALLY_OK);
    tally_context *ctx = NULL;
    tally_stream *stream = NULL;
    tally_results *results = NULL;
    assert_int_equal(tally_context_create(device, "test", &ctx), TALLY_OK);
    assert_int_equal(tally_stream_create(ctx, &stream), TALLY_OK);
    assert_int_equal(tally_results_create(device, counters, SUMMED, 1, &results), TALLY_OK);
    tally_program_desc desc = {.name = "env"};
    desc.stages[TALLY_STAGE_VERTEX] = (tally_stage_profile){.present = true, .mix = {.alu = 9}};
    desc.stages[TALLY_STAGE_FRAGMENT] = (tally_stage_profile){.present = true, .mix = {.alu = 14}};
    tally_program *program = NULL;
    assert_int_equal(tally_program_create(device, &desc, &program), TALLY_OK);
    tally_render_state rs = {
        .width = 320, .height = 240, .layers = 1, .samples = 1, .color_bytes_per_pixel = 4};
    assert_int_equal(tally_stream_marker_begin(stream, results, 0), TALLY_OK);
    for (int i = 0; i < DRAWS; i++) {
        tally_stream_set_render_state(stream, &rs);
        tally_stream_bind_program(stream, program);
        tally_draw draw = {.api_name = "draw",
                           .count = VERTICES,
                           .instance_count = 1,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
        if (i % 50 == 49 && i + 1 < DRAWS) { /* several submissions */
            tally_submission sub = {.streams = &stream, .stream_count = 1, .api_name = "submit"};
            assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
            assert_int_equal(tally_stream_reset(stream), TALLY_OK);
        }
    }
    assert_int_equal(tally_stream_marker_end(stream, results, 0), TALLY_OK);
    tally_submission sub = {
        .streams = &stream, .stream_count = 1, .flags = TALLY_SUBMIT_CONSUME, .api_name = "submit"};
    assert_int_equal(tally_submit(device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_results_wait(results, 0, UINT64_MAX), TALLY_OK);
    tally_value values[SUMMED];
    assert_int_equal(tally_results_get(results, 0, values, SUMMED, NULL), TALLY_OK);
    for (int i = 0; i < SUMMED; i++)
        totals[i] = values[i].u64;
    assert_int_equal(totals[0], DRAWS);
    tally_results_release(results);
    tally_program_release(program);
    tally_stream_destroy(stream);
    tally_context_destroy(ctx);
    tally_device_release_shared(device); /* the last reference: the CSV is written */
}

/* --- reading the CSV --------------------------------------------------------------- */

struct csv {
    char *columns[128];
    int column_count;
    int rows;
    double sums[128];
    double first[128], last[128];
};

static int split(char *line, char **fields, int max)
{
    int n = 0;
    for (char *save = NULL, *f = strtok_r(line, ",\n", &save); f && n < max;
         f = strtok_r(NULL, ",\n", &save))
        fields[n++] = f;
    return n;
}

static void read_csv(const char *path, struct csv *csv)
{
    memset(csv, 0, sizeof *csv);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char header[8192];
    assert_non_null(fgets(header, sizeof header, f));
    csv->column_count = split(header, csv->columns, 128);
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        char *fields[128];
        assert_int_equal(split(line, fields, 128), csv->column_count);
        for (int c = 0; c < csv->column_count; c++) {
            double v = strtod(fields[c], NULL);
            csv->sums[c] += v;
            if (!csv->rows)
                csv->first[c] = v;
            csv->last[c] = v;
        }
        csv->rows++;
    }
    fclose(f);
}

static int column(const struct csv *csv, const char *name)
{
    for (int c = 0; c < csv->column_count; c++)
        if (strcmp(csv->columns[c], name) == 0)
            return c;
    fail_msg("no column %s", name);
    return -1;
}

static void assert_columns_sum_to(const struct csv *csv, const uint64_t totals[SUMMED])
{
    for (int i = 0; i < SUMMED; i++)
        assert_int_equal((uint64_t)csv->sums[column(csv, summed[i])], totals[i]);
    assert_int_equal(csv->sums[column(csv, "ReportLost")], 0);
}

static void the_csv_columns_sum_to_the_totals_of_the_work(void **state)
{
    (void)state;
    setenv("TALLY_CLOCK", "virtual", 1);
    setenv("TALLY_SAMPLE", "20us", 1);
    setenv("TALLY_SAMPLE_SET", "RenderBasic", 1);
    setenv("TALLY_SAMPLE_OUTPUT", csv_path, 1);
    uint64_t totals[SUMMED];
    run_work(totals);
    struct csv csv;
    read_csv(csv_path, &csv);
    assert_true(csv.rows > 10);
    assert_string_equal(csv.columns[0], "GpuTime");
    assert_columns_sum_to(&csv, totals);
    /* the intervals tile the sampled time */
    double span =
        csv.last[column(&csv, "QueryEndTime")] - csv.first[column(&csv, "QueryBeginTime")];
    assert_true(csv.sums[column(&csv, "GpuTime")] == span);
}

static void a_realtime_program_sampled_every_millisecond_is_covered_to_the_end(void **state)
{
    (void)state;
    assert_int_equal(chdir(dir), 0);
    setenv("TALLY_SAMPLE", "1ms", 1); /* the default set and output */
    uint64_t totals[SUMMED];
    run_work(totals);
    char path[160];
    snprintf(path, sizeof path, "%s/tally-samples.csv", dir);
    struct csv csv;
    read_csv(path, &csv);
    assert_true(csv.rows >= 1);
    assert_columns_sum_to(&csv, totals);
    assert_int_equal(chdir("/"), 0);
}

static void the_trace_gets_a_counter_track_per_metric(void **state)
{
    (void)state;
    char trace_path[160];
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", dir);
    setenv("TALLY_CLOCK", "virtual", 1);
    setenv("TALLY_SAMPLE", "50000ns", 1);
    setenv("TALLY_SAMPLE_OUTPUT", csv_path, 1);
    setenv("TALLY_TRACE", trace_path, 1);
    uint64_t totals[SUMMED];
    run_work(totals);
    json_object *trace = json_object_from_file(trace_path);
    assert_non_null(trace);
    json_object *events = NULL;
    assert_true(json_object_object_get_ex(trace, "traceEvents", &events));
    double draws = 0;
    int points = 0;
    for (size_t i = 0; i < json_object_array_length(events); i++) {
        json_object *ev = json_object_array_get_idx(events, i), *name, *ph, *args, *value;
        if (!json_object_object_get_ex(ev, "name", &name) ||
            strcmp(json_object_get_string(name), "RenderBasic.DrawCalls") != 0)
            continue;
        assert_true(json_object_object_get_ex(ev, "ph", &ph));
        assert_string_equal(json_object_get_string(ph), "C");
        assert_true(json_object_object_get_ex(ev, "args", &args));
        assert_true(json_object_object_get_ex(args, "value", &value));
        draws += json_object_get_double(value);
        points++;
    }
    assert_true(points > 2);
    assert_true(draws == (double)totals[0]);
    json_object_put(trace);
}

static void bad_sampling_values_are_ignored_and_the_program_runs_on(void **state)
{
    (void)state;
    setenv("TALLY_CLOCK", "virtual", 1);
    setenv("TALLY_SAMPLE_OUTPUT", csv_path, 1);
    static const char *bad[] = {"fast", "10", "0ms", "-5us", "99999999999s", "1 ms"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("TALLY_SAMPLE", bad[i], 1);
        uint64_t totals[SUMMED];
        run_work(totals);
        assert_int_equal(access(csv_path, F_OK), -1);
    }
    /* an unknown set: the first set is sampled */
    setenv("TALLY_SAMPLE", "100us", 1);
    setenv("TALLY_SAMPLE_SET", "NoSuchSet", 1);
    uint64_t totals[SUMMED];
    run_work(totals);
    struct csv csv;
    read_csv(csv_path, &csv);
    assert_columns_sum_to(&csv, totals);
    /* an output nobody can write: no file, no harm */
    setenv("TALLY_SAMPLE_OUTPUT", "/nonexistent-dir/samples.csv", 1);
    run_work(totals);
    assert_int_equal(access("/nonexistent-dir/samples.csv", F_OK), -1);
}

/* A tool's view of the shared device sees what any front door submits. */
static void a_shared_view_samples_the_work_of_every_front_door(void **state)
{
    (void)state;
    setenv("TALLY_CLOCK", "virtual", 1);
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open_shared(&md), TALLY_OK);
    tally_device *front_door = NULL;
    assert_int_equal(tally_device_acquire_shared(&front_door), TALLY_OK);
    assert_ptr_equal(tally_md_device_engine(md), front_door);
    tally_md_concurrent_group *oa = tally_md_device_get_concurrent_group(md, 0);
    tally_md_metric_set *set = tally_md_concurrent_group_get_metric_set(oa, 0);
    uint32_t interval = 10000, size = 0;
    assert_int_equal(tally_md_open_io_stream(oa, set, &interval, &size), TALLY_OK);
    uint64_t totals[SUMMED];
    run_work(totals); /* acquires and releases the shared device itself */
    assert_int_equal(tally_md_flush_io_stream(oa, 1000), TALLY_OK);
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    uint8_t *raw = malloc(size);
    assert_non_null(raw);
    uint32_t count = size / p->raw_report_size;
    assert_int_equal(tally_md_read_io_stream(oa, &count, raw, 0, NULL), TALLY_OK);
    size_t width = (size_t)p->metrics_count + p->information_count;
    tally_md_typed_value *values = calloc((size_t)count * width, sizeof(*values));
    assert_non_null(values);
    uint32_t rows = 0;
    assert_int_equal(tally_md_calculate_metrics(set, raw, (size_t)count * p->raw_report_size,
                                                values, (size_t)count * width, &rows),
                     TALLY_OK);
    uint64_t draws = 0;
    for (uint32_t r = 0; r < rows; r++)
        draws += values[r * width + 4].value.u64; /* RenderBasic's DrawCalls */
    assert_string_equal(tally_md_metric_set_get_metric(set, 4)->symbol_name, "DrawCalls");
    assert_int_equal(draws, totals[0]);
    free(values);
    free(raw);
    tally_device_release_shared(front_door);
    tally_md_device_close(md); /* the last reference */
}

/* The whole path: tally run sets the variables, the program's shared device
 * samples, the CSV is written when the program exits. The program links
 * libtally itself, so no front door is preloaded (a sanitized shim could not
 * be preloaded into it without the sanitizer runtime first). */
static void tally_run_sample_writes_the_samples_of_a_program(void **state)
{
    (void)state;
    char command[1024];
    snprintf(command, sizeof command,
             "%s run --no-vulkan --no-gl --no-egl --no-cl --clock virtual --sample 10us "
             "--set RenderBasic --sample-output %s -- %s 250",
             TALLY_CLI, csv_path, MD_SAMPLED_PROGRAM);
    assert_int_equal(system(command), 0);
    struct csv csv;
    read_csv(csv_path, &csv);
    assert_true(csv.rows >= 5); /* 250 small draws take about 85 us */
    assert_int_equal(csv.sums[column(&csv, "DrawCalls")], 250);
    assert_int_equal(csv.sums[column(&csv, "VsInvocations")], 250 * 600);
    assert_int_equal(csv.sums[column(&csv, "ReportLost")], 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_csv_columns_sum_to_the_totals_of_the_work, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            a_realtime_program_sampled_every_millisecond_is_covered_to_the_end, setup, teardown),
        cmocka_unit_test_setup_teardown(the_trace_gets_a_counter_track_per_metric, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_sampling_values_are_ignored_and_the_program_runs_on,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_shared_view_samples_the_work_of_every_front_door, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(tally_run_sample_writes_the_samples_of_a_program, setup,
                                        teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
