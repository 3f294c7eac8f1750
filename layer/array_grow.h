/* Growing the layer's arrays of records. */
#ifndef TALLY_LAYER_ARRAY_GROW_H
#define TALLY_LAYER_ARRAY_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* `items` (of `size` bytes each) reallocated to hold at least `needed`,
 * doubling from 8, with *capacity updated; NULL if out of memory, and then
 * `items` and *capacity are as they were. */
static inline void *layer_array_grow(void *items, uint32_t *capacity, uint32_t needed, size_t size)
{
    uint32_t grown = *capacity ? *capacity : 8;
    while (grown < needed)
        grown *= 2;
    void *moved = realloc(items, (size_t)grown * size);
    if (moved)
        *capacity = grown;
    return moved;
}

#endif
