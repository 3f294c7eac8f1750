/*
 * GL_GPU_DISJOINT_EXT shared by the program and the GL shim
 * (gl_shim/disjoint_flag.c), with the driver's flag played by hand: reading
 * it clears it, so whichever reads a disjoint event first must leave it for
 * the other. llvmpipe never reports one, so this is where the rule is
 * checked; test_gl_driver checks the reads pass through on llvmpipe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "disjoint_flag.h"

static void without_events_neither_reads_one(void **state)
{
    (void)state;
    gl_disjoint_flag flag = {0};
    assert_false(gl_disjoint_shim_reads(&flag, false));
    assert_false(gl_disjoint_program_reads(&flag, false));
    assert_false(gl_disjoint_shim_reads(&flag, false));
}

static void an_event_the_shim_read_first_is_the_programs_next_answer(void **state)
{
    (void)state;
    gl_disjoint_flag flag = {0};
    assert_true(gl_disjoint_shim_reads(&flag, true)); /* the driver's flag is clear now */
    assert_true(gl_disjoint_program_reads(&flag, false));
    assert_false(gl_disjoint_program_reads(&flag, false)); /* once, as the driver would */
    assert_false(gl_disjoint_shim_reads(&flag, false));
}

static void an_event_the_program_read_first_still_discards_the_shims_window(void **state)
{
    (void)state;
    gl_disjoint_flag flag = {0};
    assert_true(gl_disjoint_program_reads(&flag, true));
    assert_true(gl_disjoint_shim_reads(&flag, false));
    assert_false(gl_disjoint_shim_reads(&flag, false));
    assert_false(gl_disjoint_program_reads(&flag, false)); /* it saw it already */
}

static void two_events_each_read_by_the_other_first_are_each_seen_once(void **state)
{
    (void)state;
    gl_disjoint_flag flag = {0};
    assert_true(gl_disjoint_shim_reads(&flag, true));
    assert_true(gl_disjoint_program_reads(&flag, true)); /* the shim's and a new one */
    assert_true(gl_disjoint_shim_reads(&flag, false));   /* the new one */
    assert_false(gl_disjoint_program_reads(&flag, false));
    assert_false(gl_disjoint_shim_reads(&flag, false));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_events_neither_reads_one),
        cmocka_unit_test(an_event_the_shim_read_first_is_the_programs_next_answer),
        cmocka_unit_test(an_event_the_program_read_first_still_discards_the_shims_window),
        cmocka_unit_test(two_events_each_read_by_the_other_first_are_each_seen_once),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
