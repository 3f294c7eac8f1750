/* The dlsym every preload shim exports (preload/dlsym_entry.c), on this CPU:
 * preloaded in a library that holds nothing but the interposers, it must keep
 * glibc's caller-relative answers and still answer registered names. */
#include <dlfcn.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "local_scope.h"

/* The test means nothing unless the dlsym the program calls is the entry. */
static void the_programs_dlsym_is_the_preloaded_entry(void **state)
{
    (void)state;
    void *entry = dlsym(RTLD_DEFAULT, "dlsym");
    assert_non_null(entry);
    Dl_info info;
    assert_true(dladdr(entry, &info));
    assert_non_null(strstr(info.dli_fname, "tally_dlsym_probe"));
    /* RTLD_NEXT is relative to the caller, the program: the first object
     * after it is the preloaded library, whose dlsym is the entry (from the
     * library itself, the next would be libc's). */
    assert_ptr_equal(dlsym(RTLD_NEXT, "dlsym"), entry);
    assert_ptr_equal(dlsym(RTLD_NEXT, "cos"), (void *)cos);
}

/* glibc's rule for lookups from a library opened with RTLD_LOCAL
 * (local_scope.h). Were the entry to call libc from tally's code, the
 * library's symbols would not be found. */
static void lookups_from_a_local_library_keep_its_scope(void **state)
{
    (void)state;
    lookup_fn by_default, by_next;
    void *lib = local_scope_open(&by_default, &by_next);
    local_scope_check_lookups(lib, by_default, by_next);
    dlclose(lib);
}

/* A registered name (libtally_preload registers eglGetProcAddress) is
 * answered with its wrapper, from the program and from a local library. */
static void registered_names_are_answered_with_their_wrapper(void **state)
{
    (void)state;
    void *wrapper = dlsym(RTLD_DEFAULT, "tally_preload_egl_get_proc_address");
    assert_non_null(wrapper);
    assert_ptr_equal(dlsym(RTLD_DEFAULT, "eglGetProcAddress"), wrapper);
    lookup_fn by_default, by_next;
    void *lib = local_scope_open(&by_default, &by_next);
    assert_ptr_equal(by_default("eglGetProcAddress"), wrapper);
    dlclose(lib);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_programs_dlsym_is_the_preloaded_entry),
        cmocka_unit_test(lookups_from_a_local_library_keep_its_scope),
        cmocka_unit_test(registered_names_are_answered_with_their_wrapper),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
