/*
 * The reading code under tally summary and tally diff (tools/answers):
 * RFC 4180 records, numbers as reports write them, reports read by column
 * name in both formats, and the grammar of --fail-on rules.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "csv_reader.h"
#include "gate_rules.h"
#include "report_reader.h"

static FILE *text_file(const char *text)
{
    FILE *f = tmpfile();
    fputs(text, f);
    rewind(f);
    return f;
}

/* The fields of the only record of text, joined by '|'. */
static void one_record(const char *text, const char *joined)
{
    FILE *f = text_file(text);
    csv_reader *r = csv_reader_open(f);
    char **fields;
    size_t count;
    assert_int_equal(csv_reader_next(r, &fields, &count), 1);
    char got[256] = "";
    for (size_t i = 0; i < count; i++) {
        if (i)
            strcat(got, "|");
        strcat(got, fields[i]);
    }
    assert_string_equal(got, joined);
    assert_int_equal(csv_reader_next(r, &fields, &count), 0);
    csv_reader_close(r);
    fclose(f);
}

static void quoted_fields_keep_commas_quotes_and_line_breaks(void **state)
{
    (void)state;
    one_record("1,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n", "1|a,b|say \"hi\"|two\nlines");
}

static void crlf_and_a_missing_last_line_break_end_records(void **state)
{
    (void)state;
    one_record("x,y\r\n", "x|y");
    one_record("x,,\"\"", "x||");
}

static void a_record_longer_than_the_read_buffer_is_whole(void **state)
{
    (void)state;
    size_t n = 200000;
    char *text = malloc(n + 8);
    memset(text, 'a', n);
    strcpy(text + n, ",b\n");
    FILE *f = text_file(text);
    csv_reader *r = csv_reader_open(f);
    char **fields;
    size_t count;
    assert_int_equal(csv_reader_next(r, &fields, &count), 1);
    assert_int_equal(count, 2);
    assert_int_equal(strlen(fields[0]), n);
    assert_string_equal(fields[1], "b");
    csv_reader_close(r);
    fclose(f);
    free(text);
}

static void text_after_a_closing_quote_is_an_error_with_its_line(void **state)
{
    (void)state;
    FILE *f = text_file("a\n\"b\"c\n");
    csv_reader *r = csv_reader_open(f);
    char **fields;
    size_t count;
    assert_int_equal(csv_reader_next(r, &fields, &count), 1);
    assert_int_equal(csv_reader_next(r, &fields, &count), -1);
    assert_non_null(strstr(csv_reader_error(r), "line 2"));
    csv_reader_close(r);
    fclose(f);
}

static void numbers_read_as_reports_write_them(void **state)
{
    (void)state;
    struct counter_value v;
    assert_true(counter_value_parse("18446744073", &v));
    assert_false(v.decimal);
    assert_int_equal(v.integer, 18446744073);
    assert_true(counter_value_parse("62.500", &v));
    assert_true(v.decimal);
    assert_true(v.real == 62.5);
    assert_true(counter_value_parse("-inf", &v) && isinf(v.real) && v.real < 0);
    assert_true(counter_value_parse("nan", &v) && isnan(v.real));
    assert_true(counter_value_parse("", &v) && !v.decimal && v.integer == 0);
    assert_false(counter_value_parse("12abc", &v));
    assert_false(counter_value_parse("1.", &v));
}

/* A file of this process in the temporary directory; its path in path. */
static void write_file(char *path, size_t size, const char *name, const char *text)
{
    snprintf(path, size, "%s/tally_%ld_%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid(), name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void csv_columns_are_found_by_name_and_the_sidecar_names_the_counters(void **state)
{
    (void)state;
    char path[512], meta[512];
    write_file(path, sizeof path, "by_name.csv",
               "frame,label,pid,sequence,api_name,pipeline_name,duration_ns,GpuTime,queue\n"
               "2,\"a,b\",7,9,vkCmdDraw,opaque,5,1234,3\n");
    write_file(meta, sizeof meta, "by_name.meta.csv",
               "key,value\ncounter.GpuTime.unit,ns\ncounter.GpuTime.exactness,modeled\n");
    char error[256];
    report_reader *r = report_reader_open(path, error, sizeof error);
    assert_non_null(r);
    assert_int_equal(report_reader_counter_count(r), 1); /* queue is no counter */
    assert_string_equal(report_reader_counter(r, 0)->symbol, "GpuTime");
    assert_int_equal(report_reader_counter(r, 0)->exactness, EXACTNESS_MODELED);
    struct report_row row;
    assert_int_equal(report_reader_next(r, &row, error, sizeof error), 1);
    assert_int_equal(row.sequence, 9);
    assert_int_equal(row.frame, 2);
    assert_string_equal(row.identity[REPORT_LABEL], "a,b");
    assert_string_equal(row.identity[REPORT_PID], "7");
    assert_string_equal(row.pipeline, "opaque");
    assert_int_equal(row.values[0].integer, 1234);
    assert_int_equal(report_reader_next(r, &row, error, sizeof error), 0);
    report_reader_close(r);
    remove(path);
    remove(meta);
}

static void json_reports_read_one_command_at_a_time(void **state)
{
    (void)state;
    char path[512];
    write_file(path, sizeof path, "reading.json",
               "{\"counters\":[{\"symbol\":\"GpuBusy\",\"unit\":\"percent\","
               "\"exactness\":\"modeled\"}],\n\"commands\":[\n"
               "{\"sequence\":1,\"api_name\":\"vkCmdDraw\",\"frame\":0,\"label\":\"x\\\"y\","
               "\"values\":{\"GpuBusy\":62.500}},\n"
               "{\"sequence\":2,\"api_name\":\"vkCmdDraw\",\"frame\":1,\"label\":\"\","
               "\"values\":{\"GpuBusy\":1}}\n],\n"
               "\"metadata\":{\"backend\":\"simgpu\",\"drivers\":[{\"api\":\"vulkan\"}]}}");
    char error[256];
    report_reader *r = report_reader_open(path, error, sizeof error);
    assert_non_null(r);
    struct report_row row;
    assert_int_equal(report_reader_next(r, &row, error, sizeof error), 1);
    assert_string_equal(row.identity[REPORT_LABEL], "x\"y");
    assert_true(row.values[0].decimal && row.values[0].real == 62.5);
    assert_int_equal(report_reader_next(r, &row, error, sizeof error), 1);
    assert_int_equal(row.frame, 1);
    assert_int_equal(report_reader_next(r, &row, error, sizeof error), 0);
    assert_string_equal(report_metadata_get(report_reader_metadata(r), "backend"), "simgpu");
    assert_string_equal(report_metadata_get(report_reader_metadata(r), "driver.0.api"), "vulkan");
    report_reader_close(r);
    remove(path);
}

static void a_file_that_is_no_report_says_so(void **state)
{
    (void)state;
    char path[512], error[256];
    write_file(path, sizeof path, "not.csv", "a,b\n1,2\n");
    assert_null(report_reader_open(path, error, sizeof error));
    assert_non_null(strstr(error, "no sequence column"));
    write_file(path, sizeof path, "not.meta.csv", "key,value\nschema,x\n");
    assert_null(report_reader_open(path, error, sizeof error));
    assert_non_null(strstr(error, "a report's metadata (.meta.csv)"));
    remove(path);
}

static bool broken(const char *rule_text, int64_t base, int64_t new_value)
{
    struct gate_rule rule;
    char error[256];
    assert_true(gate_rule_parse(rule_text, &rule, error, sizeof error));
    struct gate_rules rules;
    gate_rules_init(&rules, false, 0);
    gate_rules_add(&rules, &rule);
    struct counter_value b = {.integer = base}, n = {.integer = new_value};
    bool gated;
    bool result =
        gate_rules_check(&rules, "GpuTime", EXACTNESS_MODELED, SCOPE_LABEL, &b, &n, &gated) != NULL;
    gate_rules_free(&rules);
    return result;
}

static void unsigned_thresholds_hold_either_way_and_signed_ones_one_way(void **state)
{
    (void)state;
    assert_true(broken("GpuTime>5%", 100, 94));
    assert_false(broken("GpuTime>5%", 100, 105));
    assert_true(broken("GpuTime>+5%", 100, 106));
    assert_false(broken("GpuTime>+5%", 100, 50));
    assert_true(broken("GpuTime<-5%", 100, 94));
    assert_true(broken("modeled>0", 100, 101));
    assert_true(broken("*>10", 0, 11));
    assert_true(broken("GpuTime>1000%", 0, 1));    /* from 0: infinitely many percent */
    assert_false(broken("frame:GpuTime>0", 1, 2)); /* not this scope */
    assert_false(broken("IaVertices>0", 1, 2));    /* not this counter */
}

static void bad_rules_say_why(void **state)
{
    (void)state;
    struct gate_rule rule;
    char error[256];
    assert_false(gate_rule_parse("GpuTime=5%", &rule, error, sizeof error));
    assert_non_null(strstr(error, "'>' or '<'"));
    assert_false(gate_rule_parse("GpuTime<5%", &rule, error, sizeof error));
    assert_non_null(strstr(error, "signed"));
    assert_false(gate_rule_parse("pass:GpuTime>5%", &rule, error, sizeof error));
    assert_non_null(strstr(error, "unknown scope"));
    assert_false(gate_rule_parse("GpuTime>five", &rule, error, sizeof error));
}

static void a_counter_some_rule_names_leaves_the_defaults(void **state)
{
    (void)state;
    struct gate_rules rules;
    gate_rules_init(&rules, true, 1.0);
    struct gate_rule rule;
    char error[256];
    assert_true(gate_rule_parse("total:GpuTime>+50%", &rule, error, sizeof error));
    gate_rules_add(&rules, &rule);
    struct counter_value b = {.integer = 100}, n = {.integer = 120};
    bool gated;
    /* GpuTime: only its own rule, which holds for the total alone */
    assert_null(
        gate_rules_check(&rules, "GpuTime", EXACTNESS_MODELED, SCOPE_LABEL, &b, &n, &gated));
    assert_false(gated);
    /* another modeled counter keeps the default tolerance */
    assert_non_null(
        gate_rules_check(&rules, "FsInvocations", EXACTNESS_MODELED, SCOPE_LABEL, &b, &n, &gated));
    /* measured counters never gate by default */
    assert_null(gate_rules_check(&rules, "X", EXACTNESS_MEASURED, SCOPE_TOTAL, &b, &n, &gated));
    assert_false(gated);
    gate_rules_free(&rules);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quoted_fields_keep_commas_quotes_and_line_breaks),
        cmocka_unit_test(crlf_and_a_missing_last_line_break_end_records),
        cmocka_unit_test(a_record_longer_than_the_read_buffer_is_whole),
        cmocka_unit_test(text_after_a_closing_quote_is_an_error_with_its_line),
        cmocka_unit_test(numbers_read_as_reports_write_them),
        cmocka_unit_test(csv_columns_are_found_by_name_and_the_sidecar_names_the_counters),
        cmocka_unit_test(json_reports_read_one_command_at_a_time),
        cmocka_unit_test(a_file_that_is_no_report_says_so),
        cmocka_unit_test(unsigned_thresholds_hold_either_way_and_signed_ones_one_way),
        cmocka_unit_test(bad_rules_say_why),
        cmocka_unit_test(a_counter_some_rule_names_leaves_the_defaults),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("report_reading", tests, NULL, NULL);
}
