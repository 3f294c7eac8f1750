/* Contexts (API clients of a device) and programs (static shader profiles). */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

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

static struct tally_program *program_new(const char *name, bool ready)
{
    struct tally_program *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    if (name && !(p->name = strdup(name))) {
        free(p);
        return NULL;
    }
    p->desc.name = p->name;
    /* 64 bits do not wrap in a process's life; 0 stays "nothing bound". */
    static atomic_uint_fast64_t programs_made;
    p->id = atomic_fetch_add_explicit(&programs_made, 1, memory_order_relaxed) + 1;
    atomic_init(&p->refs, 1);
    atomic_init(&p->ready, ready);
    return p;
}

tally_status tally_program_create(tally_device *device, const tally_program_desc *desc,
                                  tally_program **out)
{
    if (!device || !desc || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_program *p = program_new(desc->name, true);
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    memcpy(p->desc.stages, desc->stages, sizeof(p->desc.stages));
    p->desc.shader_hash = desc->shader_hash;
    *out = p;
    return TALLY_OK;
}

/* Labels are set rarely (once per object, by a debug tool or at load):
 * one lock for all programs' retired ones. */
static pthread_mutex_t labels_lock = PTHREAD_MUTEX_INITIALIZER;

tally_status tally_program_set_label(tally_program *program, const char *label)
{
    if (!program)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_program_label *named = NULL;
    if (label && *label) {
        size_t size = strlen(label) + 1;
        if (!(named = malloc(sizeof *named + size)))
            return TALLY_ERROR_OUT_OF_MEMORY;
        named->retired = NULL;
        memcpy(named->text, label, size);
    }
    /* The label it replaces stays readable (the queue thread may be
     * copying it) until the program is freed. */
    pthread_mutex_lock(&labels_lock);
    struct tally_program_label *replaced = atomic_exchange(&program->label, named);
    if (replaced) {
        replaced->retired = program->retired_labels;
        program->retired_labels = replaced;
    }
    pthread_mutex_unlock(&labels_lock);
    return TALLY_OK;
}

uint64_t tally_hash_bytes(const void *bytes, size_t size, uint64_t seed)
{
    return bytes || !size ? XXH3_64bits_withSeed(bytes, size, seed) : seed;
}

tally_status tally_program_create_pending(tally_device *device, const char *name,
                                          tally_program **out)
{
    if (!device || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_program *p = program_new(name, false);
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    *out = p;
    return TALLY_OK;
}

/* Completions are rare (one per program link): one lock for all of them. */
static pthread_mutex_t completion_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t completed = PTHREAD_COND_INITIALIZER;

tally_status tally_program_complete(tally_program *program, const tally_program_desc *desc)
{
    if (!program || !desc)
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&completion_lock);
    bool pending = !atomic_load_explicit(&program->ready, memory_order_relaxed);
    if (pending) {
        memcpy(program->desc.stages, desc->stages, sizeof(program->desc.stages));
        program->desc.shader_hash = desc->shader_hash;
        atomic_store_explicit(&program->ready, true, memory_order_release);
        pthread_cond_broadcast(&completed);
    }
    pthread_mutex_unlock(&completion_lock);
    return pending ? TALLY_OK : TALLY_ERROR_INVALID_ARGUMENT;
}

const tally_program_desc *tally_program_desc_when_ready(struct tally_program *program)
{
    if (!atomic_load_explicit(&program->ready, memory_order_acquire)) {
        pthread_mutex_lock(&completion_lock);
        while (!atomic_load_explicit(&program->ready, memory_order_acquire))
            pthread_cond_wait(&completed, &completion_lock);
        pthread_mutex_unlock(&completion_lock);
    }
    return &program->desc;
}

void tally_program_ref(struct tally_program *program)
{
    atomic_fetch_add_explicit(&program->refs, 1, memory_order_relaxed);
}

void tally_program_release(tally_program *program)
{
    if (!program || atomic_fetch_sub_explicit(&program->refs, 1, memory_order_acq_rel) != 1)
        return;
    free(atomic_load(&program->label));
    for (struct tally_program_label *l = program->retired_labels, *next; l; l = next) {
        next = l->retired;
        free(l);
    }
    free(program->name);
    free(program);
}
