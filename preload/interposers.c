/* The interposers each preload shim exports: dlsym (dlsym_entry.c) and
 * GetProcAddress answer from the one registry in libtally_preload.so (see
 * tally_preload.h); _exit finishes the shared device first. */
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tally/device.h"
#include "tally_preload.h"

TALLY_PRELOAD_API void *glXGetProcAddress(const unsigned char *name)
{
    return tally_preload_glx_get_proc_address((const char *)name);
}

TALLY_PRELOAD_API void *glXGetProcAddressARB(const unsigned char *name)
{
    return tally_preload_glx_get_proc_address((const char *)name);
}

TALLY_PRELOAD_API void *eglGetProcAddress(const char *name)
{
    return tally_preload_egl_get_proc_address(name);
}

/*
 * _exit and _Exit end the process without its exit handlers: a program that
 * ends that way on purpose (after its own cleanup, or in a forked child that
 * drew) still gets its report and trace finished first. exit() does not come
 * here: glibc calls its own _exit directly. A vfork child, which shares its
 * parent's memory, is told apart by its process id and touches nothing.
 */
static _Noreturn void end_process(const char *name, int status)
{
    tally_device_exit_shared();
    void (*next)(int) = (void (*)(int))dlsym(RTLD_NEXT, name);
    if (next)
        next(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

TALLY_PRELOAD_API void _exit(int status)
{
    end_process("_exit", status);
}

TALLY_PRELOAD_API void _Exit(int status)
{
    end_process("_Exit", status);
}
