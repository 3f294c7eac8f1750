/*
 * Held measured submissions, for the doors whose API reads its measurements
 * only on the program's thread (GL's queries, OpenCL's event profiling). At
 * a submission point the door holds the recording, in a stream of its own,
 * instead of submitting it, and records on into a fresh stream; at later
 * submission points it polls: the door's reader reads on from each held
 * recording's cursor, oldest first, and every recording read whole goes to
 * the engine with its measurements, in the order the recordings were made.
 * When the door goes away (a context released, exit) it drains: what is
 * still held goes with whatever was read of it.
 *
 * What is whose: the door keeps its own part of a recording (its queries,
 * its events) in a payload it allocates; once held, the payload is the
 * queue's until the door's release hook gets it back, exactly once, after
 * the recording was submitted or discarded. The values array and the held
 * stream are the queue's, and go to the engine at submission.
 *
 * A queue has no lock: the door calls it under its own (GL: the context
 * current on one thread; OpenCL: the queue's lock, or its orphans' lock).
 */
#ifndef TALLY_HELD_H
#define TALLY_HELD_H

#include <stdbool.h>
#include <stdint.h>

#include "tally/device.h"
#include "tally/stream.h"

typedef struct tally_held tally_held;

/* What the door does for its queue; `user` is the queue's. */
typedef struct tally_held_door {
    /* Reads on from h->read, writing h->values[read..count) and moving the
     * cursor past each value read whole; true once every value was read.
     * force: the program waits for the GPU here, so may the reader. */
    bool (*read)(void *user, tally_held *h, bool force);
    /* Optional. Once in a poll, when the oldest recording was read whole,
     * before the first of the poll's submissions (GL samples its clock
     * pair here). */
    void (*ready)(void *user);
    /* Before h goes to the engine, from a poll or a drain: adjusts the
     * values read (calibration, a disjoint clock). Returns when the work
     * began on CLOCK_MONOTONIC (tally_submission.issued_ns; 0: unknown). */
    uint64_t (*prepare)(void *user, tally_held *h);
    /* Frees h->payload, once h was submitted or discarded; h->read says how
     * much of it was read. */
    void (*release)(void *user, tally_held *h);
} tally_held_door;

/* One held recording. The door reads every field and writes values and
 * read (through its reader); the rest is the queue's. */
struct tally_held {
    tally_held *next; /* the next one held after this */
    tally_stream *stream;
    const char *api_name; /* static storage */
    uint32_t flags;       /* tally_submission.flags */
    bool measured;        /* false: submitted without measurements (held only to keep it back) */
    tally_measurement *values; /* count entries, zeroed when held; NULL when not measured */
    uint32_t count;
    uint32_t read; /* values read whole, in order */
    void *payload; /* the door's */
    tally_device *device;
};

/* Held recordings, oldest first. Zeroed, with door (static storage) and
 * user set, it is an empty queue. */
typedef struct tally_held_queue {
    tally_held *first, *last;
    const tally_held_door *door;
    void *user;
} tally_held_queue;

static inline bool tally_held_empty(const tally_held_queue *queue)
{
    return queue->first == NULL;
}

/*
 * Holds *stream's recording at the end of the queue, with `count` values
 * to read (measured) and the door's payload, and puts a fresh stream of
 * `context` in *stream for the door to record on into. NULL where there is
 * no memory: nothing is held, *stream and the payload stay the door's.
 */
TALLY_API tally_held *tally_held_push(tally_held_queue *queue, tally_context *context,
                                      tally_stream **stream, const char *api_name, uint32_t flags,
                                      uint32_t count, bool measured, void *payload);

/* Reads the held recordings, oldest first, and submits each one read
 * whole; stops at the first that is not. Returns the seqno of the last
 * submission the engine accepted (0: none). */
TALLY_API uint64_t tally_held_poll(tally_held_queue *queue, bool force);

/* Submits everything held, oldest first, with what was read of it (no
 * more is read); returns how many values were never read, for the door
 * to say they were lost. */
TALLY_API uint64_t tally_held_drain(tally_held_queue *queue);

/* Takes h out of the queue unsubmitted (work that never ran). */
TALLY_API void tally_held_discard(tally_held_queue *queue, tally_held *h);

/* Appends everything `from` holds to the end of `to` (which has the same
 * door); `from` is left empty. */
TALLY_API void tally_held_move(tally_held_queue *to, tally_held_queue *from);

#endif
