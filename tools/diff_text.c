/* Owns tally diff's output for people: a terminal report or Markdown for
 * a pull-request comment (diff.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "text_table.h"
#include "value_text.h"

static uint64_t frames_of(const struct run_digest *d)
{
    uint64_t frames = 0;
    for (size_t i = 0; i < d->row_count; i++)
        frames += d->rows[i].scope == SCOPE_FRAME;
    return frames;
}

static uint64_t commands_of(const struct run_digest *d)
{
    return d->row_count && d->rows[0].scope == SCOPE_TOTAL ? d->rows[0].commands : 0;
}

static void print_heading(const struct diff *d, FILE *out, enum table_style style)
{
    text_table *t = text_table_new("", 7);
    if (!t)
        return;
    const char *headings[] = {"", "run", "backend", "device", "clock", "commands", "frames"};
    for (size_t c = 0; c < 7; c++)
        text_table_heading(t, c, headings[c], c >= 5);
    const struct diff_side *sides[] = {&d->base, &d->new_run};
    for (int s = 0; s < 2; s++) {
        const struct run_digest *g = sides[s]->digest;
        text_table_row(t);
        text_table_cell(t, "%s", s ? "new" : "base");
        text_table_cell(t, "%s%s", sides[s]->name, sides[s]->baseline ? " (baseline)" : "");
        text_table_cell(t, "%s", g->backend);
        text_table_cell(t, "%s", g->device);
        text_table_cell(t, "%s", g->clock);
        text_table_cell(t, "%" PRIu64, commands_of(g));
        text_table_cell(t, "%" PRIu64, frames_of(g));
    }
    const struct run_digest *b = d->base.digest, *n = d->new_run.digest;
    if (strcmp(b->backend, n->backend) || strcmp(b->clock, n->clock))
        text_table_note(t, "note: the runs differ in backend or clock; their counters may "
                           "differ for that alone");
    text_table_print(t, out, style);
    text_table_free(t);
}

static void print_matching(const struct diff *d, FILE *out, bool markdown)
{
    if (!d->matched)
        return;
    const struct command_matching *m = &d->matching;
    fprintf(out,
            "%scommands matched by frame and position: %" PRIu64 " (%" PRIu64
            " with a changed value); unmatched: %" PRIu64 " in base, %" PRIu64 " in new\n",
            markdown ? "" : "  ", m->matched, m->changed, m->base_only, m->new_only);
    if (m->diverged)
        fprintf(out,
                "%scommand streams differ in %" PRIu64 " frame(s), first at %s; those "
                "frames are compared by label, pipeline and API command\n",
                markdown ? "\n" : "  ", m->diverged_frames, m->first_divergence);
    fputc('\n', out);
}

static const char *verdict(const struct compare_item *item)
{
    if (item->broken)
        return "FAIL";
    return item->gated ? "ok" : "not gated";
}

static void print_totals(const struct diff *d, FILE *out, enum table_style style)
{
    const struct run_comparison *c = &d->comparison;
    text_table *t = text_table_new("totals", 5);
    if (!t)
        return;
    const char *headings[] = {"counter", "exactness", "base -> new", "unit", "gate"};
    for (size_t i = 0; i < 5; i++)
        text_table_heading(t, i, headings[i], false);
    for (size_t k = 0; k < c->counter_count; k++) {
        const struct compare_item *item = run_comparison_total(c, k);
        const struct compare_counter *counter = &c->counters[k];
        if (!item)
            break;
        char change[160];
        change_text(&item->base, &item->new_value, item->percent, change, sizeof change);
        text_table_row(t);
        text_table_cell(t, "%s%s", counter->symbol, counter->averaged ? " (mean)" : "");
        text_table_cell(t, "%s", counter_exactness_name(counter->exactness));
        if (counter->base_index < 0 && k)
            text_table_cell(t, "only in new: %s", change);
        else if (counter->new_index < 0 && k)
            text_table_cell(t, "only in base: %s", change);
        else
            text_table_cell(t, "%s", change);
        text_table_cell(t, "%s", counter->unit);
        text_table_cell(t, "%s", verdict(item));
    }
    text_table_print(t, out, style);
    text_table_free(t);
}

static void print_group_movers(const struct diff *d, FILE *out, enum table_style style)
{
    const struct run_comparison *c = &d->comparison;
    size_t *indices = malloc((d->top ? d->top : 1) * sizeof *indices);
    char title[120];
    snprintf(title, sizeof title,
             "biggest movers by label, pipeline and API command (%zu a counter)", d->top);
    text_table *t = indices ? text_table_new(title, 4) : NULL;
    if (!t) {
        free(indices);
        return;
    }
    const char *headings[] = {"counter", "where", "base -> new", "gate"};
    for (size_t i = 0; i < 4; i++)
        text_table_heading(t, i, headings[i], false);
    for (size_t k = 0; k < c->counter_count; k++) {
        size_t n = diff_movers(d, k, indices, d->top);
        for (size_t i = 0; i < n; i++) {
            const struct compare_item *item = &c->items[indices[i]];
            char subject[300], change[160];
            diff_subject(item, subject, sizeof subject);
            change_text(&item->base, &item->new_value, item->percent, change, sizeof change);
            text_table_row(t);
            text_table_cell(t, "%s", c->counters[k].symbol);
            text_table_cell(t, "%s", subject);
            text_table_cell(t, "%s", change);
            text_table_cell(t, "%s", verdict(item));
        }
    }
    text_table_print(t, out, style);
    text_table_free(t);
    free(indices);
}

static void print_command_movers(const struct diff *d, FILE *out, enum table_style style)
{
    if (!d->matched)
        return;
    const struct command_matching *m = &d->matching;
    char title[120];
    snprintf(title, sizeof title, "biggest movers among matched commands (%zu a counter)", d->top);
    text_table *t = text_table_new(title, 4);
    if (!t)
        return;
    const char *headings[] = {"counter", "command", "label", "base -> new"};
    for (size_t i = 0; i < 4; i++)
        text_table_heading(t, i, headings[i], false);
    for (size_t p = 0; p < m->counter_count; p++) {
        const struct top_command *top;
        size_t n = top_commands_sorted(m->movers[p], &top);
        for (size_t i = 0; i < n; i++) {
            struct counter_value b = {.real = top[i].shown[MATCH_BASE], .decimal = true};
            struct counter_value v = {.real = top[i].shown[MATCH_NEW], .decimal = true};
            char bt[48], nt[48], pt[32], where[80];
            value_text(b.real, false, bt, sizeof bt);
            value_text(v.real, false, nt, sizeof nt);
            percent_text(gate_change_percent(&b, &v), pt, sizeof pt);
            if (top[i].matched_sequence != top[i].sequence)
                snprintf(where, sizeof where, "frame %" PRIu64 " #%" PRIu64 " -> #%" PRIu64,
                         top[i].frame, top[i].sequence, top[i].matched_sequence);
            else
                snprintf(where, sizeof where, "frame %" PRIu64 " #%" PRIu64, top[i].frame,
                         top[i].sequence);
            text_table_row(t);
            text_table_cell(t, "%s", m->symbols[p]);
            text_table_cell(t, "%s %s%s%s", where, top[i].api_name, top[i].pipeline[0] ? " " : "",
                            top[i].pipeline);
            text_table_cell(t, "%s", top[i].label);
            text_table_cell(t, "%s -> %s (%s)", bt, nt, pt);
        }
    }
    text_table_print(t, out, style);
    text_table_free(t);
}

static void print_gate(const struct diff *d, FILE *out, bool markdown)
{
    const struct run_comparison *c = &d->comparison;
    char rules[600];
    diff_rules_text(d->rules, rules, sizeof rules);
    if (!c->broken_count) {
        fprintf(out, "%sgate: passed, %zu checks, no rule broken (rules: %s)%s\n",
                markdown ? "**" : "", c->gated_count, rules, markdown ? "**" : "");
        return;
    }
    fprintf(out, "%sgate: FAILED, %zu of %zu checks broke a rule (rules: %s)%s\n%s",
            markdown ? "**" : "", c->broken_count, c->gated_count, rules, markdown ? "**" : "",
            markdown ? "\n" : "");
    /* The most specific first: a label or pipeline says where to look. */
    static const enum digest_scope order[] = {SCOPE_LABEL, SCOPE_PIPELINE, SCOPE_API, SCOPE_TOTAL,
                                              SCOPE_FRAME};
    size_t shown = 0;
    for (size_t s = 0; s < SCOPE_COUNT; s++) {
        for (size_t i = 0; i < c->item_count && shown < DIFF_FAILURES_SHOWN; i++) {
            if (!c->items[i].broken || c->items[i].scope != order[s])
                continue;
            char message[800];
            diff_failure_message(d, &c->items[i], message, sizeof message);
            fprintf(out, "%s%s\n", markdown ? "- " : "  FAIL ", message);
            shown++;
        }
    }
    if (c->broken_count > shown)
        fprintf(out, "%sand %zu more (--junit FILE or --format json lists every one)\n",
                markdown ? "- " : "  ", c->broken_count - shown);
}

bool diff_print_text(const struct diff *d, FILE *out, bool markdown)
{
    enum table_style style = markdown ? TABLE_MARKDOWN : TABLE_TERMINAL;
    if (markdown)
        fprintf(out, "### tally diff: %s\n\n", d->comparison.broken_count ? "FAILED" : "passed");
    print_heading(d, out, style);
    print_matching(d, out, markdown);
    print_totals(d, out, style);
    print_group_movers(d, out, style);
    print_command_movers(d, out, style);
    print_gate(d, out, markdown);
    return !ferror(out);
}
