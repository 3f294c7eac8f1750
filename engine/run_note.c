/*
 * The line a process run by `tally run` with no file asked for leaves on
 * stderr when its device stops (TALLY_RUN_NOTE=1, which tally run sets
 * then): how many commands each front door's contexts executed, and how to
 * get a report. Without it such a run would print nothing at all, and a
 * user could not tell a program tally saw from one it missed.
 *
 * Counting needs the doors to record: the note counts as a listener of the
 * device (listening.c), but reads no values, so the queue still simulates
 * nothing and the GL shim reads no index buffers back. A command is a draw,
 * a dispatch or a transfer as the API issued it (an indirect draw is one).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static const struct {
    const char *api_name; /* tally_context_create's, by the doors */
    const char *shown;
} doors[TALLY_RUN_NOTE_DOORS] = {
    {"vulkan", "Vulkan"}, {"gl", "GL"}, {"gles", "GL"}, {"opencl", "OpenCL"}, {NULL, "other"}};

bool tally_run_note_asked(void)
{
    static atomic_int asked = -1;
    int value = atomic_load_explicit(&asked, memory_order_relaxed);
    if (value < 0) {
        const char *text = secure_getenv("TALLY_RUN_NOTE");
        value = text && strcmp(text, "1") == 0;
        atomic_store_explicit(&asked, value, memory_order_relaxed);
    }
    return value;
}

static uint32_t door_of(const char *api_name)
{
    uint32_t door = 0;
    while (doors[door].api_name && strcmp(doors[door].api_name, api_name) != 0)
        door++;
    return door;
}

void tally_run_note_count(struct tally_device *d, const struct tally_context *ctx,
                          uint64_t commands)
{
    struct tally_run_note *note = &d->run_note;
    /* Context ids are never reused: the door is looked up once per switch. */
    if (ctx->id != note->last_context_id) {
        note->last_context_id = ctx->id;
        note->last_door = door_of(ctx->api_name);
    }
    note->commands[note->last_door] += commands;
}

/* 1234567 as "1,234,567": the note is read by a person, in any locale. */
static const char *grouped(uint64_t value, char *text, size_t size)
{
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)value);
    size_t used = 0;
    for (int i = 0; i < n && used + 2 < size; i++) {
        if (i && (n - i) % 3 == 0)
            text[used++] = ',';
        text[used++] = digits[i];
    }
    text[used] = '\0';
    return text;
}

/* The doors' counts as "1,234 Vulkan, 0 GL and 0 OpenCL": every door tally
 * run opens, the ES contexts with GL's, others only when they counted. */
static void door_counts(const struct tally_run_note *note, char *text, size_t size)
{
    uint64_t shown[TALLY_RUN_NOTE_DOORS] = {0};
    const char *names[TALLY_RUN_NOTE_DOORS];
    uint32_t count = 0;
    for (uint32_t door = 0; door < TALLY_RUN_NOTE_DOORS; door++) {
        uint32_t k = 0;
        while (k < count && strcmp(names[k], doors[door].shown) != 0)
            k++;
        if (k == count && (doors[door].api_name || note->commands[door]))
            names[count++] = doors[door].shown;
        if (k < count)
            shown[k] += note->commands[door];
    }
    size_t used = 0;
    text[0] = '\0';
    for (uint32_t k = 0; k < count && used < size; k++) {
        char number[32];
        const char *separator = k == 0 ? "" : k + 1 == count ? " and " : ", ";
        int n = snprintf(text + used, size - used, "%s%s %s", separator,
                         grouped(shown[k], number, sizeof number), names[k]);
        used = n < 0 ? size : used + (size_t)n;
    }
}

void tally_run_note_say(const struct tally_device *d)
{
    if (!tally_run_note_asked() || d->report_path || d->trace_path)
        return;
    char counts[256];
    door_counts(&d->run_note, counts, sizeof counts);
    tally_log(TALLY_LOG_WARN,
              "%s commands seen; no report was asked for (tally run -o report.csv -- ...)", counts);
}
