/*
 * The timeline: event kinds and tracks, per-reader bounded rings, and the
 * trace file. The queue thread batches its events and publishes them once per
 * submission (or per full batch) under the listeners lock.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define U64(n)                                                                                     \
    {                                                                                              \
        n, false, 8                                                                                \
    }
#define U32(n)                                                                                     \
    {                                                                                              \
        n, false, 4                                                                                \
    }

static const tally_event_field_info draw_fields[] = {
    U64("vertices"), U32("instances"), U64("primitives"), U32("indexed"), U32("topology")};
static const tally_event_field_info dispatch_fields[] = {U32("groups_x"),     U32("groups_y"),
                                                         U32("groups_z"),     U32("local_size_x"),
                                                         U32("local_size_y"), U32("local_size_z")};
static const tally_event_field_info transfer_fields[] = {U64("bytes"), U32("kind")};
static const tally_event_field_info submission_fields[] = {U64("submission"), U32("streams"),
                                                           U64("commands")};
static const tally_event_field_info frame_fields[] = {U64("frame"), U32("context")};
static const tally_event_field_info flush_fields[] = {U32("context")};
static const tally_event_field_info unit_fields[] = {U32("command"), U64("busy_cycles")};

#define KIND(name, fields)                                                                         \
    {                                                                                              \
        name, sizeof(fields) / sizeof(fields[0]), fields                                           \
    }

static const tally_event_kind_info kinds[TALLY_EVENT_KIND_COUNT] = {
    [TALLY_EVENT_KIND_DRAW] = KIND("Draw", draw_fields),
    [TALLY_EVENT_KIND_DISPATCH] = KIND("Dispatch", dispatch_fields),
    [TALLY_EVENT_KIND_TRANSFER] = KIND("Transfer", transfer_fields),
    [TALLY_EVENT_KIND_SUBMISSION] = KIND("Submission", submission_fields),
    [TALLY_EVENT_KIND_FRAME] = KIND("Frame", frame_fields),
    [TALLY_EVENT_KIND_FLUSH] = KIND("Flush", flush_fields),
    [TALLY_EVENT_KIND_UNIT_BUSY] = KIND("UnitBusy", unit_fields),
};

const tally_event_kind_info *tally_event_kind_get(uint32_t kind)
{
    return kind < TALLY_EVENT_KIND_COUNT ? &kinds[kind] : NULL;
}

uint32_t tally_timeline_track_count(const tally_device *device)
{
    return device ? TALLY_TRACK_FIRST_UNIT + device->catalogue->unit_count : 0;
}

const char *tally_timeline_track_name(const tally_device *device, uint32_t track)
{
    if (!device || track >= tally_timeline_track_count(device))
        return NULL;
    if (track == TALLY_TRACK_DRIVER)
        return "Driver";
    if (track == TALLY_TRACK_QUEUE)
        return "Queue";
    return device->catalogue->units[track - TALLY_TRACK_FIRST_UNIT].symbol;
}

/* Callers hold listeners_lock. */
void tally_timeline_update_active(struct tally_device *d)
{
    bool listening = d->trace != NULL;
    for (struct tally_subscription *s = d->subscriptions; s && !listening; s = s->next)
        listening = !s->paused;
    atomic_store(&d->timeline_active, listening);
    tally_listening_update(d);
}

/* --- trace file --------------------------------------------------------------- */

/* A command's own events: the trace gets each command whole instead, named
 * and with its counters (command_report.c), and the units' activity in
 * their counters. */
static bool written_per_command(uint32_t kind)
{
    return kind == TALLY_EVENT_KIND_DRAW || kind == TALLY_EVENT_KIND_DISPATCH ||
           kind == TALLY_EVENT_KIND_TRANSFER || kind == TALLY_EVENT_KIND_UNIT_BUSY;
}

/* Who made the events being written: the program's thread (its tid; 0:
 * not known) and, for a submission's events, the API call that made it. */
struct event_source {
    uint32_t tid;
    const char *submission_call; /* NULL: not a submission's */
};

static void trace_event(struct tally_device *d, const tally_event *ev,
                        const struct event_source *source)
{
    if (written_per_command(ev->kind))
        return;
    const tally_event_kind_info *k = &kinds[ev->kind];
    tally_trace_arg args[TALLY_EVENT_MAX_FIELDS];
    for (uint32_t i = 0; i < k->field_count; i++)
        args[i] = (tally_trace_arg){k->fields[i].name, TALLY_TRACE_ARG_U64, {.u64 = ev->fields[i]}};
    uint32_t n = k->field_count;
    if (ev->track == TALLY_TRACK_DRIVER && ev->type == TALLY_EVENT_INSTANT) {
        /* What the driver saw is the program's API calls: a submission is
         * named for the call that made it. */
        bool call = ev->kind == TALLY_EVENT_KIND_SUBMISSION && source->submission_call;
        const char *name = call ? source->submission_call : k->name;
        tally_trace_call(d->trace, ev->track, source->tid, name, ev->timestamp_ns, args, n);
    } else if (ev->type == TALLY_EVENT_BEGIN) {
        tally_trace_begin(d->trace, ev->track, k->name, ev->timestamp_ns, args, n);
    } else if (ev->type == TALLY_EVENT_END) {
        tally_trace_end(d->trace, ev->track, k->name, ev->timestamp_ns, args, n);
    } else {
        tally_trace_instant(d->trace, ev->track, k->name, ev->timestamp_ns, args, n);
    }
}

/* --- subscriptions ------------------------------------------------------------ */

static void ring_push(struct tally_subscription *s, const tally_event *ev)
{
    if (s->count == s->capacity) {
        s->lost = true; /* keep what fits, drop the new */
        return;
    }
    s->ring[(s->head + s->count) % s->capacity] = *ev;
    s->count++;
}

/* Callers hold listeners_lock. */
static void publish(struct tally_device *d, const tally_event *events, uint32_t n,
                    const struct event_source *source)
{
    for (struct tally_subscription *s = d->subscriptions; s; s = s->next) {
        if (s->paused)
            continue;
        pthread_mutex_lock(&s->lock);
        for (uint32_t i = 0; i < n; i++)
            ring_push(s, &events[i]);
        pthread_mutex_unlock(&s->lock);
    }
    if (d->trace)
        for (uint32_t i = 0; i < n; i++)
            trace_event(d, &events[i], source);
}

void tally_timeline_flush(struct tally_device *d)
{
    struct tally_executor *e = &d->exec;
    if (!e->event_count)
        return;
    /* The batch is one submission's, which its thread made with its call. */
    const struct event_source source = {e->submitting_thread, e->submission_call};
    pthread_mutex_lock(&d->listeners_lock);
    publish(d, e->events, e->event_count, &source);
    pthread_mutex_unlock(&d->listeners_lock);
    e->event_count = 0;
}

/* Queue thread: batches an event while anyone listens. */
tally_status tally_device_trace_counter(tally_device *d, const char *track, uint64_t gpu_ns,
                                        double value)
{
    if (!d || !track)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_status status = TALLY_OK;
    pthread_mutex_lock(&d->listeners_lock);
    if (d->trace)
        status = tally_trace_counter(d->trace, track, gpu_ns, value);
    pthread_mutex_unlock(&d->listeners_lock);
    return status;
}

void tally_timeline_push(struct tally_device *d, const tally_event *ev)
{
    struct tally_executor *e = &d->exec;
    if (!atomic_load_explicit(&d->timeline_active, memory_order_relaxed))
        return;
    e->events[e->event_count++] = *ev;
    if (e->event_count == e->event_capacity)
        tally_timeline_flush(d);
}

void tally_timeline_emit(tally_device *d, uint32_t kind, uint32_t type, const uint64_t *fields,
                         uint32_t field_count)
{
    if (!d || kind >= TALLY_EVENT_KIND_COUNT || type > TALLY_EVENT_INSTANT ||
        field_count > TALLY_EVENT_MAX_FIELDS || (field_count && !fields))
        return;
    if (!atomic_load_explicit(&d->timeline_active, memory_order_relaxed))
        return;
    tally_event ev = {.timestamp_ns = tally_device_gpu_time_ns(d),
                      .track = TALLY_TRACK_DRIVER,
                      .kind = kind,
                      .type = type};
    if (field_count)
        memcpy(ev.fields, fields, field_count * sizeof(uint64_t));
    const struct event_source source = {tally_thread_id(), NULL}; /* the caller's own */
    pthread_mutex_lock(&d->listeners_lock);
    publish(d, &ev, 1, &source);
    pthread_mutex_unlock(&d->listeners_lock);
}

tally_status tally_timeline_subscribe(tally_device *d, uint32_t capacity, tally_subscription **out)
{
    if (!d || !out || !capacity)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_subscription *s = calloc(1, sizeof(*s));
    tally_event *ring = calloc(capacity, sizeof(*ring));
    if (!s || !ring) {
        free(s);
        free(ring);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->device = d;
    s->ring = ring;
    s->capacity = capacity;
    pthread_mutex_lock(&d->listeners_lock);
    s->next = d->subscriptions;
    d->subscriptions = s;
    tally_timeline_update_active(d);
    pthread_mutex_unlock(&d->listeners_lock);
    *out = s;
    return TALLY_OK;
}

void tally_timeline_unsubscribe(tally_subscription *s)
{
    if (!s)
        return;
    struct tally_device *d = s->device;
    pthread_mutex_lock(&d->listeners_lock);
    for (struct tally_subscription **p = &d->subscriptions; *p; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            break;
        }
    }
    tally_timeline_update_active(d);
    pthread_mutex_unlock(&d->listeners_lock);
    pthread_mutex_destroy(&s->lock);
    free(s->ring);
    free(s);
}

/* Copies up to max_events unread events, from the first-th oldest on; the
 * caller holds s->lock. */
static uint32_t copy_unread(const struct tally_subscription *s, uint32_t first, tally_event *events,
                            uint32_t max_events)
{
    uint32_t available = first < s->count ? s->count - first : 0;
    uint32_t n = available < max_events ? available : max_events;
    for (uint32_t i = 0; i < n; i++)
        events[i] = s->ring[(s->head + first + i) % s->capacity];
    return n;
}

tally_status tally_timeline_read(tally_subscription *s, tally_event *events, uint32_t max_events,
                                 uint32_t *count, bool *lost)
{
    if (!s || !count || (max_events && !events))
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    uint32_t n = copy_unread(s, 0, events, max_events);
    s->head = (s->head + n) % s->capacity;
    s->count -= n;
    if (lost)
        *lost = s->lost;
    s->lost = false;
    pthread_mutex_unlock(&s->lock);
    *count = n;
    return TALLY_OK;
}

uint32_t tally_timeline_pending(tally_subscription *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    uint32_t n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

tally_status tally_timeline_peek(tally_subscription *s, uint32_t first, tally_event *events,
                                 uint32_t max_events, uint32_t *count, bool *lost)
{
    if (!s || !count || (max_events && !events))
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    uint32_t n = copy_unread(s, first, events, max_events);
    if (lost)
        *lost = s->lost;
    pthread_mutex_unlock(&s->lock);
    *count = n;
    return TALLY_OK;
}

void tally_timeline_set_paused(tally_subscription *s, bool paused)
{
    if (!s)
        return;
    struct tally_device *d = s->device;
    pthread_mutex_lock(&d->listeners_lock);
    s->paused = paused;
    tally_timeline_update_active(d);
    pthread_mutex_unlock(&d->listeners_lock);
}
