/* The one list of the backends built into libtally, and lookup by name. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"

/* Each backend folder defines tally_<name>_backend, whose name is <name>. */
#define TALLY_BACKENDS(X) X(simgpu) X(driver)

#define BACKEND_OPS(name) &tally_##name##_backend,
#define BACKEND_NAME(name) #name,
static const struct tally_backend_ops *const backends[] = {TALLY_BACKENDS(BACKEND_OPS)};
static const char *const backend_names[] = {TALLY_BACKENDS(BACKEND_NAME) NULL};
#define BACKEND_COUNT (sizeof(backends) / sizeof(backends[0]))

const struct tally_backend_ops *tally_find_backend(const char *name)
{
    if (!name || !*name)
        name = TALLY_DEFAULT_BACKEND;
    for (size_t i = 0; i < BACKEND_COUNT; i++)
        if (strcmp(backends[i]->name, name) == 0)
            return backends[i];
    return NULL;
}

const char *const *tally_backend_names(void)
{
    return backend_names;
}

tally_status tally_backend_catalogue(const char *backend, const tally_catalogue **out)
{
    if (!out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!backend)
        backend = secure_getenv("TALLY_BACKEND");
    return tally_backend_catalogue_measuring(backend, 0, out);
}

tally_status tally_backend_catalogue_measuring(const char *backend, uint32_t measurable,
                                               const tally_catalogue **out)
{
    if (!out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!backend)
        backend = secure_getenv("TALLY_BACKEND");
    const struct tally_backend_ops *ops = tally_find_backend(backend);
    if (!ops) {
        *out = NULL;
        return TALLY_ERROR_UNKNOWN_BACKEND;
    }
    *out = ops->static_catalogue ? ops->static_catalogue : ops->catalogue_for(measurable);
    return *out ? TALLY_OK : TALLY_ERROR_OUT_OF_MEMORY;
}
