/*
 * Why a name of a counter list is none of a catalogue's counters, as one
 * sentence for the library's TALLY_COUNTERS warning and for a tool that
 * checks a list before a program starts (tally_counter_name_check, `tally
 * run -c`): a counter another catalogue has cannot be measured here, and
 * what is measured instead is listed; any other name is no counter, with
 * the nearest names.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

enum { SUGGESTIONS = 3 };

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

/* A counter the backend's whole catalogue has, but not cat (a device that
 * can measure less: "here"), or another backend's, cannot be measured. */
tally_status tally_counter_name_explain(const tally_catalogue *cat, const char *name, char *text,
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
        char quoted[96];
        if (error && error_size)
            snprintf(error, error_size, "no backend named %s",
                     tally_quote(quoted, sizeof quoted, backend ? backend : "(TALLY_BACKEND)"));
        return s;
    }
    if (strcmp(name, "all") == 0 || tally_catalogue_find(cat, name, &index) == TALLY_OK)
        return TALLY_OK;
    char text[1024];
    s = tally_counter_name_explain(cat, name, text, sizeof text);
    if (error && error_size)
        snprintf(error, error_size, "%s", text);
    return s;
}
