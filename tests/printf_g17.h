/* The independent truth of tally's double formatting: what printf writes for
 * "%.17g", with the report's spellings of NaN and the infinities. */
#ifndef TALLY_TEST_PRINTF_G17_H
#define TALLY_TEST_PRINTF_G17_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static inline void printf_g17(char *out, size_t size, double v)
{
    if (isnan(v))
        snprintf(out, size, "nan");
    else if (isinf(v))
        snprintf(out, size, "%s", v < 0 ? "-inf" : "inf");
    else
        snprintf(out, size, "%.17g", v); /* the tests run in the C locale */
}

#endif
