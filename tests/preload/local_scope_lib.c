/* A library the tests dlopen with RTLD_LOCAL: it looks symbols up relative
 * to itself, as RenderDoc's librenderdoc.so looks up its replay marker. */
#include <dlfcn.h>

int tally_local_scope_dep_symbol(void);

__attribute__((visibility("default"))) int tally_local_scope_own_symbol(void)
{
    return 1 + tally_local_scope_dep_symbol();
}

__attribute__((visibility("default"))) void *tally_local_scope_default(const char *name)
{
    return dlsym(RTLD_DEFAULT, name);
}

__attribute__((visibility("default"))) void *tally_local_scope_next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}
