/*
 * The baseline file: a run's digest (run_digest.h) as a CSV small enough
 * to commit, one line per frame, label, pipeline and API command, so that
 * a changed count is one changed line in a review. The same digest gives
 * the same bytes: nothing in it depends on when, where or by which
 * process the run was made (no paths, pids or dates). docs/diff.md
 * describes the format.
 */
#ifndef TALLY_ANSWERS_BASELINE_H
#define TALLY_ANSWERS_BASELINE_H

#include <stdbool.h>
#include <stddef.h>

#include "run_digest.h"

/* The schema row's value: the format's version. */
extern const char baseline_schema[];

/* Writes the digest to path, whole or not at all (a temporary file
 * renamed over it); false with why in error. */
bool baseline_write(const struct run_digest *digest, const char *path, char *error, size_t size);

/* True when the file at path begins as a baseline does. */
bool baseline_is(const char *path);

/* Reads a baseline; NULL with why in error. */
struct run_digest *baseline_read(const char *path, char *error, size_t size);

#endif
