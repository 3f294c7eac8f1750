/*
 * The static profile of a kernel, classified from its arguments (the shim
 * does not compile kernels, so it cannot count their instructions). Per
 * work-item:
 *
 *   alu   1
 *   load  1 per pointer argument it can only read (const global, constant)
 *   store 1 per pointer argument it may write (non-const global)
 *   tex   1 per read_only or read_write image argument
 *   store 1 per write_only or read_write image argument
 *
 * Local pointers and arguments passed by value count nothing. The argument
 * qualifiers come from clGetKernelArgInfo: on the kernel itself when its
 * program's build gives them, else on its twin from a private build with
 * -cl-kernel-arg-info (arg_info.c), so the program's own builds and answers
 * stay as they are. A kernel whose arguments cannot be read either way is
 * profiled as 1 ALU, 1 load and 1 store per work-item. Classifying takes
 * 1 + 3 x arguments driver calls (and a build, for a twin): kernels.c does
 * it once per kernel, not per enqueue.
 *
 * Programs are shared by all kernels of the same mix: a short table, read
 * without a lock, grown under one when a new mix appears.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define MAX_MIXES 64

typedef struct mix_entry {
    uint64_t key;
    tally_program *program;
} mix_entry;

static mix_entry mixes[MAX_MIXES];
static _Atomic uint32_t mix_count;
static pthread_mutex_t mixes_lock = PTHREAD_MUTEX_INITIALIZER;

static const tally_instruction_mix unknown_mix = {.alu = 1, .load = 1, .store = 1};

/* CL_SUCCESS, or the driver's error (CL_KERNEL_ARG_INFO_NOT_AVAILABLE when
 * the program's build withholds argument info). */
static cl_int classify_argument(cl_kernel kernel, cl_uint index, tally_instruction_mix *mix)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    cl_kernel_arg_address_qualifier address;
    cl_kernel_arg_access_qualifier access;
    cl_kernel_arg_type_qualifier type;
    cl_int err = cl->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER,
                                        sizeof(address), &address, NULL);
    if (err == CL_SUCCESS)
        err = cl->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof(access),
                                     &access, NULL);
    if (err == CL_SUCCESS)
        err = cl->clGetKernelArgInfo(kernel, index, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof(type),
                                     &type, NULL);
    if (err != CL_SUCCESS)
        return err;
    if (access != CL_KERNEL_ARG_ACCESS_NONE) { /* an image */
        mix->tex += access != CL_KERNEL_ARG_ACCESS_WRITE_ONLY;
        mix->store += access != CL_KERNEL_ARG_ACCESS_READ_ONLY;
    } else if (address == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
               (address == CL_KERNEL_ARG_ADDRESS_GLOBAL && (type & CL_KERNEL_ARG_TYPE_CONST))) {
        mix->load++;
    } else if (address == CL_KERNEL_ARG_ADDRESS_GLOBAL) {
        mix->store++;
    }
    return CL_SUCCESS;
}

static cl_int classify_from(cl_kernel kernel, tally_instruction_mix *mix)
{
    cl_uint count = 0;
    cl_int err =
        next_cl()->clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof(count), &count, NULL);
    *mix = (tally_instruction_mix){.alu = 1};
    for (cl_uint i = 0; err == CL_SUCCESS && i < count; i++)
        err = classify_argument(kernel, i, mix);
    return err;
}

tally_instruction_mix kernel_classify(cl_kernel kernel, arg_info_source *source)
{
    tally_instruction_mix mix;
    cl_int err = classify_from(kernel, &mix);
    if (err == CL_SUCCESS)
        return mix;
    if (err != CL_KERNEL_ARG_INFO_NOT_AVAILABLE || !source)
        return unknown_mix;
    cl_kernel twin = arg_info_twin_kernel(source, kernel);
    if (!twin)
        return unknown_mix;
    err = classify_from(twin, &mix);
    next_cl()->clReleaseKernel(twin);
    return err == CL_SUCCESS ? mix : unknown_mix;
}

static uint64_t key_of(const tally_instruction_mix *mix)
{
    return (uint64_t)(mix->alu & 0xffff) << 48 | (uint64_t)(mix->tex & 0xffff) << 32 |
           (uint64_t)(mix->load & 0xffff) << 16 | (mix->store & 0xffff);
}

static tally_program *find(uint64_t key, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (mixes[i].key == key)
            return mixes[i].program;
    return NULL;
}

tally_program *kernel_program(tally_device *device, const tally_instruction_mix *mix,
                              const char *function_name, uint64_t code_hash)
{
    tally_program_desc desc = {.name = function_name, .shader_hash = code_hash};
    tally_stage_profile *cs = &desc.stages[TALLY_STAGE_COMPUTE];
    cs->present = true;
    cs->mix = *mix;
    cs->local_size[0] = cs->local_size[1] = cs->local_size[2] = 1;
    tally_program *program = NULL;
    return tally_program_create(device, &desc, &program) == TALLY_OK ? program : NULL;
}

/* size bytes of text from the driver into a malloc'd string, NUL-ended;
 * NULL if it had none. fill: the second call of the driver's size/fill
 * pair. */
static char *driver_string(size_t size, cl_int filled, char *text)
{
    if (filled != CL_SUCCESS || size <= 1) {
        free(text);
        return NULL;
    }
    text[size - 1] = '\0';
    return text;
}

char *kernel_function_name(cl_kernel kernel)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    size_t size = 0;
    if (cl->clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, 0, NULL, &size) != CL_SUCCESS ||
        size <= 1)
        return NULL;
    char *text = malloc(size);
    return text ? driver_string(
                      size, cl->clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, size, text, NULL),
                      text)
                : NULL;
}

static char *program_source(cl_program program)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    size_t size = 0;
    if (cl->clGetProgramInfo(program, CL_PROGRAM_SOURCE, 0, NULL, &size) != CL_SUCCESS || size <= 1)
        return NULL;
    char *text = malloc(size);
    return text ? driver_string(size,
                                cl->clGetProgramInfo(program, CL_PROGRAM_SOURCE, size, text, NULL),
                                text)
                : NULL;
}

/* The source, where the program was built from source (a program from IL
 * or a binary hashes by the function name alone), then the name. */
uint64_t kernel_code_hash(cl_kernel kernel, const char *function_name)
{
    cl_program program = NULL;
    if (!function_name || next_cl()->clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof program,
                                                     &program, NULL) != CL_SUCCESS)
        return 0;
    char *source = program_source(program);
    uint64_t hash = tally_hash_bytes(source, source ? strlen(source) : 0, 0);
    free(source);
    return tally_hash_bytes(function_name, strlen(function_name), hash);
}

tally_program *mix_program(tally_device *device, const tally_instruction_mix *mix)
{
    uint64_t key = key_of(mix);
    tally_program *program = find(key, atomic_load_explicit(&mix_count, memory_order_acquire));
    if (program)
        return program;
    pthread_mutex_lock(&mixes_lock);
    uint32_t count = atomic_load_explicit(&mix_count, memory_order_relaxed);
    program = find(key, count);
    if (!program && count < MAX_MIXES) {
        program = kernel_program(device, mix, "OpenCL kernel", 0);
        if (program) {
            mixes[count] = (mix_entry){key, program};
            atomic_store_explicit(&mix_count, count + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&mixes_lock);
    /* A full table: the first mix stands in (documented limit, never hit in
     * practice). */
    return program ? program : (count ? mixes[0].program : NULL);
}
