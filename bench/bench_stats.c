/* Owns the benchmarks' order statistics (see bench_stats.h). */
#include "bench_stats.h"

#include <stdlib.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double bench_quantile(double *values, int n, double share)
{
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return values[(int)(share * (n - 1) + 0.5)];
}
