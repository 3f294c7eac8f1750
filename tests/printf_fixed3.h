/* The independent truth of the reports' float text: what printf writes for
 * "%.3f" in the C locale, with the reports' spellings of NaN and the
 * infinities. */
#ifndef TALLY_TEST_PRINTF_FIXED3_H
#define TALLY_TEST_PRINTF_FIXED3_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static inline void printf_fixed3(char *out, size_t size, double v)
{
    if (isnan(v))
        snprintf(out, size, "nan");
    else if (isinf(v))
        snprintf(out, size, "%s", v < 0 ? "-inf" : "inf");
    else
        snprintf(out, size, "%.3f", v); /* the tests run in the C locale */
}

#endif
