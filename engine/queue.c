/*
 * The device's queue: submissions from any thread go into a FIFO under the
 * device lock (once per submission, never per command), and one thread
 * executes them in order, like a GPU's command processor. Once the device
 * stops (tally_device_stop) the queue refuses submissions and, when its
 * thread has ended, every wait returns; a device inherited through fork()
 * has no thread at all, so nothing here touches it.
 */
#include <stdlib.h>

#include "engine.h"
#include "thread_start.h"

static void free_pending(struct tally_pending *p)
{
    if (p->indirect_reader.release)
        p->indirect_reader.release(p->indirect_reader.user);
    if (p->measurement_reader.release)
        p->measurement_reader.release(p->measurement_reader.user);
    for (uint32_t i = 0; i < p->stream_count; i++) {
        tally_recording_unref(p->streams[i].recording);
        tally_context_unref(p->streams[i].context);
    }
    free(p);
}

/* A submission the queue did not accept: its readers are the caller's to
 * release (tally_submission), so only the references go. */
static void drop_pending(struct tally_pending *p)
{
    p->indirect_reader.release = NULL;
    p->measurement_reader.release = NULL;
    free_pending(p);
}

static struct tally_pending *build_pending(const tally_submission *sub)
{
    struct tally_pending *p =
        calloc(1, sizeof(*p) + sub->stream_count * sizeof(struct tally_pending_stream));
    if (!p)
        return NULL;
    p->pass_index = sub->pass_index;
    p->tid = tally_thread_id();
    p->api_name = sub->api_name ? sub->api_name : "submit";
    p->flags = sub->flags;
    if (sub->indirect_reader)
        p->indirect_reader = *sub->indirect_reader;
    if (sub->measurement_reader)
        p->measurement_reader = *sub->measurement_reader;
    for (uint32_t i = 0; i < sub->stream_count; i++) {
        struct tally_stream *s = sub->streams[i];
        struct tally_pending_stream *ps = &p->streams[p->stream_count++];
        tally_stream_close_run(s);
        ps->recording = s->recording;
        ps->count = s->recording ? s->recording->count : 0;
        ps->commands = s->recording ? s->recording->commands : 0;
        if (ps->recording)
            tally_recording_ref(ps->recording);
        ps->context = s->context;
        tally_context_ref(s->context);
        ps->stream_id = s->id;
        if (sub->flags & TALLY_SUBMIT_CONSUME)
            tally_stream_consume(s);
    }
    return p;
}

static bool valid_submission(tally_device *device, const tally_submission *sub)
{
    if (!device || !sub || (sub->stream_count && !sub->streams) || sub->pass_index >= 32)
        return false;
    const tally_indirect_reader *reader = sub->indirect_reader;
    if (reader && (!reader->read || !reader->release))
        return false;
    const tally_measurement_reader *measured = sub->measurement_reader;
    if (measured && (!measured->read || !measured->release))
        return false;
    for (uint32_t i = 0; i < sub->stream_count; i++)
        if (!sub->streams[i] || sub->streams[i]->context->device != device)
            return false;
    return true;
}

tally_status tally_submit(tally_device *device, const tally_submission *sub, uint64_t *seqno)
{
    if (!valid_submission(device, sub))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (tally_device_inherited(device))
        return TALLY_ERROR_INVALID_STATE;
    struct tally_pending *p = build_pending(sub);
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    p->submit_gpu_ns = tally_monotonic_ns() - device->epoch_cpu_ns;
    p->captured = tally_capture_open_now(device, p->submit_gpu_ns);
    p->start_gpu_ns = p->submit_gpu_ns;
    if (sub->issued_ns) {
        uint64_t issued =
            sub->issued_ns > device->epoch_cpu_ns ? sub->issued_ns - device->epoch_cpu_ns : 0;
        if (issued < p->submit_gpu_ns)
            p->start_gpu_ns = issued;
    }
    pthread_mutex_lock(&device->lock);
    if (device->stopping) {
        pthread_mutex_unlock(&device->lock);
        drop_pending(p);
        return TALLY_ERROR_INVALID_STATE;
    }
    p->seqno = ++device->next_seqno;
    if (device->tail)
        device->tail->next = p;
    else
        device->head = p;
    device->tail = p;
    if (seqno)
        *seqno = p->seqno;
    bool wake = device->queue_asleep; /* else it finds the work itself, lingering */
    device->queue_asleep = false;
    pthread_mutex_unlock(&device->lock);
    if (wake)
        pthread_cond_signal(&device->work_ready);
    return TALLY_OK;
}

tally_status tally_submit_stream(tally_device *device, tally_stream *stream, uint32_t flags,
                                 const char *api_name, uint64_t *seqno)
{
    if (!device || !stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_submission submission = {
        .streams = &stream,
        .stream_count = 1,
        .flags = flags | TALLY_SUBMIT_CONSUME,
        .api_name = api_name,
    };
    tally_status status = tally_submit(device, &submission, seqno);
    if (status != TALLY_OK)
        tally_stream_consume(stream);
    return status;
}

uint64_t tally_completed_seqno(tally_device *device)
{
    return device ? atomic_load(&device->completed_seqno) : 0;
}

tally_status tally_wait_seqno(tally_device *device, uint64_t seqno, uint64_t timeout_ns)
{
    if (!device)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (tally_device_inherited(device))
        return TALLY_TIMEOUT; /* nothing executes it here */
    struct timespec storage;
    const struct timespec *deadline = tally_deadline(timeout_ns, &storage);
    pthread_mutex_lock(&device->lock);
    bool submitted = seqno <= device->next_seqno; /* else it would wait forever */
    if (submitted && atomic_load(&device->completed_seqno) < seqno)
        pthread_cond_signal(&device->work_ready); /* someone waits: no lingering */
    while (submitted && atomic_load(&device->completed_seqno) < seqno && !device->drained)
        if (!tally_cond_wait(&device->progress, &device->lock, deadline))
            break;
    bool done = atomic_load(&device->completed_seqno) >= seqno;
    pthread_mutex_unlock(&device->lock);
    if (!submitted)
        return TALLY_ERROR_INVALID_ARGUMENT;
    return done ? TALLY_OK : TALLY_TIMEOUT;
}

tally_status tally_device_wait_idle(tally_device *device)
{
    if (!device)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (tally_device_inherited(device))
        return TALLY_TIMEOUT;
    pthread_mutex_lock(&device->lock);
    uint64_t last = device->next_seqno;
    pthread_mutex_unlock(&device->lock);
    return tally_wait_seqno(device, last, UINT64_MAX);
}

/*
 * Out of work, the queue thread lingers before it sleeps: for LINGER_NS
 * after its last submission it looks for work every LINGER_TICK_NS, and a
 * submission meanwhile wakes nobody. A program that submits often (a flush
 * per frame, OpenCL's batches of enqueues) then hands its submissions over
 * without a futex call each, and, where it shares a CPU with the queue
 * thread, without a switch to it each. A waiter (tally_wait_seqno, a
 * results wait) wakes the thread at once. The cost: rows and samples come
 * up to a tick later, and a thread that looks a few times after work.
 */
#define LINGER_NS (4ull * 1000 * 1000)
#define LINGER_TICK_NS (1ull * 1000 * 1000)

/* When the idle queue must wake (CLOCK_MONOTONIC ns; UINT64_MAX: when
 * work arrives): for the report's rows and trace, and in realtime mode for
 * the next sample. */
static uint64_t wake_due(struct tally_device *d, uint64_t report_due)
{
    if (d->info.clock != TALLY_CLOCK_REALTIME)
        return report_due;
    uint64_t sample = tally_samplers_next_ns(d);
    if (sample == UINT64_MAX)
        return report_due;
    return d->epoch_cpu_ns + sample < report_due ? d->epoch_cpu_ns + sample : report_due;
}

/* The report's, the trace's and the capture window's next due time. */
static uint64_t outputs_due(struct tally_device *d, uint64_t now)
{
    uint64_t capture = tally_capture_tick(d, now - d->epoch_cpu_ns);
    uint64_t report = tally_command_report_tick(d, now);
    if (capture != UINT64_MAX && d->epoch_cpu_ns + capture < report)
        report = d->epoch_cpu_ns + capture;
    return report;
}

/* The idle queue's work: in realtime mode the device idles up to now
 * (samples fall due), and rows waiting for the report's writer are handed
 * over once they have waited long enough. */
static uint64_t while_idle(struct tally_device *d)
{
    uint64_t now = tally_monotonic_ns();
    if (d->info.clock == TALLY_CLOCK_REALTIME)
        tally_executor_idle_until(d, now - d->epoch_cpu_ns);
    return wake_due(d, outputs_due(d, now));
}

static const struct timespec *deadline_at(uint64_t monotonic_ns, struct timespec *ts)
{
    if (monotonic_ns == UINT64_MAX)
        return NULL;
    ts->tv_sec = (time_t)(monotonic_ns / 1000000000u);
    ts->tv_nsec = (long)(monotonic_ns % 1000000000u);
    return ts;
}

static bool past_deadline(struct tally_device *d)
{
    uint64_t deadline = atomic_load_explicit(&d->wait_deadline_ns, memory_order_relaxed);
    return deadline != UINT64_MAX && tally_monotonic_ns() >= deadline;
}

/* When the queue, out of work, looks again (CLOCK_MONOTONIC ns): within a
 * tick while it lingers, else at `due`; it sleeps until woken (asleep)
 * once the linger is over. Under d->lock. */
static uint64_t next_look(struct tally_device *d, uint64_t linger_until, uint64_t due)
{
    uint64_t now = tally_monotonic_ns();
    bool lingering = now < linger_until;
    d->queue_asleep = !lingering;
    return lingering && now + LINGER_TICK_NS < due ? now + LINGER_TICK_NS : due;
}

static void *queue_main(void *arg)
{
    struct tally_device *d = arg;
    uint64_t now = tally_monotonic_ns(), linger_until = 0;
    uint64_t due = wake_due(d, outputs_due(d, now));
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->head && !d->stopping) {
            struct timespec ts;
            uint64_t look = next_look(d, linger_until, due);
            bool woken = tally_cond_wait(&d->work_ready, &d->lock, deadline_at(look, &ts));
            d->queue_asleep = false;
            /* A linger's look that finds nothing changes nothing: the idle
             * work (the realtime clock moving on, outputs) waits for its
             * due time or a wake, as without lingering, so that the clock
             * does not run past recordings a front end still holds. */
            if (!d->head && (woken || look == due)) {
                pthread_mutex_unlock(&d->lock);
                due = while_idle(d);
                pthread_mutex_lock(&d->lock);
            }
        }
        struct tally_pending *p = d->head;
        if (!p)
            break; /* stopping, and nothing left */
        d->head = p->next;
        if (!d->head)
            d->tail = NULL;
        pthread_mutex_unlock(&d->lock);
        /* A reader that waits on the GPU was cut short by the deadline. */
        bool waits = p->indirect_reader.wait || p->measurement_reader.wait;
        tally_execute_submission(d, p);
        if (waits && past_deadline(d))
            d->executed_late++;
        uint64_t seqno = p->seqno;
        free_pending(p);
        now = tally_monotonic_ns();
        linger_until = now + LINGER_NS;
        due = wake_due(d, outputs_due(d, now));
        pthread_mutex_lock(&d->lock);
        atomic_store(&d->completed_seqno, seqno);
        pthread_cond_broadcast(&d->progress);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

tally_status tally_queue_start(struct tally_device *d)
{
    /* Named, so profilers do not charge the engine's work to the program. */
    if (tally_thread_start(&d->thread, "tally-queue", queue_main, d) != 0)
        return TALLY_ERROR_OUT_OF_MEMORY;
    d->thread_started = true;
    return TALLY_OK;
}

/* Executes everything submitted, then ends the thread. */
void tally_queue_stop(struct tally_device *d)
{
    pthread_mutex_lock(&d->lock);
    d->stopping = true;
    pthread_cond_signal(&d->work_ready);
    pthread_mutex_unlock(&d->lock);
    if (d->thread_started)
        pthread_join(d->thread, NULL);
    d->thread_started = false;
    pthread_mutex_lock(&d->lock);
    d->drained = true;
    pthread_cond_broadcast(&d->progress);
    pthread_mutex_unlock(&d->lock);
}
