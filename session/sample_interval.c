/* TALLY_SAMPLE's interval: "100us", "1ms", "250000ns", "2s". */
#include <errno.h>
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
