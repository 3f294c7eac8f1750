/* Owns the Perfetto trace file's packets and the process's track events
 * (perfetto_writer.h); the GPU's packets are perfetto_gpu.c's. */
#include "perfetto_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intern_table.h"
#include "perfetto_gpu.h"
#include "perfetto_sequence.h"

/* Field numbers from Perfetto's protos/perfetto/trace/trace_packet.proto,
 * track_event/track_event.proto, track_descriptor.proto,
 * process_descriptor.proto, debug_annotation.proto and
 * interned_data/interned_data.proto. */
enum {
    PACKET_TRACK_EVENT = 11,
    PACKET_INTERNED_DATA = 12,
    PACKET_TRACK_DESCRIPTOR = 60,
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
    TRACK_THREAD = 4,
    PROCESS_PID = 1,
    PROCESS_NAME = 6,
    THREAD_PID = 1,
    THREAD_TID = 2,
    THREAD_NAME = 5,
};

/* Track uuids are global in a trace: this process's carry its pid above
 * bit 32, so that traces of several processes put together keep them
 * apart. Below it: the process, each timeline track, each counter, each
 * thread (by its tid). */
enum { PROCESS_TRACK = 1, TIMELINE_TRACKS = 0x100, COUNTER_TRACKS = 0x10000 };
#define THREAD_TRACKS 0x80000000u

/* Sequence ids the tracing service hands out count from 1; tally's are
 * drawn from the pid among the ids of two-byte varints, 8192 to 16383. */
enum { SEQUENCE_IDS = 0x2000, SEQUENCE_ID_MASK = 0x1fff };

enum { OUT_BUFFER = 1024 * 1024 };

struct perfetto_writer {
    FILE *out;
    struct proto_buffer buffer; /* whole packets not yet written */
    uint64_t origin_ns;         /* CLOCK_MONOTONIC at the engine's time 0 */
    uint64_t uuid_base;
    uint32_t sequence_base;
    char *device_name;
    struct perfetto_sequence process; /* the process's track events */
    struct perfetto_gpu *gpu;         /* the GPU's sequence; NULL until needed */
    struct intern_table event_names, annotation_names, counters;
    uint8_t *tracks_described; /* per timeline track: a descriptor was written */
    uint32_t tracks_capacity;
    uint32_t *threads; /* the tids whose tracks are described */
    uint32_t thread_count, threads_capacity;
    bool failed;
};

/* A name as the kernel gives it (a /proc comm file), so that a merged
 * system trace and this one agree on what a process or thread is called;
 * false if it cannot be read (a thread that ended). */
static bool read_comm(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool read = fgets(out, (int)size, f) != NULL;
    if (read)
        out[strcspn(out, "\n")] = '\0';
    fclose(f);
    return read;
}

static void read_process_name(char *out, size_t size)
{
    if (!read_comm("/proc/self/comm", out, size))
        snprintf(out, size, "pid %d", (int)getpid());
}

static void describe_process(perfetto_writer *w)
{
    char name[64];
    read_process_name(name, sizeof name);
    struct proto_buffer *out = &w->buffer;
    size_t packet = perfetto_packet_open(out, &w->process);
    size_t track = proto_open(out, PACKET_TRACK_DESCRIPTOR);
    proto_uint(out, TRACK_UUID, w->uuid_base | PROCESS_TRACK);
    size_t process = proto_open(out, TRACK_PROCESS);
    proto_uint(out, PROCESS_PID, (uint64_t)getpid());
    proto_string(out, PROCESS_NAME, name);
    proto_close(out, process);
    proto_close(out, track);
    perfetto_packet_close(out, packet);
}

perfetto_writer *perfetto_open(FILE *out, const char *device_name)
{
    perfetto_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->device_name = strdup(device_name))) {
        free(w);
        return NULL;
    }
    w->out = out;
    pid_t pid = getpid();
    w->uuid_base = (uint64_t)pid << 32;
    w->sequence_base = SEQUENCE_IDS | ((uint32_t)pid * 2 & SEQUENCE_ID_MASK);
    perfetto_sequence_init(&w->process, w->sequence_base + 1, &w->origin_ns);
    describe_process(w);
    return w;
}

/* The GPU's sequence, made with what the trace was told of it. */
static struct perfetto_gpu *open_gpu(perfetto_writer *w, const tally_trace_gpu *gpu)
{
    const tally_trace_gpu none = {0};
    if (!gpu)
        gpu = &none;
    struct perfetto_gpu *g = perfetto_gpu_open(w->sequence_base, &w->origin_ns, w->device_name,
                                               gpu->catalogue, gpu->counters, gpu->counter_count);
    w->failed |= !g;
    return g;
}

void perfetto_describe_gpu(perfetto_writer *w, const tally_trace_gpu *gpu)
{
    w->origin_ns = gpu->monotonic_origin_ns;
    if (w->gpu)
        w->failed |= !perfetto_gpu_close(w->gpu);
    w->gpu = open_gpu(w, gpu);
}

/* Whole packets go to the file a megabyte at a time, and when asked. */
static bool write_buffer(perfetto_writer *w)
{
    struct proto_buffer *b = &w->buffer;
    if (b->length && fwrite(b->data, 1, b->length, w->out) != b->length)
        w->failed = true;
    b->length = 0;
    w->failed |= b->failed;
    return !w->failed;
}

static void packets_done(perfetto_writer *w)
{
    if (w->buffer.length >= OUT_BUFFER)
        write_buffer(w);
}

static void put_track_descriptor(perfetto_writer *w, uint64_t uuid, const char *name, bool counter)
{
    struct proto_buffer *out = &w->buffer;
    size_t packet = perfetto_packet_open(out, &w->process);
    size_t track = proto_open(out, PACKET_TRACK_DESCRIPTOR);
    proto_uint(out, TRACK_UUID, uuid);
    proto_uint(out, TRACK_PARENT_UUID, w->uuid_base | PROCESS_TRACK);
    proto_string(out, TRACK_NAME, name);
    if (counter)
        proto_bytes(out, TRACK_COUNTER, "", 0); /* an empty CounterDescriptor */
    proto_close(out, track);
    perfetto_packet_close(out, packet);
}

static uint64_t timeline_uuid(const perfetto_writer *w, uint32_t track)
{
    return w->uuid_base | (TIMELINE_TRACKS + (uint64_t)track);
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
    put_track_descriptor(w, timeline_uuid(w, track), name, false);
    packets_done(w);
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

/* A name's iid, its InternedData entry written into the open interned
 * message (opened here on the first new name) when it is new. */
static uint32_t intern(perfetto_writer *w, struct intern_table *names, uint32_t table,
                       const char *name, size_t *interned)
{
    bool added;
    uint32_t iid = intern_table_find(names, name, &added);
    if (!iid) {
        w->failed = true;
        return 0;
    }
    if (added) {
        struct proto_buffer *out = &w->buffer;
        if (!*interned)
            *interned = proto_open(out, PACKET_INTERNED_DATA);
        size_t entry = proto_open(out, table);
        proto_uint(out, INTERNED_IID, iid);
        proto_string(out, INTERNED_NAME, name);
        proto_close(out, entry);
    }
    return iid;
}

/* The event's names, interned ahead of the event that refers to them. */
static void intern_names(perfetto_writer *w, const char *name, const tally_trace_arg *args,
                         uint32_t count)
{
    size_t interned = 0;
    if (name)
        intern(w, &w->event_names, INTERNED_EVENT_NAMES, name, &interned);
    for (uint32_t i = 0; i < count; i++)
        intern(w, &w->annotation_names, INTERNED_ANNOTATION_NAMES, args[i].key, &interned);
    if (interned)
        proto_close(&w->buffer, interned);
}

static void put_annotations(perfetto_writer *w, const tally_trace_arg *args, uint32_t count)
{
    struct proto_buffer *out = &w->buffer;
    size_t unused = 0;
    for (uint32_t i = 0; i < count; i++) {
        size_t annotation = proto_open(out, EVENT_ANNOTATIONS);
        proto_uint(
            out, ANNOTATION_NAME_IID,
            intern(w, &w->annotation_names, INTERNED_ANNOTATION_NAMES, args[i].key, &unused));
        if (args[i].type == TALLY_TRACE_ARG_U64)
            proto_uint(out, ANNOTATION_UINT, args[i].value.u64);
        else if (args[i].type == TALLY_TRACE_ARG_F64)
            proto_double(out, ANNOTATION_DOUBLE, args[i].value.f64);
        else
            proto_string(out, ANNOTATION_STRING, args[i].value.string);
        proto_close(out, annotation);
    }
}

/* Whole values as varints (a byte or two), the rest as doubles. */
static void put_counter_value(struct proto_buffer *out, double value)
{
    if (value >= 0 && value < 9007199254740992.0 && value == (double)(uint64_t)value)
        proto_uint(out, EVENT_COUNTER_VALUE, (uint64_t)value);
    else
        proto_double(out, EVENT_DOUBLE_COUNTER_VALUE, value);
}

/* One TrackEvent packet; name may be NULL (a slice's end). */
static void track_event(perfetto_writer *w, uint32_t type, uint64_t uuid, const char *name,
                        uint64_t ns, const tally_trace_arg *args, uint32_t arg_count, double value)
{
    struct proto_buffer *out = &w->buffer;
    size_t packet = perfetto_packet_open_at(out, &w->process, ns), unused = 0;
    intern_names(w, name, args, arg_count);
    size_t event = proto_open(out, PACKET_TRACK_EVENT);
    proto_uint(out, EVENT_TYPE, type);
    proto_uint(out, EVENT_TRACK_UUID, uuid);
    if (name)
        proto_uint(out, EVENT_NAME_IID,
                   intern(w, &w->event_names, INTERNED_EVENT_NAMES, name, &unused));
    put_annotations(w, args, arg_count);
    if (type == TYPE_COUNTER)
        put_counter_value(out, value);
    proto_close(out, event);
    perfetto_packet_close(out, packet);
    packets_done(w);
}

void perfetto_begin(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                    const tally_trace_arg *args, uint32_t arg_count)
{
    ensure_track(w, track);
    track_event(w, TYPE_SLICE_BEGIN, timeline_uuid(w, track), name, ns, args, arg_count, 0);
}

void perfetto_end(perfetto_writer *w, uint32_t track, uint64_t ns)
{
    ensure_track(w, track);
    track_event(w, TYPE_SLICE_END, timeline_uuid(w, track), NULL, ns, NULL, 0, 0);
}

void perfetto_instant(perfetto_writer *w, uint32_t track, const char *name, uint64_t ns,
                      const tally_trace_arg *args, uint32_t arg_count)
{
    ensure_track(w, track);
    track_event(w, TYPE_INSTANT, timeline_uuid(w, track), name, ns, args, arg_count, 0);
}

/* Whether the thread's track is described yet; remembers that it now is. */
static bool thread_described(perfetto_writer *w, uint32_t tid)
{
    for (uint32_t i = 0; i < w->thread_count; i++)
        if (w->threads[i] == tid)
            return true;
    if (w->thread_count == w->threads_capacity) {
        uint32_t capacity = w->threads_capacity ? 2 * w->threads_capacity : 8;
        uint32_t *grown = realloc(w->threads, capacity * sizeof *grown);
        if (!grown) {
            w->failed = true;
            return true; /* the call goes on an undescribed track rather than nowhere */
        }
        w->threads = grown;
        w->threads_capacity = capacity;
    }
    w->threads[w->thread_count++] = tid;
    return false;
}

/* The program's thread: its own track in the program's process, which a
 * system trace's thread of the same tid is. */
static uint64_t thread_track(perfetto_writer *w, uint32_t tid)
{
    uint64_t uuid = w->uuid_base | THREAD_TRACKS | tid;
    if (thread_described(w, tid))
        return uuid;
    char path[64], name[64];
    snprintf(path, sizeof path, "/proc/self/task/%u/comm", tid);
    struct proto_buffer *out = &w->buffer;
    size_t packet = perfetto_packet_open(out, &w->process);
    size_t track = proto_open(out, PACKET_TRACK_DESCRIPTOR);
    proto_uint(out, TRACK_UUID, uuid);
    size_t thread = proto_open(out, TRACK_THREAD);
    proto_uint(out, THREAD_PID, (uint64_t)getpid());
    proto_uint(out, THREAD_TID, tid);
    if (read_comm(path, name, sizeof name))
        proto_string(out, THREAD_NAME, name);
    proto_close(out, thread);
    proto_close(out, track);
    perfetto_packet_close(out, packet);
    return uuid;
}

void perfetto_call(perfetto_writer *w, uint32_t tid, const char *name, uint64_t ns,
                   const tally_trace_arg *args, uint32_t arg_count)
{
    track_event(w, TYPE_INSTANT, thread_track(w, tid), name, ns, args, arg_count, 0);
}

void perfetto_counter(perfetto_writer *w, const char *name, uint64_t ns, double value)
{
    bool added;
    uint32_t index = intern_table_find(&w->counters, name, &added);
    if (!index) {
        w->failed = true;
        return;
    }
    uint64_t uuid = w->uuid_base | (COUNTER_TRACKS + (uint64_t)index);
    if (added)
        put_track_descriptor(w, uuid, name, true);
    track_event(w, TYPE_COUNTER, uuid, NULL, ns, NULL, 0, value);
}

void perfetto_command(perfetto_writer *w, const tally_command_record *record,
                      const tally_value *values)
{
    if (!w->gpu && !(w->gpu = open_gpu(w, NULL)))
        return;
    perfetto_gpu_command(w->gpu, &w->buffer, record, values);
    packets_done(w);
}

bool perfetto_flush(perfetto_writer *w)
{
    return write_buffer(w);
}

bool perfetto_close(perfetto_writer *w)
{
    if (w->gpu) {
        perfetto_gpu_finish(w->gpu, &w->buffer);
        w->failed |= !perfetto_gpu_close(w->gpu);
    }
    bool ok = write_buffer(w);
    proto_free(&w->buffer);
    intern_table_free(&w->event_names);
    intern_table_free(&w->annotation_names);
    intern_table_free(&w->counters);
    free(w->tracks_described);
    free(w->threads);
    free(w->device_name);
    free(w);
    return ok;
}
