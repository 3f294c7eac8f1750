/*
 * Strings and the interning ids (iids) a Perfetto packet sequence gave
 * them: 1, 2, 3... in the order they were first seen, as Perfetto's
 * InternedData wants (0 means unset). A hash table, so that a trace with
 * many distinct labels costs no more per event than one with few.
 * Internal to libtally.
 */
#ifndef TALLY_INTERN_TABLE_H
#define TALLY_INTERN_TABLE_H

#include <stdbool.h>
#include <stdint.h>

struct intern_table {
    char **keys;    /* by slot; NULL: free */
    uint32_t *iids; /* by slot */
    uint32_t slots, count;
};

/* The iid of text, *added when it is new (the caller then emits its
 * InternedData entry); 0 when out of memory. */
uint32_t intern_table_find(struct intern_table *t, const char *text, bool *added);
void intern_table_free(struct intern_table *t);

#endif
