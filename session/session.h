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

struct env_sampling;
struct env_sampling *env_sampling_start(tally_device *device);
void env_sampling_stop(struct env_sampling *sampling);

#endif
