/* Owns the lockstep pairing of two reports' commands (command_match.h). */
#include "command_match.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate_rules.h"

/* One report being read: its current row, if any. */
struct side {
    report_reader *reader;
    run_aggregate *aggregate;
    int report;
    struct report_row row;
    bool have;
};

static bool advance(struct side *s, char *error, size_t size)
{
    int got = report_reader_next(s->reader, &s->row, error, size);
    if (got < 0)
        return false;
    s->have = got > 0;
    return !s->have || run_aggregate_add_row(s->aggregate, s->report, &s->row, error, size);
}

static bool same_command(const struct report_row *a, const struct report_row *b)
{
    static const enum report_identity compared[] = {REPORT_KIND, REPORT_API_NAME, REPORT_LABEL};
    if (a->frame != b->frame || strcmp(a->pipeline, b->pipeline) != 0)
        return false;
    for (size_t i = 0; i < sizeof compared / sizeof *compared; i++)
        if (strcmp(a->identity[compared[i]], b->identity[compared[i]]) != 0)
            return false;
    return true;
}

/* The counters both reports have, each with a heap of movers. */
static bool pair_counters(struct command_matching *m, size_t top, const report_reader *base,
                          const report_reader *new_run, int **base_index, int **new_index)
{
    size_t n = report_reader_counter_count(base);
    *base_index = calloc(n ? n : 1, sizeof **base_index);
    *new_index = calloc(n ? n : 1, sizeof **new_index);
    m->symbols = calloc(n ? n : 1, sizeof *m->symbols);
    m->movers = calloc(n ? n : 1, sizeof *m->movers);
    if (!*base_index || !*new_index || !m->symbols || !m->movers)
        return false;
    for (size_t i = 0; i < n; i++) {
        const char *symbol = report_reader_counter(base, i)->symbol;
        for (size_t j = 0; j < report_reader_counter_count(new_run); j++) {
            if (strcmp(report_reader_counter(new_run, j)->symbol, symbol) != 0)
                continue;
            size_t p = m->counter_count;
            m->symbols[p] = strdup(symbol);
            m->movers[p] = top_commands_create(top);
            if (!m->symbols[p] || !m->movers[p]) {
                free(m->symbols[p]);
                top_commands_free(m->movers[p]);
                return false;
            }
            (*base_index)[p] = (int)i;
            (*new_index)[p] = (int)j;
            m->counter_count++;
            break;
        }
    }
    return true;
}

static bool match(struct command_matching *m, const int *base_index, const int *new_index,
                  const struct side *base, const struct side *new_run)
{
    m->matched++;
    bool changed = false;
    for (size_t p = 0; p < m->counter_count; p++) {
        const struct counter_value *b = &base->row.values[base_index[p]];
        const struct counter_value *n = &new_run->row.values[new_index[p]];
        double change = gate_change(b, n);
        if (change == 0)
            continue;
        changed = true;
        double shown[TOP_SHOWN] = {[MATCH_BASE] = counter_value_double(b),
                                   [MATCH_NEW] = counter_value_double(n),
                                   [MATCH_CHANGE] = change};
        if (!top_commands_offer(m->movers[p], fabs(change), shown, 0, &base->row,
                                new_run->row.sequence))
            return false;
    }
    m->changed += changed;
    return true;
}

static void describe(const struct report_row *row, char *out, size_t size)
{
    snprintf(out, size, "#%llu %s \"%.60s\"%s%.60s", (unsigned long long)row->sequence,
             row->identity[REPORT_API_NAME], row->identity[REPORT_LABEL],
             row->pipeline[0] ? " pipeline " : "", row->pipeline);
}

static void note_divergence(struct command_matching *m, const struct side *base,
                            const struct side *new_run, uint64_t frame)
{
    m->diverged_frames++;
    if (m->diverged)
        return;
    m->diverged = true;
    char b[140], n[140];
    describe(&base->row, b, sizeof b);
    describe(&new_run->row, n, sizeof n);
    snprintf(m->first_divergence, sizeof m->first_divergence, "frame %llu: base %s, new %s",
             (unsigned long long)frame, b, n);
}

bool command_match_run(struct command_matching *m, size_t top, report_reader *base_reader,
                       run_aggregate *base_aggregate, int base_report, report_reader *new_reader,
                       run_aggregate *new_aggregate, int new_report, char *error, size_t size)
{
    memset(m, 0, sizeof *m);
    int *base_index = NULL, *new_index = NULL;
    bool ok = pair_counters(m, top, base_reader, new_reader, &base_index, &new_index);
    if (!ok)
        snprintf(error, size, "out of memory");
    struct side base = {.reader = base_reader, .aggregate = base_aggregate, .report = base_report};
    struct side new_run = {.reader = new_reader, .aggregate = new_aggregate, .report = new_report};
    ok = ok && advance(&base, error, size) && advance(&new_run, error, size);
    bool skipping = false;
    uint64_t skipped_frame = 0;
    while (ok && (base.have || new_run.have)) {
        if (skipping) {
            /* The rest of the frame where the streams disagreed. */
            bool b = base.have && base.row.frame <= skipped_frame;
            bool n = new_run.have && new_run.row.frame <= skipped_frame;
            m->base_only += b;
            m->new_only += n;
            ok = (!b || advance(&base, error, size)) && (!n || advance(&new_run, error, size));
            skipping = b || n;
        } else if (base.have && new_run.have) {
            if (same_command(&base.row, &new_run.row)) {
                ok = match(m, base_index, new_index, &base, &new_run);
                if (!ok)
                    snprintf(error, size, "out of memory");
                ok = ok && advance(&base, error, size) && advance(&new_run, error, size);
            } else {
                skipped_frame =
                    base.row.frame < new_run.row.frame ? base.row.frame : new_run.row.frame;
                note_divergence(m, &base, &new_run, skipped_frame);
                skipping = true;
            }
        } else if (base.have) {
            m->base_only++;
            ok = advance(&base, error, size);
        } else {
            m->new_only++;
            ok = advance(&new_run, error, size);
        }
    }
    free(base_index);
    free(new_index);
    return ok;
}

void command_matching_free(struct command_matching *m)
{
    for (size_t p = 0; p < m->counter_count; p++) {
        free(m->symbols[p]);
        top_commands_free(m->movers[p]);
    }
    free(m->symbols);
    free(m->movers);
    memset(m, 0, sizeof *m);
}
