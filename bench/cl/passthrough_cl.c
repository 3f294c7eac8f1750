/*
 * libtally_passthrough_cl.so: the least an OpenCL shim can do, built only as
 * tally_bench_cl's baseline (what libtally_passthrough_gl.so is to the GL
 * benchmark). It puts the three calls the bench times in front of the
 * loader and forwards each to the loader's export, found once: the next
 * definition when preloaded, the global one when the bench dlopens it.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>

#define EXPORT __attribute__((visibility("default")))

/* The loader's export of name, never this library's own (which the global
 * lookup gives when this library is preloaded). */
static void *loader_entry(const char *name)
{
    void *entry = dlsym(RTLD_NEXT, name);
    if (!entry)
        entry = dlsym(RTLD_DEFAULT, name);
    Dl_info ours, theirs;
    if (entry && dladdr((void *)loader_entry, &ours) && dladdr(entry, &theirs) &&
        ours.dli_fbase == theirs.dli_fbase)
        return NULL;
    return entry;
}

/* A forwarding wrapper of name: the loader's export, looked up on first use. */
#define FORWARD(name, params, args)                                                                \
    typedef cl_int(*name##_fn) params;                                                             \
    static _Atomic(name##_fn) next_##name;                                                         \
    EXPORT cl_int name params                                                                      \
    {                                                                                              \
        name##_fn next = atomic_load_explicit(&next_##name, memory_order_relaxed);                 \
        if (__builtin_expect(!next, 0)) {                                                          \
            next = (name##_fn)loader_entry(#name);                                                 \
            atomic_store_explicit(&next_##name, next, memory_order_relaxed);                       \
        }                                                                                          \
        return next ? next args : CL_INVALID_OPERATION;                                            \
    }

FORWARD(clEnqueueNDRangeKernel,
        (cl_command_queue queue, cl_kernel kernel, cl_uint work_dim, const size_t *offset,
         const size_t *global, const size_t *local, cl_uint num_events, const cl_event *wait_list,
         cl_event *event),
        (queue, kernel, work_dim, offset, global, local, num_events, wait_list, event))
FORWARD(clFinish, (cl_command_queue queue), (queue))
FORWARD(clReleaseEvent, (cl_event event), (event))
