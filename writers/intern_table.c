/* Owns the interned strings of a Perfetto packet sequence (intern_table.h). */
#include "intern_table.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_of(const char *text)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* The slot holding text, or the free slot where it would go. */
static uint32_t slot_of(const struct intern_table *t, const char *text)
{
    uint32_t mask = t->slots - 1, slot = hash_of(text) & mask;
    while (t->keys[slot] && strcmp(t->keys[slot], text) != 0)
        slot = (slot + 1) & mask;
    return slot;
}

/* Kept at most half full, so probes stay short. */
static bool grow(struct intern_table *t)
{
    uint32_t slots = t->slots ? 2 * t->slots : 64;
    struct intern_table bigger = {calloc(slots, sizeof(char *)), calloc(slots, sizeof(uint32_t)),
                                  slots, t->count};
    if (!bigger.keys || !bigger.iids) {
        free(bigger.keys);
        free(bigger.iids);
        return false;
    }
    for (uint32_t i = 0; i < t->slots; i++) {
        if (!t->keys[i])
            continue;
        uint32_t slot = slot_of(&bigger, t->keys[i]);
        bigger.keys[slot] = t->keys[i];
        bigger.iids[slot] = t->iids[i];
    }
    free(t->keys);
    free(t->iids);
    *t = bigger;
    return true;
}

uint32_t intern_table_find(struct intern_table *t, const char *text, bool *added)
{
    *added = false;
    if (2 * (t->count + 1) > t->slots && !grow(t))
        return 0;
    uint32_t slot = slot_of(t, text);
    if (t->keys[slot])
        return t->iids[slot];
    if (!(t->keys[slot] = strdup(text)))
        return 0;
    t->iids[slot] = ++t->count;
    *added = true;
    return t->count;
}

void intern_table_free(struct intern_table *t)
{
    for (uint32_t i = 0; i < t->slots; i++)
        free(t->keys[i]);
    free(t->keys);
    free(t->iids);
    *t = (struct intern_table){0};
}
