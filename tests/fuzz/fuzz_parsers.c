/*
 * libFuzzer target for what tally parses from outside the program: simgpu
 * device profiles (TALLY_PROFILE) and the environment's TALLY_COUNTERS,
 * TALLY_SAMPLE and TALLY_CLOCK. The first byte picks the parser, the rest is
 * its text. Built with clang's -fsanitize=fuzzer,address,undefined from the
 * parsers' own sources; besides finding crashes it checks what each parser
 * promises of a result it accepts, and that what they log of the input
 * shows no control character once escaped.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "session.h"
#include "simgpu.h"

/* The parsers log what they refuse, echoing the input: each line is made
 * safe to show as tally_log makes it, and must then hold no control
 * character (escape.c's promise). */
void tally_log(tally_log_level level, const char *format, ...)
{
    (void)level;
    char line[1024], shown[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    tally_escape_controls(shown, sizeof shown, line, SIZE_MAX);
    for (const unsigned char *c = (const unsigned char *)shown; *c; c++)
        if (*c < 0x20 || *c == 0x7f || (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
            abort();
}

/* The registry, with simgpu alone: the counter list's messages look a name
 * up in every built-in backend's catalogue. */
const char *const *tally_backend_names(void)
{
    static const char *const names[] = {"simgpu", NULL};
    return names;
}

tally_status tally_backend_catalogue_measuring(const char *backend, uint32_t measurable,
                                               const tally_catalogue **out)
{
    (void)backend, (void)measurable;
    *out = &simgpu_catalogue;
    return TALLY_OK;
}

tally_status tally_backend_catalogue(const char *backend, const tally_catalogue **out)
{
    return tally_backend_catalogue_measuring(backend, 0, out);
}

static void profile(const uint8_t *data, size_t size)
{
    struct simgpu_profile p;
    simgpu_profile_defaults(&p);
    char error[256];
    if (simgpu_profile_parse(&p, "fuzz", (const char *)data, size, error, sizeof error) != TALLY_OK)
        return;
    const uint64_t *values = (const uint64_t *)&p;
    for (uint32_t i = 0; i < SIMGPU_PARAMETER_COUNT; i++)
        if (values[i] < simgpu_catalogue.parameters[i].min_value ||
            values[i] > simgpu_catalogue.parameters[i].max_value)
            abort(); /* an accepted profile holds every parameter in range */
}

static void counters(const char *text)
{
    uint32_t *columns = NULL, count = 0;
    if (tally_counter_list_parse(&simgpu_catalogue, text, &columns, &count) != TALLY_OK)
        return;
    if (count > simgpu_catalogue.counter_count)
        abort();
    for (uint32_t i = 0; i < count; i++) {
        if (columns[i] >= simgpu_catalogue.counter_count)
            abort();
        for (uint32_t k = 0; k < i; k++)
            if (columns[k] == columns[i])
                abort(); /* one column per counter */
    }
    free(columns);
}

static void interval(const char *text)
{
    uint32_t ns = 0;
    if (env_sampling_parse_interval(text, &ns) == INTERVAL_OK && ns == 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t which = data[0] % 4;
    data++, size--;
    /* Exactly `size` bytes for the profile, so a read past them is caught;
     * the environment's values are strings. */
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    switch (which) {
    case 0: profile((const uint8_t *)copy, size); break;
    case 1: counters(copy); break;
    case 2: interval(copy); break;
    default: tally_clock_mode_parse(copy); break;
    }
    free(copy);
    return 0;
}
