/*
 * Owns tally diff's JSON: the verdict, every counter's totals, every
 * change of a frame or group, every failure, and "benchmarks", the new
 * run's totals in the shape benchmark trackers take
 * ([{"name","unit","value"}], github-action-benchmark's
 * customSmallerIsBetter).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>

#include "diff.h"
#include "value_text.h"

static void add(json_object *o, const char *key, json_object *value)
{
    json_object_object_add(o, key, value);
}

static json_object *number(const struct counter_value *v)
{
    if (!v->decimal)
        return json_object_new_int64(v->integer);
    if (!isfinite(v->real))
        return NULL;
    char text[64];
    counter_value_text(v, text, sizeof text);
    return json_object_new_double_s(v->real, text);
}

static json_object *real(double value)
{
    return isfinite(value) ? json_object_new_double(value) : NULL;
}

static json_object *side_json(const struct diff_side *side)
{
    const struct run_digest *g = side->digest;
    json_object *o = json_object_new_object();
    add(o, "name", json_object_new_string(side->name));
    add(o, "baseline", json_object_new_boolean(side->baseline));
    add(o, "backend", json_object_new_string(g->backend));
    add(o, "device", json_object_new_string(g->device));
    add(o, "clock", json_object_new_string(g->clock));
    add(o, "commands",
        json_object_new_int64(
            g->row_count && g->rows[0].scope == SCOPE_TOTAL ? (int64_t)g->rows[0].commands : 0));
    return o;
}

/* A change's common members. */
static json_object *item_json(const struct diff *d, const struct compare_item *item)
{
    const struct compare_counter *c = &d->comparison.counters[item->counter];
    json_object *o = json_object_new_object();
    add(o, "scope", json_object_new_string(digest_scope_names[item->scope]));
    add(o, "name", json_object_new_string(item->name));
    add(o, "counter", json_object_new_string(c->symbol));
    add(o, "unit", json_object_new_string(c->unit));
    add(o, "exactness", json_object_new_string(counter_exactness_name(c->exactness)));
    add(o, "base", number(&item->base));
    add(o, "new", number(&item->new_value));
    add(o, "in_base", json_object_new_boolean(item->in_base));
    add(o, "in_new", json_object_new_boolean(item->in_new));
    add(o, "change", real(item->change));
    add(o, "change_percent", real(item->percent));
    add(o, "gated", json_object_new_boolean(item->gated));
    add(o, "broken_rule", item->broken ? json_object_new_string(item->broken->text) : NULL);
    return o;
}

static json_object *matching_json(const struct command_matching *m)
{
    json_object *o = json_object_new_object();
    add(o, "matched", json_object_new_int64((int64_t)m->matched));
    add(o, "changed", json_object_new_int64((int64_t)m->changed));
    add(o, "base_only", json_object_new_int64((int64_t)m->base_only));
    add(o, "new_only", json_object_new_int64((int64_t)m->new_only));
    add(o, "diverged_frames", json_object_new_int64((int64_t)m->diverged_frames));
    add(o, "first_divergence", m->diverged ? json_object_new_string(m->first_divergence) : NULL);
    return o;
}

bool diff_print_json(const struct diff *d, FILE *out)
{
    const struct run_comparison *c = &d->comparison;
    json_object *root = json_object_new_object();
    add(root, "schema", json_object_new_string("tally diff 1"));
    add(root, "passed", json_object_new_boolean(c->broken_count == 0));
    add(root, "checks", json_object_new_int64((int64_t)c->gated_count));
    add(root, "broken", json_object_new_int64((int64_t)c->broken_count));
    char rules[600];
    diff_rules_text(d->rules, rules, sizeof rules);
    add(root, "rules", json_object_new_string(rules));
    add(root, "base", side_json(&d->base));
    add(root, "new", side_json(&d->new_run));
    if (d->matched)
        add(root, "matching", matching_json(&d->matching));
    json_object *totals = json_object_new_array(), *changes = json_object_new_array(),
                *failures = json_object_new_array(), *benchmarks = json_object_new_array();
    for (size_t i = 0; i < c->item_count; i++) {
        const struct compare_item *item = &c->items[i];
        if (item->scope == SCOPE_TOTAL) {
            json_object_array_add(totals, item_json(d, item));
            const struct compare_counter *counter = &c->counters[item->counter];
            json_object *b = json_object_new_object();
            add(b, "name", json_object_new_string(counter->symbol));
            add(b, "unit", json_object_new_string(counter->unit));
            add(b, "value", number(&item->new_value));
            json_object_array_add(benchmarks, b);
        } else if (item->change != 0) {
            json_object_array_add(changes, item_json(d, item));
        }
        if (item->broken) {
            json_object *f = item_json(d, item);
            char message[800];
            diff_failure_message(d, item, message, sizeof message);
            add(f, "message", json_object_new_string(message));
            json_object_array_add(failures, f);
        }
    }
    add(root, "totals", totals);
    add(root, "changes", changes);
    add(root, "failures", failures);
    add(root, "benchmarks", benchmarks);
    const char *text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    bool ok = text && fputs(text, out) >= 0 && fputc('\n', out) != EOF;
    json_object_put(root);
    return ok;
}
