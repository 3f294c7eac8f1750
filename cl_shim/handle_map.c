/* The sharded handle tables of handle_map.h. */
#include "handle_map.h"

#include <stddef.h>

static uint64_t hash_of(const void *key)
{
    return ((uint64_t)(uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull;
}

static handle_map_shard *shard_of(handle_map *map, const void *key)
{
    return &map->shards[(hash_of(key) >> 58) % HANDLE_MAP_SHARDS];
}

static handle_entry **bucket_of(handle_map_shard *shard, const void *key)
{
    return &shard->buckets[(hash_of(key) >> 32) % HANDLE_MAP_BUCKETS];
}

/* The link that points at key's entry, or at the NULL ending its chain. */
static handle_entry **link_of(handle_map_shard *shard, const void *key)
{
    handle_entry **link = bucket_of(shard, key);
    while (*link && (*link)->key != key)
        link = &(*link)->next;
    return link;
}

void handle_map_init(handle_map *map)
{
    for (unsigned i = 0; i < HANDLE_MAP_SHARDS; i++) {
        pthread_mutex_init(&map->shards[i].lock, NULL);
        for (unsigned b = 0; b < HANDLE_MAP_BUCKETS; b++)
            map->shards[i].buckets[b] = NULL;
    }
    atomic_init(&map->generation, 0);
}

/* After a link or unlink, before an unlinked entry goes back to be freed. */
static void bump_generation(handle_map *map)
{
    atomic_fetch_add_explicit(&map->generation, 1, memory_order_acq_rel);
}

handle_entry *handle_map_insert(handle_map *map, handle_entry *entry)
{
    handle_map_shard *shard = shard_of(map, entry->key);
    entry->app_refs = 1;
    pthread_mutex_lock(&shard->lock);
    handle_entry **link = link_of(shard, entry->key);
    handle_entry *stale = *link;
    if (stale)
        *link = stale->next;
    entry->next = *bucket_of(shard, entry->key);
    *bucket_of(shard, entry->key) = entry;
    pthread_mutex_unlock(&shard->lock);
    bump_generation(map);
    return stale;
}

handle_entry *handle_map_find(handle_map *map, const void *key)
{
    handle_map_shard *shard = shard_of(map, key);
    pthread_mutex_lock(&shard->lock);
    handle_entry *entry = *link_of(shard, key);
    pthread_mutex_unlock(&shard->lock);
    return entry;
}

handle_entry *handle_map_find_memo(handle_map *map, handle_memo *memo, const void *key)
{
    uint64_t generation = atomic_load_explicit(&map->generation, memory_order_acquire);
    if (key && memo->key == key && memo->generation == generation)
        return memo->entry;
    /* A change between the load above and this lookup leaves the memo
     * older than the map: the next call looks again. */
    *memo = (handle_memo){key, handle_map_find(map, key), generation};
    return memo->entry;
}

bool handle_map_retain(handle_map *map, const void *key)
{
    handle_map_shard *shard = shard_of(map, key);
    pthread_mutex_lock(&shard->lock);
    handle_entry *entry = *link_of(shard, key);
    if (entry)
        entry->app_refs++;
    pthread_mutex_unlock(&shard->lock);
    return entry != NULL;
}

handle_entry *handle_map_release(handle_map *map, const void *key)
{
    handle_map_shard *shard = shard_of(map, key);
    handle_entry *gone = NULL;
    pthread_mutex_lock(&shard->lock);
    handle_entry **link = link_of(shard, key);
    if (*link && --(*link)->app_refs == 0) {
        gone = *link;
        *link = gone->next;
    }
    pthread_mutex_unlock(&shard->lock);
    if (gone)
        bump_generation(map);
    return gone;
}

uint32_t handle_map_count(handle_map *map)
{
    uint32_t count = 0;
    for (unsigned i = 0; i < HANDLE_MAP_SHARDS; i++) {
        pthread_mutex_lock(&map->shards[i].lock);
        for (unsigned b = 0; b < HANDLE_MAP_BUCKETS; b++)
            for (handle_entry *e = map->shards[i].buckets[b]; e; e = e->next)
                count++;
        pthread_mutex_unlock(&map->shards[i].lock);
    }
    return count;
}

void handle_map_forget(handle_map *map)
{
    uint_fast64_t generation = atomic_load_explicit(&map->generation, memory_order_relaxed);
    handle_map_init(map);
    atomic_store_explicit(&map->generation, generation + 1, memory_order_relaxed);
}

void handle_map_drain(handle_map *map, void (*destroy)(handle_entry *entry))
{
    for (unsigned i = 0; i < HANDLE_MAP_SHARDS; i++) {
        handle_map_shard *shard = &map->shards[i];
        pthread_mutex_lock(&shard->lock);
        handle_entry *chain = NULL;
        for (unsigned b = 0; b < HANDLE_MAP_BUCKETS; b++) {
            while (shard->buckets[b]) {
                handle_entry *e = shard->buckets[b];
                shard->buckets[b] = e->next;
                e->next = chain;
                chain = e;
            }
        }
        pthread_mutex_unlock(&shard->lock);
        bump_generation(map);
        while (chain) {
            handle_entry *e = chain;
            chain = e->next;
            destroy(e);
        }
    }
}
