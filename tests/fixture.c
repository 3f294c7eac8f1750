/* The shared starting point of engine tests; see fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

tally_device *open_virtual_device(void)
{
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL};
    tally_device *device = NULL;
    char error[256];
    assert_int_equal(tally_device_open(&options, &device, error, sizeof error), TALLY_OK);
    return device;
}

int engine_fixture_open_with(struct engine_fixture *fx, const tally_device_options *options)
{
    if (tally_device_open(options, &fx->device, NULL, 0) != TALLY_OK ||
        tally_context_create(fx->device, "test", &fx->context) != TALLY_OK ||
        tally_stream_create(fx->context, &fx->stream) != TALLY_OK)
        return -1;
    return 0;
}

int engine_fixture_open(struct engine_fixture *fx)
{
    tally_device_options options = {.clock = TALLY_CLOCK_VIRTUAL};
    return engine_fixture_open_with(fx, &options);
}

void engine_fixture_close(struct engine_fixture *fx)
{
    tally_stream_destroy(fx->stream);
    tally_context_destroy(fx->context);
    tally_device_close(fx->device);
}

int engine_fixture_setup(void **state)
{
    struct engine_fixture *fx = calloc(1, sizeof *fx);
    if (!fx || engine_fixture_open(fx) != 0)
        return -1;
    *state = fx;
    return 0;
}

int engine_fixture_teardown(void **state)
{
    engine_fixture_close(*state);
    free(*state);
    return 0;
}

void engine_fixture_submit(struct engine_fixture *fx)
{
    tally_submission sub = {.streams = &fx->stream,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME,
                            .api_name = "submit"};
    assert_int_equal(tally_submit(fx->device, &sub, NULL), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(fx->device), TALLY_OK);
}

uint32_t queue_spans_monotonic(tally_device *device, tally_subscription *timeline, uint32_t kinds,
                               monotonic_span *spans, uint32_t max)
{
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    uint64_t gpu, cpu;
    tally_device_gpu_cpu_timestamps(device, &gpu, &cpu, NULL);
    const uint64_t epoch = cpu - gpu; /* CLOCK_MONOTONIC = epoch + GPU time */
    tally_event events[256];
    uint32_t count = 0, n = 0;
    assert_int_equal(tally_timeline_read(timeline, events, 256, &count, NULL), TALLY_OK);
    for (uint32_t i = 0; i < count; i++) {
        const tally_event *e = &events[i];
        if (e->track != TALLY_TRACK_QUEUE || !(kinds & 1u << e->kind))
            continue;
        if (e->type == TALLY_EVENT_BEGIN && n < max)
            spans[n++].begin = epoch + e->timestamp_ns;
        else if (e->type == TALLY_EVENT_END && n)
            spans[n - 1].end = epoch + e->timestamp_ns;
    }
    return n;
}

uint64_t sampler_growth(tally_device *device, tally_sampler *sampler, uint32_t raw)
{
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    assert_int_equal(tally_sampler_flush(sampler, 5000000000u), TALLY_OK);
    enum { MAX = 4096 };
    uint32_t raw_count = tally_catalogue_raw_count(tally_device_catalogue(device));
    tally_sample *samples = calloc(MAX, sizeof *samples);
    uint64_t *values = calloc((size_t)MAX * raw_count, sizeof *values);
    assert_non_null(samples);
    assert_non_null(values);
    uint32_t count = 0;
    bool lost = true;
    assert_int_equal(tally_sampler_read(sampler, samples, values, MAX, &count, &lost), TALLY_OK);
    assert_false(lost);
    assert_true(count >= 1);
    uint64_t growth = values[(size_t)(count - 1) * raw_count + raw] - values[raw];
    free(samples);
    free(values);
    return growth;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

int remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int directory_entry_count(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));)
        count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return count;
}
