/* Growing the layer's arrays of records. */
#ifndef TALLY_LAYER_ARRAY_GROW_H
#define TALLY_LAYER_ARRAY_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* `items` (of `size` bytes each) reallocated to hold at least `needed`,
 * doubling from 8, with *capacity updated; NULL if out of memory or if
 * `needed` does not fit a 32-bit count or a size_t of bytes, and then
 * `items` and *capacity are as they were. Callers pass `needed` as a 64-bit
 * sum (count + more), so it cannot wrap before it gets here. */
static inline void *layer_array_grow(void *items, uint32_t *capacity, uint64_t needed, size_t size)
{
    if (needed > UINT32_MAX || (size && needed > SIZE_MAX / size))
        return NULL;
    uint64_t grown = *capacity ? *capacity : 8;
    while (grown < needed)
        grown *= 2; /* 64 bits: at most 2^33, never wraps */
    if (grown > UINT32_MAX || grown > SIZE_MAX / (size ? size : 1))
        grown = needed;
    void *moved = realloc(items, (size_t)grown * size);
    if (moved)
        *capacity = (uint32_t)grown;
    return moved;
}

#endif
