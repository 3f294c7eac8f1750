/* Who sees a GL context's draws (docs/gl.md, "What an idle shim costs a
 * draw"): while nothing listens to the device and no monitor of the context
 * is open, the shim records (and, under the driver backend, measures)
 * nothing; a listener sees exactly the draws issued after it started,
 * through each of the shim's ways (the lane's plain draws, the general
 * way's indexed ones). Measured with a sampler on the process's shared
 * device, the one the shim records into. */
#include "fixture.h"
#include "gl_fixture.h"
#include "tally/tally.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const GLushort quad[] = {0, 1, 2, 2, 1, 3};

/* 3 + 6 = 9 vertices a round: a plain draw and an indexed one. */
static void draw_round(void)
{
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glDrawElements(GL_TRIANGLES, 6, GL_UNSIGNED_SHORT, quad);
}

static void a_sampler_sees_the_draws_issued_after_it_opened(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++)
        draw_round(); /* nobody listens: not recorded */
    glFinish();
    tally_device *device = NULL;
    assert_int_equal(tally_device_acquire_shared(&device), TALLY_OK);
    assert_false(tally_device_listening(device));
    /* The variant under the driver backend runs on it (llvmpipe measures). */
    const char *backend = getenv("TALLY_BACKEND");
    tally_device_info info;
    tally_device_get_info(device, &info);
    assert_string_equal(info.backend, backend ? backend : "simgpu");
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t index = 0;
    assert_int_equal(tally_catalogue_find(cat, "IaVertices", &index), TALLY_OK);
    uint32_t raw = tally_catalogue_counter(cat, index)->raw_index;
    assert_int_not_equal(raw, TALLY_NOT_RAW);

    tally_sampler *sampler = NULL;
    assert_int_equal(tally_sampler_open(device, 1000000, 4096, &sampler), TALLY_OK);
    assert_true(tally_device_listening(device));
    for (int i = 0; i < 5; i++)
        draw_round();
    glFinish();
    assert_int_equal(sampler_growth(device, sampler, raw), 5 * 9);
    tally_sampler_close(sampler);
    assert_false(tally_device_listening(device));
    tally_device_release_shared(device);
    assert_int_equal(glGetError(), GL_NO_ERROR);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_sampler_sees_the_draws_issued_after_it_opened,
                                        gl_fixture_setup, gl_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
