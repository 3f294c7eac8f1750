/* The processor's clock as a benchmark's thread sees it (bench_clock.c). */
#ifndef TALLY_BENCH_CLOCK_H
#define TALLY_BENCH_CLOCK_H

#include <stdint.h>

/*
 * The clock in GHz while the calling thread runs, from a dependent chain of
 * 64-bit integer multiplies timed in the thread's own CPU time; 0 where it
 * cannot be read this way (not x86-64). A shared machine's figures in
 * nanoseconds move with its clock; in cycles they move only with the work
 * and with what else runs on the same core.
 */
double bench_clock_ghz(void);

/* The core as the calling thread finds it (bench_core_probe). */
struct bench_core {
    double ghz;            /* the clock, by a multiply chain */
    double adds_per_cycle; /* independent integer additions a cycle */
};

/*
 * The clock and the independent integer additions a cycle the calling
 * thread gets, from chains of `loops` steps (1,000,000: about 2 ms at
 * 3 GHz): about 4 additions on a core of its own, about 2 while another
 * hardware thread of the same core (on a shared machine, another guest's)
 * keeps it busy; zeros where it cannot be read (not x86-64). A figure that
 * halves with the additions is the core's, not the code's.
 */
struct bench_core bench_core_probe(uint32_t loops);

#endif
