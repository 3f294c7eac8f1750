/* Where the shim's calls go down to, in each loading mode. */
#include <dlfcn.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "intercepted.h"
#include "shim.h"

static struct _cl_icd_dispatch preload_table;
static struct _cl_icd_dispatch layer_table;
_Atomic(const struct _cl_icd_dispatch *) next_table;
static pthread_once_t preload_once = PTHREAD_ONCE_INIT;

static bool in_this_library(void *address)
{
    Dl_info ours, theirs;
    return dladdr((void *)in_this_library, &ours) && dladdr(address, &theirs) &&
           ours.dli_fbase == theirs.dli_fbase;
}

/* The loader's export: after this library in the global scope when it is
 * preloaded; anywhere in the global scope but here when a program opened it
 * with dlopen (RTLD_NEXT does not look back to libraries loaded before). */
static void *loader_entry(const char *name)
{
    void *entry = dlsym(RTLD_NEXT, name);
    if (!entry) {
        entry = dlsym(RTLD_DEFAULT, name);
        if (entry && in_this_library(entry))
            entry = NULL;
    }
    return entry;
}

static void resolve_preload(void)
{
#define RESOLVE(name) preload_table.name = (__typeof__(preload_table.name))loader_entry(#name);
    TALLY_CL_INTERCEPTED(RESOLVE)
    TALLY_CL_CALLED(RESOLVE)
#undef RESOLVE
    const struct _cl_icd_dispatch *expected = NULL;
    atomic_compare_exchange_strong(&next_table, &expected, &preload_table);
}

const struct _cl_icd_dispatch *next_cl(void)
{
    const struct _cl_icd_dispatch *table = atomic_load_explicit(&next_table, memory_order_acquire);
    if (table)
        return table;
    pthread_once(&preload_once, resolve_preload);
    return atomic_load(&next_table);
}

void next_cl_set_target(const struct _cl_icd_dispatch *target, cl_uint num_entries)
{
    size_t entries = sizeof(layer_table) / sizeof(void *);
    if (num_entries < entries)
        entries = num_entries;
    memset(&layer_table, 0, sizeof(layer_table));
    memcpy(&layer_table, target, entries * sizeof(void *));
    atomic_store(&next_table, &layer_table);
}

/* Exported so that any copy of the shim can recognise another in the global
 * scope (see preload_is_active). */
__attribute__((visibility("default"))) int tally_cl_shim_marker(void)
{
    return 1;
}

/* Whether the object at path is one LD_PRELOAD names (by file, or by
 * name for an entry the dynamic linker searched for). */
static bool named_in_preload(const char *path)
{
    const char *list = getenv("LD_PRELOAD");
    struct stat object;
    if (!list || stat(path, &object) != 0)
        return false;
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    for (const char *entry = list; *entry;) {
        size_t n = strcspn(entry, ": ");
        char name[PATH_MAX];
        struct stat st;
        if (n > 0 && n < sizeof name) {
            memcpy(name, entry, n);
            name[n] = '\0';
            if (strchr(name, '/') ? stat(name, &st) == 0 && st.st_dev == object.st_dev &&
                                        st.st_ino == object.st_ino
                                  : strcmp(name, base) == 0)
                return true;
        }
        entry += n + (entry[n] != '\0');
    }
    return false;
}

/* A copy of the shim the program preloaded counts its OpenCL calls: one in
 * the program's global scope (not merely this instance's own scope, which
 * is what a loader's layer opened for a program that dlopens libOpenCL
 * sees first) and named in LD_PRELOAD. */
bool preload_is_active(void)
{
    void *program = dlopen(NULL, RTLD_LAZY);
    void *marker = program ? dlsym(program, "tally_cl_shim_marker") : NULL;
    Dl_info info;
    bool preloaded =
        marker && dladdr(marker, &info) && info.dli_fname && named_in_preload(info.dli_fname);
    if (program)
        dlclose(program);
    return preloaded;
}
