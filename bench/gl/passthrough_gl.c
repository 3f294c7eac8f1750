/*
 * libtally_passthrough_gl.so: the least a GL preload shim can do, built only
 * as the benchmark's baseline (what VK_LAYER_TALLY_passthrough is to the
 * Vulkan layer). It puts glDrawArrays and glFlush, the calls
 * bench_gl_draws makes per draw and per frame, in front of libGL and
 * forwards each to the next definition, found once.
 */
#include <GL/gl.h>
#include <dlfcn.h>
#include <stdatomic.h>

#define EXPORT __attribute__((visibility("default")))

typedef void (*draw_arrays_fn)(GLenum, GLint, GLsizei);
typedef void (*flush_fn)(void);

static _Atomic(draw_arrays_fn) next_draw_arrays;
static _Atomic(flush_fn) next_flush;

EXPORT void glDrawArrays(GLenum mode, GLint first, GLsizei count)
{
    draw_arrays_fn next = atomic_load_explicit(&next_draw_arrays, memory_order_relaxed);
    if (__builtin_expect(!next, 0)) {
        next = (draw_arrays_fn)dlsym(RTLD_NEXT, "glDrawArrays");
        atomic_store_explicit(&next_draw_arrays, next, memory_order_relaxed);
    }
    if (next)
        next(mode, first, count);
}

EXPORT void glFlush(void)
{
    flush_fn next = atomic_load_explicit(&next_flush, memory_order_relaxed);
    if (__builtin_expect(!next, 0)) {
        next = (flush_fn)dlsym(RTLD_NEXT, "glFlush");
        atomic_store_explicit(&next_flush, next, memory_order_relaxed);
    }
    if (next)
        next();
}
