/*
 * Threads of tally's own (the queue, the report's writer, the sampler's
 * reader, the signal finisher) start with the program's signals blocked:
 * a signal sent to the process then reaches one of the program's threads,
 * as it would without tally, and never runs the program's handler on a
 * thread the program does not know. Faults a thread causes itself, and
 * SIGPROF (profilers charge time to the thread that spent it), stay
 * unblocked. tally_thread_start returns once the thread runs.
 */
#ifndef TALLY_THREAD_START_H
#define TALLY_THREAD_START_H

#include <pthread.h>

/* pthread_create's result; name (at most 15 characters) is the thread's
 * name for profilers and debuggers. */
int tally_thread_start(pthread_t *thread, const char *name, void *(*main)(void *), void *arg);

#endif
