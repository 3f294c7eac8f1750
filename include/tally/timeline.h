/*
 * The device timeline: begin, end and instant events on tracks (the driver,
 * the queue, each hardware unit), with typed data fields.
 *
 * The queue thread records events only while someone listens: a subscription
 * (a bounded ring per reader; when it is full, new events are dropped and the
 * reader is told so) or the device's trace file.
 */
#ifndef TALLY_TIMELINE_H
#define TALLY_TIMELINE_H

#include "tally/device.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The values are EGL_BRCM_event_monitor's event types. */
typedef enum tally_event_type {
    TALLY_EVENT_BEGIN = 0,
    TALLY_EVENT_END = 1,
    TALLY_EVENT_INSTANT = 2,
} tally_event_type;

typedef enum tally_event_kind {
    TALLY_EVENT_KIND_DRAW = 0,
    TALLY_EVENT_KIND_DISPATCH = 1,
    TALLY_EVENT_KIND_TRANSFER = 2,
    TALLY_EVENT_KIND_SUBMISSION = 3,
    TALLY_EVENT_KIND_FRAME = 4,
    TALLY_EVENT_KIND_FLUSH = 5,
    TALLY_EVENT_KIND_UNIT_BUSY = 6,
    TALLY_EVENT_KIND_COUNT
} tally_event_kind;

#define TALLY_EVENT_MAX_FIELDS 6

typedef struct tally_event {
    uint64_t timestamp_ns; /* GPU time */
    uint32_t track;
    uint32_t id; /* a begin and its end share it */
    uint32_t kind;
    uint32_t type; /* tally_event_type */
    uint64_t fields[TALLY_EVENT_MAX_FIELDS];
} tally_event;

typedef struct tally_event_field_info {
    const char *name;
    bool is_signed;
    uint32_t bytes; /* 4 or 8 */
} tally_event_field_info;

typedef struct tally_event_kind_info {
    const char *name;
    uint32_t field_count;
    const tally_event_field_info *fields;
} tally_event_kind_info;

TALLY_API const tally_event_kind_info *tally_event_kind_get(uint32_t kind);

/* Tracks: 0 is the driver (CPU side), 1 the queue, then one per hardware unit
 * of the catalogue, in catalogue order. */
enum { TALLY_TRACK_DRIVER = 0, TALLY_TRACK_QUEUE = 1, TALLY_TRACK_FIRST_UNIT = 2 };
TALLY_API uint32_t tally_timeline_track_count(const tally_device *device);
TALLY_API const char *tally_timeline_track_name(const tally_device *device, uint32_t track);

typedef struct tally_subscription tally_subscription;

/* A reader of every event from now on, keeping at most `capacity` unread. */
TALLY_API tally_status tally_timeline_subscribe(tally_device *device, uint32_t capacity,
                                                tally_subscription **out);
TALLY_API void tally_timeline_unsubscribe(tally_subscription *subscription);
/* Takes up to max_events of the oldest unread events; *lost (may be NULL)
 * says whether events were dropped since the previous read, and is cleared. */
TALLY_API tally_status tally_timeline_read(tally_subscription *subscription, tally_event *events,
                                           uint32_t max_events, uint32_t *count, bool *lost);
TALLY_API uint32_t tally_timeline_pending(tally_subscription *subscription);
/* Copies up to max_events unread events, starting `first` events after the
 * oldest, without taking them; *lost (may be NULL) says whether events were
 * dropped since the previous read, and is left set. A reader that must know
 * what a batch holds before taking it (EGL_BRCM_event_monitor copies whole
 * records into a caller's buffer) peeks, then reads what it used. */
TALLY_API tally_status tally_timeline_peek(tally_subscription *subscription, uint32_t first,
                                           tally_event *events, uint32_t max_events,
                                           uint32_t *count, bool *lost);
/* A paused subscription keeps what it holds and takes no new events (they
 * are not counted as lost); while every subscription is paused and no trace
 * is written, the queue thread records nothing. */
TALLY_API void tally_timeline_set_paused(tally_subscription *subscription, bool paused);

/* Driver-side happenings that are not submissions, on the driver track at the
 * current GPU time. (Submissions, flushes and frames get theirs from
 * tally_submit: see TALLY_SUBMIT_FLUSH and tally_stream_frame_boundary.) */
TALLY_API void tally_timeline_emit(tally_device *device, uint32_t kind, uint32_t type,
                                   const uint64_t *fields, uint32_t field_count);

#ifdef __cplusplus
}
#endif

#endif
