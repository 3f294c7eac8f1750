/*
 * eglGetProcAddress: the shim's functions for their names, the driver's for
 * every other. glvnd answers eglQueryString and eglGetError with its own
 * exports, so the shim must hand out its wrappers of those too.
 */
#include <string.h>

#include "egl_shim.h"

typedef void (*any_function)(void);

#define ENTRY(name)                                                                                \
    {                                                                                              \
#name, (any_function)name                                                                  \
    }

static const struct {
    const char *name;
    any_function function;
} shim_functions[] = {
    ENTRY(eglGetEventConstantBRCM),
    ENTRY(eglGetEventTrackInfoBRCM),
    ENTRY(eglGetEventInfoBRCM),
    ENTRY(eglGetEventDataFieldInfoBRCM),
    ENTRY(eglSetEventCollectionBRCM),
    ENTRY(eglGetEventDataBRCM),
    ENTRY(eglQueryString),
    ENTRY(eglGetError),
    ENTRY(eglGetProcAddress),
};

any_function shim_function(const char *name)
{
    for (size_t i = 0; name && i < sizeof(shim_functions) / sizeof(shim_functions[0]); i++)
        if (strcmp(name, shim_functions[i].name) == 0)
            return shim_functions[i].function;
    return NULL;
}

typedef any_function(EGLAPIENTRYP get_proc_address_fn)(const char *);

SHIM_EXPORT __eglMustCastToProperFunctionPointerType EGLAPIENTRY
eglGetProcAddress(const char *procname)
{
    any_function ours = shim_function(procname);
    if (ours)
        return ours;
    get_proc_address_fn driver = (get_proc_address_fn)real_egl_function("eglGetProcAddress");
    return driver ? driver(procname) : NULL;
}
