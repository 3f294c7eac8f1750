/* Opening and closing devices, their options, information and clocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine.h"

void tally_device_options_from_env(tally_device_options *o)
{
    if (!o)
        return;
    tally_log_level_check();
    *o = (tally_device_options){
        .backend = secure_getenv("TALLY_BACKEND"),
        .profile_path = secure_getenv("TALLY_PROFILE"),
        .clock = tally_clock_mode_parse(secure_getenv("TALLY_CLOCK")),
        .report_path = secure_getenv("TALLY_OUTPUT"),
        .trace_path = secure_getenv("TALLY_TRACE"),
        .report_counters = secure_getenv("TALLY_COUNTERS"),
        .granularity = tally_granularity_parse(secure_getenv("TALLY_GRANULARITY")),
        .granularity_given =
            secure_getenv("TALLY_GRANULARITY") && *secure_getenv("TALLY_GRANULARITY"),
        .uncalibrated = !tally_calibrate_parse(secure_getenv("TALLY_CALIBRATE")),
        .capture_frames = secure_getenv("TALLY_CAPTURE_FRAMES"),
        .capture_delay = secure_getenv("TALLY_CAPTURE_DELAY"),
        .capture_duration = secure_getenv("TALLY_CAPTURE_DURATION"),
        .capture_trigger = secure_getenv("TALLY_CAPTURE_TRIGGER"),
    };
    /* Set but empty, as a shell unsets them for a command: not set. */
    const char **capture[] = {&o->capture_frames, &o->capture_delay, &o->capture_duration,
                              &o->capture_trigger};
    for (size_t i = 0; i < sizeof capture / sizeof capture[0]; i++)
        if (*capture[i] && !**capture[i])
            *capture[i] = NULL;
    if (o->report_path && !*o->report_path)
        o->report_path = NULL;
    if (o->trace_path && !*o->trace_path)
        o->trace_path = NULL;
}

static uint32_t raw_slot_of(const struct tally_catalogue *cat, tally_counter_source source)
{
    for (uint32_t i = 0; i < cat->counter_count; i++)
        if (cat->counters[i].source == source)
            return cat->counters[i].raw_index;
    return TALLY_NOT_RAW;
}

static tally_status open_backend(struct tally_device *d, const tally_device_options *o, char *error,
                                 size_t error_size)
{
    d->backend = tally_find_backend(o->backend);
    if (!d->backend) {
        char known[128] = "";
        for (const char *const *n = tally_backend_names(); *n; n++)
            snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
                     n == tally_backend_names() ? "" : ", ", *n);
        tally_copy_error(error, error_size, "unknown backend \"%s\" (built in: %s)", o->backend,
                         known);
        return TALLY_ERROR_UNKNOWN_BACKEND;
    }
    tally_status s = d->backend->create(o, &d->backend_state, error, error_size);
    if (s != TALLY_OK)
        return s;
    d->catalogue = d->backend->catalogue(d->backend_state);
    d->raw_count = d->catalogue->raw_count;
    d->elapsed_ns_slot = raw_slot_of(d->catalogue, TALLY_SOURCE_ELAPSED_NS);
    d->elapsed_cycles_slot = raw_slot_of(d->catalogue, TALLY_SOURCE_ELAPSED_CYCLES);
    d->constants = calloc(d->catalogue->constant_count + 1, sizeof(uint64_t));
    if (!d->constants)
        return TALLY_ERROR_OUT_OF_MEMORY;
    d->backend->constants(d->backend_state, d->constants);
    d->info = (tally_device_info){
        .backend = d->backend->name,
        .name = d->backend->device_name(d->backend_state),
        .clock = o->clock,
        .core_clock_hz = d->backend->core_clock_hz(d->backend_state),
        .timestamp_frequency_hz = d->backend->timestamp_frequency_hz(d->backend_state),
        .measures = d->backend->measures ? d->backend->measures(d->backend_state) : 0,
        .granularity = o->granularity <= TALLY_GRANULARITY_COMMAND_BUFFER
                           ? o->granularity
                           : TALLY_GRANULARITY_COMMAND,
        .granularity_given = o->granularity_given,
        .calibrate = !o->uncalibrated,
    };
    return TALLY_OK;
}

/* Counts the forks this process descends from since libtally loaded: a
 * device remembers the count it was opened under, so a forked child knows
 * the devices it inherited (tally_device_inherited). Bumped only in the
 * child, which has a single thread then. */
static atomic_uint fork_generation;

static void forked_child(void)
{
    atomic_fetch_add_explicit(&fork_generation, 1, memory_order_relaxed);
    tally_thread_id_forget();
}

__attribute__((constructor)) static void watch_forks(void)
{
    pthread_atfork(NULL, NULL, forked_child);
}

bool tally_device_inherited(const struct tally_device *d)
{
    return d->generation != atomic_load_explicit(&fork_generation, memory_order_relaxed);
}

static void init_sync(struct tally_device *d)
{
    pthread_mutex_init(&d->lock, NULL);
    pthread_mutex_init(&d->listeners_lock, NULL);
    tally_cond_init(&d->work_ready);
    tally_cond_init(&d->progress);
}

tally_status tally_device_open(const tally_device_options *options, tally_device **out, char *error,
                               size_t error_size)
{
    if (!out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    tally_device_options defaults = {0};
    const tally_device_options *o = options ? options : &defaults;
    if ((unsigned)o->clock > TALLY_CLOCK_VIRTUAL)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_device *d = calloc(1, sizeof(*d));
    if (!d || !(d->listeners = tally_listeners_create())) {
        free(d);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    init_sync(d);
    d->generation = atomic_load_explicit(&fork_generation, memory_order_relaxed);
    atomic_init(&d->wait_deadline_ns, UINT64_MAX);
    d->epoch_cpu_ns = tally_monotonic_ns();
    tally_status s = tally_capture_parse(o, &d->capture, error, error_size);
    if (s == TALLY_OK)
        s = open_backend(d, o, error, error_size);
    if (s == TALLY_OK)
        s = tally_run_metadata_open(d);
    if (s == TALLY_OK)
        s = tally_executor_init(d);
    if (s == TALLY_OK)
        s = tally_command_report_open(d, o, error, error_size);
    if (s == TALLY_OK)
        tally_measures_asked_open(d);
    if (s == TALLY_OK)
        tally_capture_start(d); /* before the queue thread reads the window */
    if (s == TALLY_OK)
        s = tally_queue_start(d);
    if (s != TALLY_OK) {
        tally_device_close(d);
        return s;
    }
    *out = d;
    return TALLY_OK;
}

static void free_listeners(struct tally_device *d)
{
    while (d->subscriptions)
        tally_timeline_unsubscribe(d->subscriptions);
    while (d->samplers)
        tally_sampler_close(d->samplers);
}

/*
 * Stopping ends the device's work but frees none of it, so that a thread
 * still inside a front door's call (a draw or flush racing exit()) reaches
 * memory that is still there: the queue refuses its submission, and its
 * waits return (queue.c). A wait on the GPU that the queue thread runs for a
 * front end's reader ends by the deadline; what the GPU had not finished by
 * then is reported without what it would have told, and said once.
 */
tally_status tally_device_stop(tally_device *d, uint64_t timeout_ns)
{
    if (!d)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (tally_device_inherited(d))
        return TALLY_OK; /* the parent's to stop */
    if (d->stopped)
        return d->outputs;
    uint64_t now = tally_monotonic_ns();
    uint64_t deadline = timeout_ns < UINT64_MAX - now ? now + timeout_ns : UINT64_MAX;
    atomic_store_explicit(&d->wait_deadline_ns, deadline, memory_order_relaxed);
    tally_queue_stop(d);
    if (d->executed_late)
        tally_log(TALLY_LOG_WARN,
                  "%u submission(s) had not finished on the GPU within %.1f s of the device "
                  "stopping: their commands are reported without what the GPU would have told "
                  "of them (measured times and statistics, indirect parameters)",
                  d->executed_late, (double)timeout_ns / 1e9);
    tally_timeline_flush(d);
    tally_run_note_say(d);
    d->outputs = tally_command_report_close(d);
    d->stopped = true;
    return d->outputs;
}

uint64_t tally_device_wait_deadline_ns(const tally_device *d)
{
    return d ? atomic_load_explicit(&d->wait_deadline_ns, memory_order_relaxed) : UINT64_MAX;
}

tally_status tally_device_finish(tally_device *d)
{
    if (!d)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (tally_device_inherited(d))
        return TALLY_OK; /* the parent's to finish: left as it is (leaked) */
    tally_status outputs = tally_device_stop(d, UINT64_MAX);
    tally_capture_end(d);
    tally_run_metadata_close(d);
    free_listeners(d);
    tally_executor_finish(d);
    if (d->backend_state)
        d->backend->destroy(d->backend_state);
    free(d->constants);
    pthread_mutex_destroy(&d->lock);
    pthread_mutex_destroy(&d->listeners_lock);
    pthread_cond_destroy(&d->work_ready);
    pthread_cond_destroy(&d->progress);
    tally_listeners_retire(d->listeners);
    free(d);
    return outputs;
}

void tally_device_close(tally_device *d)
{
    tally_device_finish(d);
}

void tally_device_get_info(const tally_device *d, tally_device_info *info)
{
    if (d && info)
        *info = d->info;
}

const tally_catalogue *tally_device_catalogue(const tally_device *d)
{
    return d ? d->catalogue : NULL;
}

const uint64_t *tally_device_constants(const tally_device *d)
{
    return d ? d->constants : NULL;
}

uint64_t tally_device_gpu_time_ns(tally_device *d)
{
    if (!d)
        return 0;
    if (d->info.clock == TALLY_CLOCK_VIRTUAL)
        return atomic_load_explicit(&d->published_gpu_ns, memory_order_relaxed);
    return tally_monotonic_ns() - d->epoch_cpu_ns;
}

void tally_device_gpu_cpu_timestamps(tally_device *d, uint64_t *gpu_ns, uint64_t *cpu_ns,
                                     uint64_t *correlation_ns)
{
    uint64_t gpu = tally_device_gpu_time_ns(d);
    if (gpu_ns)
        *gpu_ns = gpu;
    if (cpu_ns)
        *cpu_ns = d ? d->epoch_cpu_ns + gpu : 0;
    if (correlation_ns)
        *correlation_ns = 0;
}

uint64_t tally_device_ns_to_ticks(const tally_device *d, uint64_t gpu_ns)
{
    if (!d)
        return 0;
    return (uint64_t)((unsigned __int128)gpu_ns * d->info.timestamp_frequency_hz / 1000000000u);
}

uint64_t tally_device_ticks_to_ns(const tally_device *d, uint64_t ticks)
{
    if (!d || !d->info.timestamp_frequency_hz)
        return 0;
    return (uint64_t)((unsigned __int128)ticks * 1000000000u / d->info.timestamp_frequency_hz);
}
