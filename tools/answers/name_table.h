/*
 * Distinct names (labels, API commands, pipelines) numbered in the order
 * first seen, up to a limit: memory is bounded by the limit, never by the
 * rows. Past the limit every new name is the overflow group.
 */
#ifndef TALLY_ANSWERS_NAME_TABLE_H
#define TALLY_ANSWERS_NAME_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* The names a table keeps before new ones fold into the overflow group. */
enum { NAME_TABLE_LIMIT = 65536 };

/* What a name past the limit is counted as. */
extern const char name_table_overflow[];

typedef struct name_table name_table;

name_table *name_table_create(void);
void name_table_free(name_table *table);

/* The name's number, adding it if new (the overflow group's number past
 * the limit); UINT32_MAX without memory. */
uint32_t name_table_intern(name_table *table, const char *name);

size_t name_table_count(const name_table *table);
const char *name_table_name(const name_table *table, uint32_t index);

#endif
