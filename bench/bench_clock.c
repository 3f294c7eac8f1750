/* Owns the benchmarks' clock reading (bench_clock.h). */
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

/* Integer additions in eight independent chains: as many a cycle as the
 * core's integer ALUs give this thread beside the loop's own two (about 4
 * on Golden Cove's five ALUs, as in Sapphire and Emerald Rapids), and
 * about half as many while the core's other hardware thread keeps them
 * busy. Timed against a multiply chain of about the same length in time,
 * run just before, so that the clock cancels. */
enum { ADDS_A_LOOP = 8 };

struct bench_core bench_core_probe(uint32_t loops)
{
    double multiplies = multiply_chain_seconds(loops);
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
    double start = thread_seconds();
    for (uint32_t i = 0; i < loops; i++)
        __asm__ volatile("add %0, %0\n\tadd %1, %1\n\tadd %2, %2\n\tadd %3, %3\n\t"
                         "add %4, %4\n\tadd %5, %5\n\tadd %6, %6\n\tadd %7, %7"
                         : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    double adds = thread_seconds() - start;
    if (multiplies <= 0 || adds <= 0)
        return (struct bench_core){0, 0};
    return (struct bench_core){.ghz = (double)MULTIPLY_CYCLES * loops / multiplies / 1e9,
                               .adds_per_cycle =
                                   (double)ADDS_A_LOOP / MULTIPLY_CYCLES * multiplies / adds};
}

#else

double bench_clock_ghz(void)
{
    return 0;
}

struct bench_core bench_core_probe(uint32_t loops)
{
    (void)loops;
    return (struct bench_core){0, 0};
}

#endif
