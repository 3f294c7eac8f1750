/* Lookups from a library opened with RTLD_LOCAL (local_scope.h). */
#include "local_scope.h"

#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

void *local_scope_open(lookup_fn *by_default, lookup_fn *by_next)
{
    void *lib = dlopen(TALLY_LOCAL_SCOPE_LIB, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    *by_default = (lookup_fn)dlsym(lib, "tally_local_scope_default");
    *by_next = (lookup_fn)dlsym(lib, "tally_local_scope_next");
    assert_non_null(*by_default);
    assert_non_null(*by_next);
    return lib;
}

void local_scope_check_lookups(void *lib, lookup_fn by_default, lookup_fn by_next)
{
    void *own = dlsym(lib, "tally_local_scope_own_symbol");
    void *dep = dlsym(lib, "tally_local_scope_dep_symbol");
    assert_non_null(own);
    assert_non_null(dep);
    /* Not in the global scope: the program itself does not see them. */
    assert_null(dlsym(RTLD_DEFAULT, "tally_local_scope_own_symbol"));
    dlerror();
    assert_ptr_equal(by_default("tally_local_scope_own_symbol"), own);
    assert_null(dlerror()); /* found: no error left behind */
    assert_ptr_equal(by_default("tally_local_scope_dep_symbol"), dep);
    assert_null(by_default("tally_local_scope_no_such_symbol"));
    assert_non_null(dlerror());
    /* Next after the library, in its scope: its dependency, not itself. */
    assert_ptr_equal(by_next("tally_local_scope_dep_symbol"), dep);
    assert_null(by_next("tally_local_scope_own_symbol"));
}
