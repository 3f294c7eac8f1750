/*
 * Held measured submissions (door/tally_held.h): the queue of recordings a
 * door holds until it has read their measurements, and their submission,
 * read whole and oldest first, or with what was read when the door drains.
 */
#include <stdlib.h>

#include "tally_held.h"

tally_held *tally_held_push(tally_held_queue *queue, tally_context *context, tally_stream **stream,
                            const char *api_name, uint32_t flags, uint32_t count, bool measured,
                            void *payload)
{
    tally_held *h = calloc(1, sizeof(*h));
    /* One value at least: calloc(0) may answer NULL, which reads as no memory. */
    tally_measurement *values = measured ? calloc(count ? count : 1, sizeof(*values)) : NULL;
    tally_stream *fresh = NULL;
    if (!h || (measured && !values) || tally_stream_create(context, &fresh) != TALLY_OK) {
        free(h);
        free(values);
        return NULL;
    }
    *h = (tally_held){.stream = *stream,
                      .api_name = api_name,
                      .flags = flags,
                      .measured = measured,
                      .values = values,
                      .count = count,
                      .payload = payload,
                      .device = tally_context_device(context)};
    if (queue->last)
        queue->last->next = h;
    else
        queue->first = h;
    queue->last = h;
    *stream = fresh;
    return h;
}

static tally_held *take_first(tally_held_queue *queue)
{
    tally_held *h = queue->first;
    queue->first = h->next;
    if (!queue->first)
        queue->last = NULL;
    h->next = NULL;
    return h;
}

/* The engine takes the values (measured) and the stream's recording; the
 * door gets its payload back. Returns the submission's seqno (0: refused). */
static uint64_t submit(tally_held_queue *queue, tally_held *h)
{
    const tally_held_door *door = queue->door;
    uint64_t began = door->prepare(queue->user, h);
    uint64_t seqno = 0;
    tally_status status =
        h->measured ? tally_submit_stream_measured(h->device, h->stream, h->flags, h->api_name,
                                                   h->values, h->count, began, &seqno)
                    : tally_submit_stream(h->device, h->stream, h->flags, h->api_name, &seqno);
    h->values = NULL; /* the engine's now, or freed */
    door->release(queue->user, h);
    tally_stream_destroy(h->stream);
    free(h);
    return status == TALLY_OK ? seqno : 0;
}

uint64_t tally_held_poll(tally_held_queue *queue, bool force)
{
    uint64_t last = 0;
    bool readied = false;
    while (queue->first && queue->door->read(queue->user, queue->first, force)) {
        if (!readied && queue->door->ready)
            queue->door->ready(queue->user);
        readied = true;
        uint64_t seqno = submit(queue, take_first(queue));
        if (seqno)
            last = seqno;
    }
    return last;
}

uint64_t tally_held_drain(tally_held_queue *queue)
{
    uint64_t lost = 0;
    while (queue->first) {
        tally_held *h = take_first(queue);
        lost += h->count - h->read;
        submit(queue, h);
    }
    return lost;
}

void tally_held_discard(tally_held_queue *queue, tally_held *h)
{
    tally_held *before = NULL;
    for (tally_held *at = queue->first; at && at != h; at = at->next)
        before = at;
    if (before)
        before->next = h->next;
    else
        queue->first = h->next;
    if (queue->last == h)
        queue->last = before;
    queue->door->release(queue->user, h);
    tally_stream_destroy(h->stream);
    free(h->values);
    free(h);
}

void tally_held_move(tally_held_queue *to, tally_held_queue *from)
{
    if (!from->first)
        return;
    if (to->last)
        to->last->next = from->first;
    else
        to->first = from->first;
    to->last = from->last;
    from->first = from->last = NULL;
}
