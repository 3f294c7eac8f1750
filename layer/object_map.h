/*
 * A map from handle values (or dispatch keys) to the layer's per-object
 * records. Lookups take no lock, so recording a draw never waits on another
 * thread; inserts and removals (object creation and destruction, which are
 * rare) take the map's own mutex. A removed key keeps its slot with no value,
 * so a reader racing a removal sees the record or nothing, never another key's.
 * Tables outgrown by inserts stay allocated until the map is destroyed, since
 * a reader may still be probing them.
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
/* Key 0 is not allowed. Returns false when out of memory. */
bool object_map_put(object_map *map, uint64_t key, void *value);
/* Returns the removed value, or NULL. */
void *object_map_remove(object_map *map, uint64_t key);
/* Calls visit for every live value, under the write lock. */
void object_map_for_each(object_map *map, void (*visit)(void *value, void *user), void *user);

#endif
