/* tally run's options checked before the program starts (run_checks.c).
 * Each returns false after saying in one line on stderr what is wrong with
 * the value of `option` (the option's name, or the variable's when the
 * value came from the environment). */
#ifndef TALLY_RUN_CHECKS_H
#define TALLY_RUN_CHECKS_H

#include <stdbool.h>
#include <stddef.h>

/* value (NULL or empty: unset) is one of choices, case ignored; what names
 * them ("clock mode"). */
bool run_check_choice(const char *option, const char *value, const char *what,
                      const char *const *choices, size_t count);
bool run_check_backend(const char *option, const char *backend);
/* backend NULL: the default one. */
bool run_check_profile(const char *option, const char *backend, const char *profile);
bool run_check_interval(const char *option, const char *interval);
bool run_check_metric_set(const char *option, const char *backend, const char *set);
/* The list with every name checked against the backend's counters, each
 * once, joined by commas (the caller frees it); NULL after saying why not. */
char *run_check_counters(const char *option, const char *backend, const char *list);

#endif
