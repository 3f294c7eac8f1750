/*
 * Recordings: the chunked command arrays behind streams, their arena for
 * variable-size data, and the references they hold on programs, results and
 * secondary recordings.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct tally_block {
    struct tally_block *next;
    size_t size;
    max_align_t data[];
};

struct tally_recording *tally_recording_create(void)
{
    struct tally_recording *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    atomic_init(&r->refs, 1);
    return r;
}

void tally_recording_ref(struct tally_recording *recording)
{
    atomic_fetch_add_explicit(&recording->refs, 1, memory_order_relaxed);
}

static void release_held(struct tally_held *held)
{
    switch (held->kind) {
    case TALLY_HELD_PROGRAM: tally_program_release(held->object); break;
    case TALLY_HELD_RESULTS: tally_results_release(held->object); break;
    case TALLY_HELD_RECORDING: tally_recording_unref(held->object); break;
    }
}

static void release_contents(struct tally_recording *r)
{
    for (uint32_t i = 0; i < r->held_count; i++)
        release_held(&r->held[i]);
    r->held_count = 0;
    r->last_held = NULL;
    for (struct tally_block *b = r->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    r->blocks = NULL;
}

void tally_recording_unref(struct tally_recording *recording)
{
    if (!recording || atomic_fetch_sub_explicit(&recording->refs, 1, memory_order_acq_rel) != 1)
        return;
    release_contents(recording);
    free(recording->held);
    for (struct tally_chunk *c = recording->first, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    for (struct tally_draw_block *b = recording->first_draws, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(recording);
}

/* Moves on to the next chunk, reusing one a rewind kept. */
static bool next_chunk(struct tally_recording *r)
{
    struct tally_chunk *next = r->last ? r->last->next : r->first;
    if (!next) {
        if (!(next = malloc(sizeof(*next))))
            return false;
        next->next = NULL;
        if (r->last)
            r->last->next = next;
        else
            r->first = next;
    }
    r->last = next;
    r->used_in_last = 0;
    return true;
}

/* The hot path of every recorded command: a bounds check and an increment. */
struct tally_command *tally_recording_append(struct tally_recording *r)
{
    if (__builtin_expect(!r->last || r->used_in_last == TALLY_CHUNK_COMMANDS, 0))
        if (!next_chunk(r))
            return NULL;
    r->count++;
    r->commands++;
    return &r->last->commands[r->used_in_last++];
}

tally_packed_draw *tally_recording_next_draws(struct tally_recording *r)
{
    struct tally_draw_block *next = r->last_draws ? r->last_draws->next : r->first_draws;
    if (!next) {
        if (!(next = malloc(sizeof(*next))))
            return NULL;
        next->next = NULL;
        if (r->last_draws)
            r->last_draws->next = next;
        else
            r->first_draws = next;
    }
    r->last_draws = next;
    return next->draws;
}

/* Forgets the commands but keeps the chunks, so a stream that is reset and
 * recorded again every frame touches no new memory. Only for a recording
 * nothing else refers to. */
void tally_recording_rewind(struct tally_recording *r)
{
    release_contents(r);
    r->count = 0;
    r->commands = 0;
    r->last = NULL;
    r->used_in_last = 0;
    r->last_draws = NULL;
}

/* Takes back the command just appended (its holds failed). */
void tally_recording_unappend(struct tally_recording *r)
{
    r->count--;
    r->commands--;
    r->used_in_last--;
}

void *tally_recording_store(struct tally_recording *r, const void *data, size_t size)
{
    struct tally_block *b = malloc(sizeof(*b) + size);
    if (!b)
        return NULL;
    b->next = r->blocks;
    b->size = size;
    memcpy(b->data, data, size);
    r->blocks = b;
    return b->data;
}

tally_status tally_recording_hold(struct tally_recording *r, enum tally_held_kind kind,
                                  void *object)
{
    if (object == r->last_held)
        return TALLY_OK;
    if (r->held_count == r->held_capacity) {
        uint32_t capacity = r->held_capacity ? r->held_capacity * 2 : 8;
        struct tally_held *held = realloc(r->held, capacity * sizeof(*held));
        if (!held)
            return TALLY_ERROR_OUT_OF_MEMORY;
        r->held = held;
        r->held_capacity = capacity;
    }
    switch (kind) {
    case TALLY_HELD_PROGRAM: tally_program_ref(object); break;
    case TALLY_HELD_RESULTS: tally_results_ref(object); break;
    case TALLY_HELD_RECORDING: tally_recording_ref(object); break;
    }
    r->held[r->held_count++] = (struct tally_held){kind, object};
    r->last_held = object;
    return TALLY_OK;
}

/* Command `index` of a recording, walking chunks forward from *chunk, which
 * holds command (index / TALLY_CHUNK_COMMANDS) * TALLY_CHUNK_COMMANDS on entry
 * of each new chunk. Callers iterate indices in order. */
const struct tally_command *tally_recording_at(const struct tally_chunk **chunk, uint32_t index)
{
    uint32_t offset = index % TALLY_CHUNK_COMMANDS;
    if (offset == 0 && index != 0)
        *chunk = (*chunk)->next;
    return &(*chunk)->commands[offset];
}
