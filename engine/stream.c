/*
 * The recording side of streams: validating each canonical command and
 * appending it to the stream's current recording. No lock is taken here;
 * a stream is used by one thread at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

tally_status tally_stream_create(tally_context *context, tally_stream **out)
{
    if (!context || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_stream *s = calloc(1, sizeof(*s));
    if (!s)
        return TALLY_ERROR_OUT_OF_MEMORY;
    tally_context_ref(context);
    s->context = context;
    s->id = atomic_fetch_add(&context->device->next_stream_id, 1) + 1;
    *out = s;
    return TALLY_OK;
}

/* Remembers what the stream binds, holding the program. */
static void remember_program(tally_stream *stream, struct tally_program *program)
{
    if (program)
        tally_program_ref(program);
    tally_program_release(stream->bound_program);
    stream->bound_program = program;
}

static void forget_bound_state(tally_stream *stream)
{
    remember_program(stream, NULL);
    stream->has_bound_render = false;
    stream->rebind_pending = false;
}

void tally_stream_destroy(tally_stream *stream)
{
    if (!stream)
        return;
    forget_bound_state(stream);
    tally_recording_unref(stream->recording);
    tally_context_unref(stream->context);
    free(stream);
}

/* Forgets the lane's run and block: they belong to the recording being dropped or rewound. */
static void drop_lane(struct tally_stream *stream)
{
    stream->lane = (tally_draw_lane){NULL, NULL};
    stream->open_run = NULL;
    stream->draws_end = NULL;
}

static void drop_recording(tally_stream *stream)
{
    drop_lane(stream);
    struct tally_recording *r = stream->recording;
    if (r && atomic_load_explicit(&r->refs, memory_order_acquire) == 1) {
        tally_recording_rewind(r); /* nothing else reads it: reuse its memory */
    } else {
        tally_recording_unref(r);
        stream->recording = NULL;
    }
}

tally_status tally_stream_reset(tally_stream *stream)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    drop_recording(stream);
    forget_bound_state(stream);
    stream->open_markers = 0;
    return TALLY_OK;
}

void tally_stream_consume(tally_stream *stream)
{
    drop_recording(stream);
    stream->rebind_pending = stream->bound_program || stream->has_bound_render;
}

uint64_t tally_stream_id(const tally_stream *stream)
{
    return stream ? stream->id : 0;
}

uint32_t tally_stream_command_count(const tally_stream *stream)
{
    if (!stream || !stream->recording)
        return 0;
    uint32_t count = stream->recording->commands;
    if (stream->open_run) /* counted as one command while open */
        count += (uint32_t)(stream->lane.next - stream->open_run->u.run.first) - 1;
    return count;
}

void tally_stream_close_run(struct tally_stream *stream)
{
    struct tally_command *run = stream->open_run;
    if (!run)
        return;
    run->u.run.count = (uint32_t)(stream->lane.next - run->u.run.first);
    stream->recording->commands += run->u.run.count - 1;
    stream->open_run = NULL;
    stream->lane.end = stream->lane.next;
}

/* The stream's recording, created on first use; NULL if out of memory. */
static struct tally_recording *recording_of(tally_stream *stream)
{
    if (!stream->recording)
        stream->recording = tally_recording_create();
    return stream->recording;
}

static void rebind(tally_stream *stream)
{
    stream->rebind_pending = false;
    if (stream->bound_program)
        tally_stream_bind_program(stream, stream->bound_program);
    if (stream->has_bound_render)
        tally_stream_set_render_state(stream, &stream->bound_render);
}

static struct tally_command *append(tally_stream *stream, uint32_t type)
{
    if (stream->rebind_pending)
        rebind(stream);
    tally_stream_close_run(stream);
    if (!recording_of(stream))
        return NULL;
    struct tally_command *c = tally_recording_append(stream->recording);
    if (c)
        c->type = type;
    return c;
}

static tally_packed_draw packed(const tally_draw *d)
{
    return (tally_packed_draw){
        .api_name = d->api_name,
        .count = d->count,
        .instance_count = d->instance_count,
        .first = d->first,
        .first_instance = d->first_instance,
        .vertex_offset = d->vertex_offset,
        .flags = (uint8_t)d->flags,
        .topology = d->topology,
        .patch_control_points = d->patch_control_points,
        .index_size = d->index_size,
    };
}

tally_status tally_stream_end_recording(tally_stream *stream)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_stream_close_run(stream);
    return TALLY_OK;
}

tally_draw_lane *tally_stream_draw_lane(tally_stream *stream)
{
    return stream ? &stream->lane : NULL;
}

/* A run starts in the lane's block, or in the next one when that is full. */
tally_status tally_stream_draw_packed(tally_stream *stream, const tally_packed_draw *draw)
{
    if (!stream || !draw)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *run = append(stream, TALLY_CMD_DRAW_RUN);
    if (!run)
        return TALLY_ERROR_OUT_OF_MEMORY;
    if (stream->lane.next == stream->draws_end) {
        tally_packed_draw *block = tally_recording_next_draws(stream->recording);
        if (!block) {
            tally_recording_unappend(stream->recording);
            return TALLY_ERROR_OUT_OF_MEMORY;
        }
        stream->lane.next = block;
        stream->draws_end = block + TALLY_DRAW_BLOCK_DRAWS;
    }
    run->u.run.first = stream->lane.next;
    run->u.run.count = 0;
    stream->open_run = run;
    stream->lane.end = stream->draws_end;
    *stream->lane.next++ = *draw;
    return TALLY_OK;
}

static bool valid_draw(const tally_draw *d)
{
    if (d->indices && !(d->flags & TALLY_DRAW_INDEXED))
        return false;
    tally_packed_draw p = packed(d);
    return d->flags <= UINT8_MAX && tally_packed_draw_valid(&p);
}

tally_status tally_stream_draw(tally_stream *stream, const tally_draw *draw)
{
    if (!stream || !draw || !valid_draw(draw))
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!draw->indices || !draw->count) {
        tally_packed_draw p = packed(draw);
        return tally_stream_draw_inline(stream, &stream->lane, &p);
    }
    size_t bytes = (size_t)draw->count * draw->index_size;
    struct tally_recording *r = recording_of(stream);
    const void *indices = r ? tally_recording_store(r, draw->indices, bytes) : NULL;
    if (!indices)
        return TALLY_ERROR_OUT_OF_MEMORY;
    struct tally_command *c = append(stream, TALLY_CMD_DRAW);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.draw = *draw;
    c->u.draw.indices = indices;
    return TALLY_OK;
}

tally_status tally_stream_dispatch(tally_stream *stream, const tally_dispatch *dispatch)
{
    if (!stream || !dispatch)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c = append(stream, TALLY_CMD_DISPATCH);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.dispatch = *dispatch;
    return TALLY_OK;
}

tally_status tally_stream_transfer(tally_stream *stream, const tally_transfer *transfer)
{
    if (!stream || !transfer || (unsigned)transfer->kind > TALLY_TRANSFER_WRITE)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c = append(stream, TALLY_CMD_TRANSFER);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.transfer = *transfer;
    return TALLY_OK;
}

tally_status tally_stream_indirect(tally_stream *stream, const tally_indirect *indirect)
{
    if (!stream || !indirect || (unsigned)indirect->layout >= TALLY_INDIRECT_LAYOUT_COUNT)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (indirect->layout != TALLY_INDIRECT_DISPATCH) {
        tally_packed_draw as_draw = {
            .flags = indirect->layout == TALLY_INDIRECT_DRAW_INDEXED ? TALLY_DRAW_INDEXED : 0,
            .topology = indirect->topology,
            .index_size = indirect->index_size,
        };
        if (!tally_packed_draw_valid(&as_draw))
            return TALLY_ERROR_INVALID_ARGUMENT;
    }
    struct tally_command *c = append(stream, TALLY_CMD_INDIRECT);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.indirect = *indirect;
    return TALLY_OK;
}

/* Appends a command that refers to `object`, which the recording then holds. */
static tally_status append_holding(tally_stream *stream, uint32_t type, enum tally_held_kind kind,
                                   void *object, struct tally_command **out)
{
    struct tally_command *c = append(stream, type);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    if (object && tally_recording_hold(stream->recording, kind, object) != TALLY_OK) {
        tally_recording_unappend(stream->recording);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    *out = c;
    return TALLY_OK;
}

tally_status tally_stream_bind_program(tally_stream *stream, tally_program *program)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c;
    tally_status s =
        append_holding(stream, TALLY_CMD_BIND_PROGRAM, TALLY_HELD_PROGRAM, program, &c);
    if (s == TALLY_OK) {
        c->u.program = program;
        remember_program(stream, program);
    }
    return s;
}

tally_status tally_stream_set_render_state(tally_stream *stream, const tally_render_state *state)
{
    if (!stream || !state)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c = append(stream, TALLY_CMD_RENDER_STATE);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.render = *state;
    stream->bound_render = *state;
    stream->has_bound_render = true;
    return TALLY_OK;
}

static tally_status append_marker(tally_stream *stream, uint32_t type, tally_results *results,
                                  uint32_t first, uint32_t count)
{
    if (!stream || !results || first >= results->slot_count || count > results->slot_count - first)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (results->device != stream->context->device)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c;
    tally_status s = append_holding(stream, type, TALLY_HELD_RESULTS, results, &c);
    if (s == TALLY_OK) {
        c->u.marker.results = results;
        c->u.marker.first = first;
        c->u.marker.count = count;
    }
    return s;
}

tally_status tally_stream_marker_begin(tally_stream *stream, tally_results *results, uint32_t slot)
{
    tally_status s = append_marker(stream, TALLY_CMD_MARKER_BEGIN, results, slot, 1);
    if (s == TALLY_OK)
        stream->open_markers++;
    return s;
}

tally_status tally_stream_marker_end(tally_stream *stream, tally_results *results, uint32_t slot)
{
    tally_status s = append_marker(stream, TALLY_CMD_MARKER_END, results, slot, 1);
    if (s == TALLY_OK && stream->open_markers)
        stream->open_markers--;
    return s;
}

tally_status tally_stream_reset_results(tally_stream *stream, tally_results *results,
                                        uint32_t first, uint32_t count)
{
    return append_marker(stream, TALLY_CMD_RESET_RESULTS, results, first, count);
}

tally_status tally_stream_label_push(tally_stream *stream, const char *label)
{
    if (!stream || !label)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_recording *r = recording_of(stream);
    const char *copy = r ? tally_recording_store(r, label, strlen(label) + 1) : NULL;
    struct tally_command *c = copy ? append(stream, TALLY_CMD_LABEL_PUSH) : NULL;
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.label = copy;
    return TALLY_OK;
}

tally_status tally_stream_label_pop(tally_stream *stream)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    return append(stream, TALLY_CMD_LABEL_POP) ? TALLY_OK : TALLY_ERROR_OUT_OF_MEMORY;
}

tally_status tally_stream_measure(tally_stream *stream, uint64_t key)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c = append(stream, TALLY_CMD_MEASURE);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.measure_key = key;
    return TALLY_OK;
}

tally_status tally_stream_measure_group(tally_stream *stream, uint64_t key)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_command *c = append(stream, TALLY_CMD_MEASURE_GROUP);
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->u.measure_key = key;
    return TALLY_OK;
}

tally_status tally_stream_measure_end(tally_stream *stream)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    return append(stream, TALLY_CMD_MEASURE_END) ? TALLY_OK : TALLY_ERROR_OUT_OF_MEMORY;
}

tally_status tally_stream_frame_boundary(tally_stream *stream)
{
    if (!stream)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!append(stream, TALLY_CMD_FRAME))
        return TALLY_ERROR_OUT_OF_MEMORY;
    tally_capture_frame_begun(stream->context->device);
    return TALLY_OK;
}

tally_status tally_stream_execute(tally_stream *stream, tally_stream *secondary)
{
    if (!stream || !secondary || secondary == stream ||
        secondary->context->device != stream->context->device)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_stream_close_run(secondary);
    if (!secondary->recording || !secondary->recording->count)
        return TALLY_OK;
    struct tally_command *c;
    tally_status s =
        append_holding(stream, TALLY_CMD_EXECUTE, TALLY_HELD_RECORDING, secondary->recording, &c);
    if (s == TALLY_OK) {
        c->u.execute.recording = secondary->recording;
        c->u.execute.count = secondary->recording->count;
    }
    return s;
}
