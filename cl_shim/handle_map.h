/*
 * Side tables keyed by the driver's own handles (the shim never wraps CL
 * objects). Sharded so that threads using different objects rarely meet on a
 * lock; each entry carries the application's reference count of its handle.
 * Lookups on a per-enqueue path go through a per-thread memo of the last
 * answer, valid while no entry has been linked or unlinked since (the map's
 * generation): those are rare next to enqueues.
 */
#ifndef TALLY_CL_HANDLE_MAP_H
#define TALLY_CL_HANDLE_MAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define HANDLE_MAP_SHARDS 64
#define HANDLE_MAP_BUCKETS 64

/* Embedded in a record as its first member. */
typedef struct handle_entry {
    const void *key;
    uint32_t app_refs; /* guarded by the shard lock */
    struct handle_entry *next;
} handle_entry;

typedef struct handle_map_shard {
    pthread_mutex_t lock;
    handle_entry *buckets[HANDLE_MAP_BUCKETS];
} handle_map_shard;

typedef struct handle_map {
    handle_map_shard shards[HANDLE_MAP_SHARDS];
    atomic_uint_fast64_t generation; /* bumped after every link and unlink */
} handle_map;

/* A thread's last lookup in one map (declare it _Thread_local). */
typedef struct handle_memo {
    const void *key;
    handle_entry *entry;
    uint64_t generation;
} handle_memo;

void handle_map_init(handle_map *map);
/* A handle the driver just created: one application reference. An entry
 * still keyed by the same address (the driver reused it after a release the
 * shim did not see) is unlinked and returned for the caller to destroy. */
handle_entry *handle_map_insert(handle_map *map, handle_entry *entry);
/* The entry of a handle, or NULL. Valid while the application holds the
 * handle (using a released handle is the application's error). */
handle_entry *handle_map_find(handle_map *map, const void *key);
/* handle_map_find answered from the thread's memo when nothing changed. */
handle_entry *handle_map_find_memo(handle_map *map, handle_memo *memo, const void *key);
/* The memo's entry for key when nothing changed since it was taken, else
 * NULL: inline, a few loads, for the per-enqueue paths to try before
 * handle_map_find_memo. A map never searched yet holds no memo's key, so a
 * hit needs no initialized map. */
static inline handle_entry *handle_map_memo_hit(handle_map *map, const handle_memo *memo,
                                                const void *key)
{
    return key && memo->key == key &&
                   memo->generation == atomic_load_explicit(&map->generation, memory_order_acquire)
               ? memo->entry
               : NULL;
}
/* One more application reference; false if the handle is unknown. */
bool handle_map_retain(handle_map *map, const void *key);
/* One less; the entry is unlinked and returned when none is left. Called
 * before the driver's own release: once the driver frees the object,
 * another thread may be handed its address for a new one, whose entry this
 * release must not take. (A handle the driver then refuses was no live
 * object of the program's.) */
handle_entry *handle_map_release(handle_map *map, const void *key);
/* How many handles the map holds. */
uint32_t handle_map_count(handle_map *map);
/* Unlinks every entry, calling destroy on each. */
void handle_map_drain(handle_map *map, void (*destroy)(handle_entry *entry));
/* In a forked child: the map starts empty, with fresh locks (another thread
 * of the parent may have held one), and every memo taken before misses. The
 * entries are left as they are. */
void handle_map_forget(handle_map *map);

#endif
