/* What most engine tests start from: a virtual-clock simgpu device with one
 * context and one stream. */
#ifndef TALLY_TEST_FIXTURE_H
#define TALLY_TEST_FIXTURE_H

#include "tally/tally.h"

struct engine_fixture {
    tally_device *device;
    tally_context *context;
    tally_stream *stream;
};

/* Removes a test's scratch folder and everything in it, links not
 * followed; 0, or -1 if something could not be removed. */
int remove_tree(const char *dir);
/* Entries in dir, "." and ".." left out (a failed test if it cannot be read). */
int directory_entry_count(const char *dir);

/* A virtual-clock device; fails the test if it cannot be opened. */
tally_device *open_virtual_device(void);

/* 0 on success, -1 otherwise (for cmocka setup functions). */
int engine_fixture_open(struct engine_fixture *fx);
/* The same on a device opened with `options` instead. */
int engine_fixture_open_with(struct engine_fixture *fx, const tally_device_options *options);
void engine_fixture_close(struct engine_fixture *fx);

/* cmocka setup and teardown that allocate a struct engine_fixture. */
int engine_fixture_setup(void **state);
int engine_fixture_teardown(void **state);

/* Submits the fixture's stream (consumed) and waits until it executed. */
void engine_fixture_submit(struct engine_fixture *fx);

/* A command's span on the queue, in CLOCK_MONOTONIC ns. */
typedef struct monotonic_span {
    uint64_t begin, end;
} monotonic_span;

/* Once `device` executed everything submitted: the queue's spans of the
 * commands whose tally_event_kind has its bit in `kinds`, in order, read
 * from `timeline` (at most `max`); returns how many. */
uint32_t queue_spans_monotonic(tally_device *device, tally_subscription *timeline, uint32_t kinds,
                               monotonic_span *spans, uint32_t max);

/* How much the raw counter `raw` grew between the sampler's oldest and
 * newest samples, once `device` executed everything submitted so far (the
 * caller has its front door submit first: glFinish, clFinish). */
uint64_t sampler_growth(tally_device *device, tally_sampler *sampler, uint32_t raw);

#endif
