/* Owns the Perfetto protobuf encoding of the timeline (see perfetto_writer.h). */
#include "perfetto_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Field numbers, from Perfetto's protos/perfetto/trace/ (trace.proto,
 * trace_packet.proto, track_event/track_event.proto, track_descriptor.proto,
 * process_descriptor.proto, debug_annotation.proto,
 * interned_data/interned_data.proto). */
enum {
    TRACE_PACKET = 1,
    PACKET_TIMESTAMP = 8,
    PACKET_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
    PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12,
    PACKET_SEQUENCE_FLAGS = 13,
    PACKET_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    SEQ_NEEDS_INCREMENTAL_STATE = 2,
    EVENT_ANNOTATIONS = 4,
    EVENT_TYPE = 9,
    EVENT_NAME_IID = 10,
    EVENT_TRACK_UUID = 11,
    EVENT_COUNTER_VALUE = 30,
    EVENT_DOUBLE_COUNTER_VALUE = 44,
    TYPE_SLICE_BEGIN = 1,
    TYPE_SLICE_END = 2,
    TYPE_INSTANT = 3,
    TYPE_COUNTER = 4,
    ANNOTATION_NAME_IID = 1,
    ANNOTATION_UINT = 3,
    ANNOTATION_DOUBLE = 5,
    ANNOTATION_STRING = 6,
    INTERNED_EVENT_NAMES = 2,
    INTERNED_ANNOTATION_NAMES = 3,
    INTERNED_IID = 1,
    INTERNED_NAME = 2,
    TRACK_UUID = 1,
    TRACK_NAME = 2,
    TRACK_PROCESS = 3,
    TRACK_PARENT_UUID = 5,
    TRACK_COUNTER = 8,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
};

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2 };

/* The trace's track uuids: the process, each timeline track, each counter. */
enum { PROCESS_UUID = 1 };
#define TRACK_UUID_OF(track) (0x100u + (uint64_t)(track))
#define COUNTER_UUID_OF(index) (0x10000u + (uint64_t)(index))

enum { OUT_BUFFER = 1024 * 1024 };

/* A growing byte buffer; `failed` once an allocation failed. */
struct bytes {
    uint8_t *data;
    size_t length, capacity;
    bool failed;
};

/* Names given iids (interned strings) or uuids (counter tracks), in order;
 * `seen` the last pointer each was found by (names are mostly static). */
struct names {
    char **items;
    const char **seen;
    uint32_t count, capacity;
};

struct perfetto_writer {
    FILE *out;
    struct bytes buffer; /* encoded packets not yet written */
    struct bytes event, interned, packet, scratch;
    struct names event_names, annotation_names, counters;
    uint8_t *tracks_described; /* per timeline track: a descriptor was written */
    uint32_t tracks_capacity;
    bool failed;
};

static bool reserve(struct bytes *b, size_t more)
{
    if (b->length + more <= b->capacity)
        return !b->failed;
    size_t capacity = b->capacity ? b->capacity : 256;
    while (capacity < b->length + more)
        capacity *= 2;
    uint8_t *data = realloc(b->data, capacity);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->capacity = capacity;
    return true;
}

static void put_raw(struct bytes *b, const void *data, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->data + b->length, data, n);
    b->length += n;
}

static void put_varint(struct bytes *b, uint64_t v)
{
    if (!reserve(b, 10))
        return;
    uint8_t *p = b->data + b->length;
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    b->length = (size_t)(p - b->data);
}

static void put_tag(struct bytes *b, uint32_t field, uint32_t wire)
{
    put_varint(b, (uint64_t)field << 3 | wire);
}

static void put_uint_field(struct bytes *b, uint32_t field, uint64_t v)
{
    put_tag(b, field, WIRE_VARINT);
    put_varint(b, v);
}

static void put_double_field(struct bytes *b, uint32_t field, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(bits >> (8 * i));
    put_tag(b, field, WIRE_FIXED64);
    put_raw(b, le, sizeof le);
}

static void put_bytes_field(struct bytes *b, uint32_t field, const void *data, size_t n)
{
    put_tag(b, field, WIRE_BYTES);
    put_varint(b, n);
    put_raw(b, data, n);
}

static void put_string_field(struct bytes *b, uint32_t field, const char *s)
{
    put_bytes_field(b, field, s, strlen(s));
}

static void put_message_field(struct bytes *b, uint32_t field, const struct bytes *message)
{
    put_bytes_field(b, field, message->data, message->length);
}

/* The iid (1-based) of name; *added when it is new. 0 when out of memory. */
static uint32_t name_index(struct names *n, const char *name, bool *added)
{
    *added = false;
    for (uint32_t i = 0; i < n->count; i++)
        if (n->seen[i] == name && strcmp(n->items[i], name) == 0)
            return i + 1; /* one comparison where the same pointer comes back */
    for (uint32_t i = 0; i < n->count; i++) {
        if (strcmp(n->items[i], name) == 0) {
            n->seen[i] = name;
            return i + 1;
        }
    }
    if (n->count == n->capacity) {
        uint32_t capacity = n->capacity ? 2 * n->capacity : 16;
        char **items = realloc(n->items, capacity * sizeof *items);
        if (items)
            n->items = items;
        const char **seen = items ? realloc(n->seen, capacity * sizeof *seen) : NULL;
        if (!seen)
            return 0;
        n->seen = seen;
        n->capacity = capacity;
    }
    if (!(n->items[n->count] = strdup(name)))
        return 0;
    n->seen[n->count] = name;
    *added = true;
    return ++n->count;
}

static void free_names(struct names *n)
{
    for (uint32_t i = 0; i < n->count; i++)
        free(n->items[i]);
    free(n->items);
    free(n->seen);
}

/* Appends one packet (built in w->packet) to the output as Trace.packet. */
static void emit_packet(perfetto_writer *w)
{
    struct bytes *out = &w->buffer;
    put_message_field(out, TRACE_PACKET, &w->packet);
    if (out->length >= OUT_BUFFER) {
        if (fwrite(out->data, 1, out->length, w->out) != out->length)
            w->failed = true;
        out->length = 0;
    }
    w->failed |= out->failed || w->packet.failed || w->event.failed || w->interned.failed ||
                 w->scratch.failed;
}

static void start_packet(perfetto_writer *w, uint32_t flags)
{
    w->packet.length = 0;
    put_uint_field(&w->packet, PACKET_SEQUENCE_ID, 1);
    if (flags)
        put_uint_field(&w->packet, PACKET_SEQUENCE_FLAGS, flags);
}

static void put_track_descriptor(perfetto_writer *w, uint64_t uuid, const char *name, bool counter)
{
    struct bytes *d = &w->scratch;
    d->length = 0;
    put_uint_field(d, TRACK_UUID, uuid);
    put_uint_field(d, TRACK_PARENT_UUID, PROCESS_UUID);
    put_string_field(d, TRACK_NAME, name);
    if (counter)
        put_bytes_field(d, TRACK_COUNTER, "", 0); /* an empty CounterDescriptor */
    start_packet(w, 0);
    put_message_field(&w->packet, PACKET_TRACK_DESCRIPTOR, d);
    emit_packet(w);
}

perfetto_writer *perfetto_open(FILE *out, const char *process_name)
{
    perfetto_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->out = out;
    /* The process track, and with it the sequence's incremental state
     * (interned names) starting empty. */
    struct bytes *process = &w->event;
    put_uint_field(process, PROCESS_PID, (uint64_t)getpid());
    put_string_field(process, PROCESS_NAME, process_name);
    struct bytes *d = &w->scratch;
    put_uint_field(d, TRACK_UUID, PROCESS_UUID);
    put_message_field(d, TRACK_PROCESS, process);
    start_packet(w, SEQ_INCREMENTAL_STATE_CLEARED);
    put_message_field(&w->packet, PACKET_TRACK_DESCRIPTOR, d);
    emit_packet(w);
    return w;
}

static bool described(perfetto_writer *w, uint32_t track)
{
    if (track >= w->tracks_capacity) {
        uint32_t capacity = track + 16;
        uint8_t *grown = realloc(w->tracks_described, capacity);
        if (!grown) {
            w->failed = true;
            return true; /* events go on an undescribed track rather than nowhere */
        }
        memset(grown + w->tracks_capacity, 0, capacity - w->tracks_capacity);
        w->tracks_described = grown;
        w->tracks_capacity = capacity;
    }
    return w->tracks_described[track];
}

void perfetto_name_track(perfetto_writer *w, uint32_t track, const char *name)
{
    if (!described(w, track) && track < w->tracks_capacity)
        w->tracks_described[track] = 1;
    put_track_descriptor(w, TRACK_UUID_OF(track), name, false);
}

/* Tracks events land on are described first, if nobody named them. */
static void ensure_track(perfetto_writer *w, uint32_t track)
{
    if (described(w, track))
        return;
    char name[32];
    snprintf(name, sizeof name, "Track %u", track);
    perfetto_name_track(w, track, name);
}

/* An interned name's iid, adding it to the packet's interned data when new. */
static uint32_t intern(perfetto_writer *w, struct names *names, uint32_t table, const char *name)
{
    bool added;
    uint32_t iid = name_index(names, name, &added);
    if (!iid) {
        w->failed = true;
        return 0;
    }
    if (added) {
        struct bytes *entry = &w->scratch;
        entry->length = 0;
        put_uint_field(entry, INTERNED_IID, iid);
        put_string_field(entry, INTERNED_NAME, name);
        put_message_field(&w->interned, table, entry);
    }
    return iid;
}

static void put_annotations(perfetto_writer *w, const tally_trace_arg *args, uint32_t count)
{
    struct bytes annotation = {0};
    for (uint32_t i = 0; i < count; i++) {
        annotation.length = 0;
        uint32_t iid = intern(w, &w->annotation_names, INTERNED_ANNOTATION_NAMES, args[i].key);
        put_uint_field(&annotation, ANNOTATION_NAME_IID, iid);
        if (args[i].type == TALLY_TRACE_ARG_U64)
            put_uint_field(&annotation, ANNOTATION_UINT, args[i].value.u64);
        else if (args[i].type == TALLY_TRACE_ARG_F64)
            put_double_field(&annotation, ANNOTATION_DOUBLE, args[i].value.f64);
        else
            put_string_field(&annotation, ANNOTATION_STRING, args[i].value.string);
        put_message_field(&w->event, EVENT_ANNOTATIONS, &annotation);
    }
    w->failed |= annotation.failed;
    free(annotation.data);
}

/* One TrackEvent packet; name may be NULL (a slice's end). */
static void track_event(perfetto_writer *w, uint32_t type, uint64_t uuid, const char *name,
                        uint64_t ns, const tally_trace_arg *args, uint32_t arg_count, double value)
{
    w->event.length = 0;
    w->interned.length = 0;
    put_uint_field(&w->event, EVENT_TYPE, type);
    put_uint_field(&w->event, EVENT_TRACK_UUID, uuid);
    if (name)
        put_uint_field(&w->event, EVENT_NAME_IID,
                       intern(w, &w->event_names, INTERNED_EVENT_NAMES, name));
    put_annotations(w, args, arg_count);
    if (type == TYPE_COUNTER) {
        /* Whole values as varints (a byte or two), the rest as doubles. */
        if (value >= 0 && value < 9007199254740992.0 && value == (double)(uint64_t)value)
            put_uint_field(&w->event, EVENT_COUNTER_VALUE, (uint64_t)value);
        else
            put_double_field(&w->event, EVENT_DOUBLE_COUNTER_VALUE, value);
    }
    /* Only events that name something use the interned state. */
    start_packet(w, name || arg_count ? SEQ_NEEDS_INCREMENTAL_STATE : 0);
    put_uint_field(&w->packet, PACKET_TIMESTAMP, ns);
    if (w->interned.length)
        put_message_field(&w->packet, PACKET_INTERNED_DATA, &w->interned);
    put_message_field(&w->packet, PACKET_TRACK_EVENT, &w->event);
    emit_packet(w);
}

void perfetto_begin(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                    const tally_trace_arg *args, uint32_t arg_count)
{
    ensure_track(w, track);
    track_event(w, TYPE_SLICE_BEGIN, TRACK_UUID_OF(track), name, ns, args, arg_count, 0);
}

void perfetto_end(perfetto_writer *w, uint32_t track, uint64_t ns)
{
    ensure_track(w, track);
    track_event(w, TYPE_SLICE_END, TRACK_UUID_OF(track), NULL, ns, NULL, 0, 0);
}

void perfetto_instant(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                      const tally_trace_arg *args, uint32_t arg_count)
{
    ensure_track(w, track);
    track_event(w, TYPE_INSTANT, TRACK_UUID_OF(track), name, ns, args, arg_count, 0);
}

void perfetto_counter(perfetto_writer *w, const char *name, uint64_t ns, double value)
{
    bool added;
    uint32_t index = name_index(&w->counters, name, &added);
    if (!index) {
        w->failed = true;
        return;
    }
    if (added)
        put_track_descriptor(w, COUNTER_UUID_OF(index), name, true);
    track_event(w, TYPE_COUNTER, COUNTER_UUID_OF(index), NULL, ns, NULL, 0, value);
}

bool perfetto_flush(perfetto_writer *w)
{
    struct bytes *out = &w->buffer;
    if (out->length && fwrite(out->data, 1, out->length, w->out) != out->length)
        w->failed = true;
    out->length = 0;
    return !w->failed;
}

bool perfetto_close(perfetto_writer *w)
{
    struct bytes *out = &w->buffer;
    if (out->length && fwrite(out->data, 1, out->length, w->out) != out->length)
        w->failed = true;
    bool ok = !w->failed;
    free(out->data);
    free(w->event.data);
    free(w->interned.data);
    free(w->packet.data);
    free(w->scratch.data);
    free_names(&w->event_names);
    free_names(&w->annotation_names);
    free_names(&w->counters);
    free(w->tracks_described);
    free(w);
    return ok;
}
