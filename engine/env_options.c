/*
 * The text of the device's options from the environment. TALLY_CLOCK:
 * "realtime" or "virtual". TALLY_GRANULARITY: "command", "render-pass" or
 * "command-buffer". TALLY_CALIBRATE: "1" or "0". TALLY_COUNTERS: which counters the per-command
 * report carries, from a list
 * of symbols separated by commas or blanks. "all" stands for every counter
 * in catalogue order, wherever it appears; each counter gets one column, at
 * its first mention, however often it is named. Unknown names, repeats and a
 * list that names nothing are said once in the log.
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
    if (text && *text && strcasecmp(text, "realtime") != 0)
        tally_log(TALLY_LOG_WARN,
                  "TALLY_CLOCK: \"%s\" is neither realtime nor virtual; using realtime", text);
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
    if (!atomic_exchange(&said, true))
        tally_log(TALLY_LOG_WARN,
                  "TALLY_GRANULARITY: \"%s\" is none of command, render-pass, command-buffer; "
                  "using command",
                  text);
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
    if (!atomic_exchange(&said, true))
        tally_log(TALLY_LOG_WARN, "TALLY_CALIBRATE: \"%s\" is neither 1 nor 0; using 1", text);
    return true;
}

static const char default_counters[] =
    "GpuTime,IaVertices,IaPrimitives,VsInvocations,ClipperPrimitives,RasterizedPixels,"
    "FsInvocations,CsInvocations,ShaderAluInstructions,L2CacheMisses,DramReadBytes,"
    "DramWriteBytes";

static const char separators[] = ", \t";

struct columns {
    uint32_t *index; /* catalogue index per column */
    uint32_t count;
    uint8_t *present; /* per counter: 0, 1 by "all", 2 named */
};

static void add(struct columns *c, uint32_t counter, uint8_t how, const char *name)
{
    if (c->present[counter]) {
        if (how == 2 && c->present[counter] == 2)
            tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS: %s is listed more than once; one column",
                      name);
        return;
    }
    c->present[counter] = how;
    c->index[c->count++] = counter;
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
        tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS: no counter named \"%s\"; skipped", token);
    }
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
    struct columns c = {malloc((total + 1) * sizeof(uint32_t)), 0, calloc(total + 1, 1)};
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
    if (!c.count)
        tally_log(TALLY_LOG_WARN, "TALLY_COUNTERS names no known counter; the report has no "
                                  "counter columns (`tally list` shows them)");
    free(copy);
    free(c.present);
    *out = c.index;
    *count = c.count;
    return TALLY_OK;
}
