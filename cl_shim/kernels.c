/*
 * Kernels' side records. Each holds its kernel's profile (kernel_profile.c),
 * classified once, when the program creates or clones the kernel: the
 * argument qualifiers it is read from are fixed when the kernel is, while
 * the argument values clSetKernelArg changes are no part of it. Enqueues
 * find the record through the thread's memo of the sharded table, so the
 * per-enqueue cost is a lookup, not 1 + 3 x arguments driver calls.
 *
 * A record goes with the program's last reference to its kernel, so a
 * kernel the driver later creates at the same address is classified afresh.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "shim.h"

typedef struct kernel_record {
    handle_entry entry;        /* key: the cl_kernel */
    tally_instruction_mix mix; /* immutable */
    /* The engine program of mix, found at the first enqueue (every enqueue
     * records into the one shared device, so one program serves them all). */
    _Atomic(tally_program *) program;
} kernel_record;

static handle_map kernels;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static _Thread_local handle_memo last_lookup;

static void init_kernels(void)
{
    handle_map_init(&kernels);
}

static handle_map *kernel_map(void)
{
    pthread_once(&kernels_once, init_kernels);
    return &kernels;
}

static void destroy_record(handle_entry *entry)
{
    free((kernel_record *)entry);
}

void kernels_destroy_all(void)
{
    handle_map_drain(kernel_map(), destroy_record);
}

uint32_t kernels_live(void)
{
    return handle_map_count(kernel_map());
}

static kernel_record *kernel_find(cl_kernel kernel)
{
    return (kernel_record *)handle_map_find_memo(kernel_map(), &last_lookup, kernel);
}

/* A kernel the driver just created, with the profile it shares (a clone's
 * source) or classified now. Out of memory: no record, and the kernel is
 * classified at each enqueue instead. */
static void track(cl_kernel kernel, const tally_instruction_mix *known, arg_info_source *source)
{
    kernel_record *k = malloc(sizeof(*k));
    if (!k)
        return;
    k->entry.key = kernel;
    k->mix = known ? *known : kernel_classify(kernel, source);
    atomic_init(&k->program, NULL);
    handle_entry *stale = handle_map_insert(kernel_map(), &k->entry);
    if (stale)
        destroy_record(stale);
}

tally_program *kernel_program(tally_device *device, cl_kernel kernel)
{
    kernel_record *k = kernel_find(kernel);
    if (!k) {
        tally_instruction_mix mix = kernel_classify(kernel, NULL); /* no build per enqueue */
        return mix_program(device, &mix);
    }
    tally_program *program = atomic_load_explicit(&k->program, memory_order_acquire);
    if (!program) {
        /* Threads racing here store the same program. */
        program = mix_program(device, &k->mix);
        atomic_store_explicit(&k->program, program, memory_order_release);
    }
    return program;
}

static void set_error(cl_int *errcode_ret, cl_int err)
{
    if (errcode_ret)
        *errcode_ret = err;
}

SHIM_HIDDEN cl_kernel CL_API_CALL shim_clCreateKernel(cl_program program, const char *name,
                                                      cl_int *errcode_ret)
{
    cl_int err;
    cl_kernel kernel = next_cl()->clCreateKernel(program, name, &err);
    if (kernel) {
        arg_info_source source;
        arg_info_source_init(&source, program);
        track(kernel, NULL, &source);
        arg_info_source_release(&source);
    }
    set_error(errcode_ret, err);
    return kernel;
}
TALLY_CL_EXPORT(clCreateKernel);

SHIM_HIDDEN cl_int CL_API_CALL shim_clCreateKernelsInProgram(cl_program program,
                                                             cl_uint num_kernels,
                                                             cl_kernel *kernels_out,
                                                             cl_uint *num_kernels_ret)
{
    cl_uint own_count = 0;
    cl_uint *count = num_kernels_ret ? num_kernels_ret : &own_count;
    cl_int err = next_cl()->clCreateKernelsInProgram(program, num_kernels, kernels_out, count);
    if (err == CL_SUCCESS && kernels_out) {
        arg_info_source source; /* one twin for all of them */
        arg_info_source_init(&source, program);
        for (cl_uint i = 0; i < *count && i < num_kernels; i++)
            track(kernels_out[i], NULL, &source);
        arg_info_source_release(&source);
    }
    return err;
}
TALLY_CL_EXPORT(clCreateKernelsInProgram);

/* A clone has its source's arguments, so it shares its profile. */
SHIM_HIDDEN cl_kernel CL_API_CALL shim_clCloneKernel(cl_kernel source, cl_int *errcode_ret)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    if (!cl->clCloneKernel) { /* a driver older than OpenCL 2.1 */
        set_error(errcode_ret, CL_INVALID_OPERATION);
        return NULL;
    }
    cl_int err;
    cl_kernel clone = cl->clCloneKernel(source, &err);
    if (clone) {
        kernel_record *k = kernel_find(source);
        track(clone, k ? &k->mix : NULL, NULL);
    }
    set_error(errcode_ret, err);
    return clone;
}
TALLY_CL_EXPORT(clCloneKernel);

SHIM_HIDDEN cl_int CL_API_CALL shim_clRetainKernel(cl_kernel kernel)
{
    cl_int err = next_cl()->clRetainKernel(kernel);
    if (err == CL_SUCCESS)
        handle_map_retain(kernel_map(), kernel);
    return err;
}
TALLY_CL_EXPORT(clRetainKernel);

SHIM_HIDDEN cl_int CL_API_CALL shim_clReleaseKernel(cl_kernel kernel)
{
    /* Unlinked before the driver's release (handle_map.h). */
    handle_entry *gone = handle_map_release(kernel_map(), kernel);
    cl_int err = next_cl()->clReleaseKernel(kernel);
    if (gone)
        destroy_record(gone);
    return err;
}
TALLY_CL_EXPORT(clReleaseKernel);
