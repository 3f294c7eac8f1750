/*
 * libtally_passthrough_gl.so: the least a GL preload shim can do, built only
 * as the benchmark's baseline (what VK_LAYER_TALLY_passthrough is to the
 * Vulkan layer). It puts glDrawArrays, glDrawElements and glFlush, the
 * calls bench_gl_draws makes per draw and per frame, in front of libGL and
 * forwards each to the next definition, found once.
 */
#include <GL/gl.h>
#include <dlfcn.h>
#include <stdatomic.h>

#define EXPORT __attribute__((visibility("default")))

/* A forwarding wrapper of name: the next definition, looked up on first use. */
#define FORWARD(name, params, args)                                                                \
    typedef void(*name##_fn) params;                                                               \
    static _Atomic(name##_fn) next_##name;                                                         \
    EXPORT void name params                                                                        \
    {                                                                                              \
        name##_fn next = atomic_load_explicit(&next_##name, memory_order_relaxed);                 \
        if (__builtin_expect(!next, 0)) {                                                          \
            next = (name##_fn)dlsym(RTLD_NEXT, #name);                                             \
            atomic_store_explicit(&next_##name, next, memory_order_relaxed);                       \
        }                                                                                          \
        if (next)                                                                                  \
            next args;                                                                             \
    }

FORWARD(glDrawArrays, (GLenum mode, GLint first, GLsizei count), (mode, first, count))
FORWARD(glDrawElements, (GLenum mode, GLsizei count, GLenum type, const void *indices),
        (mode, count, type, indices))
FORWARD(glFlush, (void), ())
