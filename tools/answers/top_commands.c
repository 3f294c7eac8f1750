/* Owns the heap of the N most expensive commands (top_commands.h). */
#include "top_commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct top_commands {
    size_t limit, count;
    uint64_t offered;
    struct top_command *heap; /* a min-heap: the root is the first to go */
};

top_commands *top_commands_create(size_t n)
{
    top_commands *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->limit = n;
    t->heap = calloc(n ? n : 1, sizeof *t->heap);
    if (!t->heap) {
        free(t);
        return NULL;
    }
    return t;
}

static void release(struct top_command *c)
{
    free(c->kind);
    free(c->api_name);
    free(c->label);
    free(c->pipeline);
}

void top_commands_free(top_commands *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->count; i++)
        release(&t->heap[i]);
    free(t->heap);
    free(t);
}

/* a ranks below b: a smaller value, or the same value and came later. */
static bool ranks_below(const struct top_command *a, const struct top_command *b)
{
    return a->value < b->value || (a->value == b->value && a->order > b->order);
}

static void swap(struct top_command *a, struct top_command *b)
{
    struct top_command t = *a;
    *a = *b;
    *b = t;
}

static void sift_up(struct top_command *heap, size_t i)
{
    while (i > 0 && ranks_below(&heap[i], &heap[(i - 1) / 2])) {
        swap(&heap[i], &heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static void sift_down(struct top_command *heap, size_t count, size_t i)
{
    for (;;) {
        size_t low = i, l = 2 * i + 1, r = 2 * i + 2;
        if (l < count && ranks_below(&heap[l], &heap[low]))
            low = l;
        if (r < count && ranks_below(&heap[r], &heap[low]))
            low = r;
        if (low == i)
            return;
        swap(&heap[i], &heap[low]);
        i = low;
    }
}

bool top_commands_offer(top_commands *t, double value, const double *shown, size_t report,
                        const struct report_row *row, uint64_t matched_sequence)
{
    uint64_t order = t->offered++;
    if (t->limit == 0 || isnan(value))
        return true;
    struct top_command candidate = {.value = value, .order = order};
    if (t->count == t->limit && !ranks_below(&t->heap[0], &candidate))
        return true;
    memcpy(candidate.shown, shown, sizeof candidate.shown);
    candidate.matched_sequence = matched_sequence;
    candidate.report = report;
    candidate.frame = row->frame;
    candidate.sequence = row->sequence;
    candidate.kind = strdup(row->identity[REPORT_KIND]);
    candidate.api_name = strdup(row->identity[REPORT_API_NAME]);
    candidate.label = strdup(row->identity[REPORT_LABEL]);
    candidate.pipeline = strdup(row->pipeline);
    if (!candidate.kind || !candidate.api_name || !candidate.label || !candidate.pipeline) {
        release(&candidate);
        return false;
    }
    if (t->count < t->limit) {
        t->heap[t->count] = candidate;
        sift_up(t->heap, t->count++);
    } else {
        release(&t->heap[0]);
        t->heap[0] = candidate;
        sift_down(t->heap, t->count, 0);
    }
    return true;
}

static int largest_first(const void *a, const void *b)
{
    const struct top_command *x = a, *y = b;
    if (ranks_below(y, x))
        return -1;
    return ranks_below(x, y) ? 1 : 0;
}

size_t top_commands_sorted(top_commands *t, const struct top_command **out)
{
    qsort(t->heap, t->count, sizeof *t->heap, largest_first);
    *out = t->heap;
    return t->count;
}
