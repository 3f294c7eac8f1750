/*
 * Whether anyone listens to the work the queue executes. A real GPU's
 * counters count whether or not they are read; a simulated one only pays for
 * counting when something will read the counts, so with nothing listening
 * the queue runs a submission's state, label, frame and marker commands and
 * skips its draws, dispatches and transfers. A listener that starts later
 * sees the work executed after it started, as a counter read on a real GPU
 * does.
 *
 * The listeners: the per-command report and the trace file (fixed when the
 * device opens), timeline readers that are not paused, samplers,
 * TALLY_RUN_NOTE's count of commands (which reads no values), and marker
 * scopes (a results slot begun and not yet ended, counted in open_scopes by
 * results.c; a marker recorded in a command buffer starts listening when the
 * queue reaches it). The first four are read here once per submission; the
 * scopes per work command, one relaxed load, since a scope can open in the
 * middle of a submission.
 */
#include <stdlib.h>

#include "engine.h"

/* TALLY_RUN_NOTE's count (run_note.c) is one more listener: the doors
 * record their commands for it, but it reads no values. */
static uint32_t noting(void)
{
    return tally_run_note_asked() ? 1 : 0;
}

/* A listeners block and the link that keeps it reachable once retired. */
struct listeners_block {
    tally_listeners listeners; /* first: a block is found from its listeners */
    struct listeners_block *next_retired;
};

/* Retired blocks stay allocated for the process's life (a few bytes a
 * closed device) and reachable from here, so no leak checker reports them. */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static struct listeners_block *retired;

tally_listeners *tally_listeners_create(void)
{
    struct listeners_block *block = calloc(1, sizeof(*block));
    return block ? &block->listeners : NULL;
}

void tally_listeners_retire(tally_listeners *listeners)
{
    if (!listeners)
        return;
    __atomic_store_n(&listeners->count, 0, __ATOMIC_RELAXED);
    struct listeners_block *block = (struct listeners_block *)listeners;
    pthread_mutex_lock(&retired_lock);
    block->next_retired = retired;
    retired = block;
    pthread_mutex_unlock(&retired_lock);
}

void tally_listening_update(struct tally_device *d)
{
    bool capturing = tally_capture_open_now(d, tally_monotonic_ns() - d->epoch_cpu_ns);
    uint32_t listeners = (d->report != NULL && capturing) +
                         atomic_load_explicit(&d->timeline_active, memory_order_relaxed) +
                         atomic_load_explicit(&d->sampler_count, memory_order_relaxed) + noting();
    __atomic_store_n(&d->listeners->count, listeners, __ATOMIC_RELAXED);
}

const tally_listeners *tally_device_listeners(const tally_device *d)
{
    static const tally_listeners nobody;
    return d ? d->listeners : &nobody;
}

bool tally_device_listening(const tally_device *d)
{
    return tally_listening_now(tally_device_listeners(d));
}

bool tally_stream_observed(const tally_stream *stream)
{
    if (!stream)
        return false;
    struct tally_device *d = stream->context->device;
    /* Values are read by every listener but the note's count. */
    return stream->open_markers ||
           __atomic_load_n(&d->listeners->count, __ATOMIC_RELAXED) > noting() ||
           atomic_load_explicit(&d->open_scopes, memory_order_relaxed);
}

void tally_listening_begin_submission(struct tally_device *d)
{
    struct tally_executor *e = &d->exec;
    /* begin_submission has just brought next_sample_ns up to date with the
     * sampler list: UINT64_MAX means there is none. */
    e->sampling = e->next_sample_ns != UINT64_MAX;
    e->observed = e->sampling || ((d->report || d->trace) && e->captured) ||
                  atomic_load_explicit(&d->timeline_active, memory_order_relaxed);
    e->reader_waited = false;
    e->noting = tally_run_note_asked();
}
