/* Owns a packet sequence's framing and clock (perfetto_sequence.h). */
#include "perfetto_sequence.h"

#include <time.h>

/* Field numbers from Perfetto's protos/perfetto/trace/trace.proto,
 * trace_packet.proto, trace_packet_defaults.proto, clock_snapshot.proto and
 * common/builtin_clock.proto. */
enum {
    TRACE_PACKET = 1,
    PACKET_CLOCK_SNAPSHOT = 6,
    PACKET_TIMESTAMP = 8,
    PACKET_SEQUENCE_ID = 10,
    PACKET_SEQUENCE_FLAGS = 13,
    PACKET_TIMESTAMP_CLOCK_ID = 58,
    PACKET_DEFAULTS = 59,
    DEFAULTS_TIMESTAMP_CLOCK_ID = 58,
    SNAPSHOT_CLOCKS = 1,
    SNAPSHOT_PRIMARY_TRACE_CLOCK = 2,
    CLOCK_ID = 1,
    CLOCK_TIMESTAMP = 2,
    CLOCK_IS_INCREMENTAL = 3,
};

enum {
    SEQ_INCREMENTAL_STATE_CLEARED = 1,
    SEQ_NEEDS_INCREMENTAL_STATE = 2,
    BUILTIN_MONOTONIC = 3,
    BUILTIN_BOOTTIME = 6,
    /* Clocks 64 to 127 are the sequence's own. Both are the engine's
     * nanoseconds: the first written as steps, the second whole, for the
     * rare packet earlier than the one before it. */
    ENGINE_CLOCK_STEPS = 64,
    ENGINE_CLOCK_WHOLE = 65,
};

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void perfetto_sequence_init(struct perfetto_sequence *s, uint32_t id, const uint64_t *origin_ns)
{
    *s = (struct perfetto_sequence){.id = id, .origin_ns = origin_ns};
}

static size_t open_packet(struct proto_buffer *out, const struct perfetto_sequence *s,
                          uint32_t flags)
{
    size_t packet = proto_open(out, TRACE_PACKET);
    proto_uint(out, PACKET_SEQUENCE_ID, s->id);
    proto_uint(out, PACKET_SEQUENCE_FLAGS, flags);
    return packet;
}

/* The first packet: nothing from before it counts, and the sequence's
 * times are on its stepped clock from now on. */
static void start(struct proto_buffer *out, struct perfetto_sequence *s)
{
    size_t packet = open_packet(out, s, SEQ_INCREMENTAL_STATE_CLEARED);
    size_t defaults = proto_open(out, PACKET_DEFAULTS);
    proto_uint(out, DEFAULTS_TIMESTAMP_CLOCK_ID, ENGINE_CLOCK_STEPS);
    proto_close(out, defaults);
    proto_close(out, packet);
    s->started = true;
}

static void put_clock(struct proto_buffer *out, uint32_t id, uint64_t ns, bool incremental)
{
    size_t clock = proto_open(out, SNAPSHOT_CLOCKS);
    proto_uint(out, CLOCK_ID, id);
    proto_uint(out, CLOCK_TIMESTAMP, ns);
    if (incremental)
        proto_uint(out, CLOCK_IS_INCREMENTAL, 1);
    proto_close(out, clock);
}

/* The engine's time 0 on every clock: CLOCK_MONOTONIC's reading there is
 * the origin, by the engine's definition, and CLOCK_BOOTTIME's lies as far
 * from it as now (read between two monotonic readings, taking their
 * middle), the two clocks moving together while the system is awake.
 * From 0 every time of the trace is a step forward. */
static void put_snapshot(struct proto_buffer *out, struct perfetto_sequence *s)
{
    uint64_t before = clock_ns(CLOCK_MONOTONIC), boot = clock_ns(CLOCK_BOOTTIME);
    uint64_t monotonic = before + (clock_ns(CLOCK_MONOTONIC) - before) / 2;
    uint64_t origin = *s->origin_ns;
    size_t packet = open_packet(out, s, SEQ_NEEDS_INCREMENTAL_STATE);
    size_t snapshot = proto_open(out, PACKET_CLOCK_SNAPSHOT);
    put_clock(out, ENGINE_CLOCK_STEPS, 0, true);
    put_clock(out, ENGINE_CLOCK_WHOLE, 0, false);
    put_clock(out, BUILTIN_MONOTONIC, origin, false);
    put_clock(out, BUILTIN_BOOTTIME, boot - (monotonic - origin), false);
    proto_uint(out, SNAPSHOT_PRIMARY_TRACE_CLOCK, BUILTIN_BOOTTIME);
    proto_close(out, snapshot);
    proto_close(out, packet);
    s->clocked = true;
    s->last_ns = 0; /* the first step counts from the snapshot's reading */
}

size_t perfetto_packet_open(struct proto_buffer *out, struct perfetto_sequence *s)
{
    if (!s->started)
        start(out, s);
    /* Every packet after the first reads the sequence's defaults. */
    return open_packet(out, s, SEQ_NEEDS_INCREMENTAL_STATE);
}

size_t perfetto_packet_open_at(struct proto_buffer *out, struct perfetto_sequence *s, uint64_t ns)
{
    if (!s->started)
        start(out, s);
    if (!s->clocked)
        put_snapshot(out, s);
    size_t packet = open_packet(out, s, SEQ_NEEDS_INCREMENTAL_STATE);
    if (ns >= s->last_ns) {
        proto_uint(out, PACKET_TIMESTAMP, ns - s->last_ns);
        s->last_ns = ns;
    } else {
        /* A step cannot be negative: this one is written whole, on the
         * clock that leaves the steps' reading as it was. */
        proto_uint(out, PACKET_TIMESTAMP_CLOCK_ID, ENGINE_CLOCK_WHOLE);
        proto_uint(out, PACKET_TIMESTAMP, ns);
    }
    return packet;
}

void perfetto_packet_close(struct proto_buffer *out, size_t packet)
{
    proto_close(out, packet);
}
