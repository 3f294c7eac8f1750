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

#endif
