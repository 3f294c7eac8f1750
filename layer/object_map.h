/*
 * A map from handle values (or dispatch keys) to the layer's per-object
 * records. Lookups take no lock, so recording a draw never waits on another
 * thread; inserts and removals (object creation and destruction, which are
 * rare) take the map's own mutex. A removed key keeps its slot with no value,
 * so a reader racing a removal sees the record or nothing, never another key's.
 * Tables outgrown by inserts stay allocated until the map is destroyed, since
 * a reader may still be probing them.
 *
 * Vulkan lets a non-dispatchable handle value be given out again while it is
 * alive (a driver may encode an object in its handle): the same value is
 * then the same object, created once more. The map counts such keys and
 * keeps the first record until every creation of the value is destroyed.
 */
#ifndef TALLY_LAYER_OBJECT_MAP_H
#define TALLY_LAYER_OBJECT_MAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct object_map_table object_map_table;

typedef struct object_map {
    _Atomic(object_map_table *) table;
    pthread_mutex_t write_lock;
    size_t keys_used; /* keys ever placed in the current table, live or removed */
    object_map_table *retired;
} object_map;

void object_map_init(object_map *map);
/* Frees the tables, not the values. */
void object_map_destroy(object_map *map);
void *object_map_get(object_map *map, uint64_t key);
/* Key 0 is not allowed. Returns the record the key now has: `value`, or the
 * record of a live key put before (the caller keeps `value`), or NULL when
 * out of memory. */
void *object_map_put(object_map *map, uint64_t key, void *value);
/* Returns the removed value (for the caller to free), or NULL: no live key,
 * or a key put more times than removed, whose record stays. */
void *object_map_remove(object_map *map, uint64_t key);
/* Frees (free()) every live value: for maps of plain records. */
void object_map_free_values(object_map *map);
/* Calls visit for every live value, under the write lock. */
void object_map_for_each(object_map *map, void (*visit)(void *value, void *user), void *user);

#endif
