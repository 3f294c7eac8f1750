/* The report and trace writers: formats, checked by an independent JSON
 * parser (json-c), and the atomic, bounded way they reach the disk. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <json-c/json.h>
#include <limits.h>
#include <locale.h>
#include <malloc.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tally/catalogue.h"
#include "tally/report.h"
#include "fixture.h"
#include "printf_fixed3.h"

struct fixture {
    char dir[64];
    char path[PATH_MAX]; /* scratch for path_in */
};

static int make_dir(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    strcpy(fx->dir, "/tmp/tally-report-XXXXXX");
    if (!mkdtemp(fx->dir)) {
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int remove_dir(void **state)
{
    struct fixture *fx = *state;
    chmod(fx->dir, 0700);
    int result = remove_tree(fx->dir);
    free(fx);
    return result;
}

static const char *path_in(struct fixture *fx, const char *name)
{
    snprintf(fx->path, sizeof fx->path, "%s/%s", fx->dir, name);
    return fx->path;
}

/* The whole file as a string, or NULL if it cannot be read. */
static char *read_text(const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
    text[size] = '\0';
    fclose(file);
    return text;
}

static int line_count(const char *text)
{
    int lines = 0;
    for (const char *c = text; *c; c++)
        lines += *c == '\n';
    return lines;
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* Parses strictly, and the whole text must be the one value. */
static json_object *parse_json_file(const char *path)
{
    char *text = read_text(path);
    assert_non_null(text);
    json_tokener *tokener = json_tokener_new();
    assert_non_null(tokener);
    json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *root = json_tokener_parse_ex(tokener, text, (int)strlen(text));
    assert_int_equal(json_tokener_get_error(tokener), json_tokener_success);
    assert_non_null(root);
    size_t used = json_tokener_get_parse_end(tokener);
    assert_int_equal(strspn(text + used, " \n"), strlen(text + used));
    json_tokener_free(tokener);
    free(text);
    return root;
}

static json_object *member(json_object *object, const char *key)
{
    json_object *value = NULL;
    assert_true(json_object_object_get_ex(object, key, &value));
    return value;
}

static const tally_catalogue *simgpu(void)
{
    const tally_catalogue *cat = NULL;
    assert_int_equal(tally_backend_catalogue("simgpu", &cat), TALLY_OK);
    return cat;
}

static uint32_t counter(const char *symbol)
{
    uint32_t index = UINT32_MAX;
    assert_int_equal(tally_catalogue_find(simgpu(), symbol, &index), TALLY_OK);
    return index;
}

/* The columns most tests use: uint64, float64, uint64. */
static void three_columns(uint32_t columns[3])
{
    columns[0] = counter("GpuTime");
    columns[1] = counter("GpuBusy");
    columns[2] = counter("DrawCalls");
}

static tally_command_record sample_record(uint64_t sequence)
{
    return (tally_command_record){
        .sequence = sequence,
        .api_name = "vkCmdDraw",
        .kind = "draw",
        .context = 3,
        .context_api = "vulkan",
        .frame = 7,
        .submission = 11,
        .stream = 42,
        .label = "frame/pass",
        .begin_ns = 1000,
        .end_ns = 3500,
    };
}

/* The identity columns of a record that has none (pid, tid, pipeline,
 * pipeline_name, shader_hash, target_width, target_height), with the comma
 * before them: the pid is this process's. */
static const char *no_identity(void)
{
    static char text[64];
    snprintf(text, sizeof text, ",%ld,0,0,,0000000000000000,0,0", (long)getpid());
    return text;
}

/* ",label,<no identity>,1000,": a sample record's label field as the CSV
 * holds it, and what follows it. */
static const char *with_identity(const char *label_field)
{
    static char text[256];
    snprintf(text, sizeof text, ",%s%s,1000,", label_field, no_identity());
    return text;
}

/* A CSV report at path of one column, symbol. */
static tally_report *open_one_column(const char *path, const char *symbol)
{
    uint32_t column = counter(symbol);
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), &column, 1, &report),
                     TALLY_OK);
    return report;
}

static tally_report *open_report(const char *path, tally_report_format format)
{
    uint32_t columns[3];
    three_columns(columns);
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path, format, simgpu(), columns, 3, &report), TALLY_OK);
    assert_non_null(report);
    return report;
}

/* A CSV report of one record with the given label; returns its text. */
static char *csv_with_label(struct fixture *fx, const char *label)
{
    const char *path = path_in(fx, "labels.csv");
    tally_report *report = open_report(path, TALLY_REPORT_CSV);
    tally_command_record record = sample_record(1);
    record.label = label;
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    return read_text(path);
}

static const char *second_line(const char *text)
{
    const char *newline = strchr(text, '\n');
    assert_non_null(newline);
    return newline + 1;
}

/* The text at *line begins with expected: *line moves past it. */
static void take_line(const char **line, const char *expected)
{
    size_t n = strlen(expected);
    assert_memory_equal(*line, expected, n);
    *line += n;
}

static void format_for_path_picks_json_by_extension_case_insensitively(void **state)
{
    (void)state;
    assert_int_equal(tally_report_format_for_path("out.json"), TALLY_REPORT_JSON);
    assert_int_equal(tally_report_format_for_path("/tmp/OUT.JSON"), TALLY_REPORT_JSON);
    assert_int_equal(tally_report_format_for_path("out.Json"), TALLY_REPORT_JSON);
    assert_int_equal(tally_report_format_for_path("out.csv"), TALLY_REPORT_CSV);
    assert_int_equal(tally_report_format_for_path("out"), TALLY_REPORT_CSV);
    assert_int_equal(tally_report_format_for_path("out.json.csv"), TALLY_REPORT_CSV);
    assert_int_equal(tally_report_format_for_path("dir.json/out"), TALLY_REPORT_CSV);
    assert_int_equal(tally_report_format_for_path(NULL), TALLY_REPORT_CSV);
}

static void csv_header_lists_record_fields_then_counter_symbols(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "header.csv");
    assert_int_equal(tally_report_close(open_report(path, TALLY_REPORT_CSV)), TALLY_OK);
    char *text = read_text(path);
    assert_string_equal(text, "sequence,kind,api_name,context,context_api,frame,submission,"
                              "stream,label,pid,tid,pipeline,pipeline_name,shader_hash,"
                              "target_width,target_height,begin_ns,end_ns,duration_ns,"
                              "GpuTime,GpuBusy,DrawCalls\n");
    free(text);
}

static void csv_rows_hold_record_fields_duration_and_values(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "rows.csv");
    tally_report *report = open_report(path, TALLY_REPORT_CSV);
    tally_command_record record = sample_record(1);
    record.tid = 4321;
    record.pipeline = 5;
    record.pipeline_name = "terrain, \"lit\"";
    record.shader_hash = 0x0123456789abcdefu;
    record.target_width = 1920;
    record.target_height = 1080;
    tally_value values[3] = {{.u64 = 2500}, {.f64 = 62.5}, {.u64 = UINT64_MAX}};
    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    char expected[256];
    snprintf(expected, sizeof expected,
             "1,draw,vkCmdDraw,3,vulkan,7,11,42,frame/pass,%ld,4321,5,\"terrain, \"\"lit\"\"\","
             "0123456789abcdef,1920,1080,1000,3500,2500,2500,62.500,18446744073709551615\n",
             (long)getpid());
    assert_string_equal(second_line(text), expected);
    free(text);
}

/*
 * One change to a string that tally_report_write must see, wherever it is:
 * each byte of labels of 0 to 40 bytes changed in place (a different byte,
 * the string cut short there, or, at its NUL, made a byte longer), each
 * written as a row between rows of the unchanged label. With at_page_end,
 * the label ends at the last byte of a page whose next page cannot be read
 * (a read past the string there would kill the test), and is never made
 * longer. The labels are read back from the file, row by row.
 */
static void check_changed_labels(struct fixture *fx, char *buffer, size_t room, bool at_page_end)
{
    const char *path = path_in(fx, at_page_end ? "page_end.csv" : "changes.csv");
    tally_report *report = open_report(path, TALLY_REPORT_CSV);
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    size_t expected_capacity = 8192, expected_used = 0;
    char *expected = malloc(expected_capacity);
    assert_non_null(expected);
    uint64_t sequence = 0;
    for (size_t length = 0; length <= 40; length++) {
        char *label = at_page_end ? buffer + room - length - 1 : buffer;
        for (size_t at = 0; at <= length; at++) {
            for (int change = 0; change < 3; change++) {
                bool longer = at == length;
                if ((longer && (at_page_end || change > 0)) || (!longer && change == 2))
                    continue;
                for (int phase = 0; phase < 3; phase++) {
                    for (size_t i = 0; i < length; i++)
                        label[i] = (char)('a' + i % 26);
                    label[length] = '\0';
                    if (phase == 1 && longer) {
                        label[length] = 'z';
                        label[length + 1] = '\0';
                    } else if (phase == 1) {
                        label[at] = change == 0 ? 'Z' : '\0';
                    }
                    tally_command_record record = sample_record(++sequence);
                    record.label = label;
                    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
                    size_t n = strlen(label);
                    if (expected_used + n + 2 > expected_capacity) {
                        expected_capacity *= 2;
                        expected = realloc(expected, expected_capacity);
                        assert_non_null(expected);
                    }
                    memcpy(expected + expected_used, label, n);
                    expected_used += n;
                    expected[expected_used++] = '\n';
                }
            }
        }
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    /* the label is the ninth field; the labels hold no comma or quote */
    size_t checked = 0;
    for (const char *line = second_line(text); *line; line = second_line(line)) {
        const char *field = line;
        for (int comma = 0; comma < 8; comma++)
            field = strchr(field, ',') + 1;
        size_t n = (size_t)(strchr(field, ',') - field);
        assert_true(checked + n < expected_used);
        assert_memory_equal(field, expected + checked, n);
        assert_int_equal(expected[checked + n], '\n');
        checked += n + 1;
    }
    assert_int_equal(checked, expected_used);
    free(text);
    free(expected);
}

static void a_string_changed_at_any_byte_is_written_as_changed(void **state)
{
    char buffer[64];
    check_changed_labels(*state, buffer, sizeof buffer, false);
}

static void strings_that_end_a_readable_page_are_read_no_further(void **state)
{
    long page = sysconf(_SC_PAGESIZE);
    char *pages =
        mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(pages != MAP_FAILED);
    assert_int_equal(mprotect(pages + page, (size_t)page, PROT_NONE), 0);
    check_changed_labels(*state, pages, (size_t)page, true);
    munmap(pages, (size_t)page * 2);
}

static void csv_duration_is_zero_when_a_record_ends_before_it_begins(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "backwards.csv");
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), NULL, 0, &report),
                     TALLY_OK);
    tally_command_record record = sample_record(9);
    record.begin_ns = 5000;
    record.end_ns = 4000;
    assert_int_equal(tally_report_write(report, &record, NULL), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    char expected[128];
    snprintf(expected, sizeof expected,
             "9,draw,vkCmdDraw,3,vulkan,7,11,42,frame/pass%s,5000,4000,0\n", no_identity());
    assert_string_equal(second_line(text), expected);
    free(text);
}

static void csv_quotes_labels_with_commas_and_quotes(void **state)
{
    struct fixture *fx = *state;
    char *text = csv_with_label(fx, "a,\"b\"");
    assert_non_null(strstr(text, with_identity("\"a,\"\"b\"\"\"")));
    free(text);
}

static void csv_quotes_labels_with_line_breaks(void **state)
{
    struct fixture *fx = *state;
    char *text = csv_with_label(fx, "one\r\ntwo");
    assert_non_null(strstr(text, with_identity("\"one\r\ntwo\"")));
    free(text);
}

static void csv_leaves_plain_labels_unquoted(void **state)
{
    struct fixture *fx = *state;
    char *text = csv_with_label(fx, "shadow pass/cascade 0");
    assert_non_null(strstr(text, with_identity("shadow pass/cascade 0")));
    free(text);
}

static void csv_writes_non_finite_floats_as_nan_and_inf(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "nonfinite.csv");
    uint32_t column = counter("GpuBusy");
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), &column, 1, &report),
                     TALLY_OK);
    tally_command_record record = sample_record(1);
    const double values[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(tally_report_write(report, &record, &(tally_value){.f64 = values[i]}),
                         TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    assert_non_null(strstr(text, ",2500,nan\n"));
    assert_non_null(strstr(text, ",2500,inf\n"));
    assert_non_null(strstr(text, ",2500,-inf\n"));
    free(text);
}

static void check_json_command(json_object *command, uint64_t i)
{
    assert_int_equal(json_object_get_uint64(member(command, "sequence")), i);
    assert_string_equal(json_object_get_string(member(command, "kind")), "draw");
    assert_string_equal(json_object_get_string(member(command, "api_name")), "vkCmdDraw");
    assert_int_equal(json_object_get_uint64(member(command, "context")), 3);
    assert_string_equal(json_object_get_string(member(command, "context_api")), "vulkan");
    assert_int_equal(json_object_get_uint64(member(command, "frame")), 7);
    assert_int_equal(json_object_get_uint64(member(command, "submission")), 11);
    assert_int_equal(json_object_get_uint64(member(command, "stream")), 42);
    assert_string_equal(json_object_get_string(member(command, "label")), "frame/pass");
    assert_int_equal(json_object_get_uint64(member(command, "begin_ns")), 1000 + i);
    assert_int_equal(json_object_get_uint64(member(command, "end_ns")), 3500 + 2 * i);
    assert_int_equal(json_object_get_uint64(member(command, "duration_ns")), 2500 + i);
    json_object *values = member(command, "values");
    assert_int_equal(json_object_object_length(values), 3);
    assert_int_equal(json_object_get_uint64(member(values, "GpuTime")), 2500 + i);
    /* three decimals, as every float of a report (docs/reports.md) */
    char busy[32];
    snprintf(busy, sizeof busy, "%.3f", (double)i / 3.0);
    assert_true(json_object_get_double(member(values, "GpuBusy")) == strtod(busy, NULL));
    assert_int_equal(json_object_get_uint64(member(values, "DrawCalls")), i * 1000003);
}

static void json_report_parses_and_holds_every_record(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "report.json");
    tally_report *report = open_report(path, TALLY_REPORT_JSON);
    for (uint64_t i = 0; i < 100; i++) {
        tally_command_record record = sample_record(i);
        record.begin_ns += i;
        record.end_ns += 2 * i;
        tally_value values[3] = {{.u64 = 2500 + i}, {.f64 = (double)i / 3.0}, {.u64 = i * 1000003}};
        assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);

    json_object *root = parse_json_file(path);
    json_object *counters = member(root, "counters");
    assert_int_equal(json_object_array_length(counters), 3);
    json_object *first = json_object_array_get_idx(counters, 0);
    assert_string_equal(json_object_get_string(member(first, "symbol")), "GpuTime");
    assert_string_equal(json_object_get_string(member(first, "unit")), "ns");
    json_object *commands = member(root, "commands");
    assert_int_equal(json_object_array_length(commands), 100);
    for (uint64_t i = 0; i < 100; i++)
        check_json_command(json_object_array_get_idx(commands, i), i);
    json_object_put(root);
}

static void json_report_without_records_parses(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "empty.json");
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path, TALLY_REPORT_JSON, simgpu(), NULL, 0, &report),
                     TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    json_object *root = parse_json_file(path);
    assert_int_equal(json_object_array_length(member(root, "counters")), 0);
    assert_int_equal(json_object_array_length(member(root, "commands")), 0);
    json_object_put(root);
}

/* The label of the one command of a JSON report written with label. */
static char *json_label_round_trip(struct fixture *fx, const char *label)
{
    const char *path = path_in(fx, "escape.json");
    tally_report *report = open_report(path, TALLY_REPORT_JSON);
    tally_command_record record = sample_record(1);
    record.label = label;
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    json_object *root = parse_json_file(path);
    json_object *command = json_object_array_get_idx(member(root, "commands"), 0);
    char *parsed = strdup(json_object_get_string(member(command, "label")));
    json_object_put(root);
    return parsed;
}

static void json_escapes_quotes_backslashes_and_control_characters(void **state)
{
    const char *label = "say \"hi\"\\path\x01\x1f\b\f\n\r\t\xc3\xbc\xe2\x82\xac\xf0\x9f\x98\x80";
    char *parsed = json_label_round_trip(*state, label);
    assert_string_equal(parsed, label);
    free(parsed);
}

static void json_replaces_bytes_that_are_not_utf8(void **state)
{
    /* a stray continuation byte, an overlong '/', a surrogate, a cut sequence */
    char *parsed = json_label_round_trip(*state, "a\x80"
                                                 "b\xc0\xaf"
                                                 "c\xed\xa0\x80"
                                                 "d\xe2\x82");
    const char *r = "\xef\xbf\xbd";
    char expected[64];
    snprintf(expected, sizeof expected, "a%sb%s%sc%s%s%sd%s%s", r, r, r, r, r, r, r, r);
    assert_string_equal(parsed, expected);
    free(parsed);
}

static void json_writes_non_finite_floats_as_zero(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "nonfinite.json");
    tally_report *report = open_report(path, TALLY_REPORT_JSON);
    tally_command_record record = sample_record(1);
    const double busy[] = {NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < 3; i++) {
        tally_value values[3] = {{.u64 = 1}, {.f64 = busy[i]}, {.u64 = 3}};
        assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    json_object *root = parse_json_file(path);
    json_object *commands = member(root, "commands");
    for (size_t i = 0; i < 3; i++) {
        json_object *values = member(json_object_array_get_idx(commands, i), "values");
        assert_true(json_object_get_double(member(values, "GpuBusy")) == 0.0);
    }
    json_object_put(root);
}

/* A value the command's measurement lacked (tally_command_record's
 * unmeasured, bit per column) is left out: an empty CSV field, null in
 * JSON; the other columns are written as ever. */
static void values_not_measured_are_empty_in_csv_and_null_in_json(void **state)
{
    struct fixture *fx = *state;
    tally_command_record record = sample_record(1);
    record.unmeasured = 1u << 0 | 1u << 2; /* GpuTime and DrawCalls */
    tally_value values[3] = {{.u64 = 0}, {.f64 = 62.5}, {.u64 = 0}};

    const char *csv = path_in(fx, "unmeasured.csv");
    tally_report *report = open_report(csv, TALLY_REPORT_CSV);
    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(csv);
    const char *row = second_line(text);
    assert_non_null(strstr(row, ",1000,3500,2500,,62.500,\n"));
    free(text);

    const char *json = path_in(fx, "unmeasured.json");
    report = open_report(json, TALLY_REPORT_JSON);
    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    json_object *root = parse_json_file(json);
    json_object *command = json_object_array_get_idx(member(root, "commands"), 0);
    json_object *got = member(command, "values"), *value = (json_object *)1;
    assert_true(json_object_object_get_ex(got, "GpuTime", &value));
    assert_null(value);
    assert_true(json_object_object_get_ex(got, "DrawCalls", &value));
    assert_null(value);
    assert_true(json_object_get_double(member(got, "GpuBusy")) == 62.5);
    json_object_put(root);
}

/* A locale whose decimal point is not '.', or NULL if none is installed. */
static const char *comma_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8",  "fr_FR.UTF-8",
                                        "fr_FR.utf8",  "ru_RU.UTF-8", "de_DE"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (setlocale(LC_NUMERIC, names[i]) && strcmp(localeconv()->decimal_point, ".") != 0)
            return names[i];
    }
    setlocale(LC_NUMERIC, "C");
    return NULL;
}

static void floats_use_a_decimal_point_whatever_the_locale(void **state)
{
    struct fixture *fx = *state;
    if (!comma_locale())
        skip(); /* needs e.g. de_DE.UTF-8: ctest compiles one (comma_locale) */
    const char *csv = path_in(fx, "locale.csv");
    tally_report *report = open_report(csv, TALLY_REPORT_CSV);
    tally_command_record record = sample_record(1);
    tally_value values[3] = {{.u64 = 1}, {.f64 = 0.1}, {.u64 = 3}};
    assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    tally_trace *trace = NULL;
    const char *json = path_in(fx, "locale.json");
    assert_int_equal(tally_trace_open(json, "app", &trace), TALLY_OK);
    assert_int_equal(tally_trace_counter(trace, "load", 1, 1.5), TALLY_OK);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);
    setlocale(LC_NUMERIC, "C");

    char *text = read_text(path_in(fx, "locale.csv"));
    assert_non_null(strstr(text, ",0.100,3\n"));
    free(text);
    text = read_text(path_in(fx, "locale.json"));
    assert_non_null(strstr(text, "\"args\":{\"value\":1.5}"));
    free(text);
}

static tally_trace *open_trace(const char *path)
{
    tally_trace *trace = NULL;
    assert_int_equal(tally_trace_open(path, "demo \"app\"", &trace), TALLY_OK);
    assert_non_null(trace);
    return trace;
}

static json_object *trace_events(json_object *root)
{
    assert_string_equal(json_object_get_string(member(root, "displayTimeUnit")), "ns");
    return member(root, "traceEvents");
}

static void trace_parses_and_has_exact_microsecond_timestamps(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "trace.json");
    tally_trace *trace = open_trace(path);
    assert_int_equal(tally_trace_slice(trace, 0, "draw", 1234567, 1235000, NULL, 0), TALLY_OK);
    assert_int_equal(tally_trace_slice(trace, 1, "tiny", 5, 5, NULL, 0), TALLY_OK);
    assert_int_equal(tally_trace_slice(trace, 1, "late", UINT64_MAX - 1, UINT64_MAX, NULL, 0),
                     TALLY_OK);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);

    char *text = read_text(path);
    assert_non_null(strstr(text, "\"ts\":1234.567,\"dur\":0.433"));
    assert_non_null(strstr(text, "\"ts\":0.005,\"dur\":0.000"));
    assert_non_null(strstr(text, "\"ts\":18446744073709551.614,\"dur\":0.001"));
    free(text);
    json_object *root = parse_json_file(path);
    json_object *events = trace_events(root);
    assert_int_equal(json_object_array_length(events), 4);
    json_object *draw = json_object_array_get_idx(events, 1);
    assert_string_equal(json_object_get_string(member(draw, "ph")), "X");
    assert_string_equal(json_object_get_string(member(draw, "name")), "draw");
    assert_int_equal(json_object_get_int(member(draw, "pid")), 1);
    assert_int_equal(json_object_get_int(member(draw, "tid")), 1);
    assert_true(fabs(json_object_get_double(member(draw, "ts")) - 1234.567) < 1e-9);
    json_object_put(root);
}

static void trace_names_the_process_and_tracks_with_metadata_events(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "names.json");
    tally_trace *trace = open_trace(path);
    assert_int_equal(tally_trace_name_track(trace, 4, "Rasterizer"), TALLY_OK);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);

    json_object *root = parse_json_file(path);
    json_object *events = trace_events(root);
    assert_int_equal(json_object_array_length(events), 2);
    json_object *process = json_object_array_get_idx(events, 0);
    assert_string_equal(json_object_get_string(member(process, "ph")), "M");
    assert_string_equal(json_object_get_string(member(process, "name")), "process_name");
    assert_int_equal(json_object_get_int(member(process, "pid")), 1);
    assert_string_equal(json_object_get_string(member(member(process, "args"), "name")),
                        "demo \"app\"");
    json_object *thread = json_object_array_get_idx(events, 1);
    assert_string_equal(json_object_get_string(member(thread, "ph")), "M");
    assert_string_equal(json_object_get_string(member(thread, "name")), "thread_name");
    assert_int_equal(json_object_get_int(member(thread, "tid")), 5);
    assert_string_equal(json_object_get_string(member(member(thread, "args"), "name")),
                        "Rasterizer");
    json_object_put(root);
}

static void trace_writes_instants_with_typed_args(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "instant.json");
    tally_trace *trace = open_trace(path);
    const tally_trace_arg args[] = {
        {.key = "frame", .type = TALLY_TRACE_ARG_U64, .value.u64 = UINT64_MAX},
        {.key = "ratio", .type = TALLY_TRACE_ARG_F64, .value.f64 = 0.25},
        {.key = "api", .type = TALLY_TRACE_ARG_STRING, .value.string = "vk\"Queue\"Present"},
    };
    assert_int_equal(tally_trace_instant(trace, 2, "present", 1500, args, 3), TALLY_OK);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);

    json_object *root = parse_json_file(path);
    json_object *instant = json_object_array_get_idx(trace_events(root), 1);
    assert_string_equal(json_object_get_string(member(instant, "ph")), "i");
    assert_string_equal(json_object_get_string(member(instant, "s")), "t");
    assert_int_equal(json_object_get_int(member(instant, "tid")), 3);
    json_object *parsed = member(instant, "args");
    assert_int_equal(json_object_get_uint64(member(parsed, "frame")), UINT64_MAX);
    assert_true(json_object_get_double(member(parsed, "ratio")) == 0.25);
    assert_string_equal(json_object_get_string(member(parsed, "api")), "vk\"Queue\"Present");
    json_object_put(root);
}

static void trace_writes_counters_on_tid_zero_and_non_finite_as_zero(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "counter.json");
    tally_trace *trace = open_trace(path);
    assert_int_equal(tally_trace_counter(trace, "GpuBusy", 2000, 62.5), TALLY_OK);
    assert_int_equal(tally_trace_counter(trace, "GpuBusy", 3000, NAN), TALLY_OK);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);

    json_object *root = parse_json_file(path);
    json_object *events = trace_events(root);
    json_object *first = json_object_array_get_idx(events, 1);
    assert_string_equal(json_object_get_string(member(first, "ph")), "C");
    assert_string_equal(json_object_get_string(member(first, "name")), "GpuBusy");
    assert_int_equal(json_object_get_int(member(first, "tid")), 0);
    assert_true(json_object_get_double(member(member(first, "args"), "value")) == 62.5);
    json_object *second = json_object_array_get_idx(events, 2);
    assert_true(json_object_get_double(member(member(second, "args"), "value")) == 0.0);
    json_object_put(root);
}

static void trace_rejects_bad_events_without_writing_them(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "bad.json");
    tally_trace *trace = open_trace(path);
    const tally_trace_arg no_key = {.key = NULL, .type = TALLY_TRACE_ARG_U64};
    const tally_trace_arg no_string = {.key = "s", .type = TALLY_TRACE_ARG_STRING};
    const tally_trace_arg bad_type = {.key = "t", .type = (tally_trace_arg_type)9};
    assert_int_equal(tally_trace_slice(trace, 0, "backwards", 10, 9, NULL, 0),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_trace_slice(trace, 0, "x", 1, 2, NULL, 1), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_trace_slice(trace, 0, "x", 1, 2, &no_key, 1),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_trace_instant(trace, 0, "x", 1, &no_string, 1),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_trace_instant(trace, 0, "x", 1, &bad_type, 1),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);
    json_object *root = parse_json_file(path);
    assert_int_equal(json_object_array_length(trace_events(root)), 1);
    json_object_put(root);
}

/* JSON parses only whole: a JSON report and a JSON trace appear at close. */
static void json_files_appear_at_their_destination_only_at_close(void **state)
{
    struct fixture *fx = *state;
    char report_path[PATH_MAX], trace_path[PATH_MAX];
    snprintf(report_path, sizeof report_path, "%s", path_in(fx, "late.json"));
    snprintf(trace_path, sizeof trace_path, "%s", path_in(fx, "late.trace.json"));
    tally_report *report = open_report(report_path, TALLY_REPORT_JSON);
    tally_trace *trace = open_trace(trace_path);
    tally_command_record record = sample_record(1);
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    for (int i = 0; i < 5000; i++) { /* past the buffer, so data reaches the disk */
        assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
        assert_int_equal(tally_trace_slice(trace, 0, "draw", 1, 2, NULL, 0), TALLY_OK);
    }
    assert_false(exists(report_path));
    assert_false(exists(trace_path));
    /* Written to unnamed files (O_TMPFILE) until committed. */
    assert_int_equal(directory_entry_count(fx->dir), 0);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);
    assert_true(exists(report_path));
    assert_true(exists(trace_path));
    assert_int_equal(directory_entry_count(fx->dir), 2);
}

/* A CSV report is valid up to its last whole row, so it is written in
 * place: the header at once, and every row written before a flush, which a
 * reader following the file sees while the report is open. */
static void a_csv_report_holds_every_row_flushed_while_open(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "live.csv");
    tally_report *report = open_report(path, TALLY_REPORT_CSV);
    char *text = read_text(path);
    assert_non_null(strstr(text, "sequence,kind,"));
    assert_int_equal(line_count(text), 1);
    free(text);
    tally_command_record record = sample_record(1);
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    for (int i = 0; i < 3; i++)
        assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    text = read_text(path);
    assert_int_equal(line_count(text), 1); /* buffered: no write per row */
    free(text);
    assert_int_equal(tally_report_flush(report), TALLY_OK);
    text = read_text(path);
    assert_int_equal(line_count(text), 4);
    free(text);
    assert_int_equal(directory_entry_count(fx->dir), 1); /* the report itself, no temporary file */
    assert_int_equal(tally_report_close(report), TALLY_OK);
    text = read_text(path);
    assert_int_equal(line_count(text), 4);
    free(text);
}

static void close_replaces_an_existing_file(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "old.csv");
    FILE *old = fopen(path, "w");
    assert_non_null(old);
    fputs("old contents that are longer than the new header line, by a good margin......\n"
          "and a second line\n",
          old);
    fclose(old);
    assert_int_equal(tally_report_close(open_report(path, TALLY_REPORT_CSV)), TALLY_OK);
    char *text = read_text(path);
    assert_non_null(strstr(text, "sequence,"));
    assert_null(strstr(text, "old contents"));
    free(text);
    assert_int_equal(directory_entry_count(fx->dir), 1);
}

/* A JSON report, written whole, replaces a symlink at its name rather than
 * write through it. */
static void a_json_report_replaces_a_symlink_instead_of_writing_through_it(void **state)
{
    struct fixture *fx = *state;
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s", path_in(fx, "target"));
    FILE *file = fopen(target, "w");
    assert_non_null(file);
    fputs("precious\n", file);
    fclose(file);
    const char *link = path_in(fx, "out.json");
    assert_int_equal(symlink(target, link), 0);

    assert_int_equal(tally_report_close(open_report(link, TALLY_REPORT_JSON)), TALLY_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    char *text = read_text(target);
    assert_string_equal(text, "precious\n");
    free(text);
}

static void unwritable_directory_fails_cleanly(void **state)
{
    struct fixture *fx = *state;
    tally_report *report = (tally_report *)&report; /* must be reset to NULL */
    tally_trace *trace = (tally_trace *)&trace;
    uint32_t column = counter("GpuTime");
    const char *missing = path_in(fx, "missing/out.csv");
    assert_int_equal(tally_report_open(missing, TALLY_REPORT_CSV, simgpu(), &column, 1, &report),
                     TALLY_ERROR_IO);
    assert_null(report);
    assert_int_equal(tally_trace_open(missing, "app", &trace), TALLY_ERROR_IO);
    assert_null(trace);

    FILE *file = fopen(path_in(fx, "file"), "w");
    assert_non_null(file);
    fclose(file);
    const char *under_file = path_in(fx, "file/out.csv");
    assert_int_equal(tally_report_open(under_file, TALLY_REPORT_CSV, simgpu(), &column, 1, &report),
                     TALLY_ERROR_IO);
    assert_int_equal(directory_entry_count(fx->dir), 1);

    if (geteuid() != 0) { /* root writes into read-only directories */
        assert_int_equal(chmod(fx->dir, 0500), 0);
        assert_int_equal(tally_trace_open(path_in(fx, "out.json"), "app", &trace), TALLY_ERROR_IO);
        assert_int_equal(chmod(fx->dir, 0700), 0);
    }
}

static void a_directory_destination_is_refused_at_open(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "a_directory");
    assert_int_equal(mkdir(path, 0700), 0);
    const uint32_t column = counter("GpuTime");
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), &column, 1, &report),
                     TALLY_ERROR_IO);
    assert_int_equal(errno, EISDIR);
    assert_null(report);
    assert_int_equal(directory_entry_count(fx->dir), 1);
}

static void write_error_fails_the_close_and_leaves_nothing(void **state)
{
    struct fixture *fx = *state;
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    void (*saved_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {.rlim_cur = 16 * 1024, .rlim_max = saved.rlim_max};
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);

    const char *path = path_in(fx, "too_big.json");
    tally_report *report = open_report(path, TALLY_REPORT_JSON);
    tally_command_record record = sample_record(1);
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    tally_status status = TALLY_OK;
    for (int i = 0; i < 10000 && status == TALLY_OK; i++)
        status = tally_report_write(report, &record, values);
    assert_int_equal(status, TALLY_ERROR_IO);
    assert_int_equal(tally_report_close(report), TALLY_ERROR_IO);

    setrlimit(RLIMIT_FSIZE, &saved);
    signal(SIGXFSZ, saved_handler);
    assert_int_equal(directory_entry_count(fx->dir), 0);
}

static void report_rejects_null_arguments(void **state)
{
    struct fixture *fx = *state;
    const tally_catalogue *cat = simgpu();
    const char *path = path_in(fx, "null.csv");
    uint32_t column = counter("GpuTime");
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(NULL, TALLY_REPORT_CSV, cat, &column, 1, &report),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, NULL, &column, 1, &report),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, cat, NULL, 1, &report),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, cat, &column, 1, NULL),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_open(path, (tally_report_format)7, cat, &column, 1, &report),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_open("", TALLY_REPORT_CSV, cat, &column, 1, &report),
                     TALLY_ERROR_INVALID_ARGUMENT);
    assert_null(report);
    assert_int_equal(directory_entry_count(fx->dir), 0);

    report = open_report(path, TALLY_REPORT_CSV);
    tally_command_record record = sample_record(1);
    tally_value values[3] = {{.u64 = 1}, {.f64 = 2}, {.u64 = 3}};
    /* a record of NULL strings and zero numbers, as the first row */
    tally_command_record empty = {.sequence = 1};
    assert_int_equal(tally_report_write(report, &empty, values), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_write(NULL, &record, values), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_write(report, NULL, values), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_write(report, &record, NULL), TALLY_ERROR_INVALID_ARGUMENT);
    record.label = NULL;
    assert_int_equal(tally_report_write(report, &record, values), TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    assert_int_equal(tally_report_close(NULL), TALLY_ERROR_INVALID_ARGUMENT);
}

static void trace_rejects_null_arguments(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "null.json");
    const tally_status invalid = TALLY_ERROR_INVALID_ARGUMENT;
    tally_trace *trace = NULL;
    assert_int_equal(tally_trace_open(NULL, "app", &trace), invalid);
    assert_int_equal(tally_trace_open(path, NULL, &trace), invalid);
    assert_int_equal(tally_trace_open(path, "app", NULL), invalid);
    assert_int_equal(directory_entry_count(fx->dir), 0);
    trace = open_trace(path);
    assert_int_equal(tally_trace_name_track(NULL, 0, "a"), invalid);
    assert_int_equal(tally_trace_name_track(trace, 0, NULL), invalid);
    assert_int_equal(tally_trace_slice(NULL, 0, "a", 0, 1, NULL, 0), invalid);
    assert_int_equal(tally_trace_slice(trace, 0, NULL, 0, 1, NULL, 0), invalid);
    assert_int_equal(tally_trace_instant(NULL, 0, "a", 0, NULL, 0), invalid);
    assert_int_equal(tally_trace_instant(trace, 0, NULL, 0, NULL, 0), invalid);
    assert_int_equal(tally_trace_counter(NULL, "a", 0, 1), invalid);
    assert_int_equal(tally_trace_counter(trace, NULL, 0, 1), invalid);
    assert_int_equal(tally_trace_close(trace), TALLY_OK);
    assert_int_equal(tally_trace_close(NULL), invalid);
}

static void unknown_counter_index_is_rejected(void **state)
{
    struct fixture *fx = *state;
    const tally_catalogue *cat = simgpu();
    uint32_t columns[2] = {counter("GpuTime"), tally_catalogue_counter_count(cat)};
    tally_report *report = (tally_report *)&report;
    assert_int_equal(
        tally_report_open(path_in(fx, "unknown.csv"), TALLY_REPORT_CSV, cat, columns, 2, &report),
        TALLY_ERROR_UNKNOWN_COUNTER);
    assert_null(report);
    assert_int_equal(directory_entry_count(fx->dir), 0);
}

static void memory_stays_bounded_for_a_million_records(void **state)
{
    struct fixture *fx = *state;
    uint32_t column = counter("GpuBusy");
    tally_report *report = NULL;
    assert_int_equal(tally_report_open(path_in(fx, "million.csv"), TALLY_REPORT_CSV, simgpu(),
                                       &column, 1, &report),
                     TALLY_OK);
    tally_command_record record = sample_record(0);
    size_t before = mallinfo2().uordblks;
    for (uint64_t i = 0; i < 1000000; i++) {
        record.sequence = i;
        tally_value value = {.f64 = (double)i / 7.0};
        if (tally_report_write(report, &record, &value) != TALLY_OK)
            fail();
    }
    size_t after = mallinfo2().uordblks;
    assert_true(after < before + 1024 * 1024);
    assert_int_equal(tally_report_close(report), TALLY_OK);
}

/* Doubles to compare with printf: every exponent, ratios of small integers,
 * neighbours of powers of ten (where rounding carries into a new digit) and
 * exact ties, which printf rounds to even. */
static double float_case(uint64_t i, uint64_t *rng)
{
    *rng = *rng * 6364136223846793005u + 1442695040888963407u;
    uint64_t bits = *rng;
    double v;
    switch (i % 6) {
    case 0: memcpy(&v, &bits, sizeof v); return v; /* any double, NaNs included */
    case 1: return (double)(bits % 100000) / (double)(bits >> 40 | 1);
    case 2: return 100.0 * (double)(bits % 1000) / (double)((bits >> 32) % 1000 + 1);
    case 3:
        return nextafter(pow(10.0, (double)((int)(bits % 60) - 10)), (bits >> 8 & 1) ? 0 : 1e300);
    case 4: return ldexp((double)(bits >> 11), (int)(bits % 200) - 100);
    default: return ldexp((double)(bits >> 11 | 1), -(int)(bits % 64)) + 0.5; /* ties */
    }
}

static void floats_are_written_as_printf_fixed3_writes_them(void **state)
{
    struct fixture *fx = *state;
    enum { CASES = 300000 };
    uint32_t column = counter("GpuBusy");
    tally_report *report = NULL;
    const char *path = path_in(fx, "floats.csv");
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), &column, 1, &report),
                     TALLY_OK);
    tally_command_record record = sample_record(0);
    uint64_t rng = 12345;
    for (uint64_t i = 0; i < CASES; i++) {
        tally_value value = {.f64 = float_case(i, &rng)};
        assert_int_equal(tally_report_write(report, &record, &value), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    assert_non_null(text);
    const char *line = second_line(text);
    rng = 12345;
    for (uint64_t i = 0; i < CASES; i++) {
        double v = float_case(i, &rng);
        char expected[400];
        printf_fixed3(expected, sizeof expected, v);
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        const char *comma = end;
        while (comma[-1] != ',')
            comma--;
        if ((size_t)(end - comma) != strlen(expected) ||
            memcmp(comma, expected, strlen(expected)) != 0) {
            print_error("case %llu: %.*s, printf: %s\n", (unsigned long long)i, (int)(end - comma),
                        comma, expected);
            fail();
        }
        line = end + 1;
    }
    free(text);
}

enum { RUN_COLUMNS_MAX = 24 };

/* Rows of the given columns whose values each repeat the previous row's
 * two times in three, column by column (so that whole rows repeat too),
 * against printf's text of every value ("%.3f" for the floats). */
static void check_value_runs(struct fixture *fx, const char *name, const uint32_t *columns,
                             const bool *is_float, uint32_t count)
{
    enum { COLUMNS_MAX = RUN_COLUMNS_MAX, ROWS = 20000 };
    assert_true(count <= COLUMNS_MAX);
    tally_report *report = NULL;
    const char *path = path_in(fx, name);
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), columns, count, &report),
                     TALLY_OK);
    static tally_value rows[ROWS][COLUMNS_MAX];
    uint64_t rng = 77;
    for (uint32_t i = 0; i < ROWS; i++) {
        for (uint32_t c = 0; c < count; c++) {
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            uint64_t r = rng >> 16;
            bool repeat = i > 0 && r % 3 != 0; /* each column on its own */
            if (repeat)
                rows[i][c] = rows[i - 1][c];
            else if (is_float[c])
                rows[i][c].f64 = float_case(r >> 2, &rng);
            else if (r % 64 == 0) /* now and then a count of any length */
                rows[i][c].u64 = r >> 8;
            else /* 0 to 23 bits, every digit count below 2^23 */
                rows[i][c].u64 = (r >> 24 & 0x7fffff) >> (r >> 3) % 24;
        }
        tally_command_record record = sample_record(i);
        assert_int_equal(tally_report_write(report, &record, rows[i]), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    assert_non_null(text);
    const char *line = second_line(text);
    for (uint32_t i = 0; i < ROWS; i++) {
        char expected[COLUMNS_MAX * 400] = "", *at = expected;
        for (uint32_t c = 0; c < count; c++) {
            *at++ = ',';
            if (is_float[c])
                printf_fixed3(at, sizeof expected - (size_t)(at - expected), rows[i][c].f64);
            else
                snprintf(at, sizeof expected - (size_t)(at - expected), "%llu",
                         (unsigned long long)rows[i][c].u64);
            at += strlen(at);
        }
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        size_t n = strlen(expected);
        if ((size_t)(end - line) < n || memcmp(end - n, expected, n) != 0) {
            print_error("%s, row %u: %.*s\nexpected the values %s\n", name, i, (int)(end - line),
                        line, expected);
            fail();
        }
        line = end + 1;
    }
    free(text);
}

static void check_float_runs(struct fixture *fx, const char *name, const char *const *symbols,
                             const bool *is_float, uint32_t count)
{
    uint32_t columns[RUN_COLUMNS_MAX];
    assert_true(count <= RUN_COLUMNS_MAX);
    for (uint32_t c = 0; c < count; c++)
        columns[c] = counter(symbols[c]);
    check_value_runs(fx, name, columns, is_float, count);
}

/* Float columns in runs of 1, 2 and 3 (a pair and a column alone) between
 * counts (the pairs are formatted together and copied when both repeat). */
static void float_runs_repeat_and_change_column_by_column(void **state)
{
    static const char *const symbols[] = {"GpuTime",        "GpuBusy",       "DrawCalls",
                                          "L2CacheHitRate", "ShaderBusy",    "IaVertices",
                                          "TexL1HitRate",   "DramBandwidth", "AvgGpuCoreFrequency"};
    static const bool is_float[] = {false, true, false, true, true, false, true, true, true};
    check_float_runs(*state, "float_runs.csv", symbols, is_float, 9);
}

/* Counts then floats (a report's usual layout, written without walking the
 * groups): one float column, a pair (written without the pairs' loop) and
 * three (a pair and one alone). */
static void counts_then_floats_repeat_and_change_column_by_column(void **state)
{
    static const char *const symbols[] = {"GpuTime", "DrawCalls",      "IaVertices",
                                          "GpuBusy", "L2CacheHitRate", "TexL1HitRate"};
    static const bool is_float[] = {false, false, false, true, true, true};
    check_float_runs(*state, "counts_one_float.csv", symbols, is_float, 4);
    check_float_runs(*state, "counts_two_floats.csv", symbols, is_float, 5);
    check_float_runs(*state, "counts_three_floats.csv", symbols, is_float, 6);
}

/* A report's usual layout, counts then a pair of floats, with 1 to 22
 * counts (a 15-counter report has 13). */
static void counts_of_any_run_then_a_pair_are_written_in_full(void **state)
{
    enum { COUNTS = RUN_COLUMNS_MAX - 2 };
    const tally_catalogue *cat = simgpu();
    uint32_t counts[COUNTS], floats[2], nc = 0, nf = 0;
    for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++) {
        tally_storage storage = tally_catalogue_counter(cat, i)->storage;
        if (storage == TALLY_STORAGE_UINT64 && nc < COUNTS)
            counts[nc++] = i;
        else if (storage == TALLY_STORAGE_FLOAT64 && nf < 2)
            floats[nf++] = i;
    }
    assert_int_equal(nc, COUNTS);
    assert_int_equal(nf, 2);
    static const uint32_t runs[] = {1, 2, 7, 8, 9, 13, 15, 16, 17, 22};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        uint32_t n = runs[r], columns[RUN_COLUMNS_MAX];
        bool is_float[RUN_COLUMNS_MAX] = {false};
        memcpy(columns, counts, n * sizeof *columns);
        memcpy(columns + n, floats, sizeof floats);
        is_float[n] = is_float[n + 1] = true;
        char name[64];
        snprintf(name, sizeof name, "counts_%u_then_a_pair.csv", (unsigned)n);
        check_value_runs(*state, name, columns, is_float, n + 2);
    }
}

static void integers_are_written_in_full(void **state)
{
    struct fixture *fx = *state;
    static const uint64_t values[] = {0,
                                      9,
                                      10,
                                      99,
                                      100,
                                      999,
                                      1000,
                                      9999,
                                      10000,
                                      12345678,
                                      99999999,
                                      100000000,
                                      999999999,
                                      1000000000,
                                      4294967295u,
                                      4294967296u,
                                      9999999999999999999u,
                                      10000000000000000000u,
                                      UINT64_MAX};
    const char *path = path_in(fx, "integers.csv");
    tally_report *report = open_one_column(path, "GpuTime");
    enum { N = sizeof values / sizeof values[0] };
    for (size_t i = 0; i < N; i++) {
        uint64_t v = values[i];
        tally_command_record record = {.sequence = v,
                                       .api_name = "a",
                                       .kind = "b",
                                       .context = (uint32_t)v,
                                       .context_api = "c",
                                       .frame = v,
                                       .submission = v,
                                       .stream = v,
                                       .label = "",
                                       .begin_ns = v,
                                       .end_ns = v};
        tally_value value = {.u64 = v};
        assert_int_equal(tally_report_write(report, &record, &value), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    const char *line = second_line(text);
    for (size_t i = 0; i < N; i++) {
        uint64_t v = values[i];
        char expected[512];
        snprintf(expected, sizeof expected, "%llu,b,a,%u,c,%llu,%llu,%llu,%s,%llu,%llu,0,%llu\n",
                 (unsigned long long)v, (unsigned)(uint32_t)v, (unsigned long long)v,
                 (unsigned long long)v, (unsigned long long)v, no_identity(), (unsigned long long)v,
                 (unsigned long long)v, (unsigned long long)v);
        take_line(&line, expected);
    }
    assert_string_equal(line, "");
    free(text);
}

/* A report of one count column at path, with rows of the strings "a",
 * "b", "c" and "", the times given and the count the row's index; then
 * its text against printf's. */
static void check_timed_rows(const char *path, const uint64_t *begins, const uint64_t *ends,
                             uint64_t n)
{
    tally_report *report = open_one_column(path, "GpuTime");
    for (uint64_t i = 0; i < n; i++) {
        tally_command_record record = {.sequence = i + 1,
                                       .api_name = "b",
                                       .kind = "a",
                                       .context = 1,
                                       .context_api = "c",
                                       .label = "",
                                       .begin_ns = begins[i],
                                       .end_ns = ends[i]};
        tally_value value = {.u64 = i};
        assert_int_equal(tally_report_write(report, &record, &value), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    const char *line = second_line(text);
    for (uint64_t i = 0; i < n; i++) {
        char expected[256];
        snprintf(expected, sizeof expected, "%llu,a,b,1,c,0,0,0,%s,%llu,%llu,%llu,%llu\n",
                 (unsigned long long)(i + 1), no_identity(), (unsigned long long)begins[i],
                 (unsigned long long)ends[i],
                 (unsigned long long)(ends[i] >= begins[i] ? ends[i] - begins[i] : 0),
                 (unsigned long long)i);
        take_line(&line, expected);
    }
    assert_string_equal(line, "");
    free(text);
}

/* A row's begin_ns is most often the previous row's end_ns, and its
 * duration often the previous row's: the writer reuses their text then.
 * Ends of every length, durations that repeat and change, and a begin that
 * is not the previous end, against printf. */
static void times_that_continue_the_previous_row_are_written_in_full(void **state)
{
    struct fixture *fx = *state;
    enum { N = 400 };
    uint64_t begins[N], ends[N];
    uint64_t t = 0;
    bool long_ones = false;
    for (uint64_t i = 0; i < N; i++) {
        begins[i] = i % 11 == 5 ? t + 3 : t; /* now and then a gap */
        /* every other step repeats; the others grow the time by a quarter,
         * through every digit count up to 20 */
        bool grows = i % 2 == 0 && begins[i] < UINT64_MAX / 2;
        ends[i] = begins[i] + (grows ? begins[i] / 4 + 1 + i : 7);
        t = ends[i];
        long_ones |= ends[i] >= 10000000000000000u;
    }
    assert_true(long_ones); /* the times do reach 17 digits and more */
    check_timed_rows(path_in(fx, "times.csv"), begins, ends, N);
}

/* End times that fall below 10^8 and rise past it again (rows need not
 * come in order of time): the first digits of a time of 9 to 16 digits are
 * kept for the next such time, and a shorter time between them must not
 * leave its text in their place. Each row against printf's. */
static void end_times_that_fall_and_rise_across_10_8_are_written_in_full(void **state)
{
    struct fixture *fx = *state;
    static const uint64_t ends[] = {
        150000000u, 50000000u,         170000000u, 160000000u, 10000000000000005u,  140000000u,
        7u,         9999999999999999u, 199999999u, 123456789u, 100000000000000000u, 123456790u};
    enum { N = sizeof ends / sizeof ends[0] };
    uint64_t begins[N];
    for (uint64_t i = 0; i < N; i++)
        begins[i] = ends[i] - 2;
    check_timed_rows(path_in(fx, "ends.csv"), begins, ends, N);
}

/* Rows whose strings are the same pointers while one of their numbers
 * (context, frame, submission, stream) or one string (another pointer, to
 * other text) alone changes, and changes back: each row is written with
 * its own fields, however the writer finds out that they changed (one wide
 * compare of the record, say). The numbers change in their high 32 bits
 * alone in the first half and in their low bits alone in the second. */
static void rows_whose_numbers_alone_change_are_written_with_their_own(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "numbers.csv");
    tally_report *report = open_one_column(path, "GpuTime");
    enum { N = 40 };
    tally_command_record records[N];
    for (uint64_t i = 0; i < N; i++) {
        tally_command_record r = sample_record(i + 1);
        r.begin_ns = 1000 + 10 * i;
        r.end_ns = r.begin_ns + 5;
        uint64_t high = i < N / 2 ? (uint64_t)1 << (32 + i % 7) : 0;
        uint64_t low = i < N / 2 ? 0 : 1;
        /* even rows are the sample's; each odd row changes one field */
        switch (i % 2 ? i / 2 % 8 : 8) {
        case 0: r.context = UINT32_MAX - (uint32_t)i; break;
        case 1: r.frame = (r.frame | high) + low; break;
        case 2: r.submission = (r.submission | high) + low; break;
        case 3: r.stream = (r.stream | high) + low; break;
        case 4: r.kind = "dispatch"; break;
        case 5: r.api_name = "vkCmdDispatch"; break;
        case 6: r.context_api = "gl"; break;
        case 7: r.label = "frame/other"; break;
        }
        records[i] = r;
        tally_value value = {.u64 = i};
        assert_int_equal(tally_report_write(report, &r, &value), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    const char *line = second_line(text);
    for (uint64_t i = 0; i < N; i++) {
        const tally_command_record *r = &records[i];
        char expected[256];
        snprintf(
            expected, sizeof expected, "%llu,%s,%s,%u,%s,%llu,%llu,%llu,%s%s,%llu,%llu,5,%llu\n",
            (unsigned long long)r->sequence, r->kind, r->api_name, r->context, r->context_api,
            (unsigned long long)r->frame, (unsigned long long)r->submission,
            (unsigned long long)r->stream, r->label, no_identity(), (unsigned long long)r->begin_ns,
            (unsigned long long)r->end_ns, (unsigned long long)i);
        take_line(&line, expected);
    }
    assert_string_equal(line, "");
    free(text);
}

/* Sequences that count up (the engine's rows do), across every digit
 * count: runs of 25 starting 12 below each power of ten up to 10^19, each
 * run broken once by a repeat and once by a step back, so that the text
 * kept for the next row's sequence is made, bumped, carried and dropped at
 * every length; each row's sequence against printf's. */
/* A one-column report of rows with the given sequences, against printf's
 * text of each. */
static void check_sequences(struct fixture *fx, const char *name, const uint64_t *sequences,
                            uint32_t count)
{
    const char *path = path_in(fx, name);
    tally_report *report = open_one_column(path, "GpuTime");
    for (uint32_t i = 0; i < count; i++) {
        tally_command_record record = sample_record(sequences[i]);
        tally_value value = {.u64 = i};
        assert_int_equal(tally_report_write(report, &record, &value), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    const char *line = second_line(text);
    for (uint32_t i = 0; i < count; i++) {
        char expected[32];
        snprintf(expected, sizeof expected, "%llu,", (unsigned long long)sequences[i]);
        if (strncmp(line, expected, strlen(expected)) != 0) {
            print_error("row %u: %.30s, printf: %s\n", i, line, expected);
            fail();
        }
        line = strchr(line, '\n');
        assert_non_null(line);
        line++;
    }
    free(text);
}

static void sequences_that_count_up_are_written_in_full(void **state)
{
    enum { RUNS = 19, RUN = 25 };
    static uint64_t sequences[RUNS * RUN];
    uint64_t power = 10;
    for (uint32_t r = 0; r < RUNS; r++, power *= 10) {
        uint64_t v = power - 12;
        for (uint32_t i = 0; i < RUN; i++) {
            if (i == 7) /* the same again */
                v--;
            if (i == 15) /* a step back */
                v -= 3;
            sequences[r * RUN + i] = v++;
        }
    }
    check_sequences(*state, "sequences.csv", sequences, RUNS * RUN);
}

/* Consecutive sequences whose last digits are several 9s after a digit
 * that is not (6999 then 7000, for 1 to 16 digits, and 10999 then 11000):
 * the carry runs through all of them. */
static void sequences_that_carry_through_several_nines_are_written_in_full(void **state)
{
    enum { RUNS = 17, RUN = 8 };
    static uint64_t sequences[2 * RUNS * RUN];
    uint32_t n = 0;
    uint64_t power = 1;
    for (uint32_t r = 0; r < RUNS; r++, power *= 10) {
        for (uint64_t v = 7 * power - 4; v < 7 * power + RUN - 4; v++)
            sequences[n++] = v;
        for (uint64_t v = 11 * power - 4; v < 11 * power + RUN - 4; v++)
            sequences[n++] = v;
    }
    check_sequences(*state, "carries.csv", sequences, n);
}

/* Rows whose values repeat the previous row's (the same draw again) take
 * that row's text: checked against printf over runs of repeats of every
 * length, across the writer's buffer being written out, and after rows too
 * large for its buffer (a label of over two megabytes). */
static void rows_that_repeat_the_previous_values_are_written_in_full(void **state)
{
    struct fixture *fx = *state;
    uint32_t columns[3];
    three_columns(columns);
    tally_report *report = NULL;
    const char *path = path_in(fx, "repeats.csv");
    assert_int_equal(tally_report_open(path, TALLY_REPORT_CSV, simgpu(), columns, 3, &report),
                     TALLY_OK);
    enum { N = 60000, BIG = 2200000 };
    char *big = malloc(BIG + 1);
    assert_non_null(big);
    memset(big, 'x', BIG);
    big[BIG] = '\0';
    uint64_t run = 0, key = 0;
    for (uint64_t i = 0; i < N; i++) {
        if (run == 0) { /* a new run of equal values, 1 to 9 rows long, and one of
                         * 30000 that outlasts several fills of the buffer */
            run = i >= 20000 && i < 20010 ? 30000 : 1 + i * 7 % 9;
            key = i;
        }
        run--;
        tally_command_record record = sample_record(i);
        if (i % 20000 == 19999 && i != 39999)
            record.label = big;
        tally_value values[3] = {{.u64 = key * 977}, {.f64 = (double)key / 7.0}, {.u64 = key % 3}};
        assert_int_equal(tally_report_write(report, &record, values), TALLY_OK);
    }
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char *text = read_text(path);
    assert_non_null(text);
    const char *line = second_line(text);
    run = 0;
    for (uint64_t i = 0; i < N; i++) {
        if (run == 0) {
            run = i >= 20000 && i < 20010 ? 30000 : 1 + i * 7 % 9;
            key = i;
        }
        run--;
        const char *end = strchr(line, '\n');
        assert_non_null(end);
        /* the last three columns */
        const char *at = end;
        for (int commas = 0; commas < 3; at--)
            commas += at[-1] == ',';
        char expected[128];
        snprintf(expected, sizeof expected, ",%llu,%.3f,%llu", (unsigned long long)(key * 977),
                 (double)key / 7.0, (unsigned long long)(key % 3));
        if ((size_t)(end - at) != strlen(expected) || memcmp(at, expected, strlen(expected))) {
            print_error("row %llu: %.*s, expected %s\n", (unsigned long long)i, (int)(end - at), at,
                        expected);
            fail();
        }
        line = end + 1;
    }
    assert_string_equal(line, "");
    free(text);
    free(big);
}

static const tally_report_driver two_drivers[] = {
    {"vulkan", "llvmpipe (LLVM 15.0.6, 256 bits)", "Mesa 22.3.6"},
    {"opencl", "cpu-haswell", "PoCL 3.1, \"quoted\""},
};

static tally_report_metadata sample_metadata(void)
{
    return (tally_report_metadata){.tally_version = "0.1.0",
                                   .backend = "simgpu",
                                   .device = "simgpu 8 cores @ 1000 MHz",
                                   .clock = "virtual",
                                   .program = "/usr/bin/vkcube",
                                   .arguments = "--c 50 'a b'",
                                   .pid = 4242,
                                   .start_unix_ns = 1796650501123456789u,
                                   .drivers = two_drivers,
                                   .driver_count = 2};
}

/* The sidecar's rows as key -> value, read back as RFC 4180 says. */
static void check_sidecar_row(const char *text, const char *row)
{
    if (!strstr(text, row)) {
        print_error("no row %s in\n%s\n", row, text);
        fail();
    }
}

static void csv_metadata_goes_to_a_sidecar_of_key_value_rows(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "described.csv");
    tally_report *report = open_report(path, TALLY_REPORT_CSV);
    tally_report_metadata m = sample_metadata();
    assert_int_equal(tally_report_describe(report, &m), TALLY_OK);
    m.driver_count = 1; /* described again: the latest wins */
    assert_int_equal(tally_report_describe(report, &m), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    char meta[512];
    assert_true(tally_report_metadata_path(path, meta, sizeof meta));
    assert_string_equal(meta, path_in(fx, "described.meta.csv"));
    char *text = read_text(meta);
    assert_memory_equal(text, "key,value\n", 10);
    check_sidecar_row(text, "\nbackend,simgpu\n");
    check_sidecar_row(text, "\nclock,virtual\n");
    check_sidecar_row(text, "\nprogram,/usr/bin/vkcube\n");
    check_sidecar_row(text, "\narguments,--c 50 'a b'\n");
    check_sidecar_row(text, "\npid,4242\n");
    /* 1796650501 s after 1970 is 2026-12-07 13:35:01 UTC */
    check_sidecar_row(text, "\nstart_utc,2026-12-07T13:35:01.123456789Z\n");
    check_sidecar_row(text, "\ndriver.1.name,\"llvmpipe (LLVM 15.0.6, 256 bits)\"\n");
    assert_null(strstr(text, "driver.2."));
    /* the three columns: GpuTime (modeled), GpuBusy (derived), DrawCalls (exact) */
    check_sidecar_row(text, "\ncounter.GpuTime.unit,ns\n");
    check_sidecar_row(text, "\ncounter.GpuTime.exactness,modeled\n");
    check_sidecar_row(text, "\ncounter.GpuBusy.derived,true\n");
    check_sidecar_row(text, "\ncounter.DrawCalls.exactness,exact\n");
    free(text);
}

static void json_metadata_is_a_member_after_the_commands(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "described.json");
    tally_report *report = open_report(path, TALLY_REPORT_JSON);
    tally_report_metadata m = sample_metadata();
    assert_int_equal(tally_report_describe(report, &m), TALLY_OK);
    assert_int_equal(tally_report_close(report), TALLY_OK);
    json_object *root = parse_json_file(path);
    json_object *meta = member(root, "metadata");
    assert_string_equal(json_object_get_string(member(meta, "backend")), "simgpu");
    assert_string_equal(json_object_get_string(member(meta, "arguments")), "--c 50 'a b'");
    assert_int_equal(json_object_get_int64(member(meta, "pid")), 4242);
    json_object *drivers = member(meta, "drivers");
    assert_int_equal(json_object_array_length(drivers), 2);
    assert_string_equal(
        json_object_get_string(member(json_object_array_get_idx(drivers, 1), "version")),
        "PoCL 3.1, \"quoted\"");
    json_object *counters = member(root, "counters");
    assert_string_equal(
        json_object_get_string(member(json_object_array_get_idx(counters, 2), "exactness")),
        "exact");
    json_object_put(root);
    assert_false(exists(path_in(fx, "described.meta.csv"))); /* JSON keeps it inside */
}

static void output_paths_take_the_process_id_for_percent_p(void **state)
{
    (void)state;
    char out[64], expected[64];
    snprintf(expected, sizeof expected, "r.%ld.csv", (long)getpid());
    assert_true(tally_output_path_for_process("r.%p.csv", out, sizeof out));
    assert_string_equal(out, expected);
    assert_true(tally_output_path_for_process("100%%/%x%", out, sizeof out));
    assert_string_equal(out, "100%/%x%");
    assert_false(tally_output_path_for_process("a-long-name-%p", out, 12));
    char meta[64];
    assert_true(tally_report_metadata_path("dir.v/trace", meta, sizeof meta));
    assert_string_equal(meta, "dir.v/trace.meta.csv");
    assert_true(tally_report_metadata_path("r.CSV", meta, sizeof meta));
    assert_string_equal(meta, "r.meta.csv");
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(format_for_path_picks_json_by_extension_case_insensitively,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_metadata_goes_to_a_sidecar_of_key_value_rows, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(json_metadata_is_a_member_after_the_commands, make_dir,
                                        remove_dir),
        cmocka_unit_test(output_paths_take_the_process_id_for_percent_p),
        cmocka_unit_test_setup_teardown(csv_header_lists_record_fields_then_counter_symbols,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_rows_hold_record_fields_duration_and_values, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_string_changed_at_any_byte_is_written_as_changed,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(strings_that_end_a_readable_page_are_read_no_further,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_duration_is_zero_when_a_record_ends_before_it_begins,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_quotes_labels_with_commas_and_quotes, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(csv_quotes_labels_with_line_breaks, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_leaves_plain_labels_unquoted, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(csv_writes_non_finite_floats_as_nan_and_inf, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(json_report_parses_and_holds_every_record, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(json_report_without_records_parses, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(json_escapes_quotes_backslashes_and_control_characters,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(json_replaces_bytes_that_are_not_utf8, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(values_not_measured_are_empty_in_csv_and_null_in_json,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(json_writes_non_finite_floats_as_zero, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(floats_use_a_decimal_point_whatever_the_locale, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(trace_parses_and_has_exact_microsecond_timestamps, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(trace_names_the_process_and_tracks_with_metadata_events,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(trace_writes_instants_with_typed_args, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(trace_writes_counters_on_tid_zero_and_non_finite_as_zero,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(trace_rejects_bad_events_without_writing_them, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(json_files_appear_at_their_destination_only_at_close,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_csv_report_holds_every_row_flushed_while_open, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(close_replaces_an_existing_file, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(
            a_json_report_replaces_a_symlink_instead_of_writing_through_it, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(unwritable_directory_fails_cleanly, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_directory_destination_is_refused_at_open, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(write_error_fails_the_close_and_leaves_nothing, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(report_rejects_null_arguments, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(trace_rejects_null_arguments, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(unknown_counter_index_is_rejected, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(floats_are_written_as_printf_fixed3_writes_them, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(float_runs_repeat_and_change_column_by_column, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(counts_of_any_run_then_a_pair_are_written_in_full, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(counts_then_floats_repeat_and_change_column_by_column,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(integers_are_written_in_full, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(
            end_times_that_fall_and_rise_across_10_8_are_written_in_full, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(rows_whose_numbers_alone_change_are_written_with_their_own,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(times_that_continue_the_previous_row_are_written_in_full,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(
            sequences_that_carry_through_several_nines_are_written_in_full, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(sequences_that_count_up_are_written_in_full, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(rows_that_repeat_the_previous_values_are_written_in_full,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(memory_stays_bounded_for_a_million_records, make_dir,
                                        remove_dir),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
