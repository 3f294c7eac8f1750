/* The process's one table of registered wrappers, looked up by name. */
#include "tally_preload.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct registered {
    const char *name;
    tally_preload_symbol *symbol;
} registered;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static registered *entries;
static size_t entry_count, entry_capacity;

/* Lookups are rare (dlsym, GetProcAddress); a sorted array keeps them short. */
static size_t lower_bound(const char *name)
{
    size_t low = 0, high = entry_count;
    while (low < high) {
        size_t mid = low + (high - low) / 2;
        if (strcmp(entries[mid].name, name) < 0)
            low = mid + 1;
        else
            high = mid;
    }
    return low;
}

static tally_preload_symbol *find_locked(const char *name)
{
    size_t at = lower_bound(name);
    if (at < entry_count && strcmp(entries[at].name, name) == 0)
        return entries[at].symbol;
    return NULL;
}

static int reserve_locked(size_t more)
{
    if (entry_count + more <= entry_capacity)
        return 0;
    size_t capacity = entry_capacity ? entry_capacity : 64;
    while (capacity < entry_count + more)
        capacity *= 2;
    registered *grown = realloc(entries, capacity * sizeof(*grown));
    if (!grown)
        return -1;
    entries = grown;
    entry_capacity = capacity;
    return 0;
}

static void insert_locked(tally_preload_symbol *symbol)
{
    size_t at = lower_bound(symbol->name);
    if (at < entry_count && strcmp(entries[at].name, symbol->name) == 0) {
        /* A second shim wrapping the same function calls the first one's wrapper. */
        if (symbol->real)
            atomic_store_explicit(symbol->real, entries[at].symbol->wrapper, memory_order_release);
        entries[at].symbol = symbol;
        return;
    }
    memmove(&entries[at + 1], &entries[at], (entry_count - at) * sizeof(*entries));
    entries[at] = (registered){symbol->name, symbol};
    entry_count++;
}

int tally_preload_register(const char *shim, tally_preload_symbol *symbols, size_t count)
{
    pthread_mutex_lock(&registry_lock);
    int result = reserve_locked(count);
    if (result == 0) {
        for (size_t i = 0; i < count; i++)
            insert_locked(&symbols[i]);
    }
    pthread_mutex_unlock(&registry_lock);
    if (result != 0)
        fprintf(stderr, "tally: %s shim: out of memory registering its functions\n", shim);
    return result;
}

/* The symbol entry (stable: tables have static storage), or NULL. */
tally_preload_symbol *tally_preload_lookup(const char *name)
{
    if (!name)
        return NULL;
    pthread_mutex_lock(&registry_lock);
    tally_preload_symbol *symbol = find_locked(name);
    pthread_mutex_unlock(&registry_lock);
    return symbol;
}

void *tally_preload_wrapper(const char *name)
{
    tally_preload_symbol *symbol = tally_preload_lookup(name);
    return symbol ? symbol->wrapper : NULL;
}
