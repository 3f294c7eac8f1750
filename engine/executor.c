/*
 * The executor: runs submitted recordings on the queue thread. It keeps the
 * simulated GPU clock, asks the backend what each command costs, accumulates
 * raw counters per context and for the whole device, and serves markers,
 * labels, frames, samplers, the timeline and the per-command report.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

#define EVENT_BATCH 1024u
#define MAX_EXECUTE_DEPTH 8u

tally_status tally_executor_init(struct tally_device *d)
{
    struct tally_executor *e = &d->exec;
    e->global = calloc(d->raw_count, sizeof(uint64_t));
    e->delta = calloc(d->raw_count, sizeof(uint64_t));
    e->snapshot = calloc(d->raw_count, sizeof(uint64_t));
    e->events = calloc(EVENT_BATCH, sizeof(tally_event));
    e->event_capacity = EVENT_BATCH;
    e->next_sample_ns = UINT64_MAX;
    uint64_t mhz = d->info.core_clock_hz / 1000000u;
    e->ns_per_cycle = mhz && 1000u % mhz == 0 ? 1000u / mhz : 0;
    e->cycle_slots = calloc(d->raw_count + 1, sizeof(uint32_t));
    if (!e->global || !e->delta || !e->snapshot || !e->events || !e->cycle_slots)
        return TALLY_ERROR_OUT_OF_MEMORY;
    const struct tally_catalogue *cat = d->catalogue;
    for (uint32_t slot = 0; slot < d->raw_count; slot++) {
        const tally_counter_info *c = &cat->counters[cat->raw_counters[slot]];
        if (c->source == TALLY_SOURCE_WORK && c->unit == TALLY_UNIT_CYCLES)
            e->cycle_slots[e->cycle_slot_count++] = slot;
    }
    return TALLY_OK;
}

void tally_executor_finish(struct tally_device *d)
{
    struct tally_executor *e = &d->exec;
    free(e->global);
    free(e->delta);
    free(e->snapshot);
    free(e->events);
    free(e->cycle_slots);
    free(e->report_values);
}

/* Core cycles elapsed by gpu_ns: counted back from the executor's clock for
 * a time inside the command just run, forward, as tally_executor_idle_until
 * counts them, for a time the idle clock is about to reach. */
static uint64_t cycles_at(const struct tally_device *d, uint64_t gpu_ns)
{
    const struct tally_executor *e = &d->exec;
    uint64_t mhz = d->info.core_clock_hz / 1000000u;
    if (gpu_ns >= e->gpu_ns)
        return e->cycles + (gpu_ns - e->gpu_ns) * mhz / 1000u;
    uint64_t back = (e->gpu_ns - gpu_ns) * mhz / 1000u;
    return back < e->cycles ? e->cycles - back : 0;
}

/* A sample inside the command being run: each of its cycle counters has
 * counted one a cycle from the command's beginning, up to its total (as the
 * timeline draws a unit's busy span from the command's begin). */
static void add_elapsed_part(const struct tally_device *d, uint64_t gpu_ns, uint64_t *out)
{
    const struct tally_executor *e = &d->exec;
    if (!e->crossing || gpu_ns <= e->crossing_begin_ns || gpu_ns >= e->gpu_ns)
        return;
    uint64_t at_begin = e->cycles - e->crossing_cycles, now = cycles_at(d, gpu_ns);
    uint64_t elapsed = now > at_begin ? now - at_begin : 0;
    for (uint32_t i = 0; i < e->cycle_slot_count; i++) {
        uint32_t slot = e->cycle_slots[i];
        out[slot] += e->delta[slot] < elapsed ? e->delta[slot] : elapsed;
    }
}

/* Cumulative raw values at gpu_ns, with the elapsed slots holding the clock
 * at gpu_ns (cycles counted back or forward from the executor's clock). */
void tally_executor_snapshot(struct tally_device *d, const uint64_t *accumulators, uint64_t gpu_ns,
                             uint64_t *out)
{
    memcpy(out, accumulators, d->raw_count * sizeof(uint64_t));
    if (d->elapsed_ns_slot != TALLY_NOT_RAW)
        out[d->elapsed_ns_slot] = gpu_ns;
    if (d->elapsed_cycles_slot != TALLY_NOT_RAW)
        out[d->elapsed_cycles_slot] = cycles_at(d, gpu_ns);
    if (accumulators == d->exec.global)
        add_elapsed_part(d, gpu_ns, out);
}

static void publish_clock(struct tally_device *d)
{
    atomic_store_explicit(&d->published_gpu_ns, d->exec.gpu_ns, memory_order_relaxed);
}

/* Work: cycles become nanoseconds at the core clock, carrying the remainder,
 * so per-command times add up exactly to the time of their submission. */
static uint64_t advance_by_cycles(struct tally_device *d, uint64_t cycles)
{
    struct tally_executor *e = &d->exec;
    if (e->ns_per_cycle) { /* no remainder ever, and no division */
        uint64_t ns = cycles * e->ns_per_cycle;
        e->cycles += cycles;
        e->gpu_ns += ns;
        return ns;
    }
    uint64_t mhz = d->info.core_clock_hz / 1000000u;
    unsigned __int128 scaled = (unsigned __int128)cycles * 1000u + e->ns_remainder;
    uint64_t ns;
    if ((uint64_t)(scaled >> 64) == 0) { /* almost always: a 64-bit division, not a call */
        ns = (uint64_t)scaled / mhz;
        e->ns_remainder = (uint64_t)scaled % mhz;
    } else {
        ns = (uint64_t)(scaled / mhz);
        e->ns_remainder = (uint64_t)(scaled % mhz);
    }
    e->cycles += cycles;
    e->gpu_ns += ns;
    return ns;
}

/* Idle: the clock jumps forward; the cores keep counting cycles. */
void tally_executor_idle_until(struct tally_device *d, uint64_t gpu_ns)
{
    struct tally_executor *e = &d->exec;
    if (gpu_ns <= e->gpu_ns)
        return;
    uint64_t mhz = d->info.core_clock_hz / 1000000u;
    tally_samplers_advance(d, gpu_ns, true);
    e->cycles += (gpu_ns - e->gpu_ns) * mhz / 1000u;
    e->gpu_ns = gpu_ns;
    publish_clock(d);
}

static void push_event(struct tally_device *d, uint32_t track, uint32_t id, uint32_t kind,
                       uint32_t type, uint64_t ts, const uint64_t *fields, uint32_t n)
{
    tally_event ev = {.timestamp_ns = ts, .track = track, .id = id, .kind = kind, .type = type};
    memcpy(ev.fields, fields, n * sizeof(uint64_t));
    tally_timeline_push(d, &ev);
}

/* The local size a dispatch ran with: its own, else the bound program's
 * compute stage's, else 1 (as the backends count it). */
static uint32_t applied_local_size(const tally_dispatch *dispatch,
                                   const tally_program_desc *program, int axis)
{
    if (dispatch->local_size[axis])
        return dispatch->local_size[axis];
    const tally_stage_profile *cs = program ? &program->stages[TALLY_STAGE_COMPUTE] : NULL;
    return cs && cs->present && cs->local_size[axis] ? cs->local_size[axis] : 1;
}

static uint32_t command_fields(const struct tally_command *c, const tally_program_desc *program,
                               uint64_t *fields)
{
    switch (c->type) {
    case TALLY_CMD_DRAW: {
        const tally_draw *draw = &c->u.draw;
        fields[0] = (uint64_t)draw->count * draw->instance_count;
        fields[1] = draw->instance_count;
        fields[2] =
            tally_topology_primitives(draw->topology, draw->count, draw->patch_control_points) *
            draw->instance_count;
        fields[3] = (draw->flags & TALLY_DRAW_INDEXED) != 0;
        fields[4] = draw->topology;
        return 5;
    }
    case TALLY_CMD_DISPATCH:
        for (int i = 0; i < 3; i++) {
            fields[i] = c->u.dispatch.groups[i];
            fields[3 + i] = applied_local_size(&c->u.dispatch, program, i);
        }
        return 6;
    default:
        fields[0] = c->u.transfer.bytes;
        fields[1] = c->u.transfer.kind;
        return 2;
    }
}

static void timeline_command(struct tally_device *d, const struct tally_command *c, uint64_t begin,
                             uint64_t end, uint64_t cycles)
{
    static const uint32_t kinds[] = {[TALLY_CMD_DRAW] = TALLY_EVENT_KIND_DRAW,
                                     [TALLY_CMD_DISPATCH] = TALLY_EVENT_KIND_DISPATCH,
                                     [TALLY_CMD_TRANSFER] = TALLY_EVENT_KIND_TRANSFER};
    uint64_t fields[TALLY_EVENT_MAX_FIELDS] = {0};
    uint32_t n = command_fields(c, d->exec.program, fields);
    uint32_t id = atomic_fetch_add(&d->next_event_id, 1) + 1;
    push_event(d, TALLY_TRACK_QUEUE, id, kinds[c->type], TALLY_EVENT_BEGIN, begin, fields, n);
    push_event(d, TALLY_TRACK_QUEUE, id, kinds[c->type], TALLY_EVENT_END, end, fields, n);
    const struct tally_catalogue *cat = d->catalogue;
    for (uint32_t u = 0; u < cat->unit_count; u++) {
        uint32_t slot = cat->units[u].busy_raw_index;
        uint64_t busy = slot != TALLY_NOT_RAW ? d->exec.delta[slot] : 0;
        if (!busy || !cycles)
            continue;
        uint64_t span = (uint64_t)((unsigned __int128)(end - begin) * busy / cycles);
        uint64_t unit_fields[2] = {id, busy};
        uint32_t track = TALLY_TRACK_FIRST_UNIT + u;
        push_event(d, track, id, TALLY_EVENT_KIND_UNIT_BUSY, TALLY_EVENT_BEGIN, begin, unit_fields,
                   2);
        push_event(d, track, id, TALLY_EVENT_KIND_UNIT_BUSY, TALLY_EVENT_END, begin + span,
                   unit_fields, 2);
    }
}

static void accumulate(struct tally_device *d, struct tally_context *ctx)
{
    const uint64_t *delta = d->exec.delta;
    uint64_t *mine = ctx->accumulators, *all = d->exec.global;
    for (uint32_t i = 0; i < d->raw_count; i++) {
        mine[i] += delta[i];
        all[i] += delta[i];
    }
}

/* What the backend sees of a draw, dispatch or transfer command. */
static struct tally_work work_of(const struct tally_command *c)
{
    switch (c->type) {
    case TALLY_CMD_DISPATCH:
        return (struct tally_work){TALLY_WORK_DISPATCH, {.dispatch = &c->u.dispatch}};
    case TALLY_CMD_TRANSFER:
        return (struct tally_work){TALLY_WORK_TRANSFER, {.transfer = &c->u.transfer}};
    default: return (struct tally_work){TALLY_WORK_DRAW, {.draw = &c->u.draw}};
    }
}

static void run_work(struct tally_device *d, const struct tally_command *c,
                     struct tally_context *ctx, uint64_t stream_id)
{
    struct tally_executor *e = &d->exec;
    struct tally_exec_state state = {&e->render, e->program, e->program_id};
    struct tally_work work = work_of(c);
    uint64_t cycles = 0, begin, ns;
    if (d->backend->execute_measured) {
        memset(e->delta, 0, d->raw_count * sizeof(uint64_t));
        begin = tally_measured_work(d, &work, &state);
        ns = e->gpu_ns - begin;
    } else {
        cycles = d->backend->execute(d->backend_state, &work, &state, e->delta);
        begin = e->gpu_ns;
        ns = advance_by_cycles(d, cycles);
    }
    if (e->gpu_ns > e->next_sample_ns) {
        e->crossing = true;
        e->crossing_begin_ns = begin;
        e->crossing_cycles = cycles;
        tally_samplers_advance(d, e->gpu_ns, false);
        e->crossing = false;
    }
    if (d->elapsed_ns_slot != TALLY_NOT_RAW)
        e->delta[d->elapsed_ns_slot] = ns;
    if (d->elapsed_cycles_slot != TALLY_NOT_RAW)
        e->delta[d->elapsed_cycles_slot] = cycles;
    if (tally_work_accumulated(d))
        accumulate(d, ctx);
    e->command_sequence++;
    if (ctx->id != e->last_context_id)
        e->context_switches++;
    e->last_context_id = ctx->id;
    if (atomic_load_explicit(&d->timeline_active, memory_order_relaxed))
        timeline_command(d, c, begin, e->gpu_ns, cycles);
    if (d->report || d->trace)
        tally_command_report_write(d, c, ctx, stream_id, begin, e->gpu_ns);
}

static void run_marker(struct tally_device *d, const struct tally_command *c,
                       struct tally_context *ctx)
{
    struct tally_results *r = c->u.marker.results;
    if (c->type == TALLY_CMD_RESET_RESULTS) {
        tally_results_reset(r, c->u.marker.first, c->u.marker.count);
        return;
    }
    tally_executor_snapshot(d, ctx->accumulators, d->exec.gpu_ns, d->exec.snapshot);
    if (c->type == TALLY_CMD_MARKER_BEGIN)
        tally_results_begin(r, c->u.marker.first, d->exec.snapshot, d->exec.gpu_ns);
    else
        tally_results_end(r, c->u.marker.first, d->exec.snapshot, d->exec.gpu_ns, ctx->id,
                          d->exec.pass_index);
}

static void run_label(struct tally_context *ctx, const struct tally_command *c,
                      struct tally_recording *owner)
{
    ctx->label_changes++;
    if (c->type == TALLY_CMD_LABEL_PUSH) {
        if (ctx->label_depth == TALLY_MAX_LABEL_DEPTH)
            return;
        tally_recording_ref(owner);
        ctx->label_owners[ctx->label_depth] = owner;
        ctx->labels[ctx->label_depth++] = c->u.label;
    } else if (ctx->label_depth) {
        tally_recording_unref(ctx->label_owners[--ctx->label_depth]);
    }
}

static void run_recording(struct tally_device *d, struct tally_recording *rec, uint32_t count,
                          struct tally_context *ctx, uint64_t stream_id, uint32_t depth);

static void run_draws(struct tally_device *d, const struct tally_command *run,
                      struct tally_context *ctx, uint64_t stream_id)
{
    struct tally_command c = {.type = TALLY_CMD_DRAW};
    for (uint32_t i = 0; i < run->u.run.count; i++) {
        const tally_packed_draw *p = &run->u.run.first[i];
        if (!tally_packed_draw_valid(p))
            continue;
        c.u.draw = (tally_draw){
            .api_name = p->api_name,
            .count = p->count,
            .instance_count = p->instance_count,
            .first = p->first,
            .first_instance = p->first_instance,
            .vertex_offset = p->vertex_offset,
            .flags = p->flags,
            .topology = p->topology,
            .patch_control_points = p->patch_control_points,
            .index_size = p->index_size,
        };
        run_work(d, &c, ctx, stream_id);
    }
}

static uint32_t record_word(const void *record, uint32_t index)
{
    uint32_t word;
    memcpy(&word, (const char *)record + 4 * index, sizeof(word));
    return word;
}

static const uint32_t indirect_record_words[TALLY_INDIRECT_LAYOUT_COUNT] = {4, 5, 3};

/* The command one indirect record stands for. */
static void decode_indirect(const tally_indirect *in, const void *record, struct tally_command *out)
{
    if (in->layout == TALLY_INDIRECT_DISPATCH) {
        out->type = TALLY_CMD_DISPATCH;
        out->u.dispatch = (tally_dispatch){
            .api_name = in->api_name,
            .groups = {record_word(record, 0), record_word(record, 1), record_word(record, 2)},
            .flags = TALLY_DISPATCH_INDIRECT,
        };
        return;
    }
    bool indexed = in->layout == TALLY_INDIRECT_DRAW_INDEXED;
    out->type = TALLY_CMD_DRAW;
    out->u.draw = (tally_draw){
        .api_name = in->api_name,
        .count = record_word(record, 0),
        .instance_count = record_word(record, 1),
        .first = record_word(record, 2),
        .vertex_offset = indexed ? (int32_t)record_word(record, 3) : 0,
        .first_instance = record_word(record, indexed ? 4 : 3),
        .flags = TALLY_DRAW_INDIRECT | (indexed ? TALLY_DRAW_INDEXED : 0),
        .topology = in->topology,
        .patch_control_points = in->patch_control_points,
        .index_size = in->index_size,
    };
}

/* One command per record the reader has; a record of zeroes when it has
 * none, so the API call still shows. */
static void run_indirect(struct tally_device *d, const struct tally_command *c,
                         struct tally_context *ctx, uint64_t stream_id)
{
    const tally_indirect *in = &c->u.indirect;
    const tally_indirect_reader *reader = d->exec.indirect_reader;
    static const uint32_t zeroes[5];
    tally_indirect_records records = {.data = zeroes, .count = 1};
    /* The wait is for the GPU to have written the parameters: only work
     * that is simulated reads them. */
    if (reader && reader->wait && !d->exec.reader_waited)
        reader->wait(reader->user);
    d->exec.reader_waited = true;
    if (reader && !reader->read(reader->user, in->key, &records))
        records = (tally_indirect_records){.data = zeroes, .count = 1};
    uint32_t size = 4 * indirect_record_words[in->layout];
    if (records.count > 1 && records.stride < size)
        return; /* overlapping records: the front end's mistake */
    struct tally_command work;
    for (uint32_t i = 0; i < records.count; i++) {
        decode_indirect(in, (const char *)records.data + (size_t)i * records.stride, &work);
        run_work(d, &work, ctx, stream_id);
    }
}

static void run_command(struct tally_device *d, const struct tally_command *c,
                        struct tally_recording *rec, struct tally_context *ctx, uint64_t stream_id,
                        uint32_t depth)
{
    switch (c->type) {
    case TALLY_CMD_DRAW:
    case TALLY_CMD_DISPATCH:
    case TALLY_CMD_TRANSFER:
        if (d->exec.noting)
            tally_run_note_count(d, ctx, 1);
        if (tally_work_observed(d))
            run_work(d, c, ctx, stream_id);
        break;
    case TALLY_CMD_DRAW_RUN:
        if (d->exec.noting)
            tally_run_note_count(d, ctx, c->u.run.count);
        if (tally_work_observed(d))
            run_draws(d, c, ctx, stream_id);
        break;
    case TALLY_CMD_INDIRECT:
        if (d->exec.noting)
            tally_run_note_count(d, ctx, 1);
        if (tally_work_observed(d))
            run_indirect(d, c, ctx, stream_id);
        break;
    case TALLY_CMD_MEASURE:
    case TALLY_CMD_MEASURE_GROUP:
    case TALLY_CMD_MEASURE_END: tally_measured_select(d, c->type, c->u.measure_key); break;
    case TALLY_CMD_BIND_PROGRAM:
        d->exec.program = c->u.program ? tally_program_desc_when_ready(c->u.program) : NULL;
        d->exec.program_id = c->u.program ? c->u.program->id : 0;
        d->exec.bound = c->u.program;
        break;
    case TALLY_CMD_RENDER_STATE: d->exec.render = c->u.render; break;
    case TALLY_CMD_MARKER_BEGIN:
    case TALLY_CMD_MARKER_END:
    case TALLY_CMD_RESET_RESULTS: run_marker(d, c, ctx); break;
    case TALLY_CMD_LABEL_PUSH:
    case TALLY_CMD_LABEL_POP: run_label(ctx, c, rec); break;
    case TALLY_CMD_FRAME: {
        /* A frame ends when the program presents or swaps: a CPU-side
         * happening, at the time its submission was handed over. */
        uint64_t fields[2] = {ctx->frame, ctx->id};
        push_event(d, TALLY_TRACK_DRIVER, 0, TALLY_EVENT_KIND_FRAME, TALLY_EVENT_INSTANT,
                   d->exec.submitted_ns, fields, 2);
        ctx->frame++;
        break;
    }
    case TALLY_CMD_EXECUTE:
        if (depth < MAX_EXECUTE_DEPTH)
            run_recording(d, c->u.execute.recording, c->u.execute.count, ctx, stream_id, depth + 1);
        break;
    }
}

static const tally_render_state default_render = {.layers = 1, .samples = 1};

/* Every stream, secondaries included, starts with nothing bound and the
 * default render state; what it binds lasts until its end (a program it
 * bound is only alive as long as the stream's recording). */
static void run_recording(struct tally_device *d, struct tally_recording *rec, uint32_t count,
                          struct tally_context *ctx, uint64_t stream_id, uint32_t depth)
{
    struct tally_executor *e = &d->exec;
    tally_render_state render = e->render;
    const tally_program_desc *program = e->program;
    uint64_t program_id = e->program_id;
    struct tally_program *bound = e->bound;
    e->render = default_render;
    e->program = NULL;
    e->program_id = 0;
    e->bound = NULL;
    const struct tally_chunk *chunk = rec->first;
    for (uint32_t i = 0; i < count; i++)
        run_command(d, tally_recording_at(&chunk, i), rec, ctx, stream_id, depth);
    e->render = render;
    e->program = program;
    e->program_id = program_id;
    e->bound = bound;
}

/* The driver's side of a submission, at the CPU time of the API call that
 * made it (realtime clock), or when the queue took it (virtual clock). */
static void driver_events(struct tally_device *d, const struct tally_pending *p,
                          const uint64_t *submission_fields)
{
    uint64_t at = d->exec.submitted_ns;
    push_event(d, TALLY_TRACK_DRIVER, 0, TALLY_EVENT_KIND_SUBMISSION, TALLY_EVENT_INSTANT, at,
               submission_fields, 3);
    if (p->flags & TALLY_SUBMIT_FLUSH) {
        uint64_t context = p->stream_count ? p->streams[0].context->id : 0;
        push_event(d, TALLY_TRACK_DRIVER, 0, TALLY_EVENT_KIND_FLUSH, TALLY_EVENT_INSTANT, at,
                   &context, 1);
    }
}

static void begin_submission(struct tally_device *d, struct tally_pending *p)
{
    struct tally_executor *e = &d->exec;
    if (atomic_exchange(&d->samplers_changed, false))
        e->next_sample_ns = tally_samplers_next_ns(d);
    tally_samplers_advance(d, e->gpu_ns, true); /* baselines of new samplers */
    if (d->info.clock == TALLY_CLOCK_REALTIME)
        tally_executor_idle_until(d, p->start_gpu_ns);
    e->captured = p->captured; /* whether the report and trace listen to it */
    tally_listening_begin_submission(d);
    e->submission = p->seqno;
    e->submitting_thread = p->tid;
    e->submission_call = p->api_name;
    e->pass_index = p->pass_index;
    e->submission_commands = 0;
    for (uint32_t i = 0; i < p->stream_count; i++)
        e->submission_commands += p->streams[i].commands;
    /* From the commands' counter, so no two spans of a track share an id. */
    e->submission_event_id = atomic_fetch_add(&d->next_event_id, 1) + 1;
    uint64_t fields[3] = {p->seqno, p->stream_count, e->submission_commands};
    e->submitted_ns = d->info.clock == TALLY_CLOCK_REALTIME ? p->submit_gpu_ns : e->gpu_ns;
    driver_events(d, p, fields);
    /* The queue's own span of it: when the GPU ran it, around its commands. */
    push_event(d, TALLY_TRACK_QUEUE, e->submission_event_id, TALLY_EVENT_KIND_SUBMISSION,
               TALLY_EVENT_BEGIN, e->gpu_ns, fields, 3);
}

void tally_execute_submission(struct tally_device *d, struct tally_pending *p)
{
    const tally_indirect_reader *reader = p->indirect_reader.read ? &p->indirect_reader : NULL;
    d->exec.indirect_reader = reader;
    tally_measured_begin_submission(d, p);
    begin_submission(d, p);
    for (uint32_t i = 0; i < p->stream_count; i++) {
        struct tally_pending_stream *s = &p->streams[i];
        if (s->recording)
            run_recording(d, s->recording, s->count, s->context, s->stream_id, 0);
    }
    uint64_t fields[3] = {p->seqno, p->stream_count, d->exec.submission_commands};
    push_event(d, TALLY_TRACK_QUEUE, d->exec.submission_event_id, TALLY_EVENT_KIND_SUBMISSION,
               TALLY_EVENT_END, d->exec.gpu_ns, fields, 3);
    d->exec.indirect_reader = NULL;
    tally_measured_end_submission(d);
    publish_clock(d);
    tally_timeline_flush(d);
}
