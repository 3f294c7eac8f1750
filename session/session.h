/*
 * The process-wide session every front door shares, built on libtally's
 * public API only: the shared device (session/shared_device.c) and the
 * sampling TALLY_SAMPLE asks of it (session/env_sampling.c).
 */
#ifndef TALLY_SESSION_H
#define TALLY_SESSION_H

#include "tally/tally.h"

/* Sampling the shared device as TALLY_SAMPLE says; NULL when it is not set or
 * not usable (logged). Stopping writes the file. */
/* sample_interval.c: TALLY_SAMPLE's value, a whole number and a unit (ns,
 * us, ms, s), up to UINT32_MAX ns: the metrics API's timer period is 32-bit
 * nanoseconds. */
enum interval_parse { INTERVAL_OK, INTERVAL_NOT_AN_INTERVAL, INTERVAL_ZERO, INTERVAL_TOO_LONG };
enum interval_parse env_sampling_parse_interval(const char *text, uint32_t *out);

/* end_signals.c: finish() runs, on a thread of tally's, when SIGINT,
 * SIGTERM or SIGHUP would end the process at its default action; then the
 * signal ends it. False if that cannot be set up (the files are then
 * finished at exit only). Once per process; a forked child calls it again
 * for its own device, after forgetting its parent's. */
bool session_finish_on_ending_signals(void (*finish)(void));
void session_forget_ending_signals_in_child(void);

struct env_sampling;
struct env_sampling *env_sampling_start(tally_device *device);
void env_sampling_stop(struct env_sampling *sampling);

#endif
