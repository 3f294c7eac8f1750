/*
 * The text of the device's options from the environment. TALLY_CLOCK:
 * "realtime" or "virtual". TALLY_GRANULARITY: "command", "render-pass" or
 * "command-buffer". TALLY_CALIBRATE: "1" or "0". TALLY_COUNTERS: which
 * counters the per-command report carries, from a list of symbols separated
 * by commas or blanks. "all" stands for every counter in catalogue order,
 * wherever it appears; each counter gets one column, at its first mention,
 * however often it is named. Unknown names (with the nearest ones), repeats
 * and a list that names nothing are said in the log, a bounded number of
 * lines whatever the list's length; what is echoed is quoted and escaped.
 * Why a name is none of the device's counters is counter_names.c's
 * sentence, the one `tally run -c` says before a program starts.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

/* Unset or empty is realtime; anything else is said and read as realtime. */
tally_clock_mode tally_clock_mode_parse(const char *text)
{
    if (text && strcasecmp(text, "virtual") == 0)
        return TALLY_CLOCK_VIRTUAL;
    char quoted[96];
    if (text && *text && strcasecmp(text, "realtime") != 0)
        tally_log(TALLY_LOG_WARN, "TALLY_CLOCK: %s is neither realtime nor virtual; using realtime",
                  tally_quote(quoted, sizeof quoted, text));
    return TALLY_CLOCK_REALTIME;
}

/* Unset or empty is "command" (each draw and dispatch, as without the
 * option); anything unknown is said once per process and read as that. */
tally_granularity tally_granularity_parse(const char *text)
{
    static const char *const names[] = {"command", "render-pass", "command-buffer"};
    static atomic_bool said;
    if (!text || !*text)
        return TALLY_GRANULARITY_COMMAND;
    for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcasecmp(text, names[i]) == 0)
            return (tally_granularity)i;
    char quoted[96];
    if (!atomic_exchange(&said, true))
        tally_log(TALLY_LOG_WARN,
                  "TALLY_GRANULARITY: %s is none of command, render-pass, command-buffer; "
                  "using command",
                  tally_quote(quoted, sizeof quoted, text));
    return TALLY_GRANULARITY_COMMAND;
}

/* Unset, empty or "1" calibrates; "0" does not; anything else is said once
 * per process and read as the default. */
bool tally_calibrate_parse(const char *text)
{
    static atomic_bool said;
    if (!text || !*text || strcmp(text, "1") == 0)
        return true;
    if (strcmp(text, "0") == 0)
        return false;
    char quoted[96];
    if (!atomic_exchange(&said, true))
        tally_log(TALLY_LOG_WARN, "TALLY_CALIBRATE: %s is neither 1 nor 0; using 1",
                  tally_quote(quoted, sizeof quoted, text));
    return true;
}

static const char default_counters[] =
    "GpuTime,IaVertices,IaPrimitives,VsInvocations,ClipperPrimitives,RasterizedPixels,"
    "FsInvocations,CsInvocations,ShaderAluInstructions,L2CacheMisses,DramReadBytes,"
    "DramWriteBytes";

static const char separators[] = ", \t";

/* A list's problems are said one by one up to this many, then counted: a
 * list of ten thousand unknown names must not flood the program's stderr. */
enum { PROBLEMS_NAMED = 3 };

struct columns {
    uint32_t *index; /* catalogue index per column */
    uint32_t count;
    uint8_t *present; /* per counter: 0, 1 by "all", 2 named */
    uint32_t skipped, repeated;
    const char *first_repeated; /* points into the list's copy */
};

static void add(struct columns *c, uint32_t counter, uint8_t how, const char *name)
{
    if (c->present[counter]) {
        if (how == 2 && c->present[counter] == 2 && !c->repeated++)
            c->first_repeated = name;
        return;
    }
    c->present[counter] = how;
    c->index[c->count++] = counter;
}

/* A name the device has not: the first few are said with why, under the
 * variable's name when no counter anywhere has it; a counter the backend
 * cannot measure here is said without it, since `tally run -c` checked the
 * name already and the user may never have typed the variable. */
static void skip(struct columns *c, const tally_catalogue *cat, const char *token)
{
    if (c->skipped++ >= PROBLEMS_NAMED)
        return;
    char text[1024];
    if (tally_counter_name_explain(cat, token, text, sizeof text) == TALLY_ERROR_UNKNOWN_COUNTER)
        tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS: %s; skipped", text);
    else
        tally_log(TALLY_LOG_WARN, "%s; the report leaves it out", text);
}

/* Unknown names are said, except in the default list, which names counters
 * a measuring backend's device may not offer. */
static void add_token(struct columns *c, const tally_catalogue *cat, const char *token, bool quiet)
{
    uint32_t index;
    if (strcmp(token, "all") == 0) {
        for (uint32_t i = 0; i < tally_catalogue_counter_count(cat); i++)
            add(c, i, 1, token);
    } else if (tally_catalogue_find(cat, token, &index) == TALLY_OK) {
        add(c, index, 2, token);
    } else if (!quiet) {
        skip(c, cat, token);
    }
}

static void say_what_was_skipped(const struct columns *c)
{
    if (c->skipped > PROBLEMS_NAMED)
        tally_log(TALLY_LOG_WARN, "... and %u more names of the counter list skipped",
                  c->skipped - PROBLEMS_NAMED);
    if (c->repeated == 1)
        tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS lists %s more than once; one column",
                  c->first_repeated);
    else if (c->repeated > 1)
        tally_log(TALLY_LOG_WARN,
                  "TALLY_COUNTERS repeats %u names (the first: %s); one column each counter",
                  c->repeated, c->first_repeated);
}

static bool names_nothing(const char *list)
{
    return list[strspn(list, separators)] == '\0';
}

tally_status tally_counter_list_parse(const tally_catalogue *cat, const char *list, uint32_t **out,
                                      uint32_t *count)
{
    *out = NULL;
    *count = 0;
    if (!list)
        list = default_counters;
    else if (names_nothing(list)) {
        tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS is empty; the report carries the default "
                                  "counters");
        list = default_counters;
    }
    uint32_t total = tally_catalogue_counter_count(cat);
    struct columns c = {.index = malloc((total + 1) * sizeof(uint32_t)),
                        .present = calloc(total + 1, 1)};
    char *copy = strdup(list), *save = NULL;
    if (!c.index || !c.present || !copy) {
        free(c.index);
        free(c.present);
        free(copy);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    for (char *tok = strtok_r(copy, separators, &save); tok;
         tok = strtok_r(NULL, separators, &save))
        add_token(&c, cat, tok, list == default_counters);
    say_what_was_skipped(&c);
    if (!c.count)
        tally_log(TALLY_LOG_WARN, "the counter list names no counter this device has; the report "
                                  "has no counter columns (`tally list` shows them)");
    free(copy);
    free(c.present);
    *out = c.index;
    *count = c.count;
    return TALLY_OK;
}
