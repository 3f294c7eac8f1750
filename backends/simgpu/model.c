/*
 * The simgpu performance model: what one draw, dispatch or transfer does to
 * each raw counter, and how many core cycles it takes. Integer arithmetic
 * only. Exact quantities follow from the command; modeled ones use the
 * profile's documented parameters (docs/profile.md) and stay within physical
 * bounds. Each unit is busy for work / throughput + latency cycles; a command
 * takes the busiest unit's cycles plus the command overhead.
 */
#include <string.h>

#include "simgpu.h"

enum prim_class { CLASS_POINT, CLASS_LINE, CLASS_TRIANGLE };

/* What the memory system sees of one command, in L2 lines. */
struct traffic {
    uint64_t read_lines, write_lines;
};

static uint64_t permille(uint64_t a, uint64_t p)
{
    return a * p / 1000u;
}
static uint64_t max64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}
static uint64_t min64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

static struct simgpu_divisor divisor(uint64_t value)
{
    bool power_of_two = value && (value & (value - 1)) == 0;
    return (struct simgpu_divisor){value, power_of_two ? __builtin_ctzll(value) : -1};
}

void simgpu_divisors_init(struct simgpu *g)
{
    const struct simgpu_profile *p = &g->profile;
    g->div = (struct simgpu_divisors){
        .wave = divisor(p->wave_size),
        .line = divisor(p->l2_line_bytes),
        .shader_rate = divisor(p->shader_cores * p->alu_lanes_per_core),
        .texel_rate = divisor(p->texels_per_clock_per_core * p->shader_cores),
        .l2_requests = divisor(p->l2_requests_per_clock),
        .dram_bytes = divisor(p->dram_bytes_per_clock),
        .raster = divisor(p->raster_samples_per_clock),
        .rop = divisor(p->rop_samples_per_clock),
        .ia_vertices = divisor(p->ia_vertices_per_clock),
        .setup_primitives = divisor(p->setup_primitives_per_clock),
    };
}

/* div_up(a, d->value): (a + value - 1) / value with its wrap-around, and 0
 * for a value of 0 (which is not a power of two). */
static uint64_t div_up_by(uint64_t a, const struct simgpu_divisor *d)
{
    uint64_t n = a + d->value - 1;
    if (d->shift >= 0)
        return n >> d->shift;
    return d->value ? n / d->value : 0;
}

static uint64_t busy(uint64_t work, const struct simgpu_divisor *rate, uint64_t latency)
{
    return work ? div_up_by(work, rate) + latency : 0;
}

static const tally_stage_profile *stage(const struct tally_exec_state *exec, tally_stage s)
{
    if (!exec->program || !exec->program->stages[s].present)
        return NULL;
    return &exec->program->stages[s];
}

static enum prim_class class_of(uint8_t topology)
{
    switch (topology) {
    case TALLY_TOPOLOGY_POINT_LIST: return CLASS_POINT;
    case TALLY_TOPOLOGY_LINE_LIST:
    case TALLY_TOPOLOGY_LINE_STRIP:
    case TALLY_TOPOLOGY_LINE_LIST_WITH_ADJACENCY:
    case TALLY_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY:
    case TALLY_TOPOLOGY_LINE_LOOP: return CLASS_LINE;
    default: return CLASS_TRIANGLE;
    }
}

/* Each stage's static instruction mix times its invocations. */
static void add_instructions(const tally_stage_profile *s, uint64_t invocations, uint64_t *raw)
{
    if (!s || !invocations)
        return;
    raw[SIMGPU_RAW_SHADER_ALU_INSTRUCTIONS] += s->mix.alu * invocations;
    raw[SIMGPU_RAW_SHADER_TEX_INSTRUCTIONS] += s->mix.tex * invocations;
    raw[SIMGPU_RAW_SHADER_LOAD_INSTRUCTIONS] += s->mix.load * invocations;
    raw[SIMGPU_RAW_SHADER_STORE_INSTRUCTIONS] += s->mix.store * invocations;
    raw[SIMGPU_RAW_SHADER_BRANCH_INSTRUCTIONS] += s->mix.branch * invocations;
}

static uint64_t shader_instructions(const uint64_t *raw)
{
    return raw[SIMGPU_RAW_SHADER_ALU_INSTRUCTIONS] + raw[SIMGPU_RAW_SHADER_TEX_INSTRUCTIONS] +
           raw[SIMGPU_RAW_SHADER_LOAD_INSTRUCTIONS] + raw[SIMGPU_RAW_SHADER_STORE_INSTRUCTIONS] +
           raw[SIMGPU_RAW_SHADER_BRANCH_INSTRUCTIONS];
}

/* Texture fetch through the L1, and shader memory access, become L2 lines. */
static void shader_memory(const struct simgpu *g, uint64_t *raw, struct traffic *t)
{
    const struct simgpu_profile *p = &g->profile;
    uint64_t texels = raw[SIMGPU_RAW_SHADER_TEX_INSTRUCTIONS] * p->texture_filter_taps;
    uint64_t misses = permille(texels, p->tex_l1_miss_permille);
    raw[SIMGPU_RAW_TEXELS_FETCHED] += texels;
    raw[SIMGPU_RAW_TEX_L1_MISSES] += misses;
    raw[SIMGPU_RAW_TEX_L1_HITS] += texels - misses;
    t->read_lines += misses;
    t->read_lines += div_up_by(raw[SIMGPU_RAW_SHADER_LOAD_INSTRUCTIONS] * p->memory_bytes_per_lane,
                               &g->div.line);
    t->write_lines += div_up_by(
        raw[SIMGPU_RAW_SHADER_STORE_INSTRUCTIONS] * p->memory_bytes_per_lane, &g->div.line);
}

/* L2 and DRAM: misses by the profile's ratio; the L2 writes through. */
static void memory_system(const struct simgpu_profile *p, const struct traffic *t, uint64_t *raw)
{
    uint64_t read_misses = permille(t->read_lines, p->l2_miss_permille);
    uint64_t write_misses = permille(t->write_lines, p->l2_miss_permille);
    uint64_t requests = t->read_lines + t->write_lines;
    raw[SIMGPU_RAW_L2_CACHE_REQUESTS] += requests;
    raw[SIMGPU_RAW_L2_CACHE_MISSES] += read_misses + write_misses;
    raw[SIMGPU_RAW_L2_CACHE_HITS] += requests - read_misses - write_misses;
    raw[SIMGPU_RAW_DRAM_READ_BYTES] += read_misses * p->l2_line_bytes;
    raw[SIMGPU_RAW_DRAM_WRITE_BYTES] += t->write_lines * p->l2_line_bytes;
}

/* The shader, texture and memory units' busy cycles; returns the largest. */
static uint64_t common_units(const struct simgpu *g, uint64_t *raw)
{
    const struct simgpu_profile *p = &g->profile;
    uint64_t shader = busy(shader_instructions(raw), &g->div.shader_rate, p->shader_latency_cycles);
    uint64_t texture =
        busy(raw[SIMGPU_RAW_TEXELS_FETCHED], &g->div.texel_rate, p->texture_latency_cycles);
    uint64_t bytes = raw[SIMGPU_RAW_DRAM_READ_BYTES] + raw[SIMGPU_RAW_DRAM_WRITE_BYTES];
    uint64_t requests = raw[SIMGPU_RAW_L2_CACHE_REQUESTS];
    uint64_t memory = requests || bytes ? max64(div_up_by(requests, &g->div.l2_requests),
                                                div_up_by(bytes, &g->div.dram_bytes)) +
                                              p->memory_latency_cycles
                                        : 0;
    raw[SIMGPU_RAW_SHADER_BUSY_CYCLES] += shader;
    raw[SIMGPU_RAW_TEXTURE_BUSY_CYCLES] += texture;
    raw[SIMGPU_RAW_MEMORY_BUSY_CYCLES] += memory;
    return max64(shader, max64(texture, memory));
}

static uint64_t finish(const struct simgpu_profile *p, uint64_t *raw, uint64_t slowest_unit)
{
    uint64_t cycles = p->command_overhead_cycles + slowest_unit;
    raw[SIMGPU_RAW_GPU_BUSY_CYCLES] += cycles;
    return cycles;
}

/* --- draws ----------------------------------------------------------------------- */

struct geometry {
    uint64_t primitives; /* into clipping */
    enum prim_class cls;
};

/* Vertex shader invocations of one instance. Indexed: the FIFO cache over
 * the indices, which by construction shades every distinct index at least
 * once and never more than once per index; without them, the reuse ratio,
 * held to the one bound that still holds: a draw of any index shades at
 * least one vertex. */
static uint64_t vertex_invocations(struct simgpu *g, const tally_draw *d)
{
    if (!(d->flags & TALLY_DRAW_INDEXED))
        return d->count;
    if (d->indices)
        return simgpu_vertex_cache_misses(d->indices, d->index_size, d->count,
                                          (uint32_t)g->profile.vertex_cache_entries, g->cache_ring);
    uint64_t modeled = d->count - permille(d->count, g->profile.vertex_reuse_permille);
    return d->count ? max64(modeled, 1) : 0;
}

static struct geometry vertex_stages(struct simgpu *g, const tally_draw *d,
                                     const struct tally_exec_state *exec, uint64_t *raw,
                                     struct traffic *t)
{
    const struct simgpu_profile *p = &g->profile;
    uint64_t instances = d->instance_count;
    uint64_t vertices = (uint64_t)d->count * instances;
    uint64_t primitives =
        tally_topology_primitives(d->topology, d->count, d->patch_control_points) * instances;
    uint64_t shaded = vertex_invocations(g, d) * instances;
    const tally_stage_profile *vs = stage(exec, TALLY_STAGE_VERTEX);
    uint64_t input_bytes = vs && vs->input_bytes ? vs->input_bytes : p->vertex_input_bytes;
    uint64_t index_bytes = d->flags & TALLY_DRAW_INDEXED ? vertices * d->index_size : 0;

    raw[SIMGPU_RAW_DRAW_CALLS] += 1;
    raw[SIMGPU_RAW_IA_VERTICES] += vertices;
    raw[SIMGPU_RAW_IA_PRIMITIVES] += primitives;
    raw[SIMGPU_RAW_IA_INDEX_BYTES] += index_bytes;
    raw[SIMGPU_RAW_IA_VERTEX_BYTES] += shaded * input_bytes;
    raw[SIMGPU_RAW_VS_INVOCATIONS] += shaded;
    raw[SIMGPU_RAW_VERTEX_CACHE_HITS] += vertices - shaded;
    uint64_t per_instance = instances > 1 ? shaded / instances : shaded;
    raw[SIMGPU_RAW_VS_WAVES] += div_up_by(per_instance, &g->div.wave) * instances;
    add_instructions(vs, shaded, raw);
    t->read_lines +=
        div_up_by(index_bytes, &g->div.line) + div_up_by(shaded * input_bytes, &g->div.line);
    return (struct geometry){primitives, class_of(d->topology)};
}

static void tessellation(const struct simgpu_profile *p, const tally_draw *d,
                         const struct tally_exec_state *exec, uint64_t *raw, struct geometry *geo)
{
    const tally_stage_profile *tcs = stage(exec, TALLY_STAGE_TESS_CONTROL);
    const tally_stage_profile *tes = stage(exec, TALLY_STAGE_TESS_EVAL);
    if (!tcs || !tes || d->topology != TALLY_TOPOLOGY_PATCH_LIST)
        return;
    uint64_t patches = geo->primitives, level = p->tessellation_level;
    uint64_t control_points = tcs->output_vertices ? tcs->output_vertices : d->patch_control_points;
    uint64_t evaluations = patches * (level + 1) * (level + 2) / 2;
    raw[SIMGPU_RAW_TESS_CONTROL_PATCHES] += patches;
    raw[SIMGPU_RAW_TESS_EVAL_INVOCATIONS] += evaluations;
    add_instructions(tcs, patches * control_points, raw);
    add_instructions(tes, evaluations, raw);
    geo->primitives = patches * level * level;
    geo->cls = CLASS_TRIANGLE;
}

static void geometry_shader(const struct tally_exec_state *exec, uint64_t *raw,
                            struct geometry *geo)
{
    const tally_stage_profile *gs = stage(exec, TALLY_STAGE_GEOMETRY);
    if (!gs)
        return;
    uint64_t invocations = geo->primitives * (gs->invocations ? gs->invocations : 1);
    uint64_t emitted = invocations * (gs->output_primitives ? gs->output_primitives : 1);
    raw[SIMGPU_RAW_GS_INVOCATIONS] += invocations;
    raw[SIMGPU_RAW_GS_PRIMITIVES] += emitted;
    add_instructions(gs, invocations, raw);
    geo->primitives = emitted;
}

/* Clipping and culling; returns the primitives that reach the rasterizer. */
static uint64_t primitive_setup(const struct simgpu_profile *p, const tally_render_state *rs,
                                const struct geometry *geo, uint64_t *raw)
{
    uint64_t invocations = geo->primitives;
    uint64_t rejected = permille(invocations, p->clip_reject_permille);
    uint64_t clipped = invocations - rejected + permille(invocations, p->clip_split_permille);
    uint64_t culled = geo->cls == CLASS_TRIANGLE && (rs->flags & TALLY_RENDER_CULL)
                          ? permille(clipped, p->cull_permille)
                          : 0;
    raw[SIMGPU_RAW_CLIPPER_INVOCATIONS] += invocations;
    raw[SIMGPU_RAW_CLIPPER_PRIMITIVES] += clipped;
    raw[SIMGPU_RAW_CULLED_PRIMITIVES] += culled;
    return clipped - culled;
}

static uint64_t pixels_of(const struct simgpu_profile *p, const tally_render_state *rs,
                          enum prim_class cls, uint64_t visible)
{
    static const size_t per_class[] = {offsetof(struct simgpu_profile, pixels_per_point),
                                       offsetof(struct simgpu_profile, pixels_per_line),
                                       offsetof(struct simgpu_profile, pixels_per_triangle)};
    uint64_t each = *(const uint64_t *)((const char *)p + per_class[cls]);
    uint64_t area = (uint64_t)rs->width * rs->height * (rs->layers ? rs->layers : 1);
    return rs->flags & TALLY_RENDER_RASTERIZER_DISCARD ? 0 : min64(visible * each, area);
}

/* Rasterization, early depth, fragment shading and the render back end. */
static uint64_t pixel_stages(const struct simgpu *g, const struct tally_exec_state *exec,
                             uint64_t pixels, uint64_t *raw, struct traffic *t)
{
    const struct simgpu_profile *p = &g->profile;
    const struct simgpu_divisor *line = &g->div.line;
    const tally_render_state *rs = exec->render;
    const tally_stage_profile *fs = stage(exec, TALLY_STAGE_FRAGMENT);
    uint64_t samples = rs->samples ? rs->samples : 1;
    bool per_sample = rs->flags & TALLY_RENDER_SAMPLE_SHADING;
    bool depth_test = rs->flags & TALLY_RENDER_DEPTH_TEST;
    uint64_t covered = pixels * samples;
    uint64_t early_fails = depth_test ? permille(covered, p->early_depth_reject_permille) : 0;
    uint64_t per_invocation = per_sample ? 1 : samples;
    uint64_t candidates = per_sample ? covered : pixels;
    uint64_t shaded =
        fs ? candidates - (depth_test ? permille(candidates, p->early_depth_reject_permille) : 0)
           : 0;
    uint64_t killed = fs && fs->discards ? permille(shaded, p->discard_permille) : 0;
    uint64_t passing = fs ? (shaded - killed) * per_invocation : covered - early_fails;
    bool writes = rs->color_bytes_per_pixel || (rs->flags & TALLY_RENDER_DEPTH_WRITE);
    uint64_t written = writes ? min64(passing, covered - early_fails) : 0;
    uint64_t blended = rs->flags & TALLY_RENDER_BLEND && rs->color_bytes_per_pixel ? written : 0;

    raw[SIMGPU_RAW_RASTERIZED_PIXELS] += pixels;
    raw[SIMGPU_RAW_COVERED_SAMPLES] += covered;
    raw[SIMGPU_RAW_EARLY_DEPTH_TEST_FAILS] += early_fails;
    raw[SIMGPU_RAW_FS_INVOCATIONS] += shaded;
    raw[SIMGPU_RAW_FS_WAVES] += div_up_by(shaded, &g->div.wave);
    raw[SIMGPU_RAW_SAMPLES_KILLED_IN_FS] += killed * per_invocation;
    raw[SIMGPU_RAW_SAMPLES_WRITTEN] += written;
    raw[SIMGPU_RAW_SAMPLES_BLENDED] += blended;
    add_instructions(fs, shaded, raw);

    t->read_lines += depth_test ? div_up_by(covered * rs->depth_bytes_per_sample, line) : 0;
    t->read_lines += div_up_by(blended * rs->color_bytes_per_pixel, line);
    t->write_lines += div_up_by(written * rs->color_bytes_per_pixel, line);
    if (rs->flags & TALLY_RENDER_DEPTH_WRITE)
        t->write_lines += div_up_by(written * rs->depth_bytes_per_sample, line);
    uint64_t raster = covered || written ? max64(div_up_by(covered, &g->div.raster),
                                                 div_up_by(written, &g->div.rop)) +
                                               p->raster_latency_cycles
                                         : 0;
    raw[SIMGPU_RAW_RASTERIZER_BUSY_CYCLES] += raster;
    return raster;
}

static uint64_t draw(struct simgpu *g, const tally_draw *d, const struct tally_exec_state *exec,
                     uint64_t *raw)
{
    const struct simgpu_profile *p = &g->profile;
    struct traffic t = {0};
    struct geometry geo = vertex_stages(g, d, exec, raw, &t);
    tessellation(p, d, exec, raw, &geo);
    geometry_shader(exec, raw, &geo);
    uint64_t visible = primitive_setup(p, exec->render, &geo, raw);
    uint64_t pixels = pixels_of(p, exec->render, geo.cls, visible);
    uint64_t raster = pixel_stages(g, exec, pixels, raw, &t);
    shader_memory(g, raw, &t);
    memory_system(p, &t, raw);
    uint64_t geometry =
        max64(busy(raw[SIMGPU_RAW_IA_VERTICES], &g->div.ia_vertices, 0),
              busy(raw[SIMGPU_RAW_CLIPPER_INVOCATIONS], &g->div.setup_primitives, 0));
    geometry += geometry ? p->geometry_latency_cycles : 0;
    raw[SIMGPU_RAW_GEOMETRY_BUSY_CYCLES] += geometry;
    return finish(p, raw, max64(max64(geometry, raster), common_units(g, raw)));
}

/* --- dispatches and transfers ------------------------------------------------------ */

static uint64_t dispatch(struct simgpu *g, const tally_dispatch *d,
                         const struct tally_exec_state *exec, uint64_t *raw)
{
    const struct simgpu_profile *p = &g->profile;
    const tally_stage_profile *cs = stage(exec, TALLY_STAGE_COMPUTE);
    uint64_t local = 1;
    for (int i = 0; i < 3; i++) {
        uint32_t size = d->local_size[i] ? d->local_size[i] : cs ? cs->local_size[i] : 1;
        local *= size ? size : 1;
    }
    uint64_t groups = (uint64_t)d->groups[0] * d->groups[1] * d->groups[2];
    uint64_t invocations = groups * local;
    raw[SIMGPU_RAW_DISPATCHES] += 1;
    raw[SIMGPU_RAW_CS_WORKGROUPS] += groups;
    raw[SIMGPU_RAW_CS_INVOCATIONS] += invocations;
    raw[SIMGPU_RAW_CS_WAVES] += groups * div_up_by(local, &g->div.wave);
    add_instructions(cs, invocations, raw);
    struct traffic t = {0};
    shader_memory(g, raw, &t);
    memory_system(p, &t, raw);
    return finish(p, raw, common_units(g, raw));
}

static uint64_t transfer(struct simgpu *g, const tally_transfer *x, uint64_t *raw)
{
    const struct simgpu_profile *p = &g->profile;
    uint64_t lines = div_up_by(x->bytes, &g->div.line);
    struct traffic t = {
        .read_lines = x->kind == TALLY_TRANSFER_COPY || x->kind == TALLY_TRANSFER_READ ? lines : 0,
        .write_lines = x->kind != TALLY_TRANSFER_READ ? lines : 0,
    };
    raw[SIMGPU_RAW_TRANSFER_COMMANDS] += 1;
    memory_system(p, &t, raw);
    return finish(p, raw, common_units(g, raw));
}

/* --- repeated draws -------------------------------------------------------------- */

enum { MEMO_MISSES_BEFORE_REST = 16, MEMO_REST = 240 };

static bool render_equal(const tally_render_state *a, const tally_render_state *b)
{
    return a->width == b->width && a->height == b->height && a->layers == b->layers &&
           a->samples == b->samples && a->color_bytes_per_pixel == b->color_bytes_per_pixel &&
           a->depth_bytes_per_sample == b->depth_bytes_per_sample && a->flags == b->flags;
}

static bool memo_matches(const struct simgpu_draw_memo *m, const tally_draw *d,
                         const struct tally_exec_state *exec)
{
    return m->valid && d->count == m->count && d->instance_count == m->instance_count &&
           d->flags == m->flags && d->topology == m->topology &&
           d->patch_control_points == m->patch_control_points && d->index_size == m->index_size &&
           exec->program_id == m->program_id && render_equal(exec->render, &m->render);
}

static void memo_store(struct simgpu_draw_memo *m, const tally_draw *d,
                       const struct tally_exec_state *exec, const uint64_t *raw, uint64_t cycles)
{
    m->valid = true;
    m->count = d->count;
    m->instance_count = d->instance_count;
    m->flags = d->flags;
    m->topology = d->topology;
    m->patch_control_points = d->patch_control_points;
    m->index_size = d->index_size;
    m->program_id = exec->program_id;
    m->render = *exec->render;
    m->cycles = cycles;
    memcpy(m->raw, raw, sizeof m->raw);
}

/* The model counts into raw from zero. */
static uint64_t draw_counted(struct simgpu *g, const tally_draw *d,
                             const struct tally_exec_state *exec, uint64_t *raw)
{
    memset(raw, 0, sizeof(uint64_t) * SIMGPU_RAW_COUNT);
    return draw(g, d, exec, raw);
}

/* A repeat of the remembered draw (a frame's similar draws in a row) takes
 * its counts from the memo instead of the model. */
static uint64_t draw_remembered(struct simgpu *g, const tally_draw *d,
                                const struct tally_exec_state *exec, uint64_t *raw)
{
    struct simgpu_draw_memo *m = &g->memo;
    if (d->indices) /* the counts depend on the index data */
        return draw_counted(g, d, exec, raw);
    if (m->resting) {
        m->resting--;
        return draw_counted(g, d, exec, raw);
    }
    if (memo_matches(m, d, exec)) {
        m->misses = 0;
        memcpy(raw, m->raw, sizeof m->raw);
        return m->cycles;
    }
    uint64_t cycles = draw_counted(g, d, exec, raw);
    memo_store(m, d, exec, raw, cycles);
    if (++m->misses == MEMO_MISSES_BEFORE_REST) {
        m->misses = 0;
        m->resting = MEMO_REST;
    }
    return cycles;
}

uint64_t simgpu_execute(void *state, const struct tally_work *work,
                        const struct tally_exec_state *exec, uint64_t *raw)
{
    struct simgpu *g = state;
    if (work->type == TALLY_WORK_DRAW)
        return draw_remembered(g, work->u.draw, exec, raw);
    memset(raw, 0, sizeof(uint64_t) * SIMGPU_RAW_COUNT);
    switch (work->type) {
    case TALLY_WORK_DISPATCH: return dispatch(g, work->u.dispatch, exec, raw);
    case TALLY_WORK_TRANSFER: return transfer(g, work->u.transfer, raw);
    default: return 0;
    }
}
