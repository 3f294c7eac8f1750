/* Owns how tally diff words a change and which changes it calls the
 * biggest movers, the same in every output (diff.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "value_text.h"

void diff_subject(const struct compare_item *item, char *out, size_t size)
{
    const char *novelty = !item->in_base ? " (new)" : !item->in_new ? " (gone)" : "";
    switch (item->scope) {
    case SCOPE_TOTAL: snprintf(out, size, "the run's total"); break;
    case SCOPE_FRAME: snprintf(out, size, "frame %s%s", item->name, novelty); break;
    default:
        snprintf(out, size, "%s \"%s\"%s",
                 item->scope == SCOPE_API ? "API command" : digest_scope_names[item->scope],
                 item->name, novelty);
    }
}

void diff_failure_message(const struct diff *diff, const struct compare_item *item, char *out,
                          size_t size)
{
    const struct compare_counter *c = &diff->comparison.counters[item->counter];
    char subject[300], change[160];
    diff_subject(item, subject, sizeof subject);
    change_text(&item->base, &item->new_value, item->percent, change, sizeof change);
    const struct gate_rule *rule = item->broken;
    snprintf(out, size, "%s (%s) in %s: %s breaks %s%s%s", c->symbol,
             counter_exactness_name(c->exactness), subject, change, rule->text,
             rule->why ? ": " : "", rule->why ? rule->why : "");
}

void diff_rules_text(const struct gate_rules *rules, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < rules->count + rules->default_count; i++) {
        bool by_default = i >= rules->count;
        const struct gate_rule *r =
            by_default ? &rules->defaults[i - rules->count] : &rules->rules[i];
        bool first_default = by_default && i == rules->count;
        int n = snprintf(out + used, size - used, "%s%s%s", used ? ", " : "",
                         first_default ? "defaults " : "", r->text);
        if (n < 0 || (size_t)n >= size - used)
            return;
        used += (size_t)n;
    }
    if (!used)
        snprintf(out, size, "none");
}

/* Items ranked for the movers: largest |change| first, then in digest
 * order (the index order). */
static int larger_change(const void *a, const void *b, void *items)
{
    const struct compare_item *ranked = items;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = fabs(ranked[i].change), y = fabs(ranked[j].change);
    if (x != y)
        return x > y ? -1 : 1;
    return (i > j) - (i < j);
}

size_t diff_movers(const struct diff *diff, size_t counter, size_t *indices, size_t most)
{
    const struct run_comparison *c = &diff->comparison;
    size_t *found = malloc((c->item_count ? c->item_count : 1) * sizeof *found);
    if (!found)
        return 0;
    size_t n = 0;
    for (size_t i = counter; i < c->item_count; i += c->counter_count) {
        const struct compare_item *item = &c->items[i];
        bool group =
            item->scope == SCOPE_LABEL || item->scope == SCOPE_PIPELINE || item->scope == SCOPE_API;
        if (group && item->change != 0)
            found[n++] = i;
    }
    qsort_r(found, n, sizeof *found, larger_change, c->items);
    if (n > most)
        n = most;
    memcpy(indices, found, n * sizeof *indices);
    free(found);
    return n;
}
