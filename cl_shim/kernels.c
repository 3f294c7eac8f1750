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
#include <string.h>

#include "shim.h"

/* What a launch without a local size depends on, besides the range: fixed
 * for a kernel on a device once it is built. */
typedef struct kernel_shape {
    cl_device_id device;
    size_t required[3]; /* CL_KERNEL_COMPILE_WORK_GROUP_SIZE; all 0: none */
    size_t multiple;    /* CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE */
} kernel_shape;

typedef struct kernel_record {
    handle_entry entry;        /* key: the cl_kernel */
    tally_instruction_mix mix; /* immutable */
    char *function_name;       /* immutable; NULL: the driver did not say */
    uint64_t code_hash;        /* immutable */
    /* The kernel's engine program (mix, named for the function), made at
     * the first enqueue (every enqueue records into the one shared device,
     * so one program serves them all). */
    _Atomic(tally_program *) program;
    /* The shape on the first device the kernel was launched on without a
     * local size, set once; other devices' are read at each launch. */
    _Atomic(kernel_shape *) shape;
} kernel_record;

static handle_map kernels;
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;
static _Thread_local handle_memo last_lookup;

/* The thread's last launch without a local size and the size it took: a
 * program enqueues a kernel over the same range again and again. Valid
 * while no kernel record has been linked or unlinked since (the map's
 * generation), so a record freed and another made at its address is never
 * taken for it. */
static _Thread_local struct {
    const kernel_record *kernel;
    cl_device_id device;
    uint64_t generation;
    size_t global[3], local[3];
} last_launch;

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
    kernel_record *k = (kernel_record *)entry;
    free(atomic_load_explicit(&k->shape, memory_order_relaxed));
    tally_program *program = atomic_load_explicit(&k->program, memory_order_relaxed);
    if (program)
        tally_program_release(program);
    free(k->function_name);
    free(k);
}

uint32_t kernels_live(void)
{
    return handle_map_count(kernel_map());
}

static kernel_record *kernel_find(cl_kernel kernel)
{
    handle_entry *hit = handle_map_memo_hit(&kernels, &last_lookup, kernel);
    return (kernel_record *)(hit ? hit : handle_map_find_memo(kernel_map(), &last_lookup, kernel));
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
    k->function_name = kernel_function_name(kernel);
    k->code_hash = kernel_code_hash(kernel, k->function_name);
    atomic_init(&k->program, NULL);
    atomic_init(&k->shape, NULL);
    handle_entry *stale = handle_map_insert(kernel_map(), &k->entry);
    if (stale)
        destroy_record(stale);
}

static tally_program *program_of(tally_device *device, kernel_record *k, cl_kernel kernel)
{
    if (!k) {
        tally_instruction_mix mix = kernel_classify(kernel, NULL); /* no build per enqueue */
        return mix_program(device, &mix);
    }
    tally_program *program = atomic_load_explicit(&k->program, memory_order_acquire);
    if (program)
        return program;
    tally_program *made = kernel_program(device, &k->mix, k->function_name, k->code_hash);
    if (!made)
        return mix_program(device, &k->mix);
    /* Threads racing here: the first one's stays. */
    if (atomic_compare_exchange_strong_explicit(&k->program, &program, made, memory_order_acq_rel,
                                                memory_order_acquire))
        return made;
    tally_program_release(made);
    return program;
}

static kernel_shape read_shape(cl_kernel kernel, cl_device_id device)
{
    const struct _cl_icd_dispatch *cl = next_cl();
    kernel_shape shape = {.device = device, .multiple = 1};
    if (cl->clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                     sizeof(shape.required), shape.required, NULL) != CL_SUCCESS)
        memset(shape.required, 0, sizeof(shape.required));
    cl->clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                 sizeof(shape.multiple), &shape.multiple, NULL);
    return shape;
}

/* The kernel's shape on the device: from its record when that holds this
 * device's, read from the driver (and kept, the first time) otherwise. */
static kernel_shape shape_of(kernel_record *k, cl_kernel kernel, cl_device_id device)
{
    kernel_shape *kept = k ? atomic_load_explicit(&k->shape, memory_order_acquire) : NULL;
    if (kept && kept->device == device)
        return *kept;
    kernel_shape shape = read_shape(kernel, device);
    if (k && !kept) {
        kernel_shape *copy = malloc(sizeof(*copy));
        kernel_shape *none = NULL;
        if (copy) {
            *copy = shape;
            /* Threads racing here read the same shape: the first one's stays. */
            if (!atomic_compare_exchange_strong_explicit(
                    &k->shape, &none, copy, memory_order_acq_rel, memory_order_acquire))
                free(copy);
        }
    }
    return shape;
}

static void local_size_of(kernel_record *k, cl_kernel kernel, const queue_record *q,
                          const size_t global[3], size_t local[3])
{
    uint64_t generation = atomic_load_explicit(&kernel_map()->generation, memory_order_acquire);
    if (k && last_launch.kernel == k && last_launch.device == q->device &&
        last_launch.generation == generation &&
        memcmp(last_launch.global, global, sizeof(last_launch.global)) == 0) {
        memcpy(local, last_launch.local, sizeof(last_launch.local));
        return;
    }
    kernel_shape shape = shape_of(k, kernel, q->device);
    if (shape.required[0] && shape.required[1] && shape.required[2])
        memcpy(local, shape.required, sizeof(shape.required));
    else
        default_local_size(&q->limits, shape.multiple, global, local);
    if (k) {
        last_launch.kernel = k;
        last_launch.device = q->device;
        last_launch.generation = generation;
        memcpy(last_launch.global, global, sizeof(last_launch.global));
        memcpy(last_launch.local, local, sizeof(last_launch.local));
    }
}

tally_program *kernel_launch(const queue_record *q, cl_kernel kernel, const size_t global[3],
                             size_t *chosen_local)
{
    kernel_record *k = kernel_find(kernel);
    if (chosen_local)
        local_size_of(k, kernel, q, global, chosen_local);
    return program_of(tally_context_device(q->context), k, kernel);
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
