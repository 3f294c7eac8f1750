/*
 * A library opened with RTLD_LOCAL that looks symbols up relative to itself
 * (local_scope_lib.c, with its dependency local_scope_dep.c), and glibc's
 * rule for such lookups, checked: dlsym(RTLD_DEFAULT) from it searches the
 * global scope, then the library's own group; dlsym(RTLD_NEXT) the objects
 * after it in its scope. The truth is what the library's own handle finds,
 * which no caller changes. Shared by the preload entry's test and the GL
 * shim's (a cmocka test's helpers: they assert).
 */
#ifndef TALLY_TEST_LOCAL_SCOPE_H
#define TALLY_TEST_LOCAL_SCOPE_H

typedef void *(*lookup_fn)(const char *);

/* Opens TALLY_LOCAL_SCOPE_LIB with RTLD_LOCAL; its lookups from inside. */
void *local_scope_open(lookup_fn *by_default, lookup_fn *by_next);

/* Its own and its dependency's symbols are found from inside it and only
 * there, a missing one is not (and says so in dlerror), and RTLD_NEXT from
 * it finds its dependency, not itself. */
void local_scope_check_lookups(void *lib, lookup_fn by_default, lookup_fn by_next);

#endif
