/*
 * "Did you mean": the names nearest to one that names nothing, by edit
 * distance, for the messages that refuse a counter's name (tally run's -c,
 * TALLY_COUNTERS). Case is ignored, since IAVERTICES names what IaVertices
 * does to the reader; a swap of two neighbours counts as one edit, the
 * commonest typing slip.
 */
#include <ctype.h>
#include <string.h>

#include "engine.h"

/* Longer names are not typos of a counter's symbol: no suggestion, which
 * also bounds the work a hostile list can cause. A message names a few. */
enum { LONGEST_COMPARED = 64, MOST_SUGGESTED = 8 };

static unsigned smallest(unsigned a, unsigned b, unsigned c)
{
    unsigned m = a < b ? a : b;
    return m < c ? m : c;
}

static bool same_letter(char a, char b)
{
    return tolower((unsigned char)a) == tolower((unsigned char)b);
}

/* Optimal string alignment distance: insertions, deletions, substitutions
 * and swaps of neighbours, each one edit. Three rows of the usual table. */
static unsigned edit_distance(const char *a, size_t n, const char *b, size_t m)
{
    unsigned rows[3][LONGEST_COMPARED + 1];
    unsigned *before = rows[0], *previous = rows[1], *current = rows[2];
    for (size_t j = 0; j <= m; j++)
        previous[j] = (unsigned)j;
    for (size_t i = 1; i <= n; i++) {
        current[0] = (unsigned)i;
        for (size_t j = 1; j <= m; j++) {
            unsigned cost = same_letter(a[i - 1], b[j - 1]) ? 0 : 1;
            current[j] = smallest(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
            if (i > 1 && j > 1 && same_letter(a[i - 1], b[j - 2]) &&
                same_letter(a[i - 2], b[j - 1]) && before[j - 2] + 1 < current[j])
                current[j] = before[j - 2] + 1;
        }
        unsigned *oldest = before;
        before = previous;
        previous = current;
        current = oldest;
    }
    return previous[m];
}

/* A third of the name may be wrong, and at least one letter: IaVertice and
 * VsInvocatoins are near, GpuTime and DrawCalls are not. */
static unsigned plausible_distance(size_t length)
{
    return length / 3 > 1 ? (unsigned)(length / 3) : 1;
}

uint32_t tally_nearest_names(const char *name, const char *const *candidates, uint32_t count,
                             uint32_t *nearest, uint32_t capacity)
{
    size_t n = strlen(name);
    if (capacity > MOST_SUGGESTED)
        capacity = MOST_SUGGESTED;
    if (n > LONGEST_COMPARED || !capacity)
        return 0;
    unsigned limit = plausible_distance(n);
    unsigned distance_of[MOST_SUGGESTED];
    uint32_t found = 0;
    for (uint32_t c = 0; c < count; c++) {
        size_t m = strlen(candidates[c]);
        if (m > LONGEST_COMPARED || (m > n ? m - n : n - m) > limit)
            continue;
        unsigned d = edit_distance(name, n, candidates[c], m);
        if (d > limit || (found == capacity && d >= distance_of[found - 1]))
            continue;
        /* Insert in order of distance; among equals, the candidates' order. */
        uint32_t at = found < capacity ? found++ : capacity - 1;
        while (at > 0 && distance_of[at - 1] > d) {
            nearest[at] = nearest[at - 1];
            distance_of[at] = distance_of[at - 1];
            at--;
        }
        nearest[at] = c;
        distance_of[at] = d;
    }
    return found;
}
