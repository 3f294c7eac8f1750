/* Owns the hand-off of report rows to the writer thread (see report_ring.h). */
#include "report_ring.h"
#include "thread_start.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_BLOCKS = 8, DEFAULT_BLOCK_BYTES = 256 * 1024, MIN_BLOCK_BYTES = 4096 };
#define DEFAULT_LATENCY_NS (250ull * 1000 * 1000)

/* A row as a block holds it: the record's fields, the values, then the
 * record's context_api, label and pipeline_name, each with its NUL. */
struct row {
    uint64_t sequence, frame, submission, stream, begin_ns, end_ns;
    uint64_t pipeline, shader_hash, unmeasured;
    const char *kind, *api_name;
    uint32_t context, tid, target_width, target_height;
    uint32_t bytes;          /* the whole row, a multiple of 8 */
    uint32_t context_api_at; /* from the row's start; the others follow its NUL */
    tally_value values[];
};

/* Rows one after another from the start of bytes. */
struct block {
    struct block *next;
    uint32_t used, rows;
    _Alignas(8) unsigned char bytes[];
};

struct report_ring {
    pthread_mutex_t lock;
    pthread_cond_t full_ready; /* the writer waits for a full block */
    pthread_cond_t free_ready; /* the producer waits for a free one */
    /* Under lock: */
    struct block *full_head, *full_tail, *free_list;
    uint32_t blocks_made;
    uint64_t rows, stalls;
    bool stopping;
    /* The producer's: */
    struct block *current;
    /* When report_ring_hand_over_due first saw it hold rows (0: not yet):
     * the queue thread asks after each submission, so the row clock is
     * read once per submission, never per row. */
    uint64_t current_since_ns;
    /* Fixed: */
    uint32_t value_count, block_bytes, blocks;
    uint64_t latency_ns;
    size_t string_room; /* most bytes of a row's two strings, NULs included */
    report_ring_sink sink;
    pthread_t thread;
    tally_status status; /* the writer's; read after the join */
};

static size_t row_head_bytes(const report_ring *ring)
{
    return sizeof(struct row) + ring->value_count * sizeof(tally_value);
}

/* Writer thread: each row of the block to the sink, in append order. */
static void sink_block(report_ring *ring, const struct block *b)
{
    for (uint32_t at = 0; at < b->used && ring->status == TALLY_OK;) {
        const struct row *row = (const struct row *)(b->bytes + at);
        const char *context_api = (const char *)row + row->context_api_at;
        const char *label = context_api + strlen(context_api) + 1;
        tally_command_record record = {
            .sequence = row->sequence,
            .api_name = row->api_name,
            .kind = row->kind,
            .context = row->context,
            .context_api = context_api,
            .frame = row->frame,
            .submission = row->submission,
            .stream = row->stream,
            .label = label,
            .tid = row->tid,
            .pipeline = row->pipeline,
            .pipeline_name = label + strlen(label) + 1,
            .shader_hash = row->shader_hash,
            .target_width = row->target_width,
            .target_height = row->target_height,
            .begin_ns = row->begin_ns,
            .end_ns = row->end_ns,
            .unmeasured = row->unmeasured,
        };
        ring->status = ring->sink.row(ring->sink.user, &record, row->values);
        at += row->bytes;
    }
}

static void *writer_main(void *arg)
{
    report_ring *ring = arg;
    pthread_mutex_lock(&ring->lock);
    for (;;) {
        while (!ring->full_head && !ring->stopping)
            pthread_cond_wait(&ring->full_ready, &ring->lock);
        struct block *b = ring->full_head;
        if (!b)
            break; /* stopping, and every block written */
        ring->full_head = b->next;
        if (!ring->full_head)
            ring->full_tail = NULL;
        pthread_mutex_unlock(&ring->lock);
        sink_block(ring, b);
        pthread_mutex_lock(&ring->lock);
        bool caught_up = !ring->full_head;
        if (caught_up && ring->sink.flush && ring->status == TALLY_OK) {
            pthread_mutex_unlock(&ring->lock);
            ring->status = ring->sink.flush(ring->sink.user);
            pthread_mutex_lock(&ring->lock);
        }
        ring->rows += b->rows;
        b->next = ring->free_list;
        ring->free_list = b;
        pthread_cond_signal(&ring->free_ready);
    }
    pthread_mutex_unlock(&ring->lock);
    return NULL;
}

tally_status report_ring_open(uint32_t value_count, const report_ring_sink *sink,
                              const report_ring_limits *limits, report_ring **out)
{
    if (!out || !sink || !sink->row)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    report_ring_limits l = limits ? *limits : (report_ring_limits){0};
    size_t head = sizeof(struct row) + (size_t)value_count * sizeof(tally_value);
    uint32_t block_bytes = l.block_bytes ? l.block_bytes : DEFAULT_BLOCK_BYTES;
    if (block_bytes < MIN_BLOCK_BYTES || block_bytes < 4 * head)
        return TALLY_ERROR_INVALID_ARGUMENT;
    report_ring *ring = calloc(1, sizeof *ring);
    if (!ring)
        return TALLY_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&ring->lock, NULL);
    pthread_cond_init(&ring->full_ready, NULL);
    pthread_cond_init(&ring->free_ready, NULL);
    ring->value_count = value_count;
    ring->block_bytes = block_bytes;
    ring->string_room = block_bytes / 4;
    ring->blocks = l.blocks ? l.blocks : DEFAULT_BLOCKS;
    ring->latency_ns = l.latency_ns ? l.latency_ns : DEFAULT_LATENCY_NS;
    ring->sink = *sink;
    if (tally_thread_start(&ring->thread, "tally-report", writer_main, ring) != 0) {
        pthread_cond_destroy(&ring->free_ready);
        pthread_cond_destroy(&ring->full_ready);
        pthread_mutex_destroy(&ring->lock);
        free(ring);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    *out = ring;
    return TALLY_OK;
}

/* Producer: a free block, made while under the bound, else waited for.
 * NULL only when a block cannot be allocated and none will come back. */
static struct block *take_block(report_ring *ring)
{
    pthread_mutex_lock(&ring->lock);
    struct block *b = ring->free_list;
    if (!b && ring->blocks_made < ring->blocks) {
        b = malloc(sizeof *b + ring->block_bytes);
        ring->blocks_made += b != NULL;
    }
    if (!b && ring->blocks_made > 0) {
        ring->stalls++;
        while (!ring->free_list)
            pthread_cond_wait(&ring->free_ready, &ring->lock);
        b = ring->free_list;
    }
    if (b && b == ring->free_list)
        ring->free_list = b->next;
    pthread_mutex_unlock(&ring->lock);
    if (b) {
        b->next = NULL;
        b->used = 0;
        b->rows = 0;
    }
    return b;
}

static void hand_over(report_ring *ring, struct block *b)
{
    pthread_mutex_lock(&ring->lock);
    if (ring->full_tail)
        ring->full_tail->next = b;
    else
        ring->full_head = b;
    ring->full_tail = b;
    pthread_cond_signal(&ring->full_ready);
    pthread_mutex_unlock(&ring->lock);
}

/* The three strings' lengths, cut short to fit string_room together: the
 * two names to a quarter of it each, the label to what is left. */
static void fit_strings(const report_ring *ring, size_t *context_api, size_t *label,
                        size_t *pipeline_name)
{
    size_t room = ring->string_room - 3;
    if (*context_api > room / 4)
        *context_api = room / 4;
    if (*pipeline_name > room / 4)
        *pipeline_name = room / 4;
    if (*context_api + *pipeline_name + *label > room)
        *label = room - *context_api - *pipeline_name;
}

/* s, cut to n bytes, and a NUL at to; returns the byte after it. */
static char *put_string(char *to, const char *s, size_t n)
{
    memcpy(to, s, n);
    to[n] = '\0';
    return to + n + 1;
}

tally_value *report_ring_append(report_ring *ring, const tally_command_record *record)
{
    const char *pipeline_name = record->pipeline_name ? record->pipeline_name : "";
    size_t api = strlen(record->context_api), label = strlen(record->label);
    size_t pipeline = strlen(pipeline_name);
    fit_strings(ring, &api, &label, &pipeline);
    size_t head = row_head_bytes(ring);
    uint32_t bytes = (uint32_t)((head + api + 1 + label + 1 + pipeline + 1 + 7) & ~(size_t)7);
    struct block *b = ring->current;
    if (b && b->used + bytes > ring->block_bytes) {
        hand_over(ring, b);
        b = NULL;
    }
    if (!b) {
        if (!(b = ring->current = take_block(ring)))
            return NULL; /* out of memory before any block existed: the row is lost */
        ring->current_since_ns = 0;
    }
    struct row *row = (struct row *)(b->bytes + b->used);
    *row = (struct row){
        .sequence = record->sequence,
        .frame = record->frame,
        .submission = record->submission,
        .stream = record->stream,
        .begin_ns = record->begin_ns,
        .end_ns = record->end_ns,
        .pipeline = record->pipeline,
        .shader_hash = record->shader_hash,
        .unmeasured = record->unmeasured,
        .kind = record->kind,
        .api_name = record->api_name,
        .context = record->context,
        .tid = record->tid,
        .target_width = record->target_width,
        .target_height = record->target_height,
        .bytes = bytes,
        .context_api_at = (uint32_t)head,
    };
    char *strings = put_string((char *)row + head, record->context_api, api);
    strings = put_string(strings, record->label, label);
    put_string(strings, pipeline_name, pipeline);
    b->used += bytes;
    b->rows++;
    return row->values;
}

uint64_t report_ring_hand_over_due(report_ring *ring, uint64_t now_ns)
{
    if (!ring->current || !ring->current->rows)
        return UINT64_MAX;
    if (!ring->current_since_ns)
        ring->current_since_ns = now_ns;
    uint64_t due = ring->current_since_ns + ring->latency_ns;
    if (now_ns < due)
        return due;
    hand_over(ring, ring->current);
    ring->current = NULL;
    return UINT64_MAX;
}

void report_ring_get_stats(report_ring *ring, report_ring_stats *stats)
{
    pthread_mutex_lock(&ring->lock);
    *stats = (report_ring_stats){ring->rows, ring->stalls, ring->blocks, ring->blocks_made,
                                 ring->block_bytes};
    pthread_mutex_unlock(&ring->lock);
}

tally_status report_ring_close(report_ring *ring)
{
    if (!ring)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (ring->current && ring->current->rows)
        hand_over(ring, ring->current);
    else
        free(ring->current);
    ring->current = NULL;
    pthread_mutex_lock(&ring->lock);
    ring->stopping = true;
    pthread_cond_signal(&ring->full_ready);
    pthread_mutex_unlock(&ring->lock);
    pthread_join(ring->thread, NULL);
    for (struct block *b = ring->free_list, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    tally_status status = ring->status;
    pthread_cond_destroy(&ring->free_ready);
    pthread_cond_destroy(&ring->full_ready);
    pthread_mutex_destroy(&ring->lock);
    free(ring);
    return status;
}
