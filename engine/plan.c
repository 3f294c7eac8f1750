/*
 * Pass planning: a pass collects at most `capacity` counters of each group.
 * Each distinct counter goes to the first pass whose group still has room, in
 * the order listed, so the number of passes is the largest
 * ceil(selected / capacity) over groups and the plan never depends on
 * anything but the list.
 */
#include <stdlib.h>

#include "engine.h"

static int first_listed(const uint32_t *counters, uint32_t position)
{
    for (uint32_t i = 0; i < position; i++)
        if (counters[i] == counters[position])
            return (int)i;
    return -1;
}

tally_status tally_plan_passes(const tally_catalogue *cat, const uint32_t *counters, uint32_t count,
                               uint32_t *pass_of, uint32_t *pass_count)
{
    if (!cat || !pass_count || (count && !counters))
        return TALLY_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < count; i++)
        if (counters[i] >= cat->counter_count)
            return TALLY_ERROR_UNKNOWN_COUNTER;
    uint32_t *used = calloc(cat->group_count ? cat->group_count : 1, sizeof(*used));
    if (!used)
        return TALLY_ERROR_OUT_OF_MEMORY;
    uint32_t passes = count ? 1 : 0;
    for (uint32_t i = 0; i < count; i++) {
        int earlier = first_listed(counters, i);
        uint32_t pass;
        if (earlier >= 0) {
            pass = pass_of ? pass_of[earlier] : 0;
        } else {
            const tally_group_info *g = &cat->groups[cat->counters[counters[i]].group];
            pass = used[g->index]++ / g->capacity;
        }
        if (pass + 1 > passes)
            passes = pass + 1;
        if (pass_of)
            pass_of[i] = pass;
    }
    free(used);
    *pass_count = passes;
    return TALLY_OK;
}
