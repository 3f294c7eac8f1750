/*
 * tally_spirv_stage_profile: what a stage's SPIR-V tells the engine. The
 * modules are GLSL compiled by glslangValidator at build time; the expected
 * values are what their sources say (local sizes, specialization, discard,
 * output vertices), and the instruction classes that a straight-line body
 * must contain.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include <tally/spirv.h>

typedef struct module {
    uint32_t *words;
    size_t count;
} module;

static module load(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.spv", TEST_SHADER_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    module m = {.words = malloc(1 << 16)};
    assert_non_null(m.words);
    m.count = fread(m.words, 4, (1 << 16) / 4, f);
    fclose(f);
    assert_true(m.count > 5);
    return m;
}

static void literal_local_size_and_body_are_read(void **state)
{
    (void)state;
    module m = load("literal_size.comp");
    tally_stage_profile p = {0};
    assert_true(tally_spirv_stage_profile(m.words, m.count, "main", NULL, &p));
    assert_true(p.present);
    assert_int_equal(p.local_size[0], 8);
    assert_int_equal(p.local_size[1], 4);
    assert_int_equal(p.local_size[2], 2);
    /* The body, counted by hand from glslangValidator -V's output (no
     * optimisation), one instruction at a time:
     *   OpLoad gl_LocalInvocationIndex (the store's index)   load
     *   OpLoad gl_LocalInvocationIndex (the load's index)    load
     *   OpAccessChain                                         (address, not counted)
     *   OpLoad values[i]                                      load
     *   OpFMul by 2.0                                         alu
     *   OpAccessChain                                         (address, not counted)
     *   OpStore values[i]                                     store
     *   OpReturn                                              branch */
    assert_int_equal(p.mix.load, 3);
    assert_int_equal(p.mix.store, 1);
    assert_int_equal(p.mix.alu, 1);
    assert_int_equal(p.mix.branch, 1);
    assert_int_equal(p.mix.tex, 0);
    assert_false(p.discards);
    free(m.words);
}

static void specialization_constant_sets_the_local_size(void **state)
{
    (void)state;
    module m = load("specialized_size.comp");
    tally_stage_profile defaults = {0};
    assert_true(tally_spirv_stage_profile(m.words, m.count, "main", NULL, &defaults));
    assert_int_equal(defaults.local_size[0], 1); /* GLSL: an unset local size is 1 */
    assert_int_equal(defaults.local_size[1], 3);

    uint32_t value = 32;
    const tally_spirv_spec_entry entry = {.constant_id = 7, .offset = 0, .size = sizeof(value)};
    const tally_spirv_specialization spec = {1, &entry, sizeof(value), &value};
    tally_stage_profile p = {0};
    assert_true(tally_spirv_stage_profile(m.words, m.count, "main", &spec, &p));
    assert_int_equal(p.local_size[0], 32);
    assert_int_equal(p.local_size[1], 3);
    assert_int_equal(p.local_size[2], 1);
    free(m.words);
}

static void specialization_outside_its_data_is_ignored(void **state)
{
    (void)state;
    module m = load("specialized_size.comp");
    uint32_t value = 32;
    const tally_spirv_spec_entry entry = {.constant_id = 7, .offset = 4, .size = sizeof(value)};
    const tally_spirv_specialization spec = {1, &entry, sizeof(value), &value};
    tally_stage_profile p = {0};
    assert_true(tally_spirv_stage_profile(m.words, m.count, "main", &spec, &p));
    assert_int_equal(p.local_size[0], 1);
    free(m.words);
}

static void fragment_discard_and_texture_are_seen(void **state)
{
    (void)state;
    module m = load("discard.frag");
    tally_stage_profile p = {0};
    assert_true(tally_spirv_stage_profile(m.words, m.count, "main", NULL, &p));
    assert_true(p.discards);
    assert_int_equal(p.mix.tex, 1); /* one texture() */
    assert_true(p.mix.branch >= 1); /* the if */
    free(m.words);
}

static void tessellation_output_vertices_are_read(void **state)
{
    (void)state;
    module m = load("four_points.tesc");
    tally_stage_profile p = {0};
    assert_true(tally_spirv_stage_profile(m.words, m.count, "main", NULL, &p));
    assert_int_equal(p.output_vertices, 4);
    free(m.words);
}

static void a_missing_entry_point_or_bad_words_change_nothing(void **state)
{
    (void)state;
    module m = load("literal_size.comp");
    tally_stage_profile p = {.mix = {.alu = 5}};
    assert_false(tally_spirv_stage_profile(m.words, m.count, "other", NULL, &p));
    assert_false(p.present);
    assert_int_equal(p.mix.alu, 5);
    m.words[0] = 0xdeadbeef; /* not the SPIR-V magic number */
    assert_false(tally_spirv_stage_profile(m.words, m.count, "main", NULL, &p));
    m.words[0] = 0x07230203;
    assert_false(tally_spirv_stage_profile(m.words, 3, "main", NULL, &p)); /* truncated header */
    assert_false(tally_spirv_stage_profile(NULL, m.count, "main", NULL, &p));
    assert_int_equal(p.mix.alu, 5);
    free(m.words);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(literal_local_size_and_body_are_read),
        cmocka_unit_test(specialization_constant_sets_the_local_size),
        cmocka_unit_test(specialization_outside_its_data_is_ignored),
        cmocka_unit_test(fragment_discard_and_texture_are_seen),
        cmocka_unit_test(tessellation_output_vertices_are_read),
        cmocka_unit_test(a_missing_entry_point_or_bad_words_change_nothing),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
