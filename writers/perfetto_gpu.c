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
#include "perfetto_sequence.h"
#include "trace_command.h"

/* Field numbers from Perfetto's protos/perfetto/trace/trace_packet.proto,
 * interned_data/interned_data.proto, gpu/gpu_counter_event.proto,
 * gpu/gpu_render_stage_event.proto and common/gpu_counter_descriptor.proto. */
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
    DESCRIPTOR_SPECS = 1,
    DESCRIPTOR_BLOCKS = 2,
    DESCRIPTOR_INSTRUMENTED_SAMPLING = 5,
    SPEC_COUNTER_ID = 1,
    SPEC_NAME = 2,
    SPEC_DESCRIPTION = 3,
    SPEC_NUMERATOR_UNITS = 7,
    SPEC_DENOMINATOR_UNITS = 8,
    SPEC_GROUPS = 10,
    BLOCK_ID = 1,
    BLOCK_CAPACITY = 2,
    BLOCK_NAME = 3,
    BLOCK_DESCRIPTION = 4,
    BLOCK_COUNTER_IDS = 5,
};

/* Enumerations of those protos. */
enum { API_UNDEFINED = 0, API_OPEN_GL = 1, API_VULKAN = 2, API_OPEN_CL = 3 };
enum { CATEGORY_OTHER = 0, CATEGORY_GRAPHICS = 1, CATEGORY_COMPUTE = 2 };
enum {
    GROUP_UNCLASSIFIED = 0,
    GROUP_SYSTEM = 1,
    GROUP_VERTICES = 2,
    GROUP_FRAGMENTS = 3,
    GROUP_PRIMITIVES = 4,
    GROUP_MEMORY = 5,
    GROUP_COMPUTE = 6,
};
enum {
    UNIT_NONE = 0,
    UNIT_BYTE = 7,
    UNIT_HERTZ = 13,
    UNIT_NANOSECOND = 19,
    UNIT_SECOND = 22,
    UNIT_VERTEX = 25,
    UNIT_PIXEL = 26,
    UNIT_TRIANGLE = 27,
    UNIT_WATT = 29,
    UNIT_VOLT = 32,
    UNIT_AMPERE = 33,
    UNIT_KELVIN = 36,
    UNIT_PERCENT = 37,
    UNIT_PRIMITIVE = 38,
    UNIT_FRAGMENT = 39,
    UNIT_INSTRUCTION = 40,
};

/* The hardware queue is the first GPU specification; stages follow it in
 * the same iid space. */
enum { QUEUE_IID = 1 };

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
    const char *last_api_name;
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

/* --- the counter descriptor ------------------------------------------------- */

static const tally_counter_info *counter_info(const struct perfetto_gpu *g, uint32_t column)
{
    return tally_catalogue_counter(g->catalogue, g->counters[column]);
}

/* Perfetto's MeasureUnit for a counter: from its typed unit where that
 * says more than "a count", else from what one unit counts; NONE where no
 * MeasureUnit fits (cycles, invocations), which its description then says. */
static void unit_of(const tally_counter_info *c, uint32_t *numerator, uint32_t *denominator)
{
    static const uint32_t typed[] = {
        [TALLY_UNIT_PERCENTAGE] = UNIT_PERCENT, [TALLY_UNIT_NANOSECONDS] = UNIT_NANOSECOND,
        [TALLY_UNIT_BYTES] = UNIT_BYTE,         [TALLY_UNIT_BYTES_PER_SECOND] = UNIT_BYTE,
        [TALLY_UNIT_KELVIN] = UNIT_KELVIN,      [TALLY_UNIT_WATTS] = UNIT_WATT,
        [TALLY_UNIT_VOLTS] = UNIT_VOLT,         [TALLY_UNIT_AMPS] = UNIT_AMPERE,
        [TALLY_UNIT_HERTZ] = UNIT_HERTZ,
    };
    static const struct {
        const char *name;
        uint32_t unit;
    } counted[] = {
        {"vertices", UNIT_VERTEX}, {"primitives", UNIT_PRIMITIVE},     {"triangles", UNIT_TRIANGLE},
        {"pixels", UNIT_PIXEL},    {"fragments", UNIT_FRAGMENT},       {"bytes", UNIT_BYTE},
        {"ns", UNIT_NANOSECOND},   {"instructions", UNIT_INSTRUCTION}, {"percent", UNIT_PERCENT},
    };
    *denominator = c->unit == TALLY_UNIT_BYTES_PER_SECOND ? UNIT_SECOND : UNIT_NONE;
    *numerator = (unsigned)c->unit < sizeof typed / sizeof typed[0] ? typed[c->unit] : UNIT_NONE;
    for (size_t i = 0; !*numerator && c->unit_name && i < sizeof counted / sizeof counted[0]; i++)
        if (strcmp(c->unit_name, counted[i].name) == 0)
            *numerator = counted[i].unit;
}

/* Perfetto's counter groups are coarser than the catalogue's blocks: each
 * block goes to the group whose counters it holds. */
static uint32_t group_of(const tally_group_info *block)
{
    static const struct {
        const char *block;
        uint32_t group;
    } groups[] = {
        {"Gpu", GROUP_SYSTEM},
        {"CommandProcessor", GROUP_SYSTEM},
        {"InputAssembler", GROUP_VERTICES},
        {"VertexShader", GROUP_VERTICES},
        {"GeometryShader", GROUP_PRIMITIVES},
        {"PrimitiveSetup", GROUP_PRIMITIVES},
        {"Rasterizer", GROUP_FRAGMENTS},
        {"FragmentShader", GROUP_FRAGMENTS},
        {"ComputeShader", GROUP_COMPUTE},
        {"TextureUnit", GROUP_MEMORY},
        {"L2Cache", GROUP_MEMORY},
        {"Memory", GROUP_MEMORY},
    };
    for (size_t i = 0; block && i < sizeof groups / sizeof groups[0]; i++)
        if (strcmp(block->symbol, groups[i].block) == 0)
            return groups[i].group;
    return GROUP_UNCLASSIFIED;
}

/* A counter's id in the trace: its column in the report, from 1. */
static uint32_t counter_id(uint32_t column)
{
    return column + 1;
}

static void put_spec(struct perfetto_gpu *g, struct proto_buffer *out, uint32_t column)
{
    const tally_counter_info *c = counter_info(g, column);
    char description[1024];
    snprintf(description, sizeof description, "%s, in %s. %s", c->name,
             c->unit_name ? c->unit_name : "units", c->description ? c->description : "");
    uint32_t numerator, denominator;
    unit_of(c, &numerator, &denominator);
    size_t spec = proto_open(out, DESCRIPTOR_SPECS);
    proto_uint(out, SPEC_COUNTER_ID, counter_id(column));
    proto_string(out, SPEC_NAME, c->symbol);
    proto_string(out, SPEC_DESCRIPTION, description);
    if (numerator)
        proto_uint(out, SPEC_NUMERATOR_UNITS, numerator);
    if (denominator)
        proto_uint(out, SPEC_DENOMINATOR_UNITS, denominator);
    proto_uint(out, SPEC_GROUPS, group_of(tally_catalogue_group(g->catalogue, c->group)));
    proto_close(out, spec);
}

/* The catalogue's block of the counters of one group, with its capacity
 * per pass, as Perfetto's counter blocks describe hardware counter islands. */
static void put_block(struct perfetto_gpu *g, struct proto_buffer *out, uint32_t group)
{
    const tally_group_info *info = tally_catalogue_group(g->catalogue, group);
    if (!info)
        return;
    size_t block = proto_open(out, DESCRIPTOR_BLOCKS);
    proto_uint(out, BLOCK_ID, group + 1);
    proto_uint(out, BLOCK_CAPACITY, info->capacity);
    proto_string(out, BLOCK_NAME, info->symbol);
    if (info->description)
        proto_string(out, BLOCK_DESCRIPTION, info->description);
    for (uint32_t column = 0; column < g->counter_count; column++)
        if (counter_info(g, column)->group == group)
            proto_uint(out, BLOCK_COUNTER_IDS, counter_id(column));
    proto_close(out, block);
}

/* Whether column is the first of the trace's counters in its group. */
static bool first_of_group(struct perfetto_gpu *g, uint32_t column)
{
    uint32_t group = counter_info(g, column)->group;
    for (uint32_t earlier = 0; earlier < column; earlier++)
        if (counter_info(g, earlier)->group == group)
            return false;
    return true;
}

static void put_descriptor(struct perfetto_gpu *g, struct proto_buffer *out)
{
    size_t descriptor = proto_open(out, COUNTER_EVENT_DESCRIPTOR);
    for (uint32_t column = 0; column < g->counter_count; column++)
        put_spec(g, out, column);
    for (uint32_t column = 0; column < g->counter_count; column++)
        if (first_of_group(g, column))
            put_block(g, out, counter_info(g, column)->group);
    /* Each command is measured in the command stream itself. */
    proto_uint(out, DESCRIPTOR_INSTRUMENTED_SAMPLING, 1);
    proto_close(out, descriptor);
}

/* --- the counters' values ------------------------------------------------------ */

static bool is_floating(const tally_counter_info *c)
{
    return c->storage == TALLY_STORAGE_FLOAT32 || c->storage == TALLY_STORAGE_FLOAT64;
}

static void put_counter(struct perfetto_gpu *g, struct proto_buffer *out, uint32_t column,
                        uint64_t bits)
{
    tally_value v = {.u64 = bits};
    size_t counter = proto_open(out, COUNTER_EVENT_COUNTERS);
    proto_uint(out, COUNTER_ID, counter_id(column));
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
    put_descriptor(g, out);
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

static bool same_stage(const struct perfetto_gpu *g, const tally_command_record *r)
{
    return g->last_stage_iid && r->api_name == g->last_api_name &&
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
    g->last_api_name = r->api_name;
    g->last_stage_iid = iid;
}

/* The command's stage: one per command and label, named as its slices
 * are; its description says which API and kind of work it is. Interned,
 * into the open InternedData, when new. */
static uint32_t stage_of(struct perfetto_gpu *g, struct proto_buffer *out,
                         const tally_command_record *r, size_t *interned)
{
    if (same_stage(g, r))
        return g->last_stage_iid;
    char name[TRACE_COMMAND_NAME_SIZE];
    bool added;
    uint32_t iid = intern_table_find(&g->stages, trace_command_name(r, name, sizeof name), &added);
    if (!iid) {
        g->failed = true;
        return 0;
    }
    iid += QUEUE_IID;
    if (added) {
        char description[128];
        snprintf(description, sizeof description, "%s %s", r->context_api, r->kind);
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
