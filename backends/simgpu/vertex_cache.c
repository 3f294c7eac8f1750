/* The post-transform vertex cache model: a FIFO of the last `entries`
 * distinct vertices shaded; a miss shades the vertex and pushes it. */
#include "simgpu.h"

static uint32_t index_at(const void *indices, uint32_t size, uint32_t i)
{
    switch (size) {
    case 1: return ((const uint8_t *)indices)[i];
    case 2: return ((const uint16_t *)indices)[i];
    default: return ((const uint32_t *)indices)[i];
    }
}

static bool cached(const uint32_t *ring, uint32_t filled, uint32_t value)
{
    for (uint32_t k = 0; k < filled; k++)
        if (ring[k] == value)
            return true;
    return false;
}

uint64_t simgpu_vertex_cache_misses(const void *indices, uint32_t index_size, uint32_t count,
                                    uint32_t entries, uint32_t *ring)
{
    uint64_t misses = 0;
    uint32_t filled = 0, next = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t v = index_at(indices, index_size, i);
        if (cached(ring, filled, v))
            continue;
        misses++;
        ring[next] = v;
        next = (next + 1) % entries;
        if (filled < entries)
            filled++;
    }
    return misses;
}
