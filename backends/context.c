/* Contexts (API clients of a device) and programs (static shader profiles). */
#include <stdlib.h>
#include <string.h>

#include "engine.h"

tally_status tally_context_create(tally_device *device, const char *api_name, tally_context **out)
{
    if (!device || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_context *c = calloc(1, sizeof(*c));
    if (!c)
        return TALLY_ERROR_OUT_OF_MEMORY;
    c->accumulators = calloc(device->raw_count, sizeof(uint64_t));
    c->api_name = strdup(api_name ? api_name : "unknown");
    if (!c->accumulators || !c->api_name) {
        free(c->accumulators);
        free(c->api_name);
        free(c);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    atomic_init(&c->refs, 1);
    c->device = device;
    c->id = atomic_fetch_add(&device->next_context_id, 1) + 1;
    *out = c;
    return TALLY_OK;
}

void tally_context_ref(struct tally_context *context)
{
    atomic_fetch_add_explicit(&context->refs, 1, memory_order_relaxed);
}

void tally_context_unref(struct tally_context *context)
{
    if (!context || atomic_fetch_sub_explicit(&context->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (uint32_t i = 0; i < context->label_depth; i++)
        tally_recording_unref(context->label_owners[i]);
    free(context->accumulators);
    free(context->api_name);
    free(context);
}

void tally_context_destroy(tally_context *context)
{
    tally_context_unref(context);
}

uint32_t tally_context_id(const tally_context *context)
{
    return context ? context->id : 0;
}

tally_device *tally_context_device(const tally_context *context)
{
    return context ? context->device : NULL;
}

tally_status tally_program_create(tally_device *device, const tally_program_desc *desc,
                                  tally_program **out)
{
    if (!device || !desc || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_program *p = calloc(1, sizeof(*p));
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    p->desc = *desc;
    if (desc->name && !(p->name = strdup(desc->name))) {
        free(p);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    p->desc.name = p->name;
    atomic_init(&p->refs, 1);
    *out = p;
    return TALLY_OK;
}

void tally_program_ref(struct tally_program *program)
{
    atomic_fetch_add_explicit(&program->refs, 1, memory_order_relaxed);
}

void tally_program_release(tally_program *program)
{
    if (!program || atomic_fetch_sub_explicit(&program->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(program->name);
    free(program);
}
