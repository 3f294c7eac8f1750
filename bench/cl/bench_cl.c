/*
 * tally_bench_cl: what libtally_cl costs an OpenCL program. 10,000 enqueues
 * of an empty kernel (global size 1, no local size, no event) and a clFinish,
 * timed on one queue called directly through the loader and on another
 * called through the shim's own entry points (the shim dlopen'ed into this
 * process, exactly the functions a preloaded shim puts in front of the
 * loader). Both run in the same process, on the same context and kernel,
 * in alternating rounds. Each time shown is the best of its rounds; the
 * judged figure is the median over rounds of shimmed / plain within a round
 * (paired, so load from elsewhere on the machine cancels). Target: <= 1.05.
 * The same enqueues through libtally_passthrough_cl.so (beside the shim, a
 * library that only forwards) give the baseline of the idle shim's cost:
 * the median over rounds of the calling thread's CPU per enqueue with the
 * shim minus through the pass-through. A counter-enabled queue
 * with an event per enqueue is measured too (informative), and so is a
 * kernel of six arguments (the shim profiles a kernel by its arguments:
 * this shows whether that costs anything per enqueue).
 * The kernels are created through the shim, as in a preloaded program, so
 * the shim knows them.
 *
 * Usage: tally_bench_cl [--quick] [SHIM]   (SHIM: default ../lib/libtally_cl.so
 *        beside this program; --quick: 1,000 enqueues, 3 rounds)
 * Rounds: 21, alternating which of plain and shimmed goes first; after
 * each timed run the bench waits, untimed, until the engine has executed
 * what was submitted (the simulated GPU works on its own thread, like a
 * GPU, and must not run during the next measurement).
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cl_codeplay_performance_counters.h"

#define TARGET_RATIO 1.05

typedef cl_int (*enqueue_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                             const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*finish_fn)(cl_command_queue);
typedef cl_int (*release_event_fn)(cl_event);

struct entry_points {
    enqueue_fn enqueue;
    finish_fn finish;
    release_event_fn release_event;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "tally_bench_cl: %s failed (%d)\n", what, err);
    exit(1);
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time the calling thread spent in the last timed run's enqueues. */
static uint64_t last_enqueue_cpu_ns;

/* Wall time of `count` enqueues and the clFinish after them. */
static uint64_t time_enqueues(const struct entry_points *ep, cl_command_queue queue,
                              cl_kernel kernel, unsigned count, int with_events)
{
    size_t global = 1;
    uint64_t start = now_ns();
    uint64_t cpu_start = thread_cpu_ns();
    for (unsigned i = 0; i < count; i++) {
        cl_event event;
        cl_int err = ep->enqueue(queue, kernel, 1, NULL, &global, NULL, 0, NULL,
                                 with_events ? &event : NULL);
        if (err != CL_SUCCESS)
            die("clEnqueueNDRangeKernel", err);
        if (with_events)
            ep->release_event(event);
    }
    last_enqueue_cpu_ns = thread_cpu_ns() - cpu_start;
    ep->finish(queue);
    return now_ns() - start;
}

/* Waits until the engine has executed everything submitted so far: the
 * results of a marker on the counter queue are ready only then. Called
 * between timed runs, so that the simulated GPU's work for one run does not
 * run during the next. */
typedef cl_int (*profiling_fn)(cl_event, cl_profiling_info, size_t, void *, size_t *);
typedef cl_int (*marker_fn)(cl_command_queue, cl_uint, const cl_event *, cl_event *);
static profiling_fn shim_profiling;
static marker_fn shim_marker;

static void engine_settle(const struct entry_points *ep, cl_command_queue counter_queue)
{
    cl_event event;
    cl_performance_counter_result_codeplay results[2];
    shim_marker(counter_queue, 0, NULL, &event);
    ep->finish(counter_queue);
    cl_int err = shim_profiling(event, CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY,
                                sizeof results, results, NULL);
    if (err != CL_SUCCESS)
        die("clGetEventProfilingInfo", err);
    ep->release_event(event);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void default_shim_path(const char *argv0, char *out, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        snprintf(out, size, "%s", argv0);
        return;
    }
    exe[n] = '\0';
    snprintf(out, size, "%s/../lib/libtally_cl.so", dirname(exe));
}

static void passthrough_path(const char *shim_path, char *out, size_t size)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", shim_path);
    snprintf(out, size, "%s/libtally_passthrough_cl.so", dirname(copy));
}

static int compare_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void *shim_symbol(void *shim, const char *name)
{
    void *f = dlsym(shim, name);
    if (!f) {
        fprintf(stderr, "tally_bench_cl: the shim has no %s\n", name);
        exit(1);
    }
    return f;
}

int main(int argc, char **argv)
{
    unsigned count = 10000, rounds = 21;
    char shim_path[PATH_MAX] = "";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            count = 1000;
            rounds = 3;
        } else {
            snprintf(shim_path, sizeof shim_path, "%s", argv[i]);
        }
    }
    if (!shim_path[0])
        default_shim_path(argv[0], shim_path, sizeof shim_path);
    /* A preloaded shim would sit under both paths; other preloads (a
     * profiler's, valgrind's own) are no matter. */
    const char *preload = getenv("LD_PRELOAD");
    if ((preload && strstr(preload, "tally")) || getenv("OPENCL_LAYERS")) {
        fprintf(stderr, "tally_bench_cl: run without tally in LD_PRELOAD and without "
                        "OPENCL_LAYERS; the bench loads the shim itself\n");
        return 1;
    }
    void *shim = dlopen(shim_path, RTLD_NOW | RTLD_LOCAL);
    if (!shim) {
        fprintf(stderr, "tally_bench_cl: %s\n", dlerror());
        return 1;
    }
    char pass_path[PATH_MAX];
    passthrough_path(shim_path, pass_path, sizeof pass_path);
    void *pass = dlopen(pass_path, RTLD_NOW | RTLD_LOCAL);
    if (!pass) {
        fprintf(stderr, "tally_bench_cl: %s\n", dlerror());
        return 1;
    }
    struct entry_points plain = {clEnqueueNDRangeKernel, clFinish, clReleaseEvent};
    struct entry_points passed = {shim_symbol(pass, "clEnqueueNDRangeKernel"),
                                  shim_symbol(pass, "clFinish"),
                                  shim_symbol(pass, "clReleaseEvent")};
    struct entry_points shimmed = {shim_symbol(shim, "clEnqueueNDRangeKernel"),
                                   shim_symbol(shim, "clFinish"),
                                   shim_symbol(shim, "clReleaseEvent")};
    typedef cl_command_queue (*create_fn)(cl_context, cl_device_id, const cl_queue_properties *,
                                          cl_int *);
    create_fn shim_create = shim_symbol(shim, "clCreateCommandQueueWithProperties");
    shim_profiling = shim_symbol(shim, "clGetEventProfilingInfo");
    shim_marker = shim_symbol(shim, "clEnqueueMarkerWithWaitList");
    typedef cl_int (*get_device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    get_device_info_fn shim_device_info = shim_symbol(shim, "clGetDeviceInfo");

    cl_platform_id platform;
    cl_device_id device;
    cl_int err = clGetPlatformIDs(1, &platform, NULL);
    if (err != CL_SUCCESS)
        die("clGetPlatformIDs", err);
    if ((err = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL)) != CL_SUCCESS)
        die("clGetDeviceIDs", err);
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    const char *source =
        "kernel void empty() {}\n"
        "kernel void six(global const float *a, constant float *b, global float *c,\n"
        "                local int *l, int n, float f) {}\n";
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    /* The shim leaves builds to the driver (a kernel's profile comes from
     * a twin build of its own), so the program is built directly. */
    if ((err = clBuildProgram(program, 1, &device, "", NULL, NULL)) != CL_SUCCESS)
        die("clBuildProgram", err);
    typedef cl_kernel (*create_kernel_fn)(cl_program, const char *, cl_int *);
    create_kernel_fn shim_create_kernel = shim_symbol(shim, "clCreateKernel");
    cl_kernel kernel = shim_create_kernel(program, "empty", &err);
    if (!kernel)
        die("clCreateKernel", err);
    cl_kernel six = shim_create_kernel(program, "six", &err);
    if (!six)
        die("clCreateKernel", err);
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, 64, NULL, &err);
    cl_int n = 1;
    cl_float f = 1;
    clSetKernelArg(six, 0, sizeof buffer, &buffer);
    clSetKernelArg(six, 1, sizeof buffer, &buffer);
    clSetKernelArg(six, 2, sizeof buffer, &buffer);
    clSetKernelArg(six, 3, 16, NULL);
    clSetKernelArg(six, 4, sizeof n, &n);
    clSetKernelArg(six, 5, sizeof f, &f);

    cl_command_queue plain_queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    cl_command_queue pass_queue = clCreateCommandQueueWithProperties(context, device, NULL, &err);
    cl_command_queue shim_queue = shim_create(context, device, NULL, &err);
    if (!shim_queue)
        die("clCreateCommandQueueWithProperties (shim)", err);
    /* A counter-enabled queue: the first two counters of the list. */
    cl_performance_counter_codeplay records[2];
    size_t size = 0;
    shim_device_info(device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, 0, NULL, &size);
    cl_performance_counter_codeplay *all = malloc(size);
    shim_device_info(device, CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY, size, all, NULL);
    memcpy(records, all, sizeof records);
    free(all);
    cl_performance_counter_desc_codeplay descs[2] = {{records[0].uuid, NULL},
                                                     {records[1].uuid, NULL}};
    cl_performance_counter_config_codeplay config = {2, descs};
    cl_queue_properties properties[] = {CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY,
                                        (cl_queue_properties)(uintptr_t)&config, 0};
    cl_command_queue counter_queue = shim_create(context, device, properties, &err);
    if (!counter_queue)
        die("clCreateCommandQueueWithProperties (counters)", err);

    /* Warm up: kernel compilation and the engine's first submission. */
    time_enqueues(&plain, plain_queue, kernel, 100, 0);
    time_enqueues(&passed, pass_queue, kernel, 100, 0);
    time_enqueues(&shimmed, shim_queue, kernel, 100, 0);
    time_enqueues(&shimmed, counter_queue, kernel, 100, 1);
    time_enqueues(&plain, plain_queue, six, 100, 0);
    time_enqueues(&shimmed, shim_queue, six, 100, 0);

    uint64_t best_plain = UINT64_MAX, best_shim = UINT64_MAX, best_counters = UINT64_MAX;
    uint64_t best_six_plain = UINT64_MAX, best_six_shim = UINT64_MAX;
    uint64_t cpu_six_plain = UINT64_MAX, cpu_six_shim = UINT64_MAX;
    double ratios[64], six_ratios[64];
    uint64_t cpu_plain = UINT64_MAX, cpu_shim = UINT64_MAX, cpu_pass = UINT64_MAX;
    int64_t over_pass[64];
    for (unsigned r = 0; r < rounds; r++) {
        uint64_t round_plain = 0, round_shim = 0, round_cpu_shim = 0, round_cpu_pass = 0;
        /* Rotate which goes first, so none always follows another. */
        for (unsigned turn = 0; turn < 3; turn++) {
            unsigned which = (turn + r) % 3;
            if (which == 0) {
                uint64_t t = time_enqueues(&plain, plain_queue, kernel, count, 0);
                best_plain = t < best_plain ? t : best_plain;
                round_plain = t;
                cpu_plain = last_enqueue_cpu_ns < cpu_plain ? last_enqueue_cpu_ns : cpu_plain;
            } else if (which == 1) {
                uint64_t t = time_enqueues(&shimmed, shim_queue, kernel, count, 0);
                best_shim = t < best_shim ? t : best_shim;
                round_shim = t;
                round_cpu_shim = last_enqueue_cpu_ns;
                cpu_shim = last_enqueue_cpu_ns < cpu_shim ? last_enqueue_cpu_ns : cpu_shim;
            } else {
                time_enqueues(&passed, pass_queue, kernel, count, 0);
                round_cpu_pass = last_enqueue_cpu_ns;
                cpu_pass = last_enqueue_cpu_ns < cpu_pass ? last_enqueue_cpu_ns : cpu_pass;
            }
            engine_settle(&shimmed, counter_queue);
        }
        ratios[r] = (double)round_shim / (double)round_plain;
        over_pass[r] = (int64_t)round_cpu_shim - (int64_t)round_cpu_pass;
        uint64_t t;
        /* The six-argument kernel, plain first in odd rounds. */
        uint64_t six_times[2];
        for (int turn = 0; turn < 2; turn++) {
            bool shimmed_turn = (turn == 0) == (r % 2 == 1);
            t = time_enqueues(shimmed_turn ? &shimmed : &plain,
                              shimmed_turn ? shim_queue : plain_queue, six, count, 0);
            six_times[shimmed_turn] = t;
            uint64_t *best = shimmed_turn ? &best_six_shim : &best_six_plain;
            uint64_t *cpu = shimmed_turn ? &cpu_six_shim : &cpu_six_plain;
            *best = t < *best ? t : *best;
            *cpu = last_enqueue_cpu_ns < *cpu ? last_enqueue_cpu_ns : *cpu;
            engine_settle(&shimmed, counter_queue);
        }
        six_ratios[r] = (double)six_times[1] / (double)six_times[0];
        t = time_enqueues(&shimmed, counter_queue, kernel, count, 1);
        best_counters = t < best_counters ? t : best_counters;
        engine_settle(&shimmed, counter_queue);
    }
    qsort(ratios, rounds, sizeof(double), compare_doubles);
    qsort(six_ratios, rounds, sizeof(double), compare_doubles);
    qsort(over_pass, rounds, sizeof(int64_t), compare_int64);
    double ratio = ratios[rounds / 2];
    char name[256] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("device: %s\n", name);
    printf("%u enqueues of an empty kernel + clFinish, best of %u rounds\n", count, rounds);
    printf("%-44s %12s %10s\n", "configuration", "wall ms", "us/enqueue");
    printf("%-44s %12.2f %10.2f\n", "without the shim", best_plain / 1e6, best_plain / 1e3 / count);
    printf("%-44s %12.2f %10.2f\n", "with the shim (queue without counters)", best_shim / 1e6,
           best_shim / 1e3 / count);
    printf("%-44s %12.2f %10.2f\n", "with the shim (2 counters, event each)", best_counters / 1e6,
           best_counters / 1e3 / count);
    printf("calling thread's CPU time per enqueue (best): %.0f ns without, %.0f ns through "
           "the pass-through, %.0f ns with the shim\n",
           (double)cpu_plain / count, (double)cpu_pass / count, (double)cpu_shim / count);
    printf("idle shim over the pass-through, CPU per enqueue, median of %u paired rounds: "
           "%+.1f ns\n",
           rounds, (double)over_pass[rounds / 2] / count);
    printf("ratio of the bests: %.3f\n", (double)best_shim / (double)best_plain);
    printf("ratio with/without, median of %u paired rounds: %.3f (target <= %.2f): %s\n", rounds,
           ratio, TARGET_RATIO, ratio <= TARGET_RATIO ? "met" : "MISSED");
    printf("a kernel of six arguments (informative), best: %.2f ms without, %.2f ms with the "
           "shim;\n  CPU per enqueue %.0f ns without, %.0f ns with; paired median ratio %.3f\n",
           best_six_plain / 1e6, best_six_shim / 1e6, (double)cpu_six_plain / count,
           (double)cpu_six_shim / count, six_ratios[rounds / 2]);

    shimmed.finish(counter_queue);
    typedef cl_int (*release_queue_fn)(cl_command_queue);
    release_queue_fn shim_release = shim_symbol(shim, "clReleaseCommandQueue");
    shim_release(counter_queue);
    shim_release(shim_queue);
    clReleaseCommandQueue(plain_queue);
    clReleaseCommandQueue(pass_queue);
    typedef cl_int (*release_kernel_fn)(cl_kernel);
    release_kernel_fn shim_release_kernel = shim_symbol(shim, "clReleaseKernel");
    shim_release_kernel(six);
    shim_release_kernel(kernel);
    clReleaseMemObject(buffer);
    clReleaseProgram(program);
    clReleaseContext(context);
    return ratio <= TARGET_RATIO ? 0 : 1;
}
