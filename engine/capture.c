/*
 * Capturing part of a run, as gfxreconstruct's capture frames and MangoHud's
 * log toggle do: the report and trace hold only the commands of a window of
 * frames (TALLY_CAPTURE_FRAMES), of time (TALLY_CAPTURE_DELAY,
 * TALLY_CAPTURE_DURATION), and of a trigger's toggling
 * (TALLY_CAPTURE_TRIGGER: a signal, or a file that exists while capturing),
 * all that are set at once.
 *
 * Outside the window the report and trace do not listen (listening.c), so
 * the front doors cost what they cost idle. Each submission is stamped, on
 * the submitting thread, with whether the window may be open then (the
 * frames begun on the program's threads, its time, the trigger); the queue
 * thread then keeps exactly the rows of the window: frames by the frame
 * number the row carries, time by the submission's time. So a queue thread
 * that lags the program never loses a frame it captured, and a row is in
 * the window or not whatever the queue's pace.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "duration.h"
#include "engine.h"

/* How often the queue looks at a trigger: the file's existence, the
 * signal's flag. */
#define TRIGGER_POLL_NS (250ull * 1000 * 1000)

/* "A-B", "A-" or "A" (frames from 0, inclusive). */
static bool parse_frames(const char *text, uint64_t *first, uint64_t *last)
{
    char *end;
    errno = 0;
    unsigned long long a = strtoull(text, &end, 10);
    if (end == text || errno || *text == '-' || *text == '+')
        return false;
    *first = a;
    *last = a;
    if (!*end)
        return true;
    if (*end != '-')
        return false;
    const char *b_text = end + 1;
    if (!*b_text) {
        *last = UINT64_MAX;
        return true;
    }
    unsigned long long b = strtoull(b_text, &end, 10);
    if (end == b_text || errno || *end || *b_text == '-' || *b_text == '+' || b < a)
        return false;
    *last = b;
    return true;
}

static int signal_named(const char *text)
{
    static const struct {
        const char *name;
        int number;
    } names[] = {{"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"USR1", SIGUSR1}, {"USR2", SIGUSR2}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i].name) == 0)
            return names[i].number;
    return 0;
}

static tally_status no_duration(char *error, size_t error_size, const char *variable,
                                const char *text)
{
    tally_copy_error(error, error_size,
                     "%s: \"%s\" is no duration (a whole number and ns, us, ms, s or min)",
                     variable, text);
    return TALLY_ERROR_INVALID_ARGUMENT;
}

tally_status tally_capture_parse(const tally_device_options *o, struct tally_capture *c,
                                 char *error, size_t error_size)
{
    *c = (struct tally_capture){.last_frame = UINT64_MAX, .end_ns = UINT64_MAX};
    if (o->capture_frames && !parse_frames(o->capture_frames, &c->first_frame, &c->last_frame)) {
        tally_copy_error(error, error_size,
                         "TALLY_CAPTURE_FRAMES: \"%s\" is no frame window (A-B, A- or A, frames "
                         "counted from 0)",
                         o->capture_frames);
        return TALLY_ERROR_INVALID_ARGUMENT;
    }
    uint64_t delay = 0, duration = UINT64_MAX;
    if (o->capture_delay && !tally_parse_duration_ns(o->capture_delay, &delay))
        return no_duration(error, error_size, "TALLY_CAPTURE_DELAY", o->capture_delay);
    if (o->capture_duration && !tally_parse_duration_ns(o->capture_duration, &duration))
        return no_duration(error, error_size, "TALLY_CAPTURE_DURATION", o->capture_duration);
    c->begin_ns = delay;
    c->end_ns = duration < UINT64_MAX - delay ? delay + duration : UINT64_MAX;
    if (o->capture_trigger && *o->capture_trigger) {
        c->trigger_signal = signal_named(o->capture_trigger);
        if (!c->trigger_signal && o->capture_trigger[0] != '/') {
            tally_copy_error(error, error_size,
                             "TALLY_CAPTURE_TRIGGER: \"%s\" is neither SIGUSR1, SIGUSR2 nor an "
                             "absolute file path",
                             o->capture_trigger);
            return TALLY_ERROR_INVALID_ARGUMENT;
        }
        if (!c->trigger_signal && !(c->trigger_file = strdup(o->capture_trigger)))
            return TALLY_ERROR_OUT_OF_MEMORY;
    }
    c->windowed = o->capture_frames || o->capture_delay || o->capture_duration ||
                  c->trigger_signal || c->trigger_file;
    atomic_init(&c->triggered, !c->trigger_signal && !c->trigger_file);
    return TALLY_OK;
}

bool tally_capture_options_valid(const tally_device_options *options, char *error,
                                 size_t error_size)
{
    struct tally_capture c;
    if (!options || tally_capture_parse(options, &c, error, error_size) != TALLY_OK)
        return false;
    free(c.trigger_file);
    return true;
}

/* --- the trigger's signal ----------------------------------------------------- */

/* The device whose trigger the signal toggles: one per process (the shared
 * device opens once), read in the handler. */
static _Atomic(struct tally_capture *) signalled_capture;

static void on_trigger_signal(int signal_number)
{
    (void)signal_number;
    struct tally_capture *c = atomic_load(&signalled_capture);
    if (c)
        atomic_store(&c->triggered, !atomic_load(&c->triggered));
}

/* Taken only where the program leaves the signal at its default action
 * (which would end it): a signal it handles stays its own, and the trigger
 * then never fires (said once). */
static void watch_trigger_signal(struct tally_capture *c)
{
    struct sigaction current;
    if (sigaction(c->trigger_signal, NULL, &current) != 0 ||
        (current.sa_handler != SIG_DFL && current.sa_handler != on_trigger_signal) ||
        (current.sa_flags & SA_SIGINFO)) {
        tally_log(TALLY_LOG_WARN,
                  "TALLY_CAPTURE_TRIGGER: the program handles %s itself; capture never starts",
                  strsignal(c->trigger_signal));
        return;
    }
    struct sigaction ours = {.sa_handler = on_trigger_signal, .sa_flags = SA_RESTART};
    sigemptyset(&ours.sa_mask);
    atomic_store(&signalled_capture, c);
    sigaction(c->trigger_signal, &ours, NULL);
}

static bool trigger_file_exists(const struct tally_capture *c)
{
    struct stat st;
    return stat(c->trigger_file, &st) == 0;
}

void tally_capture_start(struct tally_device *d)
{
    struct tally_capture *c = &d->capture;
    if (c->trigger_signal)
        watch_trigger_signal(c);
    if (c->trigger_file) /* a file there from the start captures from the start */
        atomic_store(&c->triggered, trigger_file_exists(c));
    c->was_open = tally_capture_open_now(d, 0);
    tally_listening_update(d);
}

void tally_capture_end(struct tally_device *d)
{
    struct tally_capture *c = &d->capture;
    struct tally_capture *expected = c;
    /* The handler stays (restoring SIG_DFL would let a late signal end the
     * program); it finds no capture and does nothing. */
    atomic_compare_exchange_strong(&signalled_capture, &expected, NULL);
    free(c->trigger_file);
    c->trigger_file = NULL;
}

/* --- the window ------------------------------------------------------------------ */

bool tally_capture_open_now(struct tally_device *d, uint64_t device_ns)
{
    struct tally_capture *c = &d->capture;
    if (!c->windowed)
        return true;
    /* Frames: open from the frame before the window to the one after it,
     * since a context's frame number can lag the process's by one and the
     * submission that ends a frame is made after its boundary; exactly per
     * row. */
    uint64_t begun = atomic_load_explicit(&c->frames_begun, memory_order_relaxed);
    bool frames =
        begun + 1 >= c->first_frame && (c->last_frame == UINT64_MAX || begun <= c->last_frame + 1);
    return frames && device_ns >= c->begin_ns && device_ns < c->end_ns &&
           atomic_load_explicit(&c->triggered, memory_order_relaxed);
}

bool tally_capture_takes(const struct tally_device *d, uint64_t frame)
{
    const struct tally_capture *c = &d->capture;
    return !c->windowed || (frame >= c->first_frame && frame <= c->last_frame);
}

void tally_capture_frame_begun(struct tally_device *d)
{
    struct tally_capture *c = &d->capture;
    if (!c->windowed)
        return;
    uint64_t begun = atomic_fetch_add_explicit(&c->frames_begun, 1, memory_order_relaxed) + 1;
    /* The window's edges change who listens. */
    if (begun + 1 == c->first_frame ||
        (c->last_frame < UINT64_MAX - 1 && begun == c->last_frame + 2))
        tally_listening_update(d);
}

uint64_t tally_capture_tick(struct tally_device *d, uint64_t device_ns)
{
    struct tally_capture *c = &d->capture;
    if (!c->windowed)
        return UINT64_MAX;
    /* Asked after every submission and when idle: the file is looked at
     * once per poll period at most. */
    bool polling = c->trigger_file || c->trigger_signal;
    if (polling && device_ns < c->next_poll_ns)
        return c->next_poll_ns;
    if (c->trigger_file)
        atomic_store(&c->triggered, trigger_file_exists(c));
    bool open = tally_capture_open_now(d, device_ns);
    if (open != c->was_open) {
        c->was_open = open;
        tally_listening_update(d);
    }
    uint64_t due = UINT64_MAX;
    if (polling)
        due = c->next_poll_ns = device_ns + TRIGGER_POLL_NS;
    if (device_ns < c->begin_ns && c->begin_ns < due)
        due = c->begin_ns;
    else if (device_ns < c->end_ns && c->end_ns < due)
        due = c->end_ns;
    return due;
}
