/*
 * The driver backend's catalogue for what a device can measure: the
 * generated catalogue less the counters whose measurement is missing. Each
 * distinct mask is built once and kept for the life of the process, as
 * catalogues are; empty groups, metric sets and concurrent groups go too,
 * and every index is renumbered so the result is a catalogue like any other.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"

struct subset {
    struct subset *next;
    uint32_t measurable;
    struct tally_catalogue catalogue;
};

static pthread_mutex_t subsets_lock = PTHREAD_MUTEX_INITIALIZER;
static struct subset *subsets;

static bool offered(uint32_t counter, uint32_t measurable)
{
    uint32_t needs = driver_counter_measures[counter];
    return needs == 0 || (needs & measurable) == needs;
}

/* Old -> new index of kept counters (UINT32_MAX: dropped), and raw slots alike. */
struct renumbering {
    uint32_t counter[DRIVER_COUNTER_COUNT];
    uint32_t raw[DRIVER_RAW_COUNT];
    uint32_t counters, raws;
};

static void renumber(const struct tally_catalogue *full, uint32_t measurable, struct renumbering *r)
{
    memset(r, 0, sizeof(*r));
    for (uint32_t i = 0; i < full->counter_count; i++) {
        const tally_counter_info *c = &full->counters[i];
        /* Derived counters are kept only with every raw counter they read. */
        bool keep = offered(i, measurable);
        const struct tally_expr *e = &full->expressions[i];
        for (uint32_t k = 0; keep && k < e->op_count; k++)
            if (e->ops[k].opcode == TALLY_EXPR_RAW)
                keep = offered(full->raw_counters[e->ops[k].arg], measurable);
        r->counter[i] = keep ? r->counters++ : UINT32_MAX;
        if (c->raw_index != TALLY_NOT_RAW)
            r->raw[c->raw_index] = keep ? r->raws++ : UINT32_MAX;
    }
}

/* Members of a list that survive, renumbered; the count goes to *count. */
static uint32_t *kept(const uint32_t *members, uint32_t n, const uint32_t *map, uint32_t *count)
{
    uint32_t *out = calloc(n ? n : 1, sizeof(*out));
    *count = 0;
    for (uint32_t i = 0; out && i < n; i++)
        if (map[members[i]] != UINT32_MAX)
            out[(*count)++] = map[members[i]];
    return out;
}

static bool subset_groups(const struct tally_catalogue *full, const struct renumbering *r,
                          struct tally_catalogue *cat, uint32_t *group_map,
                          tally_counter_info *counters)
{
    tally_group_info *groups = calloc(full->group_count, sizeof(*groups));
    if (!groups)
        return false;
    cat->groups = groups;
    for (uint32_t g = 0; g < full->group_count; g++) {
        tally_group_info info = full->groups[g];
        uint32_t *members =
            kept(info.counters, info.counter_count, r->counter, &info.counter_count);
        if (!members)
            return false;
        group_map[g] = info.counter_count ? cat->group_count : UINT32_MAX;
        if (!info.counter_count) {
            free(members);
            continue;
        }
        info.index = cat->group_count;
        info.counters = members;
        groups[cat->group_count++] = info;
    }
    for (uint32_t i = 0; i < cat->counter_count; i++)
        counters[i].group = group_map[counters[i].group];
    return true;
}

static bool subset_counters(const struct tally_catalogue *full, const struct renumbering *r,
                            struct tally_catalogue *cat)
{
    tally_counter_info *counters = calloc(r->counters ? r->counters : 1, sizeof(*counters));
    struct tally_expr *expressions = calloc(r->counters ? r->counters : 1, sizeof(*expressions));
    uint32_t *raw = calloc(r->raws ? r->raws : 1, sizeof(*raw));
    cat->counters = counters;
    cat->expressions = expressions;
    cat->raw_counters = raw;
    if (!counters || !expressions || !raw)
        return false;
    for (uint32_t i = 0; i < full->counter_count; i++) {
        uint32_t n = r->counter[i];
        if (n == UINT32_MAX)
            continue;
        counters[n] = full->counters[i];
        counters[n].index = n;
        if (counters[n].raw_index != TALLY_NOT_RAW) {
            counters[n].raw_index = r->raw[counters[n].raw_index];
            raw[counters[n].raw_index] = n;
        }
        const struct tally_expr *e = &full->expressions[i];
        struct tally_expr_op *ops = calloc(e->op_count ? e->op_count : 1, sizeof(*ops));
        if (!ops)
            return false;
        for (uint32_t k = 0; k < e->op_count; k++) {
            ops[k] = e->ops[k];
            if (ops[k].opcode == TALLY_EXPR_RAW)
                ops[k].arg = r->raw[ops[k].arg];
        }
        expressions[n] = (struct tally_expr){e->op_count, ops};
    }
    cat->counter_count = r->counters;
    cat->raw_count = r->raws;
    uint32_t group_map[64];
    return full->group_count <= 64 && subset_groups(full, r, cat, group_map, counters);
}

static bool subset_metric_sets(const struct tally_catalogue *full, const struct renumbering *r,
                               struct tally_catalogue *cat)
{
    uint32_t set_map[64], cgroup_map[64];
    if (full->metric_set_count > 64 || full->concurrent_group_count > 64)
        return false;
    tally_metric_set_info *sets = calloc(full->metric_set_count + 1, sizeof(*sets));
    tally_concurrent_group_info *cgroups =
        calloc(full->concurrent_group_count + 1, sizeof(*cgroups));
    cat->metric_sets = sets;
    cat->concurrent_groups = cgroups;
    if (!sets || !cgroups)
        return false;
    for (uint32_t s = 0; s < full->metric_set_count; s++) {
        tally_metric_set_info info = full->metric_sets[s];
        uint32_t *members =
            kept(info.counters, info.counter_count, r->counter, &info.counter_count);
        if (!members)
            return false;
        set_map[s] = info.counter_count ? cat->metric_set_count : UINT32_MAX;
        if (!info.counter_count) {
            free(members);
            continue;
        }
        info.index = cat->metric_set_count;
        info.counters = members;
        sets[cat->metric_set_count++] = info;
    }
    for (uint32_t g = 0; g < full->concurrent_group_count; g++) {
        tally_concurrent_group_info info = full->concurrent_groups[g];
        uint32_t *members =
            kept(info.metric_sets, info.metric_set_count, set_map, &info.metric_set_count);
        if (!members)
            return false;
        cgroup_map[g] = info.metric_set_count ? cat->concurrent_group_count : UINT32_MAX;
        if (!info.metric_set_count) {
            free(members);
            continue;
        }
        info.index = cat->concurrent_group_count;
        info.metric_sets = members;
        cgroups[cat->concurrent_group_count++] = info;
    }
    for (uint32_t s = 0; s < cat->metric_set_count; s++)
        sets[s].concurrent_group = cgroup_map[sets[s].concurrent_group];
    return true;
}

static const struct tally_catalogue *build(uint32_t measurable)
{
    const struct tally_catalogue *full = &driver_catalogue;
    struct subset *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    struct renumbering r;
    renumber(full, measurable, &r);
    struct tally_catalogue *cat = &s->catalogue;
    *cat = (struct tally_catalogue){
        .backend = full->backend,
        .constant_count = full->constant_count,
        .constants = full->constants,
        .constant_parameters = full->constant_parameters,
        .constant_scales = full->constant_scales,
        .unit_count = 0, /* the driver measures no unit's busy time */
        .units = full->units,
        .parameter_count = full->parameter_count,
        .parameters = full->parameters,
    };
    s->measurable = measurable;
    /* What a failed build allocated is the process's, like every catalogue. */
    if (!subset_counters(full, &r, cat) || !subset_metric_sets(full, &r, cat))
        return NULL;
    s->next = subsets;
    subsets = s;
    return cat;
}

const struct tally_catalogue *driver_catalogue_for(uint32_t measurable)
{
    if (measurable == 0)
        return &driver_catalogue;
    pthread_mutex_lock(&subsets_lock);
    const struct tally_catalogue *cat = NULL;
    for (struct subset *s = subsets; s && !cat; s = s->next)
        if (s->measurable == measurable)
            cat = &s->catalogue;
    if (!cat)
        cat = build(measurable);
    pthread_mutex_unlock(&subsets_lock);
    return cat;
}
