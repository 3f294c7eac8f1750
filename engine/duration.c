/* Owns how durations are read (duration.h). */
#include "duration.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool tally_parse_duration_ns(const char *text, uint64_t *ns)
{
    static const struct {
        const char *unit;
        uint64_t ns;
    } units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"min", 60000000000}};
    if (!text || *text < '0' || *text > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(text, &end, 10);
    bool overflow = errno == ERANGE;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(end, units[i].unit) == 0) {
            *ns = overflow || n > UINT64_MAX / units[i].ns ? UINT64_MAX : n * units[i].ns;
            return true;
        }
    }
    return false;
}
