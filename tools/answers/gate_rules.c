/* Owns the grammar of --fail-on rules and which rule a change breaks
 * (gate_rules.h). */
#include "gate_rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char gate_commands_counter[] = "commands";

static const unsigned every_scope = (1u << SCOPE_COUNT) - 1;

static bool parse_scopes(const char *text, size_t length, unsigned *scopes, char *error,
                         size_t size)
{
    *scopes = 0;
    while (length) {
        size_t n = 0;
        while (n < length && text[n] != ',')
            n++;
        int found = -1;
        for (int s = 0; s < SCOPE_COUNT; s++)
            if (strlen(digest_scope_names[s]) == n && strncmp(text, digest_scope_names[s], n) == 0)
                found = s;
        if (found < 0) {
            snprintf(error, size,
                     "unknown scope \"%.*s\" (total, frame, label, pipeline or api_name)", (int)n,
                     text);
            return false;
        }
        *scopes |= 1u << found;
        text += n;
        length -= n;
        if (length) { /* the comma */
            text++;
            length--;
        }
    }
    return true;
}

static bool parse_selector(const char *text, size_t length, struct gate_rule *rule, char *error,
                           size_t size)
{
    if (length == 0 || length >= sizeof rule->symbol) {
        snprintf(error, size, "a rule names a counter, a class of counters or *");
        return false;
    }
    memcpy(rule->symbol, text, length);
    rule->symbol[length] = '\0';
    if (strcmp(rule->symbol, "*") == 0)
        rule->selector = SELECT_ALL;
    else if (counter_exactness_parse(rule->symbol, &rule->exactness))
        rule->selector = SELECT_EXACTNESS;
    else
        rule->selector = SELECT_COUNTER;
    return true;
}

static bool parse_threshold(const char *text, struct gate_rule *rule, char *error, size_t size)
{
    rule->signed_threshold = *text == '+' || *text == '-';
    char *end;
    rule->threshold = strtod(text, &end);
    rule->percent = *end == '%';
    end += rule->percent;
    if (end == text || *end != '\0' || !isfinite(rule->threshold) ||
        (!rule->signed_threshold && rule->threshold < 0)) {
        snprintf(error, size,
                 "\"%s\": the threshold must be a number, with %% for a change "
                 "relative to the base",
                 text);
        return false;
    }
    if (rule->below && !rule->signed_threshold) {
        snprintf(error, size, "'<' needs a signed threshold, as in GpuTime<-5%%");
        return false;
    }
    return true;
}

bool gate_rule_parse(const char *text, struct gate_rule *rule, char *error, size_t size)
{
    memset(rule, 0, sizeof *rule);
    char message[160];
    bool ok = strlen(text) < sizeof rule->text;
    if (!ok)
        snprintf(message, sizeof message, "too long");
    if (ok)
        snprintf(rule->text, sizeof rule->text, "%s", text);
    const char *op = ok ? strpbrk(text, "<>") : NULL;
    if (ok && !op) {
        snprintf(message, sizeof message, "no '>' or '<' (e.g. IaVertices>0%%, GpuTime>+5%%)");
        ok = false;
    }
    const char *colon = op ? memchr(text, ':', (size_t)(op - text)) : NULL;
    rule->scopes = every_scope;
    if (ok && colon)
        ok = parse_scopes(text, (size_t)(colon - text), &rule->scopes, message, sizeof message);
    const char *selector = colon ? colon + 1 : text;
    if (ok)
        ok = parse_selector(selector, (size_t)(op - selector), rule, message, sizeof message);
    if (ok) {
        rule->below = *op == '<';
        ok = parse_threshold(op + 1, rule, message, sizeof message);
    }
    if (!ok)
        snprintf(error, size, "bad rule \"%s\": %s", text, message);
    return ok;
}

void gate_rules_init(struct gate_rules *r, bool with_defaults, double tolerance)
{
    memset(r, 0, sizeof *r);
    if (!with_defaults)
        return;
    static const char *const modeled_why = "modeled counters must stay within the tolerance";
    struct gate_rule *d = r->defaults;
    d[0] = (struct gate_rule){.why = "exact counters must not change",
                              .scopes = every_scope,
                              .selector = SELECT_EXACTNESS,
                              .exactness = EXACTNESS_EXACT};
    snprintf(d[0].text, sizeof d[0].text, "exact>0");
    enum counter_exactness tolerant[] = {EXACTNESS_CONDITIONAL, EXACTNESS_MODELED,
                                         EXACTNESS_UNKNOWN};
    for (size_t i = 0; i < 3; i++) {
        d[1 + i] = (struct gate_rule){.why = modeled_why,
                                      .scopes = every_scope,
                                      .selector = SELECT_EXACTNESS,
                                      .exactness = tolerant[i],
                                      .percent = true,
                                      .threshold = tolerance};
        snprintf(d[1 + i].text, sizeof d[1 + i].text, "%s>%g%%",
                 counter_exactness_name(tolerant[i]), tolerance);
    }
    r->default_count = 4;
}

bool gate_rules_add(struct gate_rules *r, const struct gate_rule *rule)
{
    struct gate_rule *rules = realloc(r->rules, (r->count + 1) * sizeof *rules);
    if (!rules)
        return false;
    r->rules = rules;
    rules[r->count++] = *rule;
    return true;
}

void gate_rules_free(struct gate_rules *r)
{
    free(r->rules);
    memset(r, 0, sizeof *r);
}

static bool selects(const struct gate_rule *rule, const char *symbol,
                    enum counter_exactness exactness)
{
    switch (rule->selector) {
    case SELECT_ALL: return true;
    case SELECT_EXACTNESS: return rule->exactness == exactness;
    default: return strcmp(rule->symbol, symbol) == 0;
    }
}

double gate_change(const struct counter_value *base, const struct counter_value *new_value)
{
    if (!base->decimal && !new_value->decimal)
        return (double)(new_value->integer - base->integer);
    double b = counter_value_double(base), n = counter_value_double(new_value);
    if (isnan(b) && isnan(n))
        return 0;
    return n - b;
}

double gate_change_percent(const struct counter_value *base, const struct counter_value *new_value)
{
    double change = gate_change(base, new_value);
    if (change == 0)
        return 0;
    double b = fabs(counter_value_double(base));
    if (b == 0 || isnan(change))
        return change > 0 || isnan(change) ? INFINITY : -INFINITY;
    return 100 * change / b;
}

static bool broken(const struct gate_rule *rule, const struct counter_value *base,
                   const struct counter_value *new_value)
{
    double change =
        rule->percent ? gate_change_percent(base, new_value) : gate_change(base, new_value);
    if (isnan(change))
        change = INFINITY;
    if (!rule->signed_threshold)
        return fabs(change) > rule->threshold;
    return rule->below ? change < rule->threshold : change > rule->threshold;
}

const struct gate_rule *gate_rules_check(const struct gate_rules *r, const char *symbol,
                                         enum counter_exactness exactness, enum digest_scope scope,
                                         const struct counter_value *base,
                                         const struct counter_value *new_value, bool *gated)
{
    bool named = false;
    *gated = false;
    const struct gate_rule *first = NULL;
    for (size_t i = 0; i < r->count; i++) {
        if (!selects(&r->rules[i], symbol, exactness))
            continue;
        named = true;
        if (!(r->rules[i].scopes & (1u << scope)))
            continue;
        *gated = true;
        if (!first && broken(&r->rules[i], base, new_value))
            first = &r->rules[i];
    }
    if (named)
        return first;
    for (size_t i = 0; i < r->default_count; i++) {
        if (!selects(&r->defaults[i], symbol, exactness))
            continue;
        *gated = true;
        if (broken(&r->defaults[i], base, new_value))
            return &r->defaults[i];
    }
    return NULL;
}
