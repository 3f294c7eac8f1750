/*
 * vkCmdCopyQueryPoolResults from the application's pipeline-statistics pools
 * that the layer serves (driver_statistics.c). Their values are sums of the
 * layer's per-command statistics queries, which only the host added up so
 * far; a copy executes on the GPU, in the application's command buffer.
 *
 * So each application query gets a shadow slot in a buffer of the layer's,
 * with both layouts a copy may ask for (64-bit values and availability, and
 * the same in 32 bits). Where the query ends (or, for one that ends inside a
 * render pass instance, right after that instance, where transfers and
 * dispatches are allowed), the layer records into the same command buffer:
 *
 *   1. vkCmdCopyQueryPoolResults of its own statistics queries of the
 *      query's commands (its own command buffer's, and those of the
 *      secondaries it executed in between) into a mirror buffer of their
 *      block, then a barrier;
 *   2. one dispatch per range of those queries of a one-invocation compute
 *      shader (shaders/query_sum.comp) that sums the statistics the
 *      application's pool asked for into the slot and marks it available,
 *      then a barrier before transfers;
 *
 * and the application's copy becomes a vkCmdCopyBuffer from the slots, a
 * transfer like the copy it replaces. vkCmdResetQueryPool clears the slots
 * (vkCmdFillBuffer), vkResetQueryPool on the host too. The slots survive the
 * layer's reset of its own queries at the next submission, so a copy in a
 * later submission (before the application resets its query) reads the
 * values of the run that wrote them, as the driver's query would.
 *
 * The pass must leave the application's state as it was: the shader reads
 * everything through buffer device addresses, its parameters from an arena
 * whose address is a specialization constant and whose slot is the
 * dispatch's base workgroup. It binds no descriptor set and pushes no
 * constant, so only the compute pipeline binding changes, and the layer
 * binds the application's last one again. The layer enables
 * bufferDeviceAddress at vkCreateDevice for this (Vulkan 1.2 devices that
 * have it; elsewhere copies are not served and a warning says so).
 */
#include "driver_measure.h"
#include "query_sum.spv.h"

#include <stdlib.h>
#include <string.h>

/* A shadow slot: 12 x 8 bytes (64-bit values, then availability), then
 * 12 x 4 bytes (the same in 32 bits). */
enum { SLOT_BYTES = 144, SLOT_NARROW = 96, PARAM_BYTES = 64, PARAM_SLOTS = 16384 };

/* One range of the layer's statistics queries of a served query's commands. */
typedef struct copy_range {
    VkQueryPool queries;
    VkBuffer mirror;
    VkDeviceAddress mirror_address;
    uint32_t first, count, stride; /* stride: 64-bit words per query (the family's statistics) */
    VkQueryPipelineStatisticFlags family_statistics;
} copy_range;

/* A served query that ended: where its sum goes and what it sums. */
typedef struct copy_query {
    VkDeviceAddress slot;
    VkQueryPipelineStatisticFlags statistics;
    copy_range *ranges;
    uint32_t range_count, range_capacity;
} copy_query;

/* Queries of one pool this recording reset and has not ended since: a copy
 * of them later in the recording finds them unavailable for certain. */
typedef struct copy_resets {
    const layer_query_pool *pool;
    uint64_t *bits;
} copy_resets;

typedef struct layer_copy_cb {
    bool open; /* a served query is active: `region` gathers its ranges */
    uint32_t open_block, open_used;
    copy_query region;
    bool inside, suspending; /* in a render pass instance; it is suspended, not ended */
    copy_query *pending;     /* ended inside the instance: summed after it */
    uint32_t pending_count, pending_capacity;
    uint32_t *slots; /* of the parameter arena, held by this recording */
    uint32_t slot_count, slot_capacity;
    copy_resets *resets;
    uint32_t reset_count, reset_capacity;
} layer_copy_cb;

static void warn_once(atomic_bool *said, const char *what)
{
    if (!atomic_exchange(said, true))
        tally_log(TALLY_LOG_WARN, "Vulkan layer: %s", what);
}

/* Misuse (queries past the pool's end) touches no memory beyond the shadow:
 * the range is cut to the pool. */
static uint32_t clamp_count(const layer_query_pool *pool, uint32_t first, uint32_t count)
{
    uint32_t queries = tally_results_slot_count(pool->results);
    return first >= queries ? 0 : count < queries - first ? count : queries - first;
}

/* --- device ---------------------------------------------------------------- */

static const void *find_in_chain(const void *pNext, VkStructureType type)
{
    for (const VkBaseInStructure *s = pNext; s; s = s->pNext)
        if (s->sType == type)
            return s;
    return NULL;
}

const VkDeviceCreateInfo *layer_copy_device_info(layer_instance *instance,
                                                 VkPhysicalDevice physical, uint32_t api_version,
                                                 const VkDeviceCreateInfo *info,
                                                 VkDeviceCreateInfo *copy, void **storage,
                                                 bool *enabled)
{
    *storage = NULL;
    *enabled = false;
    if (api_version < VK_API_VERSION_1_2 || !instance->dispatch.GetPhysicalDeviceFeatures2)
        return info;
    VkPhysicalDeviceBufferDeviceAddressFeatures address = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES};
    VkPhysicalDeviceFeatures2 features = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          .pNext = &address};
    instance->dispatch.GetPhysicalDeviceFeatures2(physical, &features);
    if (!address.bufferDeviceAddress)
        return info;
    const VkPhysicalDeviceVulkan12Features *v12 =
        find_in_chain(info->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES);
    const VkPhysicalDeviceBufferDeviceAddressFeatures *own = find_in_chain(
        info->pNext, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES);
    if ((v12 && v12->bufferDeviceAddress) || (own && own->bufferDeviceAddress)) {
        *enabled = true; /* the application's own */
        return info;
    }
    *copy = *info;
    if (v12 || own) {
        const void *chain =
            v12 ? layer_chain_enabling(
                      info->pNext, v12->sType,
                      offsetof(VkPhysicalDeviceVulkan12Features, bufferDeviceAddress), storage)
                : layer_chain_enabling(
                      info->pNext, own->sType,
                      offsetof(VkPhysicalDeviceBufferDeviceAddressFeatures, bufferDeviceAddress),
                      storage);
        if (!chain)
            return info;
        copy->pNext = chain;
    } else {
        VkPhysicalDeviceBufferDeviceAddressFeatures *added = calloc(1, sizeof(*added));
        if (!added)
            return info;
        added->sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES;
        added->pNext = (void *)info->pNext;
        added->bufferDeviceAddress = VK_TRUE;
        copy->pNext = added;
        *storage = added;
    }
    *enabled = true;
    return copy;
}

void layer_copy_open(layer_device *device, bool address_enabled)
{
    layer_measuring *m = device->measuring;
    if (!m)
        return;
    m->copy.address_enabled = address_enabled;
    pthread_mutex_init(&m->copy.lock, NULL);
}

void layer_copy_buffer_destroy(layer_device *device, layer_gpu_buffer *b)
{
    if (b->buffer)
        device->dispatch.DestroyBuffer(device->handle, b->buffer, NULL);
    if (b->memory)
        device->dispatch.FreeMemory(device->handle, b->memory, NULL);
    *b = (layer_gpu_buffer){0};
}

static void shadow_destroy(void *value, void *user)
{
    layer_copy_pool_destroy(user, value);
}

/* Before vkDestroyDevice: the layer's buffers, the pools' shadows among them. */
void layer_copy_close(layer_device *device)
{
    layer_measuring *m = device->measuring;
    if (!m)
        return;
    object_map_for_each(&device->query_pools, shadow_destroy, device);
    layer_copy_device *c = &m->copy;
    const struct layer_device_dispatch *d = &device->dispatch;
    if (c->pipeline)
        d->DestroyPipeline(device->handle, c->pipeline, NULL);
    if (c->layout)
        d->DestroyPipelineLayout(device->handle, c->layout, NULL);
    if (c->module)
        d->DestroyShaderModule(device->handle, c->module, NULL);
    layer_copy_buffer_destroy(device, &c->arena);
    free(c->free_slots);
    pthread_mutex_destroy(&c->lock);
}

static bool find_memory_type(layer_device *device, uint32_t bits, uint32_t *out)
{
    VkPhysicalDeviceMemoryProperties props;
    device->instance->dispatch.GetPhysicalDeviceMemoryProperties(device->physical_device, &props);
    VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < props.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (props.memoryTypes[i].propertyFlags & want) == want) {
            *out = i;
            return true;
        }
    return false;
}

/* A host-visible buffer that shaders reach by address and transfers read and write. */
static bool buffer_make(layer_device *device, VkDeviceSize size, layer_gpu_buffer *out)
{
    const struct layer_device_dispatch *d = &device->dispatch;
    *out = (layer_gpu_buffer){0};
    VkBufferCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
        .size = size,
        .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                 VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    if (d->CreateBuffer(device->handle, &info, NULL, &out->buffer) != VK_SUCCESS)
        return false;
    VkMemoryRequirements req;
    d->GetBufferMemoryRequirements(device->handle, out->buffer, &req);
    uint32_t type;
    VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                       .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .pNext = &flags,
                                  .allocationSize = req.size};
    if (!find_memory_type(device, req.memoryTypeBits, &type))
        goto fail;
    alloc.memoryTypeIndex = type;
    if (d->AllocateMemory(device->handle, &alloc, NULL, &out->memory) != VK_SUCCESS ||
        d->BindBufferMemory(device->handle, out->buffer, out->memory, 0) != VK_SUCCESS ||
        d->MapMemory(device->handle, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped) != VK_SUCCESS)
        goto fail;
    VkBufferDeviceAddressInfo where = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
                                       .buffer = out->buffer};
    out->address = d->GetBufferDeviceAddress(device->handle, &where);
    memset(out->mapped, 0, size);
    return out->address != 0;
fail:
    layer_copy_buffer_destroy(device, out);
    return false;
}

/* The summing pipeline and the parameter arena, made at the first served pool. */
static bool pass_make(layer_device *device, layer_copy_device *c)
{
    const struct layer_device_dispatch *d = &device->dispatch;
    if (!d->CmdDispatchBase || !d->GetBufferDeviceAddress ||
        !buffer_make(device, (VkDeviceSize)PARAM_SLOTS * PARAM_BYTES, &c->arena))
        return false;
    c->free_slots = malloc(PARAM_SLOTS * sizeof(*c->free_slots));
    if (!c->free_slots)
        return false;
    for (uint32_t i = 0; i < PARAM_SLOTS; i++)
        c->free_slots[i] = PARAM_SLOTS - 1 - i;
    c->free_count = PARAM_SLOTS;
    VkShaderModuleCreateInfo module = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                       .codeSize = sizeof(layer_query_sum_spv),
                                       .pCode = layer_query_sum_spv};
    VkPipelineLayoutCreateInfo layout = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    if (d->CreateShaderModule(device->handle, &module, NULL, &c->module) != VK_SUCCESS ||
        d->CreatePipelineLayout(device->handle, &layout, NULL, &c->layout) != VK_SUCCESS)
        return false;
    uint32_t arena[2] = {(uint32_t)c->arena.address, (uint32_t)(c->arena.address >> 32)};
    VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    VkSpecializationInfo spec = {2, entries, sizeof arena, arena};
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                  .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = c->module,
                  .pName = "main",
                  .pSpecializationInfo = &spec},
        .layout = c->layout};
    return d->CreateComputePipelines(device->handle, VK_NULL_HANDLE, 1, &info, NULL,
                                     &c->pipeline) == VK_SUCCESS;
}

static bool pass_ready(layer_device *device)
{
    layer_copy_device *c = &device->measuring->copy;
    pthread_mutex_lock(&c->lock);
    if (!c->tried) {
        c->tried = true;
        c->ready = c->address_enabled && pass_make(device, c);
    }
    bool ready = c->ready;
    pthread_mutex_unlock(&c->lock);
    return ready;
}

/* --- pools ------------------------------------------------------------------- */

void layer_copy_pool_create(layer_device *device, layer_query_pool *pool, uint32_t query_count)
{
    static atomic_bool said;
    layer_gpu_buffer *shadow = calloc(1, sizeof(*shadow));
    if (!device->measuring || !shadow || !pass_ready(device) ||
        !buffer_make(device, (VkDeviceSize)query_count * SLOT_BYTES, shadow)) {
        free(shadow);
        warn_once(&said, "vkCmdCopyQueryPoolResults from pipeline-statistics pools is not "
                         "served on this device (it needs Vulkan 1.2 and bufferDeviceAddress): "
                         "such a copy writes nothing; vkGetQueryPoolResults reads them");
        return;
    }
    pool->shadow = shadow;
}

void layer_copy_pool_destroy(layer_device *device, layer_query_pool *pool)
{
    if (!pool->shadow)
        return;
    layer_copy_buffer_destroy(device, pool->shadow);
    free(pool->shadow);
    pool->shadow = NULL;
}

void layer_copy_host_reset(layer_query_pool *pool, uint32_t first, uint32_t count)
{
    count = clamp_count(pool, first, count);
    if (pool->shadow)
        memset((char *)pool->shadow->mapped + (size_t)first * SLOT_BYTES, 0,
               (size_t)count * SLOT_BYTES);
}

static void barrier(layer_command_buffer *cb, VkPipelineStageFlags src, VkAccessFlags src_access,
                    VkPipelineStageFlags dst, VkAccessFlags dst_access)
{
    VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                         .srcAccessMask = src_access,
                         .dstAccessMask = dst_access};
    cb->device->dispatch.CmdPipelineBarrier(cb->handle, src, dst, 0, 1, &b, 0, NULL, 0, NULL);
}

enum {
    STAGES = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
    WRITES = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
    ACCESSES = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
};

/* The slots become unavailable; barriers order the fill after earlier reads
 * and writes of them and before later ones. */
static void resets_mark(layer_command_buffer *cb, const layer_query_pool *pool, uint32_t first,
                        uint32_t count, bool reset);

void layer_copy_cmd_reset(layer_command_buffer *cb, layer_query_pool *pool, uint32_t first,
                          uint32_t count)
{
    count = clamp_count(pool, first, count);
    if (!pool->shadow || !cb || !count)
        return;
    resets_mark(cb, pool, first, count, true);
    /* The compute stage only where the family has it (the barrier must name
     * stages the queue supports); without it no summing pass runs there. */
    layer_measuring *m = cb->device->measuring;
    bool compute = cb->measured && m && m->families[cb->measured->family].compute;
    VkPipelineStageFlags stages = compute ? STAGES : VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkAccessFlags writes = compute ? WRITES : VK_ACCESS_TRANSFER_WRITE_BIT;
    VkAccessFlags accesses =
        compute ? ACCESSES : VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier(cb, stages, writes, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
    cb->device->dispatch.CmdFillBuffer(cb->handle, pool->shadow->buffer,
                                       (VkDeviceSize)first * SLOT_BYTES,
                                       (VkDeviceSize)count * SLOT_BYTES, 0);
    barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, stages, accesses);
}

/* --- command buffers ---------------------------------------------------------- */

static layer_copy_cb *copies_of(layer_command_buffer *cb)
{
    layer_measured_cb *mc = cb->measured;
    if (!mc)
        return NULL;
    if (!mc->copies)
        mc->copies = calloc(1, sizeof(*mc->copies));
    return mc->copies;
}

static bool grow(void **items, uint32_t *capacity, uint32_t need, size_t size);

/* The bits of a pool's queries in the recording's resets; NULL if it has none (and `make` is
 * false). */
static uint64_t *resets_of(layer_copy_cb *cc, const layer_query_pool *pool, bool make)
{
    for (uint32_t i = 0; i < cc->reset_count; i++)
        if (cc->resets[i].pool == pool)
            return cc->resets[i].bits;
    if (!make ||
        !grow((void **)&cc->resets, &cc->reset_capacity, cc->reset_count + 1, sizeof(*cc->resets)))
        return NULL;
    uint32_t queries = tally_results_slot_count(pool->results);
    uint64_t *bits = calloc((queries + 63) / 64 ? (queries + 63) / 64 : 1, sizeof(*bits));
    if (bits)
        cc->resets[cc->reset_count++] = (copy_resets){pool, bits};
    return bits;
}

static void resets_mark(layer_command_buffer *cb, const layer_query_pool *pool, uint32_t first,
                        uint32_t count, bool reset)
{
    count = clamp_count(pool, first, count);
    layer_copy_cb *cc = reset ? copies_of(cb) : cb->measured ? cb->measured->copies : NULL;
    uint64_t *bits = cc ? resets_of(cc, pool, reset) : NULL;
    for (uint32_t q = first; bits && q < first + count; q++) {
        if (reset)
            bits[q / 64] |= 1ull << (q % 64);
        else
            bits[q / 64] &= ~(1ull << (q % 64));
    }
}

static bool reset_here(layer_command_buffer *cb, const layer_query_pool *pool, uint32_t q)
{
    if (!clamp_count(pool, q, 1))
        return false;
    layer_copy_cb *cc = cb->measured ? cb->measured->copies : NULL;
    uint64_t *bits = cc ? resets_of(cc, pool, false) : NULL;
    return bits && (bits[q / 64] >> (q % 64) & 1);
}

static bool grow(void **items, uint32_t *capacity, uint32_t need, size_t size)
{
    if (need <= *capacity)
        return true;
    uint32_t cap = *capacity ? *capacity * 2 : 4;
    while (cap < need)
        cap *= 2;
    void *grown = realloc(*items, (size_t)cap * size);
    if (!grown)
        return false;
    *items = grown;
    *capacity = cap;
    return true;
}

static uint32_t popcount(uint32_t v)
{
    return (uint32_t)__builtin_popcount(v);
}

/* The block's mirror, made when a served query first needs it. A
 * secondary's blocks may be reached from two primaries being recorded on two
 * threads: the device's copy lock guards the making. */
static bool mirror_of(layer_device *device, layer_measure_block *b, uint32_t stride)
{
    layer_copy_device *c = &device->measuring->copy;
    pthread_mutex_lock(&c->lock);
    bool ok = b->mirror.buffer ||
              buffer_make(device, (VkDeviceSize)LAYER_MEASURE_BLOCK * stride * 8, &b->mirror);
    pthread_mutex_unlock(&c->lock);
    return ok;
}

static void add_range(layer_device *device, copy_query *q, layer_measure_block *b,
                      VkQueryPipelineStatisticFlags family, uint32_t first, uint32_t last)
{
    uint32_t stride = popcount(family);
    if (last <= first || !b->statistics || !stride || !mirror_of(device, b, stride))
        return;
    if (!grow((void **)&q->ranges, &q->range_capacity, q->range_count + 1, sizeof(*q->ranges)))
        return;
    q->ranges[q->range_count++] = (copy_range){
        b->statistics, b->mirror.buffer, b->mirror.address, first, last - first, stride, family};
}

void layer_copy_query_begin(layer_command_buffer *cb, layer_query_pool *pool, uint32_t query)
{
    layer_copy_cb *cc = pool->shadow && clamp_count(pool, query, 1) ? copies_of(cb) : NULL;
    if (!cc)
        return;
    layer_measured_cb *mc = cb->measured;
    free(cc->region.ranges);
    cc->region = (copy_query){.slot = pool->shadow->address + (VkDeviceAddress)query * SLOT_BYTES,
                              .statistics = pool->statistics};
    cc->open = true;
    cc->open_block = mc->block;
    cc->open_used = mc->block < mc->block_count ? mc->blocks[mc->block].used : 0;
}

/* Every statistics query of a secondary executed while a served query is active. */
void layer_copy_executes(layer_command_buffer *primary, layer_command_buffer *secondary)
{
    layer_measured_cb *smc = secondary->measured;
    bool pending = smc && smc->copies && smc->copies->pending_count;
    bool open = primary->measured && primary->measured->copies && primary->measured->copies->open;
    layer_copy_cb *cc = pending || open ? copies_of(primary) : NULL;
    /* A secondary may end or reset any query: what the primary knew of its
     * resets no longer holds, and its copies write every value again. */
    layer_copy_cb *known = primary->measured ? primary->measured->copies : NULL;
    for (uint32_t i = 0; known && i < known->reset_count; i++)
        free(known->resets[i].bits);
    if (known)
        known->reset_count = 0;
    if (!cc || !smc)
        return;
    layer_measure_family *family = &primary->device->measuring->families[smc->family];
    if (cc->open && smc->serial)
        for (uint32_t i = 0; i < smc->block_count; i++)
            add_range(primary->device, &cc->region, &smc->blocks[i], family->statistics, 0,
                      smc->blocks[i].used);
    /* Queries a secondary ended inside the render pass instance it continues
     * are summed after the primary's instance ends. */
    layer_copy_cb *sc = smc->copies;
    for (uint32_t i = 0; sc && i < sc->pending_count; i++) {
        if (!grow((void **)&cc->pending, &cc->pending_capacity, cc->pending_count + 1,
                  sizeof(*cc->pending)))
            return;
        copy_query q = sc->pending[i];
        q.ranges = malloc((q.range_count ? q.range_count : 1) * sizeof(*q.ranges));
        if (!q.ranges)
            return;
        memcpy(q.ranges, sc->pending[i].ranges, q.range_count * sizeof(*q.ranges));
        q.range_capacity = q.range_count;
        cc->pending[cc->pending_count++] = q;
    }
}

static uint32_t slot_take(layer_device *device, layer_copy_cb *cc)
{
    layer_copy_device *c = &device->measuring->copy;
    if (!grow((void **)&cc->slots, &cc->slot_capacity, cc->slot_count + 1, sizeof(*cc->slots)))
        return UINT32_MAX;
    pthread_mutex_lock(&c->lock);
    uint32_t slot = c->free_count ? c->free_slots[--c->free_count] : UINT32_MAX;
    pthread_mutex_unlock(&c->lock);
    if (slot != UINT32_MAX)
        cc->slots[cc->slot_count++] = slot;
    return slot;
}

/* The parameters of one dispatch (the layout of query_sum.comp's Params). */
typedef struct sum_params {
    VkDeviceAddress records, slot;
    uint32_t count, stride, n, accumulate;
    uint8_t map[16];
} sum_params;
_Static_assert(sizeof(sum_params) == PARAM_BYTES - 16, "query_sum.comp's Params");

/* Per statistic of the application's pool, its word in the family's query. */
static void statistic_map(VkQueryPipelineStatisticFlags app, VkQueryPipelineStatisticFlags family,
                          sum_params *p)
{
    memset(p->map, 0xff, sizeof p->map);
    uint32_t n = 0;
    for (uint32_t bit = 0; bit < 32 && n < sizeof p->map; bit++) {
        if (!(app & (1u << bit)))
            continue;
        if (family & (1u << bit))
            p->map[n] = (uint8_t)popcount(family & ((1u << bit) - 1));
        n++;
    }
    p->n = n;
}

/* Records the sum of a query's ranges into its slot (outside any render
 * pass instance). */
static void materialize(layer_command_buffer *cb, layer_copy_cb *cc, const copy_query *q)
{
    layer_device *device = cb->device;
    const struct layer_device_dispatch *d = &device->dispatch;
    layer_copy_device *c = &device->measuring->copy;
    static atomic_bool said;
    /* The slots first, so that the pass is all or nothing. */
    uint32_t dispatches = q->range_count ? q->range_count : 1;
    uint32_t first_slot = cc->slot_count;
    for (uint32_t i = 0; i < dispatches; i++)
        if (slot_take(device, cc) == UINT32_MAX) {
            warn_once(&said, "too many copies of served pipeline-statistics queries recorded at "
                             "once: some copies read the query as unavailable");
            return;
        }
    /* A measurement open here (one run through a render pass instance) must
     * not count the pass's dispatch. */
    layer_measure_split_at_timestamp(cb);
    for (uint32_t i = 0; i < q->range_count; i++) {
        const copy_range *r = &q->ranges[i];
        d->CmdCopyQueryPoolResults(cb->handle, r->queries, r->first, r->count, r->mirror,
                                   (VkDeviceSize)r->first * r->stride * 8, r->stride * 8,
                                   VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    }
    barrier(cb, STAGES, WRITES, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    d->CmdBindPipeline(cb->handle, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipeline);
    for (uint32_t i = 0; i < dispatches; i++) {
        uint32_t slot = cc->slots[first_slot + i];
        sum_params p = {.slot = q->slot, .accumulate = i > 0};
        statistic_map(q->statistics, q->range_count ? q->ranges[i].family_statistics : 0, &p);
        if (q->range_count) {
            const copy_range *r = &q->ranges[i];
            p.records = r->mirror_address + (VkDeviceAddress)r->first * r->stride * 8;
            p.count = r->count;
            p.stride = r->stride;
        }
        memcpy((char *)c->arena.mapped + (size_t)slot * PARAM_BYTES, &p, sizeof p);
        if (i > 0)
            barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
        d->CmdDispatchBase(cb->handle, slot, 0, 0, 1, 1, 1);
    }
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, STAGES, ACCESSES);
    if (cb->compute_pipeline) /* the application's binding, as it was */
        d->CmdBindPipeline(cb->handle, VK_PIPELINE_BIND_POINT_COMPUTE, cb->compute_pipeline);
}

void layer_copy_query_end(layer_command_buffer *cb, layer_query_pool *pool, uint32_t query)
{
    layer_copy_cb *cc = pool->shadow && cb->measured ? cb->measured->copies : NULL;
    if (!cc || !cc->open)
        return;
    resets_mark(cb, pool, query, 1, false);
    layer_measured_cb *mc = cb->measured;
    layer_measure_family *family = &cb->device->measuring->families[mc->family];
    copy_query *q = &cc->region;
    for (uint32_t b = cc->open_block; b < mc->block_count && b <= mc->block; b++)
        add_range(cb->device, q, &mc->blocks[b], family->statistics,
                  b == cc->open_block ? cc->open_used : 0, mc->blocks[b].used);
    cc->open = false;
    static atomic_bool said;
    if (!family->compute) {
        warn_once(&said, "a served pipeline-statistics query ended on a queue family without "
                         "compute: copies of it read it as unavailable");
        return;
    }
    if (!cc->inside && !mc->inside) { /* mc->inside: a secondary continuing an instance */
        materialize(cb, cc, q);
        return;
    }
    if (!grow((void **)&cc->pending, &cc->pending_capacity, cc->pending_count + 1,
              sizeof(*cc->pending)))
        return;
    cc->pending[cc->pending_count++] = *q; /* its ranges go with it */
    cc->region = (copy_query){0};
}

void layer_copy_pass_begin(layer_command_buffer *cb, bool suspending)
{
    /* Every measured command buffer knows whether it is inside an instance:
     * a pool made on another thread may serve a query that ends in this one. */
    layer_copy_cb *cc = copies_of(cb);
    if (!cc)
        return;
    cc->inside = true;
    cc->suspending = suspending;
}

static void query_free(copy_query *q)
{
    free(q->ranges);
    *q = (copy_query){0};
}

void layer_copy_pass_end(layer_command_buffer *cb)
{
    layer_copy_cb *cc = cb->measured ? cb->measured->copies : NULL;
    if (!cc || cc->suspending) /* a suspended instance goes on: sum after its real end */
        return;
    cc->inside = false;
    for (uint32_t i = 0; i < cc->pending_count; i++) {
        materialize(cb, cc, &cc->pending[i]);
        query_free(&cc->pending[i]);
    }
    cc->pending_count = 0;
}

bool layer_copy_record(layer_command_buffer *cb, layer_query_pool *pool, uint32_t first,
                       uint32_t count, VkBuffer dst, VkDeviceSize offset, VkDeviceSize stride,
                       VkQueryResultFlags flags)
{
    count = clamp_count(pool, first, count);
    if (!pool->shadow || !count)
        return pool->shadow != NULL;
    bool wide = flags & VK_QUERY_RESULT_64_BIT;
    VkDeviceSize word = wide ? 8 : 4;
    bool with_availability = flags & VK_QUERY_RESULT_WITH_AVAILABILITY_BIT;
    VkDeviceSize values = pool->counter_count * word;
    /* Without WAIT or PARTIAL the driver writes no values of a query that
     * is unavailable: one this recording reset and has not ended since is. */
    bool skip_unavailable = !(flags & (VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_PARTIAL_BIT));
    VkBufferCopy *regions = malloc(count * sizeof(*regions));
    if (!regions)
        return false;
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        VkBufferCopy r = {.srcOffset =
                              (VkDeviceSize)(first + i) * SLOT_BYTES + (wide ? 0 : SLOT_NARROW),
                          .dstOffset = offset + i * stride,
                          .size = values + (with_availability ? word : 0)};
        if (skip_unavailable && cb && reset_here(cb, pool, first + i)) {
            r.srcOffset += values; /* the availability word alone, 0 */
            r.dstOffset += values;
            r.size -= values;
        }
        if (r.size)
            regions[n++] = r;
    }
    VkCommandBuffer handle = cb ? cb->handle : VK_NULL_HANDLE;
    if (handle && n)
        cb->device->dispatch.CmdCopyBuffer(handle, pool->shadow->buffer, dst, n, regions);
    free(regions);
    return handle != VK_NULL_HANDLE;
}

/* The arena slots go back once the recording is reset or freed: by then it
 * is not pending, so no dispatch still reads them. */
void layer_copy_cb_reset(layer_command_buffer *cb)
{
    layer_copy_cb *cc = cb->measured ? cb->measured->copies : NULL;
    if (!cc)
        return;
    layer_copy_device *c = &cb->device->measuring->copy;
    if (cc->slot_count) {
        pthread_mutex_lock(&c->lock);
        for (uint32_t i = 0; i < cc->slot_count; i++)
            c->free_slots[c->free_count++] = cc->slots[i];
        pthread_mutex_unlock(&c->lock);
    }
    cc->slot_count = 0;
    for (uint32_t i = 0; i < cc->reset_count; i++)
        free(cc->resets[i].bits);
    cc->reset_count = 0;
    for (uint32_t i = 0; i < cc->pending_count; i++)
        query_free(&cc->pending[i]);
    cc->pending_count = 0;
    query_free(&cc->region);
    cc->open = cc->inside = cc->suspending = false;
}

void layer_copy_cb_free(layer_command_buffer *cb)
{
    layer_copy_cb_reset(cb);
    layer_copy_cb *cc = cb->measured ? cb->measured->copies : NULL;
    if (!cc)
        return;
    free(cc->pending);
    free(cc->slots);
    free(cc->resets);
    free(cc);
    cb->measured->copies = NULL;
}
