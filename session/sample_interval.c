/* TALLY_SAMPLE's interval: "100us", "1ms", "250000ns", "2s". */
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "session.h"

/* Read as every duration of tally's is (engine/duration.h), then held to
 * the metrics API's 32-bit nanoseconds. */
enum interval_parse env_sampling_parse_interval(const char *text, uint32_t *out)
{
    uint64_t ns = 0;
    if (!tally_parse_duration_ns(text, &ns))
        return INTERVAL_NOT_AN_INTERVAL;
    if (ns == 0)
        return INTERVAL_ZERO;
    if (ns > UINT32_MAX)
        return INTERVAL_TOO_LONG;
    *out = (uint32_t)ns;
    return INTERVAL_OK;
}

/* The same sentences for TALLY_SAMPLE's warning and for tally run's -s. The
 * text is cut short in them: it may be anything the environment held. */
tally_status tally_sample_interval_parse(const char *text, uint32_t *interval_ns, char *error,
                                         size_t error_size)
{
    enum { SHOWN = 40 };
    uint32_t ns = 0;
    enum interval_parse result = env_sampling_parse_interval(text, &ns);
    if (result == INTERVAL_OK) {
        if (interval_ns)
            *interval_ns = ns;
        return TALLY_OK;
    }
    if (!error || !error_size)
        return TALLY_ERROR_INVALID_ARGUMENT;
    const char *cut = text && strlen(text) > SHOWN ? "..." : "";
    text = text ? text : "";
    if (result == INTERVAL_ZERO)
        snprintf(error, error_size, "\"%.*s%s\" is no time", SHOWN, text, cut);
    else if (result == INTERVAL_TOO_LONG)
        snprintf(error, error_size,
                 "\"%.*s%s\" is longer than the longest interval, 4.294967295 s (4294967295ns, "
                 "32-bit nanoseconds)",
                 SHOWN, text, cut);
    else
        snprintf(error, error_size, "\"%.*s%s\" is not an interval like 100us, 1ms, 250000ns or 2s",
                 SHOWN, text, cut);
    return TALLY_ERROR_INVALID_ARGUMENT;
}
