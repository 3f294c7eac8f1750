/*
 * The record layout of eglGetEventDataBRCM: a 24-byte header (u64 timestamp
 * in microseconds, u32 track, u32 id, u32 event index, u32 event type), then
 * the event's data fields, each as wide as eglGetEventDataFieldInfoBRCM says,
 * packed, in native byte order.
 */
#include <pthread.h>
#include <string.h>

#include "event_records.h"

uint32_t event_data_bytes(uint32_t kind)
{
    const tally_event_kind_info *info = tally_event_kind_get(kind);
    uint32_t bytes = 0;
    for (uint32_t i = 0; info && i < info->field_count; i++)
        bytes += info->fields[i].bytes;
    return bytes;
}

/* Record sizes by kind, computed once: the reader asks for every event. */
static uint32_t record_bytes[TALLY_EVENT_KIND_COUNT];

static void size_records(void)
{
    for (uint32_t kind = 0; kind < TALLY_EVENT_KIND_COUNT; kind++)
        record_bytes[kind] = TALLY_EGL_RECORD_HEADER_BYTES + event_data_bytes(kind);
}

uint32_t event_record_bytes(const tally_event *event)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, size_records);
    return event->kind < TALLY_EVENT_KIND_COUNT ? record_bytes[event->kind]
                                                : TALLY_EGL_RECORD_HEADER_BYTES;
}

static unsigned char *put(unsigned char *out, const void *value, size_t bytes)
{
    memcpy(out, value, bytes);
    return out + bytes;
}

void event_record_write(const tally_event *event, unsigned char *out)
{
    uint64_t microseconds = event->timestamp_ns / 1000u;
    out = put(out, &microseconds, 8);
    out = put(out, &event->track, 4);
    out = put(out, &event->id, 4);
    out = put(out, &event->kind, 4);
    out = put(out, &event->type, 4);
    const tally_event_kind_info *info = tally_event_kind_get(event->kind);
    for (uint32_t i = 0; info && i < info->field_count; i++) {
        if (info->fields[i].bytes == 8) {
            out = put(out, &event->fields[i], 8);
        } else {
            uint32_t narrow = (uint32_t)event->fields[i];
            out = put(out, &narrow, 4);
        }
    }
}
