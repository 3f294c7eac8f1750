/* Owns the pairing of two digests' values and their judgement by the
 * rules (run_compare.h). */
#include "run_compare.h"

#include <stdlib.h>
#include <string.h>

static bool add_counters(struct run_comparison *c)
{
    size_t most = 1 + c->base->counter_count + c->new_run->counter_count;
    c->counters = calloc(most, sizeof *c->counters);
    if (!c->counters)
        return false;
    c->counters[0] = (struct compare_counter){.symbol = gate_commands_counter,
                                              .unit = "commands",
                                              .exactness = EXACTNESS_EXACT,
                                              .base_index = -1,
                                              .new_index = -1};
    c->counter_count = 1;
    const struct run_digest *runs[] = {c->base, c->new_run};
    for (int side = 0; side < 2; side++) {
        for (size_t k = 0; k < runs[side]->counter_count; k++) {
            const struct digest_counter *d = &runs[side]->counters[k];
            int other = run_digest_find_counter(runs[1 - side], d->symbol);
            if (side == 1 && other >= 0)
                continue; /* joined from the base already */
            struct compare_counter *n = &c->counters[c->counter_count++];
            *n = (struct compare_counter){.symbol = d->symbol,
                                          .unit = d->unit,
                                          .exactness = d->exactness,
                                          .averaged = d->averaged,
                                          .base_index = side == 0 ? (int)k : -1,
                                          .new_index = side == 0 ? other : (int)k};
            /* Runs that disagree: the weaker word holds for the change. */
            if (other >= 0 && runs[1]->counters[other].exactness > n->exactness)
                n->exactness = runs[1]->counters[other].exactness;
        }
    }
    return true;
}

static struct counter_value value_of(const struct digest_row *row, int index)
{
    if (!row)
        return (struct counter_value){0};
    return index < 0 ? (struct counter_value){.integer = (int64_t)row->commands}
                     : row->values[index];
}

/* The items of one row (present in base, new or both). */
static void compare_row(struct run_comparison *c, const struct gate_rules *rules,
                        const struct digest_row *base, const struct digest_row *new_row)
{
    const struct digest_row *any = base ? base : new_row;
    for (size_t k = 0; k < c->counter_count; k++) {
        const struct compare_counter *counter = &c->counters[k];
        bool in_both_runs = k == 0 || (counter->base_index >= 0 && counter->new_index >= 0);
        struct compare_item *item = &c->items[c->item_count++];
        *item = (struct compare_item){.scope = any->scope,
                                      .name = any->name,
                                      .frame = any->frame,
                                      .counter = k,
                                      .in_base = base != NULL,
                                      .in_new = new_row != NULL};
        item->base = value_of(base, counter->base_index);
        item->new_value = value_of(new_row, counter->new_index);
        if (k != 0 && counter->base_index < 0)
            item->base = (struct counter_value){0};
        if (k != 0 && counter->new_index < 0)
            item->new_value = (struct counter_value){0};
        item->change = gate_change(&item->base, &item->new_value);
        item->percent = gate_change_percent(&item->base, &item->new_value);
        if (!in_both_runs)
            continue; /* a counter only one run has: nothing to hold it to */
        item->broken = gate_rules_check(rules, counter->symbol, counter->exactness, item->scope,
                                        &item->base, &item->new_value, &item->gated);
        c->gated_count += item->gated;
        c->broken_count += item->broken != NULL;
    }
}

bool run_compare(const struct run_digest *base, const struct run_digest *new_run,
                 const struct gate_rules *rules, struct run_comparison *c)
{
    memset(c, 0, sizeof *c);
    c->base = base;
    c->new_run = new_run;
    if (!add_counters(c))
        return false;
    c->items =
        calloc((base->row_count + new_run->row_count) * c->counter_count + 1, sizeof *c->items);
    if (!c->items) {
        run_comparison_free(c);
        return false;
    }
    /* Both digests are in row order: merge them. */
    size_t i = 0, j = 0;
    while (i < base->row_count || j < new_run->row_count) {
        const struct digest_row *b = i < base->row_count ? &base->rows[i] : NULL;
        const struct digest_row *n = j < new_run->row_count ? &new_run->rows[j] : NULL;
        int order = !b ? 1 : !n ? -1 : digest_row_order(b, n);
        compare_row(c, rules, order <= 0 ? b : NULL, order >= 0 ? n : NULL);
        i += order <= 0;
        j += order >= 0;
    }
    return true;
}

void run_comparison_free(struct run_comparison *c)
{
    free(c->counters);
    free(c->items);
    memset(c, 0, sizeof *c);
}

const struct compare_item *run_comparison_total(const struct run_comparison *c, size_t counter)
{
    /* The total is the first row of both digests. */
    return counter < c->item_count && c->items[counter].scope == SCOPE_TOTAL ? &c->items[counter]
                                                                             : NULL;
}
