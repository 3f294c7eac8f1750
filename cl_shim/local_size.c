/*
 * The work-group size a driver picks when clEnqueueNDRangeKernel gets no
 * local size. The rule is PoCL's (lib/CL/pocl_local_size.c, the default of
 * its CPU devices), restated:
 *
 * 1. Per dimension, the grain g is gcd(preferred multiple, global size); the
 *    local size is the largest multiple of g that divides the global size
 *    and is at most min(max work-item size, global size). Dimensions whose
 *    bound is 1 get 1.
 * 2. While the group is larger than the device's maximum work-group size:
 *    halve z, else y, else x, if the half is still a multiple of its grain
 *    dividing the global size; otherwise set to 1 the dimension (z, y, x
 *    order) above 1 with the smallest grain; otherwise any dimension above 1.
 * 3. While there are fewer groups than compute units (splits = units /
 *    groups > 1) and the group holds at least splits x min(4 x preferred
 *    multiple, max group size) items: divide a dimension (z, y, x order) by
 *    the largest s <= splits for which that still divides and keeps the
 *    grain; failing that, set the smallest dimension above 1 to 1 if the
 *    other two still hold the minimum group size; otherwise stop.
 */
#include "shim.h"

static size_t gcd(size_t a, size_t b)
{
    while (a) {
        size_t next = b % a;
        b = a;
        a = next;
    }
    return b;
}

/* The largest divisor of n that is at most limit (limit >= 1). */
static size_t largest_divisor_up_to(size_t n, size_t limit)
{
    if (n < limit)
        return n;
    while (n % limit != 0)
        limit--;
    return limit;
}

static bool divides_keeping_grain(size_t grain, size_t local, size_t global)
{
    return local % grain == 0 && global % local == 0;
}

static size_t product(const size_t v[3])
{
    return v[0] * v[1] * v[2];
}

/* Step 2: one reduction; false if nothing could be reduced. */
static bool shrink_once(size_t local[3], const size_t grain[3], const size_t global[3])
{
    for (int d = 2; d >= 0; d--) {
        if (local[d] % 2 == 0 && divides_keeping_grain(grain[d], local[d] / 2, global[d])) {
            local[d] /= 2;
            return true;
        }
    }
    /* z, y, x: the first above 1 whose grain is no larger than the others'. */
    static const int order[3][3] = {{2, 0, 1}, {1, 2, 0}, {0, 1, 2}};
    for (int i = 0; i < 3; i++) {
        int a = order[i][0], b = order[i][1], c = order[i][2];
        if (local[a] > 1 && grain[a] <= grain[b] && grain[a] <= grain[c]) {
            local[a] = 1;
            return true;
        }
    }
    for (int d = 2; d >= 0; d--) {
        if (local[d] > 1) {
            local[d] = 1;
            return true;
        }
    }
    return false;
}

/* Step 3: one split towards `splits` groups; false to stop. */
static bool split_once(size_t local[3], const size_t grain[3], const size_t global[3],
                       size_t splits, size_t min_group)
{
    for (; splits > 1; splits--) {
        for (int d = 2; d >= 0; d--) {
            if (local[d] % splits == 0 &&
                divides_keeping_grain(grain[d], local[d] / splits, global[d])) {
                local[d] /= splits;
                return true;
            }
        }
    }
    static const int order[3][3] = {{2, 0, 1}, {1, 2, 0}, {0, 1, 2}};
    for (int i = 0; i < 3; i++) {
        int a = order[i][0], b = order[i][1], c = order[i][2];
        if (local[a] > 1 && local[a] <= local[b] && local[a] <= local[c] &&
            local[b] * local[c] >= min_group) {
            local[a] = 1;
            return true;
        }
    }
    return false;
}

void default_local_size(const device_limits *limits, size_t preferred_multiple,
                        const size_t global[3], size_t local[3])
{
    size_t multiple = preferred_multiple ? preferred_multiple : 1;
    size_t max_group = limits->max_group_size ? limits->max_group_size : 1;
    size_t grain[3];
    for (int d = 0; d < 3; d++) {
        size_t bound =
            limits->max_item_sizes[d] < global[d] ? limits->max_item_sizes[d] : global[d];
        grain[d] = gcd(multiple, global[d]);
        if (d > 0 && bound <= 1)
            local[d] = 1;
        else if (bound < grain[d])
            local[d] = 1; /* PoCL asserts here; no driver reports such limits */
        else
            local[d] = grain[d] * largest_divisor_up_to(global[d] / grain[d], bound / grain[d]);
    }
    while (product(local) > max_group && shrink_once(local, grain, global)) {
    }
    size_t min_group = 4 * multiple < max_group ? 4 * multiple : max_group;
    for (;;) {
        size_t groups = (global[0] / local[0]) * (global[1] / local[1]) * (global[2] / local[2]);
        size_t splits = limits->compute_units / groups;
        if (splits <= 1 || product(local) < splits * min_group)
            break;
        if (!split_once(local, grain, global, splits, min_group))
            break;
    }
}
