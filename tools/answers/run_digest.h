/*
 * A run reduced to what is compared and committed: per counter its value
 * (the sum, or the mean of an averaged counter, as a baseline writes it)
 * for the whole run, each frame, each label, each pipeline or program and
 * each API command, with the commands of each. A baseline file holds
 * exactly this; tally diff compares two of them, however each was made.
 */
#ifndef TALLY_ANSWERS_RUN_DIGEST_H
#define TALLY_ANSWERS_RUN_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counter_value.h"
#include "report_reader.h"
#include "run_aggregate.h"

enum digest_scope { SCOPE_TOTAL, SCOPE_FRAME, SCOPE_LABEL, SCOPE_PIPELINE, SCOPE_API, SCOPE_COUNT };

/* *field replaced by a copy of value (the old one freed); false without
 * memory, *field then unchanged. */
bool run_digest_set_text(char **field, const char *value);

/* "total", "frame", "label", "pipeline", "api_name": a baseline's words. */
extern const char *const digest_scope_names[SCOPE_COUNT];

struct digest_counter {
    char *symbol, *unit;
    enum counter_exactness exactness;
    bool averaged;
};

struct digest_row {
    enum digest_scope scope;
    char *name;     /* "" for the total; the frame's number for a frame */
    uint64_t frame; /* for a frame */
    uint64_t commands;
    /* Per counter: an integer sum, or a mean with three decimals. */
    struct counter_value *values;
};

struct run_digest {
    struct digest_counter *counters;
    size_t counter_count;
    char *backend, *device, *clock; /* "" where unknown */
    /* Ordered as a baseline lists them: the total, frames by number, then
     * each grouping's names in byte order. */
    struct digest_row *rows;
    size_t row_count, row_capacity;
};

/* The digest of an aggregate whose rows have all been added (every
 * counter tracked per frame); NULL without memory. */
struct run_digest *run_digest_of(const run_aggregate *a);
void run_digest_free(struct run_digest *d);

/* An empty digest, for a reader to fill (baseline.c). */
struct run_digest *run_digest_new(void);
bool run_digest_add_counter(struct run_digest *d, const char *symbol, const char *unit,
                            enum counter_exactness exactness, bool averaged);
/* A row with room for every counter's value (zeros); NULL without memory. */
struct digest_row *run_digest_add_row(struct run_digest *d, enum digest_scope scope,
                                      const char *name);
/* Puts the rows in their order; false when two rows have the same scope
 * and name (with which in *duplicate). */
bool run_digest_sort(struct run_digest *d, const struct digest_row **duplicate);

int run_digest_find_counter(const struct run_digest *d, const char *symbol);

/* Orders rows: by scope, frames by number, names by bytes. */
int digest_row_order(const struct digest_row *a, const struct digest_row *b);

/* The value as a baseline writes it: an integer, or three decimals. */
void digest_value_text(const struct counter_value *v, char *out, size_t size);

#endif
