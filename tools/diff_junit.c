/*
 * Owns tally diff's JUnit XML, which CI dashboards read: a test suite per
 * scope (total, label, pipeline, API command, frames), a test case per
 * counter there (a frame's are one case per counter, listing the frames
 * that broke), a failure naming the counter, where, the change and the
 * rule. Changes no rule gates are skipped cases.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "value_text.h"

static void put_xml(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            /* XML 1.0 has no other control characters than tab and line breaks */
            fputc(c < 0x20 && c != '\t' && c != '\n' && c != '\r' ? ' ' : c, f);
        }
    }
}

static void open_case(FILE *f, const char *classname, const char *name)
{
    fputs("    <testcase classname=\"", f);
    put_xml(f, classname);
    fputs("\" name=\"", f);
    put_xml(f, name);
    fputs("\">\n", f);
}

static void failure(FILE *f, const char *message, const char *type, const char *details)
{
    fputs("      <failure message=\"", f);
    put_xml(f, message);
    fputs("\" type=\"", f);
    put_xml(f, type);
    fputs("\">", f);
    put_xml(f, details);
    fputs("</failure>\n", f);
}

/* Per scope: cases and failures, for the suite's attributes. */
struct tally_of_cases {
    size_t cases, failures, skipped;
};

static void count_scope(const struct diff *d, enum digest_scope scope, struct tally_of_cases *t)
{
    const struct run_comparison *c = &d->comparison;
    memset(t, 0, sizeof *t);
    if (scope == SCOPE_FRAME) {
        for (size_t k = 0; k < c->counter_count; k++) {
            bool any = false, gated = false, broken = false;
            for (size_t i = k; i < c->item_count; i += c->counter_count) {
                if (c->items[i].scope != SCOPE_FRAME)
                    continue;
                any = true;
                gated |= c->items[i].gated;
                broken |= c->items[i].broken != NULL;
            }
            t->cases += any;
            t->failures += broken;
            t->skipped += any && !gated;
        }
        return;
    }
    for (size_t i = 0; i < c->item_count; i++) {
        if (c->items[i].scope != scope)
            continue;
        t->cases++;
        t->failures += c->items[i].broken != NULL;
        t->skipped += !c->items[i].gated;
    }
}

static void frame_cases(FILE *f, const struct diff *d)
{
    const struct run_comparison *c = &d->comparison;
    for (size_t k = 0; k < c->counter_count; k++) {
        size_t broken = 0, seen = 0;
        bool gated = false;
        const struct compare_item *first = NULL;
        for (size_t i = k; i < c->item_count; i += c->counter_count) {
            if (c->items[i].scope != SCOPE_FRAME)
                continue;
            seen++;
            gated |= c->items[i].gated;
            if (c->items[i].broken && !broken++)
                first = &c->items[i];
        }
        if (!seen)
            continue;
        char name[200];
        snprintf(name, sizeof name, "%s in every frame", c->counters[k].symbol);
        open_case(f, "tally.diff.frame", name);
        if (first) {
            char message[900], details[300];
            diff_failure_message(d, first, message, sizeof message);
            snprintf(details, sizeof details, "%zu of %zu frames broke %s; the first is shown",
                     broken, seen, first->broken->text);
            failure(f, message, first->broken->text, details);
        } else if (!gated) {
            fputs("      <skipped message=\"no rule gates this counter\"/>\n", f);
        }
        fputs("    </testcase>\n", f);
    }
}

static void item_cases(FILE *f, const struct diff *d, enum digest_scope scope)
{
    const struct run_comparison *c = &d->comparison;
    char classname[64];
    snprintf(classname, sizeof classname, "tally.diff.%s", digest_scope_names[scope]);
    for (size_t i = 0; i < c->item_count; i++) {
        const struct compare_item *item = &c->items[i];
        if (item->scope != scope)
            continue;
        char name[600], subject[300];
        diff_subject(item, subject, sizeof subject);
        snprintf(name, sizeof name, "%s in %s", c->counters[item->counter].symbol, subject);
        open_case(f, classname, name);
        if (item->broken) {
            char message[900];
            diff_failure_message(d, item, message, sizeof message);
            failure(f, message, item->broken->text, message);
        } else if (!item->gated) {
            fputs("      <skipped message=\"no rule gates this counter\"/>\n", f);
        }
        fputs("    </testcase>\n", f);
    }
}

static void put_suites(FILE *f, const struct diff *d)
{
    static const enum digest_scope order[] = {SCOPE_TOTAL, SCOPE_LABEL, SCOPE_PIPELINE, SCOPE_API,
                                              SCOPE_FRAME};
    struct tally_of_cases all = {0}, each[SCOPE_COUNT];
    for (size_t s = 0; s < SCOPE_COUNT; s++) {
        count_scope(d, order[s], &each[s]);
        all.cases += each[s].cases;
        all.failures += each[s].failures;
        all.skipped += each[s].skipped;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    fprintf(f, "<testsuites name=\"tally diff\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
            all.cases, all.failures, all.skipped);
    for (size_t s = 0; s < SCOPE_COUNT; s++) {
        if (!each[s].cases)
            continue;
        fprintf(f,
                "  <testsuite name=\"tally diff: %s\" tests=\"%zu\" failures=\"%zu\" "
                "skipped=\"%zu\">\n",
                digest_scope_names[order[s]], each[s].cases, each[s].failures, each[s].skipped);
        if (order[s] == SCOPE_FRAME)
            frame_cases(f, d);
        else
            item_cases(f, d, order[s]);
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
}

bool diff_write_junit(const struct diff *d, const char *path, char *error, size_t size)
{
    char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(temporary, "w");
    if (!f) {
        snprintf(error, size, "%s: %s", temporary, strerror(errno));
        return false;
    }
    put_suites(f, d);
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(temporary, path) != 0) {
        snprintf(error, size, "%s: %s", path, strerror(errno ? errno : EIO));
        remove(temporary);
        return false;
    }
    return true;
}
