/*
 * simgpu's device profile files, through tally_device_open: what
 * docs/profile.md calls an error is refused with the file and the line,
 * and the device is not opened; what it allows changes the device.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tally/tally.h"

struct fixture {
    char path[64];
    char error[512];
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof(*fx));
    strcpy(fx->path, "/tmp/tally-profile-XXXXXX");
    int fd = mkstemp(fx->path);
    if (fd < 0)
        return -1;
    close(fd);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    unlink(fx->path);
    free(fx);
    return 0;
}

/* Opens a device with the profile's bytes; on success returns its core
 * clock in MHz, else 0 with the message in fx->error. */
static uint64_t open_with(struct fixture *fx, const char *bytes, size_t size)
{
    FILE *f = fopen(fx->path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(bytes, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
    tally_device_options options = {.profile_path = fx->path, .clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    fx->error[0] = '\0';
    tally_status s = tally_device_open(&options, &device, fx->error, sizeof(fx->error));
    if (s != TALLY_OK) {
        assert_int_equal(s, TALLY_ERROR_BAD_PROFILE);
        assert_null(device);
        return 0;
    }
    tally_device_info info;
    tally_device_get_info(device, &info);
    tally_device_close(device);
    return info.core_clock_hz / 1000000u;
}

/* The text is refused, and the message names the file, the line and why. */
static void assert_refused(struct fixture *fx, const char *bytes, size_t size, unsigned line,
                           const char *why)
{
    assert_int_equal(open_with(fx, bytes, size), 0);
    char where[96];
    snprintf(where, sizeof(where), "profile %s, line %u: ", fx->path, line);
    if (!strstr(fx->error, where) || !strstr(fx->error, why))
        fail_msg("expected \"%s...%s\", got \"%s\"", where, why, fx->error);
}

#define REFUSED(fx, text, line, why) assert_refused(fx, text, sizeof(text) - 1, line, why)

static void a_comment_longer_than_any_line_limit_stays_a_comment(void **state)
{
    struct fixture *fx = *state;
    /* libinih split lines at 199 characters and parsed the tail: this
     * file gave a 7 MHz GPU. */
    char text[512] = "[clock]\ncore_clock_mhz = 500\n#";
    size_t at = strlen(text);
    memset(text + at, 'x', 198);
    strcpy(text + at + 198, "core_clock_mhz = 7\n");
    assert_int_equal(open_with(fx, text, strlen(text)), 500);
}

static void a_file_with_carriage_returns_only_is_refused(void **state)
{
    REFUSED(*state, "[clock]\rcore_clock_mhz = 7\r", 1, "carriage return");
}

static void a_file_with_crlf_line_ends_is_read(void **state)
{
    struct fixture *fx = *state;
    static const char text[] = "[clock]\r\ncore_clock_mhz = 700\r\n";
    assert_int_equal(open_with(fx, text, sizeof(text) - 1), 700);
}

static void a_file_of_nul_bytes_is_refused(void **state)
{
    REFUSED(*state, "\0\0\0\0", 1, "NUL byte");
}

static void a_nul_byte_inside_a_setting_is_refused(void **state)
{
    REFUSED(*state,
            "[clock]\ncore_clock_mhz = 7\0"
            "00\n",
            2, "NUL byte");
}

static void text_after_a_section_header_is_refused(void **state)
{
    REFUSED(*state, "[clock]garbage\ncore_clock_mhz = 7\n", 1, "after the section header");
}

static void a_colon_is_not_an_assignment(void **state)
{
    REFUSED(*state, "[clock]\ncore_clock_mhz: 7\n", 2, "not a \"name = value\" line");
}

static void an_empty_section_is_refused(void **state)
{
    REFUSED(*state, "# c\n[clock]\n\n[cores]\nshader_cores = 4\n", 2,
            "section [clock] has no settings");
}

static void an_empty_section_at_the_end_is_refused(void **state)
{
    REFUSED(*state, "[clock]\ncore_clock_mhz = 7\n[cores]\n", 3, "section [cores] has no settings");
}

static void an_empty_section_name_is_refused(void **state)
{
    REFUSED(*state, "[]\ncore_clock_mhz = 7\n", 1, "empty section name");
}

static void an_unknown_section_is_refused(void **state)
{
    REFUSED(*state, "[clocks]\ncore_clock_mhz = 7\n", 1, "no section [clocks]");
}

static void a_section_given_twice_is_refused(void **state)
{
    REFUSED(*state, "[clock]\ncore_clock_mhz = 7\n[clock]\ntimestamp_frequency_hz = 5\n", 3,
            "first on line 1");
}

static void a_parameter_in_the_wrong_section_is_refused(void **state)
{
    REFUSED(*state, "[cores]\ncore_clock_mhz = 7\n", 2, "no parameter core_clock_mhz in [cores]");
}

static void a_duplicate_key_is_refused(void **state)
{
    REFUSED(*state, "[clock]\ncore_clock_mhz = 7\n\ncore_clock_mhz = 8\n", 4,
            "set twice (first on line 2)");
}

static void a_setting_before_any_section_is_refused(void **state)
{
    REFUSED(*state, "core_clock_mhz = 7\n", 1, "before any [section]");
}

static void a_missing_closing_bracket_is_refused(void **state)
{
    REFUSED(*state, "[clock\ncore_clock_mhz = 7\n", 1, "closing");
}

static void signs_and_blanks_inside_values_are_refused(void **state)
{
    struct fixture *fx = *state;
    REFUSED(fx, "[clock]\ncore_clock_mhz = +7\n", 2, "not an unsigned integer");
    REFUSED(fx, "[clock]\ncore_clock_mhz = 7 0\n", 2, "not an unsigned integer");
    REFUSED(fx, "[clock]\ncore_clock_mhz = 99999999999999999999999\n", 2,
            "not an unsigned integer");
    REFUSED(fx, "[clock]\ncore_clock_mhz =\n", 2, "not an unsigned integer");
}

static void a_refused_file_changes_nothing_of_the_defaults(void **state)
{
    struct fixture *fx = *state;
    REFUSED(fx, "[clock]\ncore_clock_mhz = 7\nbad line\n", 3, "not a \"name = value\" line");
    assert_int_equal(open_with(fx, "", 0), 1000);
}

static void comments_blanks_and_inline_comments_are_allowed(void **state)
{
    struct fixture *fx = *state;
    static const char text[] = "\xEF\xBB\xBF; profile\n  # indented comment\n\n  [ clock ]  \n"
                               "\tcore_clock_mhz\t=  1500 ; faster\n"
                               "timestamp_frequency_hz = 1000 # a comment\n";
    assert_int_equal(open_with(fx, text, sizeof(text) - 1), 1500);
}

static void a_file_that_cannot_be_read_is_named_with_the_reason(void **state)
{
    struct fixture *fx = *state;
    unlink(fx->path);
    tally_device_options options = {.profile_path = fx->path, .clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    assert_int_equal(tally_device_open(&options, &device, fx->error, sizeof(fx->error)),
                     TALLY_ERROR_BAD_PROFILE);
    assert_non_null(strstr(fx->error, fx->path));
    assert_non_null(strstr(fx->error, "No such file or directory"));
}

/* Opens a device with the profile at path, which must be refused; returns
 * the message. Opening a file that is not a regular one must not wait (for
 * a FIFO's writer, a terminal's input): the alarm ends a case that does. */
static const char *refused_path(struct fixture *fx, const char *path)
{
    tally_device_options options = {.profile_path = path, .clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    fx->error[0] = '\0';
    alarm(20);
    tally_status s = tally_device_open(&options, &device, fx->error, sizeof(fx->error));
    alarm(0);
    if (device)
        tally_device_close(device);
    assert_int_equal(s, TALLY_ERROR_BAD_PROFILE);
    assert_null(device);
    return fx->error;
}

static void a_fifo_is_refused_without_waiting_for_a_writer(void **state)
{
    struct fixture *fx = *state;
    unlink(fx->path);
    assert_int_equal(mkfifo(fx->path, 0600), 0);
    const char *error = refused_path(fx, fx->path);
    assert_non_null(strstr(error, fx->path));
    assert_non_null(strstr(error, "a FIFO, not a regular file"));
}

static void standard_input_is_not_read_as_a_profile(void **state)
{
    struct fixture *fx = *state;
    /* The program's standard input is a pipe holding a valid profile. */
    static const char text[] = "[clock]\ncore_clock_mhz = 1500\n";
    int pipe_ends[2];
    assert_int_equal(pipe(pipe_ends), 0);
    assert_int_equal(write(pipe_ends[1], text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
    close(pipe_ends[1]);
    int saved = dup(0);
    assert_true(saved >= 0);
    assert_int_equal(dup2(pipe_ends[0], 0), 0);
    close(pipe_ends[0]);

    tally_device_options options = {.profile_path = "/dev/stdin", .clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    fx->error[0] = '\0';
    tally_status s = tally_device_open(&options, &device, fx->error, sizeof(fx->error));
    if (device)
        tally_device_close(device);
    char left[64] = {0};
    ssize_t n = read(0, left, sizeof(left) - 1);
    assert_int_equal(dup2(saved, 0), 0);
    close(saved);

    assert_int_equal(s, TALLY_ERROR_BAD_PROFILE);
    assert_non_null(strstr(fx->error, "/dev/stdin"));
    assert_non_null(strstr(fx->error, "not a regular file"));
    assert_int_equal(n, (ssize_t)sizeof(text) - 1); /* the program's input is still there */
    assert_string_equal(left, text);
}

static void a_directory_is_refused_as_not_a_regular_file(void **state)
{
    struct fixture *fx = *state;
    const char *error = refused_path(fx, "/tmp");
    assert_non_null(strstr(error, "profile /tmp"));
    assert_non_null(strstr(error, "a directory, not a regular file"));
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_comment_longer_than_any_line_limit_stays_a_comment, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_file_with_carriage_returns_only_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_file_with_crlf_line_ends_is_read, setup, teardown),
        cmocka_unit_test_setup_teardown(a_file_of_nul_bytes_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_nul_byte_inside_a_setting_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(text_after_a_section_header_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_colon_is_not_an_assignment, setup, teardown),
        cmocka_unit_test_setup_teardown(an_empty_section_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(an_empty_section_at_the_end_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(an_empty_section_name_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(an_unknown_section_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_section_given_twice_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_parameter_in_the_wrong_section_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_duplicate_key_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_setting_before_any_section_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(a_missing_closing_bracket_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(signs_and_blanks_inside_values_are_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_refused_file_changes_nothing_of_the_defaults, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(comments_blanks_and_inline_comments_are_allowed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_file_that_cannot_be_read_is_named_with_the_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_fifo_is_refused_without_waiting_for_a_writer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(standard_input_is_not_read_as_a_profile, setup, teardown),
        cmocka_unit_test_setup_teardown(a_directory_is_refused_as_not_a_regular_file, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
