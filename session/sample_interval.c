/* TALLY_SAMPLE's interval: "100us", "1ms", "250000ns", "2s". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

enum interval_parse env_sampling_parse_interval(const char *text, uint32_t *out)
{
    static const struct {
        const char *suffix;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
    char *end = NULL;
    if (!text || *text < '0' || *text > '9')
        return INTERVAL_NOT_AN_INTERVAL;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    bool overflow = errno == ERANGE;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            if (!overflow && value == 0)
                return INTERVAL_ZERO;
            if (overflow || value > UINT32_MAX / units[i].ns)
                return INTERVAL_TOO_LONG;
            *out = (uint32_t)(value * units[i].ns);
            return INTERVAL_OK;
        }
    }
    return INTERVAL_NOT_AN_INTERVAL;
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
