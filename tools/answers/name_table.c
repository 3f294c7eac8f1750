/* Owns the numbering of distinct names: an open-addressing hash of
 * indices into the names in first-seen order (name_table.h). */
#include "name_table.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char name_table_overflow[] = "(other names past the limit)";

struct name_table {
    char **names;
    uint64_t *hashes;
    size_t count, capacity;
    uint32_t *slots; /* index + 1; 0 is empty */
    size_t slot_count;
    uint32_t overflow; /* its index once added, else UINT32_MAX */
    /* Rows come in runs of the same name: the last one is checked first. */
    uint32_t last;
};

/* FNV-1a: short names, no adversary. */
static uint64_t hash_of(const char *s)
{
    uint64_t h = 14695981039346656037u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

name_table *name_table_create(void)
{
    name_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->slot_count = 64;
    t->slots = calloc(t->slot_count, sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    t->overflow = UINT32_MAX;
    t->last = UINT32_MAX;
    return t;
}

void name_table_free(name_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++)
        free(t->names[i]);
    free(t->names);
    free(t->hashes);
    free(t->slots);
    free(t);
}

static bool grow_slots(name_table *t)
{
    size_t count = t->slot_count * 2;
    uint32_t *slots = calloc(count, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < t->count; i++) {
        size_t s = t->hashes[i] & (count - 1);
        while (slots[s])
            s = (s + 1) & (count - 1);
        slots[s] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->slot_count = count;
    return true;
}

/* Appends a name (not yet in the table); its index or UINT32_MAX. */
static uint32_t add(name_table *t, const char *name, uint64_t hash)
{
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? 2 * t->capacity : 64;
        char **names = realloc(t->names, capacity * sizeof *names);
        if (!names)
            return UINT32_MAX;
        t->names = names;
        uint64_t *hashes = realloc(t->hashes, capacity * sizeof *hashes);
        if (!hashes)
            return UINT32_MAX;
        t->hashes = hashes;
        t->capacity = capacity;
    }
    if (2 * (t->count + 1) > t->slot_count && !grow_slots(t))
        return UINT32_MAX;
    char *copy = strdup(name);
    if (!copy)
        return UINT32_MAX;
    uint32_t index = (uint32_t)t->count++;
    t->names[index] = copy;
    t->hashes[index] = hash;
    size_t s = hash & (t->slot_count - 1);
    while (t->slots[s])
        s = (s + 1) & (t->slot_count - 1);
    t->slots[s] = index + 1;
    return index;
}

uint32_t name_table_intern(name_table *t, const char *name)
{
    if (t->last != UINT32_MAX && strcmp(t->names[t->last], name) == 0)
        return t->last;
    uint64_t hash = hash_of(name);
    for (size_t s = hash & (t->slot_count - 1); t->slots[s]; s = (s + 1) & (t->slot_count - 1)) {
        uint32_t i = t->slots[s] - 1;
        if (t->hashes[i] == hash && strcmp(t->names[i], name) == 0)
            return t->last = i;
    }
    uint32_t index;
    if (t->count < NAME_TABLE_LIMIT) {
        index = add(t, name, hash);
    } else {
        if (t->overflow == UINT32_MAX)
            t->overflow = add(t, name_table_overflow, hash_of(name_table_overflow));
        index = t->overflow;
    }
    if (index != UINT32_MAX)
        t->last = index;
    return index;
}

size_t name_table_count(const name_table *t)
{
    return t->count;
}

const char *name_table_name(const name_table *t, uint32_t index)
{
    return t->names[index];
}
