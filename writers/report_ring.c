/* Owns the hand-off of report rows to the writer thread (see report_ring.h). */
#include "report_ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { DEFAULT_BLOCKS = 8, DEFAULT_BLOCK_BYTES = 256 * 1024, MIN_BLOCK_BYTES = 4096 };

/*
 * What the rows of one run share, stored once at the block's end below the
 * previous run's: the two strings, each with its NUL, then this header at
 * the entry's highest bytes, so the writer can walk the entries down from
 * the block's end.
 */
struct run_head {
    uint64_t frame, submission, stream, strings_key;
    const char *kind, *api_name;
    uint32_t context;
    uint32_t first_row;  /* the run's first row in the block */
    uint32_t bytes;      /* the whole entry, a multiple of 16 */
    uint32_t api_length; /* the label starts after context_api's NUL */
};

/*
 * Rows grow from the start of the bytes, the runs they share from the end;
 * the block is full when the two would meet.
 */
struct block {
    struct block *next;
    uint32_t rows, runs;
    uint32_t runs_at; /* start of the lowest run entry */
    _Alignas(16) unsigned char bytes[];
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
    struct run_head last; /* the current block's latest run, when it has one */
    /* Fixed: */
    uint32_t value_count, row_bytes, block_bytes, blocks;
    report_ring_sink sink;
    void *user;
    pthread_t thread;
    tally_status status; /* the writer's; read after the join */
};

static report_ring_row *row_at(const report_ring *ring, struct block *b, uint32_t i)
{
    return (report_ring_row *)(b->bytes + (size_t)i * ring->row_bytes);
}

static const struct run_head *head_below(const struct block *b, uint32_t end)
{
    return (const struct run_head *)(b->bytes + end - sizeof(struct run_head));
}

/* Each run of the block to the sink, in push order. */
static void sink_block(report_ring *ring, struct block *b)
{
    uint32_t end = ring->block_bytes;
    for (uint32_t r = 0; r < b->runs && ring->status == TALLY_OK; r++) {
        const struct run_head *h = head_below(b, end);
        uint32_t start = end - h->bytes;
        uint32_t last = r + 1 < b->runs ? head_below(b, start)->first_row : b->rows;
        const char *context_api = (const char *)b->bytes + start;
        const report_ring_row *first = row_at(ring, b, h->first_row);
        tally_command_record record = {
            .sequence = first->sequence & ~REPORT_RING_SAME_VALUES,
            .api_name = h->api_name,
            .kind = h->kind,
            .context = h->context,
            .context_api = context_api,
            .frame = h->frame,
            .submission = h->submission,
            .stream = h->stream,
            .label = context_api + h->api_length + 1,
            .begin_ns = first->begin_ns,
            .end_ns = first->end_ns,
        };
        report_ring_run run = {&record, h->strings_key, (const unsigned char *)first,
                               last - h->first_row, ring->row_bytes};
        ring->status = ring->sink(ring->user, &run);
        end = start;
    }
}

static void *writer_main(void *arg)
{
    report_ring *ring = arg;
    pthread_setname_np(pthread_self(), "tally-report");
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
        ring->rows += b->rows;
        b->next = ring->free_list;
        ring->free_list = b;
        /* signalled unlocked: a producer woken under the lock would find
         * it held and sleep again, two more context switches a block when
         * both threads share a CPU */
        pthread_mutex_unlock(&ring->lock);
        pthread_cond_signal(&ring->free_ready);
        pthread_mutex_lock(&ring->lock);
    }
    pthread_mutex_unlock(&ring->lock);
    return NULL;
}

tally_status report_ring_open(uint32_t value_count, report_ring_sink sink, void *user,
                              const report_ring_limits *limits, report_ring **out)
{
    if (!out || !sink)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    report_ring_limits l = limits ? *limits : (report_ring_limits){0};
    uint32_t row_bytes = (uint32_t)(sizeof(report_ring_row) + value_count * sizeof(tally_value));
    uint32_t block_bytes = l.block_bytes ? l.block_bytes : DEFAULT_BLOCK_BYTES;
    if (block_bytes < MIN_BLOCK_BYTES || block_bytes < 4 * row_bytes)
        return TALLY_ERROR_INVALID_ARGUMENT;
    report_ring *ring = calloc(1, sizeof *ring);
    if (!ring)
        return TALLY_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&ring->lock, NULL);
    pthread_cond_init(&ring->full_ready, NULL);
    pthread_cond_init(&ring->free_ready, NULL);
    ring->value_count = value_count;
    ring->row_bytes = row_bytes;
    ring->block_bytes = block_bytes;
    ring->blocks = l.blocks ? l.blocks : DEFAULT_BLOCKS;
    ring->sink = sink;
    ring->user = user;
    if (pthread_create(&ring->thread, NULL, writer_main, ring) != 0) {
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
        b->rows = 0;
        b->runs = 0;
        b->runs_at = ring->block_bytes;
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
    pthread_mutex_unlock(&ring->lock);
    pthread_cond_signal(&ring->full_ready); /* unlocked, as writer_main's */
}

/* Bytes a run entry takes in a block: the strings with their NULs, cut
 * short if they would not fit beside one row (a label of megabytes), and
 * the header. */
static uint32_t run_bytes(const report_ring *ring, size_t *api, size_t *label)
{
    size_t room = ring->block_bytes - ring->row_bytes - sizeof(struct run_head) - 16;
    if (*api > room / 2)
        *api = room / 2;
    if (*api + 1 + *label + 1 > room)
        *label = room - *api - 2;
    return (uint32_t)((*api + 1 + *label + 1 + sizeof(struct run_head) + 15) & ~(size_t)15);
}

static bool same_run(const struct run_head *h, const tally_command_record *record, uint64_t key)
{
    return h->strings_key == key && h->frame == record->frame &&
           h->submission == record->submission && h->stream == record->stream &&
           h->context == record->context && h->kind == record->kind &&
           h->api_name == record->api_name;
}

static void put_run(report_ring *ring, struct block *b, const tally_command_record *record,
                    uint64_t key, size_t api, size_t label, uint32_t bytes)
{
    b->runs_at -= bytes;
    char *at = (char *)b->bytes + b->runs_at;
    memcpy(at, record->context_api, api);
    at[api] = '\0';
    memcpy(at + api + 1, record->label, label);
    at[api + 1 + label] = '\0';
    ring->last = (struct run_head){
        .frame = record->frame,
        .submission = record->submission,
        .stream = record->stream,
        .strings_key = key,
        .kind = record->kind,
        .api_name = record->api_name,
        .context = record->context,
        .first_row = b->rows,
        .bytes = bytes,
        .api_length = (uint32_t)api,
    };
    memcpy(b->bytes + b->runs_at + bytes - sizeof(struct run_head), &ring->last,
           sizeof(struct run_head));
    b->runs++;
}

static tally_value *put_row(report_ring *ring, struct block *b, const tally_command_record *record)
{
    report_ring_row *row = row_at(ring, b, b->rows++);
    row->sequence = record->sequence;
    row->begin_ns = record->begin_ns;
    row->end_ns = record->end_ns;
    return row->values;
}

/* A row that starts a run or a block. */
static __attribute__((noinline)) tally_value *
append_first(report_ring *ring, const tally_command_record *record, uint64_t strings_key)
{
    struct block *b = ring->current;
    bool new_run = !b || !b->runs || !same_run(&ring->last, record, strings_key);
    size_t api = 0, label = 0;
    uint32_t entry = 0;
    if (new_run) {
        api = strlen(record->context_api);
        label = strlen(record->label);
        entry = run_bytes(ring, &api, &label);
    }
    if (b && (size_t)(b->rows + 1) * ring->row_bytes + entry > b->runs_at) {
        hand_over(ring, b);
        b = NULL;
    }
    if (!b) {
        if (!(b = ring->current = take_block(ring)))
            return NULL; /* out of memory before any block existed: the row is lost */
        if (!new_run) {
            new_run = true;
            api = strlen(record->context_api);
            label = strlen(record->label);
            entry = run_bytes(ring, &api, &label);
        }
    }
    if (new_run)
        put_run(ring, b, record, strings_key, api, label, entry);
    return put_row(ring, b, record);
}

/* Most rows continue the block's latest run: they take no call and none
 * of the registers append_first saves. */
tally_value *report_ring_append(report_ring *ring, const tally_command_record *record,
                                uint64_t strings_key)
{
    struct block *b = ring->current;
    if (!b || !b->runs || !same_run(&ring->last, record, strings_key) ||
        (size_t)(b->rows + 1) * ring->row_bytes > b->runs_at)
        return append_first(ring, record, strings_key);
    return put_row(ring, b, record);
}

void report_ring_push(report_ring *ring, const tally_command_record *record, uint64_t strings_key,
                      const tally_value *values)
{
    tally_value *slot = report_ring_append(ring, record, strings_key);
    if (slot)
        memcpy(slot, values, ring->value_count * sizeof(tally_value));
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
    else if (ring->current)
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
