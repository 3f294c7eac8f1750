/*
 * Finds the driver's EGL functions without linking libEGL: the next
 * definition after the shim when libEGL is loaded globally, else libEGL.so.1
 * itself when the program opened it privately (RTLD_LOCAL).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "egl_shim.h"

void *real_egl_function(const char *name)
{
    void *function = dlsym(RTLD_NEXT, name);
    if (function)
        return function;
    void *libegl = dlopen("libEGL.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!libegl)
        return NULL;
    function = dlsym(libegl, name);
    dlclose(libegl); /* drops the reference RTLD_NOLOAD took; the program's stays */
    return function;
}
