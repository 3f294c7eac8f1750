/* The lock-free-read handle map (see object_map.h). */
#include "object_map.h"

#include <stdlib.h>

struct object_map_table {
    size_t mask;
    _Atomic uint64_t *keys;
    _Atomic(void *) *values;
    uint32_t *puts; /* of a live key: puts not yet removed; under the write lock */
    object_map_table *next_retired;
};

static object_map_table *table_create(size_t capacity)
{
    object_map_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->mask = capacity - 1;
    t->keys = calloc(capacity, sizeof(*t->keys));
    t->values = calloc(capacity, sizeof(*t->values));
    t->puts = calloc(capacity, sizeof(*t->puts));
    if (!t->keys || !t->values || !t->puts) {
        free(t->keys);
        free(t->values);
        free(t->puts);
        free(t);
        return NULL;
    }
    return t;
}

static void table_free(object_map_table *t)
{
    free(t->keys);
    free(t->values);
    free(t->puts);
    free(t);
}

static size_t slot_of(const object_map_table *t, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & t->mask;
}

void object_map_init(object_map *map)
{
    atomic_init(&map->table, table_create(64));
    pthread_mutex_init(&map->write_lock, NULL);
    map->keys_used = 0;
    map->retired = NULL;
}

void object_map_destroy(object_map *map)
{
    object_map_table *t = atomic_load(&map->table);
    if (t)
        table_free(t);
    while (map->retired) {
        object_map_table *next = map->retired->next_retired;
        table_free(map->retired);
        map->retired = next;
    }
    pthread_mutex_destroy(&map->write_lock);
}

void *object_map_get(object_map *map, uint64_t key)
{
    object_map_table *t = atomic_load_explicit(&map->table, memory_order_acquire);
    if (!t)
        return NULL;
    for (size_t i = slot_of(t, key);; i = (i + 1) & t->mask) {
        uint64_t k = atomic_load_explicit(&t->keys[i], memory_order_acquire);
        if (k == key)
            return atomic_load_explicit(&t->values[i], memory_order_acquire);
        if (k == 0)
            return NULL;
    }
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find_slot(object_map_table *t, uint64_t key)
{
    size_t i = slot_of(t, key);
    for (;;) {
        uint64_t k = atomic_load_explicit(&t->keys[i], memory_order_relaxed);
        if (k == key || k == 0)
            return i;
        i = (i + 1) & t->mask;
    }
}

/* Copies the live entries into a table twice as large as they need. */
static bool grow(object_map *map, object_map_table *old)
{
    size_t live = 0;
    for (size_t i = 0; i <= old->mask; i++)
        if (atomic_load_explicit(&old->values[i], memory_order_relaxed))
            live++;
    size_t capacity = 64;
    while (capacity < (live + 1) * 4)
        capacity *= 2;
    object_map_table *t = table_create(capacity);
    if (!t)
        return false;
    for (size_t i = 0; i <= old->mask; i++) {
        void *v = atomic_load_explicit(&old->values[i], memory_order_relaxed);
        if (!v)
            continue;
        uint64_t key = atomic_load_explicit(&old->keys[i], memory_order_relaxed);
        size_t s = find_slot(t, key);
        t->puts[s] = old->puts[i];
        atomic_store_explicit(&t->values[s], v, memory_order_relaxed);
        atomic_store_explicit(&t->keys[s], key, memory_order_relaxed);
    }
    map->keys_used = live;
    old->next_retired = map->retired;
    map->retired = old;
    atomic_store_explicit(&map->table, t, memory_order_release);
    return true;
}

void *object_map_put(object_map *map, uint64_t key, void *value)
{
    pthread_mutex_lock(&map->write_lock);
    object_map_table *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    void *stored = NULL;
    if (t) {
        size_t s = find_slot(t, key);
        void *live = atomic_load_explicit(&t->values[s], memory_order_relaxed);
        bool ok = true;
        if (live) {
            t->puts[s]++; /* the same object again: its first record stays */
            stored = live;
        } else if (atomic_load_explicit(&t->keys[s], memory_order_relaxed) == 0 &&
                   (map->keys_used + 1) * 2 > t->mask + 1) {
            ok = grow(map, t);
            t = atomic_load_explicit(&map->table, memory_order_relaxed);
            s = find_slot(t, key);
        }
        if (ok && !live) {
            if (atomic_load_explicit(&t->keys[s], memory_order_relaxed) == 0)
                map->keys_used++;
            t->puts[s] = 1;
            atomic_store_explicit(&t->values[s], value, memory_order_release);
            atomic_store_explicit(&t->keys[s], key, memory_order_release);
            stored = value;
        }
    }
    pthread_mutex_unlock(&map->write_lock);
    return stored;
}

void *object_map_remove(object_map *map, uint64_t key)
{
    pthread_mutex_lock(&map->write_lock);
    void *old = NULL;
    object_map_table *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    if (t) {
        size_t s = find_slot(t, key);
        if (atomic_load_explicit(&t->keys[s], memory_order_relaxed) != key)
            ; /* never put */
        else if (t->puts[s] > 1)
            t->puts[s]--;
        else
            old = atomic_exchange_explicit(&t->values[s], NULL, memory_order_acq_rel);
    }
    pthread_mutex_unlock(&map->write_lock);
    return old;
}

void object_map_for_each(object_map *map, void (*visit)(void *value, void *user), void *user)
{
    pthread_mutex_lock(&map->write_lock);
    object_map_table *t = atomic_load_explicit(&map->table, memory_order_relaxed);
    for (size_t i = 0; t && i <= t->mask; i++) {
        void *v = atomic_load_explicit(&t->values[i], memory_order_relaxed);
        if (v)
            visit(v, user);
    }
    pthread_mutex_unlock(&map->write_lock);
}

static void free_value(void *value, void *user)
{
    (void)user;
    free(value);
}

void object_map_free_values(object_map *map)
{
    object_map_for_each(map, free_value, NULL);
}
