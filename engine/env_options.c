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
 * The same sentences check a name before a program starts (`tally run -c`,
 * tally_counter_name_check).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
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
enum { PROBLEMS_NAMED = 3, SUGGESTIONS = 3 };

/* The symbols of a catalogue's counters and their API aliases, each once,
 * for suggestions; NULL when out of memory. *count receives how many. */
static const char **symbols_of(const tally_catalogue *cat, uint32_t *count)
{
    uint32_t total = 0;
    for (uint32_t i = 0; i < cat->counter_count; i++)
        total += 1 + cat->counters[i].alias_count;
    const char **symbols = malloc((total + 1) * sizeof(*symbols));
    *count = 0;
    for (uint32_t i = 0; symbols && i < cat->counter_count; i++) {
        const tally_counter_info *c = &cat->counters[i];
        symbols[(*count)++] = c->symbol;
        for (uint32_t a = 0; a < c->alias_count; a++) {
            const char *alias = c->aliases[a].symbol;
            bool repeated = !alias;
            for (uint32_t k = 0; !repeated && k < *count; k++)
                repeated = strcmp(symbols[k], alias) == 0;
            if (!repeated)
                symbols[(*count)++] = alias;
        }
    }
    return symbols;
}

/* Appends to text at *used (snprintf's way: a sentence cut short stays
 * terminated). */
__attribute__((format(printf, 4, 5))) static void append(char *text, size_t size, size_t *used,
                                                         const char *format, ...)
{
    if (*used >= size)
        return;
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text + *used, size - *used, format, args);
    va_end(args);
    *used = n < 0 ? size : *used + (size_t)n;
}

static void say_unknown(const tally_catalogue *cat, const char *name, char *text, size_t size)
{
    char quoted[96];
    size_t used = 0;
    append(text, size, &used, "no counter named %s", tally_quote(quoted, sizeof quoted, name));
    uint32_t count = 0, nearest[SUGGESTIONS];
    const char **symbols = symbols_of(cat, &count);
    uint32_t found = symbols ? tally_nearest_names(name, symbols, count, nearest, SUGGESTIONS) : 0;
    for (uint32_t i = 0; i < found; i++)
        append(text, size, &used, "%s%s",
               i == 0          ? " (did you mean "
               : i + 1 < found ? ", "
                               : " or ",
               symbols[nearest[i]]);
    append(text, size, &used, found ? "?)" : " (`tally list` shows them)");
    free(symbols);
}

static void say_unmeasurable(const tally_catalogue *cat, const char *symbol, bool here, char *text,
                             size_t size)
{
    size_t used = 0;
    append(text, size, &used, "%s cannot be measured by the %s backend%s; it measures: ", symbol,
           cat->backend, here ? " here" : "");
    for (uint32_t i = 0; i < cat->counter_count; i++)
        append(text, size, &used, "%s%s", i ? ", " : "", cat->counters[i].symbol);
}

/* The symbol of the counter some built-in backend's catalogue (NULL:
 * any) has by this name, or NULL. */
static const char *known_to(const char *backend, const char *name)
{
    for (const char *const *b = tally_backend_names(); *b; b++) {
        const tally_catalogue *cat = NULL;
        uint32_t index;
        if ((!backend || strcmp(*b, backend) == 0) &&
            tally_backend_catalogue_measuring(*b, 0, &cat) == TALLY_OK &&
            tally_catalogue_find(cat, name, &index) == TALLY_OK)
            return cat->counters[index].symbol;
    }
    return NULL;
}

/* Why a name of a counter list is none of cat's counters, as a sentence:
 * a counter another catalogue of the backend has (one opened with more to
 * measure: "here") or another backend has cannot be measured; anything else
 * is no counter, with the nearest names. */
static tally_status explain_missing(const tally_catalogue *cat, const char *name, char *text,
                                    size_t size)
{
    const char *symbol = known_to(cat->backend, name);
    if (symbol) {
        say_unmeasurable(cat, symbol, true, text, size);
        return TALLY_ERROR_NOT_SUPPORTED;
    }
    if ((symbol = known_to(NULL, name))) {
        say_unmeasurable(cat, symbol, false, text, size);
        return TALLY_ERROR_NOT_SUPPORTED;
    }
    say_unknown(cat, name, text, size);
    return TALLY_ERROR_UNKNOWN_COUNTER;
}

tally_status tally_counter_name_check(const char *backend, const char *name, char *error,
                                      size_t error_size)
{
    if (!name)
        return TALLY_ERROR_INVALID_ARGUMENT;
    const tally_catalogue *cat = NULL;
    tally_status s = tally_backend_catalogue(backend, &cat);
    uint32_t index;
    if (s != TALLY_OK) {
        tally_copy_error(error, error_size, "%s", tally_status_string(s));
        return s;
    }
    if (strcmp(name, "all") == 0 || tally_catalogue_find(cat, name, &index) == TALLY_OK)
        return TALLY_OK;
    char text[1024];
    s = explain_missing(cat, name, text, sizeof text);
    tally_copy_error(error, error_size, "%s", text);
    return s;
}

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
    if (explain_missing(cat, token, text, sizeof text) == TALLY_ERROR_UNKNOWN_COUNTER)
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
