/*
 * The per-command report's way off the queue thread: the queue thread packs
 * each row (its record and its counter values) into fixed-size blocks, and a
 * writer thread of the ring's own ("tally-report") hands the rows of each
 * full block to a sink, which formats and writes them.
 *
 * Back-pressure: the ring holds at most `blocks` blocks of `block_bytes`.
 * When the writer falls behind and every block is full, push blocks until it
 * frees one: memory stays bounded and no row is lost, and a program that
 * submits faster than the report can be written is slowed to the report's
 * pace (the queue, like a GPU whose counters are being drained, stalls).
 * stats counts those stalls.
 *
 * One producer thread at a time. Internal to libtally.
 */
#ifndef TALLY_REPORT_RING_H
#define TALLY_REPORT_RING_H

#include "tally/report.h"

typedef struct report_ring report_ring;

/* A row's sequence may carry this bit, which is not part of it: the row's
 * values are the previous row's (the producer knows it without comparing
 * them: the same draw again), and the sink may skip comparing them. */
#define REPORT_RING_SAME_VALUES (1ull << 63)

/* A row as the ring holds it: the fields that change from one command to
 * the next, then the row's value_count values. */
typedef struct report_ring_row {
    uint64_t sequence, begin_ns, end_ns;
    tally_value values[];
} report_ring_row;

/* Consecutive rows that share every other field of their records (kind,
 * api_name, context, context_api, frame, submission, stream, label) and
 * their strings key. */
typedef struct report_ring_run {
    const tally_command_record *record; /* the shared fields; sequence, begin_ns
                                           and end_ns are the first row's */
    uint64_t strings_key;
    const unsigned char *rows; /* the first row; the others follow stride bytes apart */
    uint32_t count, stride;
} report_ring_run;

static inline const report_ring_row *report_ring_run_row(const report_ring_run *run, uint32_t i)
{
    return (const report_ring_row *)(run->rows + (size_t)i * run->stride);
}

/* Called on the writer thread with the rows in push order, a run at a
 * time. A status other than TALLY_OK is remembered (close returns the
 * first) and the ring stops calling it. */
typedef tally_status (*report_ring_sink)(void *user, const report_ring_run *run);

typedef struct report_ring_limits {
    uint32_t blocks;      /* 0: 8 */
    uint32_t block_bytes; /* 0: 256 KiB; at least 4 KiB */
} report_ring_limits;

/* limits may be NULL (the defaults). */
tally_status report_ring_open(uint32_t value_count, report_ring_sink sink, void *user,
                              const report_ring_limits *limits, report_ring **out);

/* Queue thread: appends a row. The record's kind and api_name must be static
 * storage (they are kept as pointers); its context_api and label are copied,
 * once per block and whenever strings_key differs from the previous row's:
 * the producer changes the key whenever either string may have changed.
 * Only sequence, begin_ns, end_ns and the values are stored per row; the
 * other fields once per run of rows that share them. */
void report_ring_push(report_ring *ring, const tally_command_record *record, uint64_t strings_key,
                      const tally_value *values);

/* report_ring_push without the values: returns where the row's
 * value_count values go, for the producer to fill before its next call
 * (NULL if the row was lost for want of memory). */
tally_value *report_ring_append(report_ring *ring, const tally_command_record *record,
                                uint64_t strings_key);

typedef struct report_ring_stats {
    uint64_t rows;        /* handed to the sink */
    uint64_t stalls;      /* pushes that waited for a free block */
    uint32_t blocks;      /* the bound */
    uint32_t blocks_made; /* allocated so far, never more than the bound */
    uint32_t block_bytes;
} report_ring_stats;

void report_ring_get_stats(report_ring *ring, report_ring_stats *stats);

/* Hands every row to the sink, ends the thread and frees the ring; the
 * sink's first error, or TALLY_OK. */
tally_status report_ring_close(report_ring *ring);

#endif
