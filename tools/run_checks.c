/*
 * tally run's options checked before the program starts, each by the same
 * code the library reads it with (the backends' registry, the profile
 * parser of a device opened and closed here, the sampling interval's
 * parser, the catalogue), so that a value tally run accepts is one the front
 * doors accept. A bad value is said in one line, "tally run: OPTION: what is
 * wrong (what is accepted)", and tally run exits with 2.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <tally/tally.h>

#include "run_checks.h"

/* What a list of counters is split at: TALLY_COUNTERS's separators. */
static const char counter_separators[] = ", \t";

/* One line; what it echoes of a value (from the command line or the
 * environment) is escaped, so that it cannot act on the terminal. */
__attribute__((format(printf, 2, 3))) static bool refuse(const char *option, const char *format,
                                                         ...)
{
    char line[2048], shown[2048];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    tally_escape_text(shown, sizeof shown, line);
    fprintf(stderr, "tally run: %s: %s\n", option, shown);
    return false;
}

/* "a, b or c" into text. */
static void join_choices(char *text, size_t size, const char *const *names, size_t count,
                         const char *last_separator)
{
    size_t used = 0;
    text[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++) {
        const char *separator = i == 0 ? "" : i + 1 == count ? last_separator : ", ";
        int n = snprintf(text + used, size - used, "%s%s", separator, names[i]);
        used = n < 0 ? size : used + (size_t)n;
    }
}

static bool refuse_choice(const char *option, const char *value, const char *what,
                          const char *const *choices, size_t count)
{
    char accepted[256];
    join_choices(accepted, sizeof accepted, choices, count, " or ");
    return refuse(option, "no %s \"%s\" (%s)", what, value, accepted);
}

/* Case is ignored, as the library reads TALLY_CLOCK and TALLY_GRANULARITY. */
bool run_check_choice(const char *option, const char *value, const char *what,
                      const char *const *choices, size_t count)
{
    if (!value || !*value)
        return true;
    for (size_t i = 0; i < count; i++)
        if (strcasecmp(value, choices[i]) == 0)
            return true;
    return refuse_choice(option, value, what, choices, count);
}

bool run_check_backend(const char *option, const char *backend)
{
    if (!backend || !*backend)
        return true;
    const char *const *names = tally_backend_names();
    size_t count = 0;
    for (; names[count]; count++)
        if (strcmp(backend, names[count]) == 0)
            return true;
    return refuse_choice(option, backend, "backend named", names, count);
}

/* The profile is read by opening a device of the backend with it, as the
 * front doors will, writing nothing. */
bool run_check_profile(const char *option, const char *backend, const char *profile)
{
    if (!profile || !*profile)
        return true;
    tally_device_options options = {.backend = backend, .profile_path = profile};
    tally_device *device = NULL;
    char error[512] = "";
    tally_status s = tally_device_open(&options, &device, error, sizeof error);
    tally_device_close(device);
    if (s == TALLY_OK)
        return true;
    return refuse(option, "%s (a device profile: docs/profile.md)",
                  *error ? error : tally_status_string(s));
}

bool run_check_interval(const char *option, const char *interval)
{
    char error[256];
    if (!interval || tally_sample_interval_parse(interval, NULL, error, sizeof error) == TALLY_OK)
        return true;
    return refuse(option, "%s", error);
}

bool run_check_metric_set(const char *option, const char *backend, const char *set)
{
    const tally_catalogue *cat = NULL;
    if (!set || !*set || tally_backend_catalogue(backend ? backend : "", &cat) != TALLY_OK)
        return true; /* no set asked for; an unknown backend is said on its own */
    uint32_t count = tally_catalogue_metric_set_count(cat);
    const char *names[64];
    size_t listed = 0;
    for (uint32_t i = 0; i < count; i++) {
        const char *symbol = tally_catalogue_metric_set(cat, i)->symbol;
        if (strcmp(symbol, set) == 0)
            return true;
        if (listed < sizeof(names) / sizeof(names[0]))
            names[listed++] = symbol;
    }
    char accepted[512];
    join_choices(accepted, sizeof accepted, names, listed, " or ");
    return refuse(option, "no metric set named \"%s\" (the %s backend's: %s)", set,
                  tally_catalogue_backend(cat), accepted);
}

/* Appends name to the list being built, unless it is there already. */
static bool append_once(char **list, size_t *length, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = *list; at && (at = strstr(at, name)); at += n) {
        bool starts = at == *list || at[-1] == ',';
        if (starts && (at[n] == ',' || at[n] == '\0'))
            return true;
    }
    char *grown = realloc(*list, *length + n + 2);
    if (!grown)
        return false;
    snprintf(grown + *length, n + 2, "%s%s", *length ? "," : "", name);
    *length += n + (*length ? 1 : 0);
    *list = grown;
    return true;
}

char *run_check_counters(const char *option, const char *backend, const char *list)
{
    char *copy = strdup(list), *save = NULL, *checked = NULL;
    size_t length = 0;
    if (!copy) {
        refuse(option, "out of memory");
        return NULL;
    }
    for (char *name = strtok_r(copy, counter_separators, &save); name;
         name = strtok_r(NULL, counter_separators, &save)) {
        char error[1024];
        if (tally_counter_name_check(backend ? backend : "", name, error, sizeof error) !=
            TALLY_OK) {
            refuse(option, "%s", error);
            free(checked);
            free(copy);
            return NULL;
        }
        if (!append_once(&checked, &length, name)) {
            refuse(option, "out of memory");
            free(checked);
            free(copy);
            return NULL;
        }
    }
    free(copy);
    if (!checked)
        refuse(option, "names no counter (symbols separated by commas, or all; `tally list` "
                       "shows them)");
    return checked;
}
