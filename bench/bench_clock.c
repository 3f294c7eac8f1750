/* Owns the benchmarks' clock reading (bench_clock.h). x86-64 only (an
 * inline IMUL chain, whose latency is known there); elsewhere the clock is
 * unknown and the figures are given in time alone. */
#include "bench_clock.h"

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)

/* A 64-bit IMUL takes 3 cycles on Intel's large cores since Nehalem and
 * AMD's since Zen: a chain of them, each waiting for the last, runs at one
 * per 3 cycles whatever else the core could overlap. (Atom's cores and the
 * small cores of hybrid parts take longer: the clock reads low there.) */
enum { MULTIPLY_CYCLES = 3, CHAIN = 30000000 };

static double thread_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double multiply_chain_seconds(uint32_t multiplies)
{
    uint64_t x = 3;
    double start = thread_seconds();
    for (uint32_t i = 0; i < multiplies; i++)
        __asm__ volatile("imul %0, %0" : "+r"(x));
    return thread_seconds() - start;
}

double bench_clock_ghz(void)
{
    double seconds = multiply_chain_seconds(CHAIN);
    return seconds > 0 ? (double)MULTIPLY_CYCLES * CHAIN / seconds / 1e9 : 0;
}

#else

double bench_clock_ghz(void)
{
    return 0;
}

#endif
