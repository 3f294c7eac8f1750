/*
 * Owns the GPU producer's packets of the Perfetto trace (perfetto_gpu.h).
 *
 * A GPU counter's value at a time is, for trace_processor, its value over
 * the span since that counter's previous value (the first marks where the
 * track starts). A command's counters hold over the command, so a value is
 * written only where it changes: at the end of the last command that had
 * it, which is where the next command begins, or where the GPU goes idle
 * (the values drop to 0 there). Similar draws in a row cost nothing.
 */
#include "perfetto_gpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intern_table.h"
#include "perfetto_counter_descriptor.h"
#include "perfetto_sequence.h"
#include "trace_command.h"

/* Field numbers from Perfetto's protos/perfetto/trace/trace_packet.proto,
 * interned_data/interned_data.proto, gpu/gpu_counter_event.proto and
 * gpu/gpu_render_stage_event.proto. */
enum {
    PACKET_INTERNED_DATA = 12,
    PACKET_GPU_COUNTER_EVENT = 52,
    PACKET_GPU_RENDER_STAGE_EVENT = 53,
    INTERNED_GRAPHICS_CONTEXTS = 23,
    INTERNED_GPU_SPECIFICATIONS = 24,
    CONTEXT_IID = 1,
    CONTEXT_PID = 2,
    CONTEXT_API = 3,
    SPECIFICATION_IID = 1,
    SPECIFICATION_NAME = 2,
    SPECIFICATION_DESCRIPTION = 3,
    SPECIFICATION_CATEGORY = 4,
    STAGE_EVENT_ID = 1,
    STAGE_DURATION = 2,
    STAGE_CONTEXT = 5,
    STAGE_EXTRA_DATA = 6,
    STAGE_SUBMISSION_ID = 10,
    STAGE_HW_QUEUE_IID = 13,
    STAGE_STAGE_IID = 14,
    EXTRA_NAME = 1,
    EXTRA_VALUE = 2,
    COUNTER_EVENT_DESCRIPTOR = 1,
    COUNTER_EVENT_COUNTERS = 2,
    COUNTER_ID = 1,
    COUNTER_INT_VALUE = 2,
    COUNTER_DOUBLE_VALUE = 3,
};

/* Enumerations of those protos. */
enum { API_UNDEFINED = 0, API_OPEN_GL = 1, API_VULKAN = 2, API_OPEN_CL = 3 };
enum { CATEGORY_OTHER = 0, CATEGORY_GRAPHICS = 1, CATEGORY_COMPUTE = 2 };

/* The hardware queue is the first GPU specification; stages follow it in
 * the same iid space. */
enum { QUEUE_IID = 1 };

/* What makes two commands one stage, beside their label. */
struct stage_key {
    const char *api_name, *context_api;
    uint64_t pipeline;
    uint32_t target_width, target_height;
};

struct perfetto_gpu {
    struct perfetto_sequence sequence;
    char *queue_name;
    const tally_catalogue *catalogue;
    uint32_t *counters, counter_count;
    /* Per counter, the bits of the value holding since it was last written
     * (tally_value's u64 or f64). */
    uint64_t *held;
    bool counting;        /* the first counter event, with the descriptor, is written */
    uint64_t boundary_ns; /* where the latest command ended: its values end there */
    bool queue_interned;
    struct intern_table stages; /* by slice name; iid QUEUE_IID + its own */
    uint8_t *contexts_interned; /* by context id */
    uint32_t contexts_capacity;
    /* The latest command's stage, so that a run of the same command with
     * the same label finds it without building its name. */
    struct stage_key last_key;
    char *last_label;
    size_t last_label_capacity;
    uint32_t last_stage_iid;
    bool failed;
};

struct perfetto_gpu *perfetto_gpu_open(uint32_t sequence_id, const uint64_t *origin_ns,
                                       const char *queue_name, const tally_catalogue *catalogue,
                                       const uint32_t *counters, uint32_t count)
{
    struct perfetto_gpu *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    perfetto_sequence_init(&g->sequence, sequence_id, origin_ns);
    g->queue_name = strdup(queue_name);
    g->catalogue = catalogue;
    g->counter_count = catalogue ? count : 0;
    g->counters = malloc((g->counter_count + 1) * sizeof *g->counters);
    g->held = calloc(g->counter_count + 1, sizeof *g->held);
    if (!g->queue_name || !g->counters || !g->held) {
        perfetto_gpu_close(g);
        return NULL;
    }
    if (g->counter_count)
        memcpy(g->counters, counters, count * sizeof *counters);
    return g;
}

/* --- the counters' values ------------------------------------------------------ */

static const tally_counter_info *counter_info(const struct perfetto_gpu *g, uint32_t column)
{
    return tally_catalogue_counter(g->catalogue, g->counters[column]);
}

static bool is_floating(const tally_counter_info *c)
{
    return c->storage == TALLY_STORAGE_FLOAT32 || c->storage == TALLY_STORAGE_FLOAT64;
}

static void put_counter(struct perfetto_gpu *g, struct proto_buffer *out, uint32_t column,
                        uint64_t bits)
{
    tally_value v = {.u64 = bits};
    size_t counter = proto_open(out, COUNTER_EVENT_COUNTERS);
    proto_uint(out, COUNTER_ID, perfetto_counter_id(column));
    if (is_floating(counter_info(g, column)))
        proto_double(out, COUNTER_DOUBLE_VALUE, v.f64);
    else if (v.u64 <= INT64_MAX)
        proto_int(out, COUNTER_INT_VALUE, v.i64);
    else
        proto_double(out, COUNTER_DOUBLE_VALUE, (double)v.u64);
    proto_close(out, counter);
}

/* The first counter event: the descriptor, and every counter's track
 * starting at 0 where the first command begins. */
static void start_counting(struct perfetto_gpu *g, struct proto_buffer *out, uint64_t ns)
{
    size_t packet = perfetto_packet_open_at(out, &g->sequence, ns);
    size_t event = proto_open(out, PACKET_GPU_COUNTER_EVENT);
    perfetto_put_counter_descriptor(out, COUNTER_EVENT_DESCRIPTOR, g->catalogue, g->counters,
                                    g->counter_count);
    for (uint32_t column = 0; column < g->counter_count; column++)
        put_counter(g, out, column, 0);
    proto_close(out, event);
    perfetto_packet_close(out, packet);
    g->counting = true;
}

static uint64_t bits_of(const tally_value *values, uint32_t column)
{
    return values ? values[column].u64 : 0;
}

/* At ns, the values that change there end: each is written, and the next
 * one (from values; NULL: 0) holds from there. `all` writes every counter
 * (the trace's end). */
static void change_values(struct perfetto_gpu *g, struct proto_buffer *out, uint64_t ns,
                          const tally_value *values, bool all)
{
    size_t packet = 0, event = 0;
    for (uint32_t column = 0; column < g->counter_count; column++) {
        uint64_t next = bits_of(values, column);
        if (!all && g->held[column] == next)
            continue;
        if (!event) {
            packet = perfetto_packet_open_at(out, &g->sequence, ns);
            event = proto_open(out, PACKET_GPU_COUNTER_EVENT);
        }
        put_counter(g, out, column, g->held[column]);
        g->held[column] = next;
    }
    if (event) {
        proto_close(out, event);
        perfetto_packet_close(out, packet);
    }
}

static void count_command(struct perfetto_gpu *g, struct proto_buffer *out,
                          const tally_command_record *r, const tally_value *values)
{
    if (!g->counter_count)
        return;
    if (!g->counting) {
        start_counting(g, out, r->begin_ns);
        for (uint32_t column = 0; column < g->counter_count; column++)
            g->held[column] = bits_of(values, column);
    } else {
        if (r->begin_ns > g->boundary_ns) /* the GPU was idle in between */
            change_values(g, out, g->boundary_ns, NULL, false);
        /* A command that begins before the last one ended (measured GPUs
         * overlap them) takes over at that end. */
        uint64_t at = r->begin_ns > g->boundary_ns ? r->begin_ns : g->boundary_ns;
        change_values(g, out, at, values, false);
    }
    if (r->end_ns > g->boundary_ns)
        g->boundary_ns = r->end_ns;
}

void perfetto_gpu_finish(struct perfetto_gpu *g, struct proto_buffer *out)
{
    if (g->counting)
        change_values(g, out, g->boundary_ns, NULL, true);
}

/* --- render stages ---------------------------------------------------------------- */

static void put_specification(struct proto_buffer *out, uint32_t iid, const char *name,
                              const char *description, uint32_t category)
{
    size_t spec = proto_open(out, INTERNED_GPU_SPECIFICATIONS);
    proto_uint(out, SPECIFICATION_IID, iid);
    proto_string(out, SPECIFICATION_NAME, name);
    proto_string(out, SPECIFICATION_DESCRIPTION, description);
    proto_uint(out, SPECIFICATION_CATEGORY, category);
    proto_close(out, spec);
}

static uint32_t category_of(const char *kind)
{
    if (strcmp(kind, "draw") == 0)
        return CATEGORY_GRAPHICS;
    return strcmp(kind, "dispatch") == 0 ? CATEGORY_COMPUTE : CATEGORY_OTHER;
}

static struct stage_key key_of(const tally_command_record *r)
{
    return (struct stage_key){r->api_name, r->context_api, r->pipeline, r->target_width,
                              r->target_height};
}

static bool same_stage(const struct perfetto_gpu *g, const tally_command_record *r)
{
    const struct stage_key *last = &g->last_key;
    return g->last_stage_iid && r->api_name == last->api_name &&
           r->context_api == last->context_api && r->pipeline == last->pipeline &&
           r->target_width == last->target_width && r->target_height == last->target_height &&
           strcmp(r->label, g->last_label) == 0;
}

static void remember_stage(struct perfetto_gpu *g, const tally_command_record *r, uint32_t iid)
{
    size_t size = strlen(r->label) + 1;
    if (size > g->last_label_capacity) {
        char *grown = realloc(g->last_label, size);
        if (!grown) {
            g->last_stage_iid = 0;
            return;
        }
        g->last_label = grown;
        g->last_label_capacity = size;
    }
    memcpy(g->last_label, r->label, size);
    g->last_key = key_of(r);
    g->last_stage_iid = iid;
}

/* "vulkan draw; pipeline 3 \"shadow\", shaders 0123456789abcdef; target
 * 1920x1080": the API, the kind of work, and what it ran with where that
 * is known. */
static const char *stage_description(const tally_command_record *r, char *out, size_t size)
{
    size_t n = (size_t)snprintf(out, size, "%s %s", r->context_api, r->kind);
    if (r->pipeline && n < size)
        n += (size_t)snprintf(out + n, size - n,
                              "; pipeline %" PRIu64 " \"%s\", shaders %016" PRIx64, r->pipeline,
                              r->pipeline_name ? r->pipeline_name : "", r->shader_hash);
    if (r->target_width && n < size)
        snprintf(out + n, size - n, "; target %ux%u", r->target_width, r->target_height);
    return out;
}

/* The command's stage: one per command, label, pipeline and target, named
 * as its slices are (for the command and its label), its description
 * saying the rest. Interned, into the open InternedData, when new. */
static uint32_t stage_of(struct perfetto_gpu *g, struct proto_buffer *out,
                         const tally_command_record *r, size_t *interned)
{
    if (same_stage(g, r))
        return g->last_stage_iid;
    char name[TRACE_COMMAND_NAME_SIZE], description[512], key[sizeof name + sizeof description];
    trace_command_name(r, name, sizeof name);
    stage_description(r, description, sizeof description);
    snprintf(key, sizeof key, "%s\n%s", name, description);
    bool added;
    uint32_t iid = intern_table_find(&g->stages, key, &added);
    if (!iid) {
        g->failed = true;
        return 0;
    }
    iid += QUEUE_IID;
    if (added) {
        if (!*interned)
            *interned = proto_open(out, PACKET_INTERNED_DATA);
        put_specification(out, iid, name, description, category_of(r->kind));
    }
    remember_stage(g, r, iid);
    return iid;
}

static uint32_t api_of(const char *context_api)
{
    if (strcmp(context_api, "vulkan") == 0)
        return API_VULKAN;
    if (strcmp(context_api, "gl") == 0 || strcmp(context_api, "gles") == 0)
        return API_OPEN_GL;
    return strcmp(context_api, "opencl") == 0 ? API_OPEN_CL : API_UNDEFINED;
}

/* Whether the context still needs its InternedGraphicsContext; contexts
 * are numbered from 1 in the order they were made. */
static bool context_is_new(struct perfetto_gpu *g, uint32_t context)
{
    if (context >= g->contexts_capacity) {
        uint32_t capacity = context + 64;
        uint8_t *grown = realloc(g->contexts_interned, capacity);
        if (!grown) {
            g->failed = true;
            return false;
        }
        memset(grown + g->contexts_capacity, 0, capacity - g->contexts_capacity);
        g->contexts_interned = grown;
        g->contexts_capacity = capacity;
    }
    bool is_new = !g->contexts_interned[context];
    g->contexts_interned[context] = 1;
    return is_new;
}

/* The context's process and API, for the render stages that name it. */
static void intern_context(struct perfetto_gpu *g, struct proto_buffer *out,
                           const tally_command_record *r, size_t *interned)
{
    if (!r->context || !context_is_new(g, r->context))
        return;
    if (!*interned)
        *interned = proto_open(out, PACKET_INTERNED_DATA);
    size_t context = proto_open(out, INTERNED_GRAPHICS_CONTEXTS);
    proto_uint(out, CONTEXT_IID, r->context);
    proto_uint(out, CONTEXT_PID, (uint64_t)getpid());
    proto_uint(out, CONTEXT_API, api_of(r->context_api));
    proto_close(out, context);
}

static void intern_queue(struct perfetto_gpu *g, struct proto_buffer *out, size_t *interned)
{
    if (g->queue_interned)
        return;
    *interned = proto_open(out, PACKET_INTERNED_DATA);
    put_specification(out, QUEUE_IID, g->queue_name,
                      "the GPU's queue: every command in the order it ran", CATEGORY_OTHER);
    g->queue_interned = true;
}

static void put_extra(struct proto_buffer *out, const char *name, uint64_t value)
{
    char text[24];
    snprintf(text, sizeof text, "%" PRIu64, value);
    size_t extra = proto_open(out, STAGE_EXTRA_DATA);
    proto_string(out, EXTRA_NAME, name);
    proto_string(out, EXTRA_VALUE, text);
    proto_close(out, extra);
}

static void put_render_stage(struct perfetto_gpu *g, struct proto_buffer *out,
                             const tally_command_record *r)
{
    size_t packet = perfetto_packet_open_at(out, &g->sequence, r->begin_ns), interned = 0;
    intern_queue(g, out, &interned);
    uint32_t stage = stage_of(g, out, r, &interned);
    intern_context(g, out, r, &interned);
    if (interned)
        proto_close(out, interned);
    size_t event = proto_open(out, PACKET_GPU_RENDER_STAGE_EVENT);
    proto_uint(out, STAGE_EVENT_ID, r->sequence);
    proto_uint(out, STAGE_DURATION, r->end_ns - r->begin_ns);
    proto_uint(out, STAGE_HW_QUEUE_IID, QUEUE_IID);
    proto_uint(out, STAGE_STAGE_IID, stage);
    proto_uint(out, STAGE_CONTEXT, r->context);
    proto_uint(out, STAGE_SUBMISSION_ID, r->submission);
    /* The report row's keys, so that a slice finds its row. */
    put_extra(out, "frame", r->frame);
    put_extra(out, "sequence", r->sequence);
    proto_close(out, event);
    perfetto_packet_close(out, packet);
}

void perfetto_gpu_command(struct perfetto_gpu *g, struct proto_buffer *out,
                          const tally_command_record *r, const tally_value *values)
{
    count_command(g, out, r, values);
    put_render_stage(g, out, r);
}

bool perfetto_gpu_close(struct perfetto_gpu *g)
{
    bool ok = !g->failed;
    free(g->queue_name);
    free(g->counters);
    free(g->held);
    intern_table_free(&g->stages);
    free(g->contexts_interned);
    free(g->last_label);
    free(g);
    return ok;
}
