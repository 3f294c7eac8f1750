/* Durations as tally's options spell them: TALLY_SAMPLE's interval and the
 * capture window's delay and duration. */
#ifndef TALLY_DURATION_H
#define TALLY_DURATION_H

#include <stdbool.h>
#include <stdint.h>

/* A whole number and a unit (ns, us, ms, s, min), in ns. False if text is
 * not that; a number too large for 64-bit nanoseconds gives UINT64_MAX, for
 * the caller's own bound to refuse. */
bool tally_parse_duration_ns(const char *text, uint64_t *ns);

#endif
