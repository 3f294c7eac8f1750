/*
 * The per-command report's way off the queue thread: the queue thread
 * appends each row (its record and its counter values) to fixed-size
 * blocks, and a writer thread of the ring's own ("tally-report") hands
 * the rows of each full block, in order, to a sink, which formats and
 * writes them.
 *
 * Rows reach the sink in whole blocks, and a block goes to the writer when
 * it is full or when its oldest row has waited `latency_ns`
 * (report_ring_hand_over_due), so that a slow program's rows are not held
 * back for minutes; once the writer has caught up it calls the sink's flush,
 * so a live file holds every row handed over.
 *
 * Back-pressure: the ring holds at most `blocks` blocks of `block_bytes`.
 * When the writer falls behind and every block is full, an append waits
 * until it frees one: memory stays bounded and no row is lost, and a
 * program that submits faster than the report can be written is slowed to
 * the report's pace (the queue, like a GPU whose counters are being
 * drained, stalls). The stats count those stalls.
 *
 * One producer thread at a time.
 */
#ifndef TALLY_REPORT_RING_H
#define TALLY_REPORT_RING_H

#include "tally/report.h"

typedef struct report_ring report_ring;

/* Called on the writer thread. row: each row, in append order; flush
 * (NULL: nothing to do): every row given so far must reach its file now. A
 * status other than TALLY_OK is remembered (close returns the first) and
 * the ring stops calling them. */
typedef struct report_ring_sink {
    tally_status (*row)(void *user, const tally_command_record *record, const tally_value *values);
    tally_status (*flush)(void *user);
    void *user;
} report_ring_sink;

typedef struct report_ring_limits {
    uint32_t blocks;      /* 0: 8 */
    uint32_t block_bytes; /* 0: 256 KiB; at least 4 KiB and 4 rows without strings */
    uint64_t latency_ns;  /* 0: 250 ms */
} report_ring_limits;

/* limits may be NULL (the defaults); the sink is copied. */
tally_status report_ring_open(uint32_t value_count, const report_ring_sink *sink,
                              const report_ring_limits *limits, report_ring **out);

/* Queue thread: appends a row and returns where its value_count values go,
 * for the producer to fill before its next call (NULL if the row was lost
 * for want of memory). The record's kind and api_name must be static
 * storage (they are kept as pointers); its context_api, label and
 * pipeline_name are copied, cut short where together they would take more
 * than a quarter of a block. */
tally_value *report_ring_append(report_ring *ring, const tally_command_record *record);

/* Queue thread: hands the rows appended so far to the writer if the
 * oldest has waited latency_ns by now_ns (CLOCK_MONOTONIC), counted from
 * the first call that found it. Returns when the next hand-over is due:
 * UINT64_MAX while no row waits. */
uint64_t report_ring_hand_over_due(report_ring *ring, uint64_t now_ns);

typedef struct report_ring_stats {
    uint64_t rows;        /* handed to the sink */
    uint64_t stalls;      /* appends that waited for a free block */
    uint32_t blocks;      /* the bound */
    uint32_t blocks_made; /* allocated so far, never more than the bound */
    uint32_t block_bytes;
} report_ring_stats;

void report_ring_get_stats(report_ring *ring, report_ring_stats *stats);

/* Hands every row to the sink, ends the thread and frees the ring; the
 * sink's first error, or TALLY_OK. */
tally_status report_ring_close(report_ring *ring);

#endif
