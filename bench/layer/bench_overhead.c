/*
 * What a layer costs the program, in one run, on whatever Vulkan driver the
 * environment gives (lavapipe unless VK_DRIVER_FILES or --icd names another):
 *
 *  - recording: ns per vkCmdDraw, 200,000 draws in a render pass, recorded
 *    5 times into one command buffer (the median of the 5);
 *  - a pre-recorded frame: 10,000 vkCmdDraw in a render pass, recorded once
 *    and submitted 50 times (each waited for), as engines replay frames: CPU
 *    time of the whole process, every thread, per submitted draw, from the
 *    first submission until the process exits (so a report still being
 *    written counts), and the CPU time of the application's own thread,
 *    the one that submits, over the submissions;
 *
 * for no layer, a minimal pass-through layer, VK_LAYER_MESA_overlay counting
 * draws, tally idle and tally writing a per-draw CSV report. Each
 * configuration runs in a child process (layers are chosen when the instance
 * is created), every child on the same single CPU, the configurations
 * interleaved round by round; each figure is the median over the rounds.
 * Then both again for no layer, the pass-through layer and tally idle,
 * paired in one process (see paired_contexts).
 *
 * Usage: bench_overhead [--rounds N] [--cpu C] [--icd FILE]
 *        bench_overhead --record DRAWS          (child)
 *        bench_overhead --record-paired DRAWS ROUNDS (child)
 *        bench_overhead --frame-paired DRAWS SUBMITS ROUNDS (child)
 *        bench_overhead --frame DRAWS SUBMITS   (child)
 */
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vk_context.h"

enum { RECORD_DRAWS = 200000, RECORD_REPEATS = 5, FRAME_DRAWS = 10000, FRAME_SUBMITS = 50 };

static uint64_t clock_ns(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Records `draws` draws of a triangle into cb (not recording) in a render
 * pass: ns per vkCmdDraw, the draws alone timed. */
static double time_recording(vk_context *c, VkCommandBuffer cb, uint32_t draws)
{
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    vkBeginCommandBuffer(cb, &begin);
    vk_context_begin_render_pass(c, cb, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, c->triangle);
    uint64_t start = clock_ns(CLOCK_MONOTONIC);
    for (uint32_t i = 0; i < draws; i++)
        vkCmdDraw(cb, 3, 1, 0, 0);
    double ns = (double)(clock_ns(CLOCK_MONOTONIC) - start) / draws;
    vkCmdEndRenderPass(cb);
    vkEndCommandBuffer(cb);
    return ns;
}

static int child_record(uint32_t draws)
{
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options))
        return 1;
    VkCommandBuffer cb = vk_context_begin(&c);
    vkEndCommandBuffer(cb);
    double ns[RECORD_REPEATS];
    for (int r = 0; r < RECORD_REPEATS; r++)
        ns[r] = time_recording(&c, cb, draws);
    vkFreeCommandBuffers(c.device, c.pool, 1, &cb);
    vk_context_destroy(&c);
    printf("%.2f\n", median(ns, RECORD_REPEATS));
    return 0;
}

/*
 * The paired figures: no layer, the pass-through layer and tally idle, each
 * its own instance in one process, enabling its layer by name, measured in
 * turn round after round. Separate processes differ from one another by
 * more than the layers do on some machines (the same build's no-layer
 * recording moves by tens of ns a draw between runs); here every round
 * compares the three under the same conditions, and each figure is the
 * median of the rounds' differences.
 */
enum { PAIRED = 3, MAX_ROUNDS = 64, MAX_PAIRED_ROUNDS = 4 * MAX_ROUNDS + 1 };
static const char *const paired_names[PAIRED] = {"no layer", "pass-through layer", "tally, idle"};

static bool paired_contexts(vk_context c[PAIRED])
{
    static const char *const layers[PAIRED] = {NULL, "VK_LAYER_TALLY_passthrough",
                                               "VK_LAYER_TALLY_counters"};
    for (int i = 0; i < PAIRED; i++) {
        vk_context_options options = {.keep_environment = true, .enabled_layer = layers[i]};
        if (!vk_context_create(&c[i], &options))
            return false;
    }
    return true;
}

/* ns[i][r]: configuration i's figure in round r. */
static void print_paired(const char *title, const char *unit, double ns[PAIRED][MAX_PAIRED_ROUNDS],
                         int rounds)
{
    static double over_none[PAIRED][MAX_PAIRED_ROUNDS], over_pass[PAIRED][MAX_PAIRED_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < PAIRED; i++) {
            over_none[i][r] = ns[i][r] - ns[0][r];
            over_pass[i][r] = ns[i][r] - ns[1][r];
        }
    printf("%s, %d rounds, medians of each round's figures)\n\n", title, rounds);
    printf("| configuration | %s | over no layer | over pass-through |\n|---|---|---|---|\n", unit);
    for (int i = 0; i < PAIRED; i++)
        printf("| %s | %.1f | %+.1f | %+.1f |\n", paired_names[i], median(ns[i], rounds),
               median(over_none[i], rounds), median(over_pass[i], rounds));
    printf("\n");
}

static int child_record_paired(uint32_t draws, int rounds)
{
    vk_context c[PAIRED];
    VkCommandBuffer cb[PAIRED];
    if (!paired_contexts(c))
        return 1;
    for (int i = 0; i < PAIRED; i++) {
        cb[i] = vk_context_begin(&c[i]);
        vkEndCommandBuffer(cb[i]);
    }
    static double ns[PAIRED][MAX_PAIRED_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < PAIRED; k++) {
            int i = (r + k) % PAIRED; /* each takes each place in turn */
            ns[i][r] = time_recording(&c[i], cb[i], draws);
        }
    char title[128];
    snprintf(title, sizeof title,
             "### Recording, paired in one process: ns per vkCmdDraw (%u draws", draws);
    print_paired(title, "ns per draw", ns, rounds);
    for (int i = PAIRED - 1; i >= 0; i--) {
        vkFreeCommandBuffers(c[i].device, c[i].pool, 1, &cb[i]);
        vk_context_destroy(&c[i]);
    }
    return 0;
}

/* The frame: `draws` draws of a triangle in a render pass, recorded once. */
static VkCommandBuffer record_frame(vk_context *c, uint32_t draws)
{
    VkCommandBuffer cb = vk_context_begin(c);
    vk_context_begin_render_pass(c, cb, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, c->triangle);
    for (uint32_t i = 0; i < draws; i++)
        vkCmdDraw(cb, 3, 1, 0, 0);
    vkCmdEndRenderPass(cb);
    vkEndCommandBuffer(cb);
    return cb;
}

static bool submit_and_wait(vk_context *c, VkCommandBuffer cb)
{
    VkSubmitInfo submit = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    return vkQueueSubmit(c->queue, 1, &submit, VK_NULL_HANDLE) == VK_SUCCESS &&
           vkQueueWaitIdle(c->queue) == VK_SUCCESS;
}

/*
 * The pre-recorded frame, paired: process CPU time (every thread) over
 * each configuration's `submits` submissions alone, per submitted draw.
 * Idle, tally writes nothing, so nothing of its work is left for the
 * teardown that the separate processes' figure counts.
 */
static int child_frame_paired(uint32_t draws, uint32_t submits, int rounds)
{
    vk_context c[PAIRED];
    VkCommandBuffer cb[PAIRED];
    if (!paired_contexts(c))
        return 1;
    for (int i = 0; i < PAIRED; i++) {
        cb[i] = record_frame(&c[i], draws);
        if (!submit_and_wait(&c[i], cb[i])) /* untimed: the driver's first-use work */
            return 1;
    }
    static double ns[PAIRED][MAX_PAIRED_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < PAIRED; k++) {
            int i = (r + k) % PAIRED;
            uint64_t start = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
            for (uint32_t s = 0; s < submits; s++)
                if (!submit_and_wait(&c[i], cb[i]))
                    return 1;
            ns[i][r] =
                (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - start) / ((double)draws * submits);
        }
    char title[160];
    snprintf(title, sizeof title,
             "### Pre-recorded frame, paired in one process: CPU ns per submitted draw (%u draws, "
             "%u submissions, every thread",
             draws, submits);
    print_paired(title, "CPU ns per draw", ns, rounds);
    for (int i = PAIRED - 1; i >= 0; i--) {
        vkFreeCommandBuffers(c[i].device, c[i].pool, 1, &cb[i]);
        vk_context_destroy(&c[i]);
    }
    return 0;
}

/* The frame's figure is printed at exit, after the handlers that the layer
 * registered later (and so run earlier) have finished its reports. */
static uint64_t frame_start_cpu_ns, frame_draws;
static double frame_thread_ns; /* the submitting thread's CPU ns per draw */

static void print_frame_cost(void)
{
    if (frame_draws)
        printf("%.2f %.2f\n",
               (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - frame_start_cpu_ns) /
                   (double)frame_draws,
               frame_thread_ns);
}

static int child_frame(uint32_t draws, uint32_t submits)
{
    atexit(print_frame_cost);
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options))
        return 1;
    VkCommandBuffer cb = record_frame(&c, draws);
    if (!submit_and_wait(&c, cb)) /* untimed: the driver's first-use work */
        return 1;
    frame_start_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t thread_start_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    for (uint32_t i = 0; i < submits; i++)
        if (!submit_and_wait(&c, cb))
            return 1;
    frame_draws = (uint64_t)draws * submits;
    frame_thread_ns =
        (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - thread_start_ns) / (double)frame_draws;
    vkFreeCommandBuffers(c.device, c.pool, 1, &cb);
    vk_context_destroy(&c);
    return 0;
}

typedef struct config {
    const char *name;
    const char *env[6];
} config;

/* Starts this program as a child with extra environment (VK_INSTANCE_LAYERS
 * removed first when clear_layers: its instances name their layers), its
 * standard output on out_fd (-1: ours). */
static pid_t start_child(const char *self, const char *const *args, const char *const *env,
                         int out_fd, bool clear_layers)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    if (out_fd >= 0)
        dup2(out_fd, STDOUT_FILENO);
    if (clear_layers)
        unsetenv("VK_INSTANCE_LAYERS");
    for (const char *const *e = env; *e; e++)
        putenv((char *)*e);
    const char *argv[8] = {self};
    for (int i = 0; args[i] && i < 6; i++)
        argv[i + 1] = args[i];
    execv(self, (char *const *)argv);
    _exit(127);
}

static bool child_succeeded(pid_t pid)
{
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

/* Runs this program as a child with extra environment; the first number of
 * its last line of output, or -1, and the second in *second (-1 if none;
 * second may be NULL). */
static double run_child(const char *self, const char *const *args, const char *const *env,
                        double *second)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = start_child(self, args, env, fds[1], false);
    close(fds[1]);
    FILE *out = fdopen(fds[0], "r");
    double value = -1, other = -1;
    char line[256];
    while (out && fgets(line, sizeof line, out))
        if (sscanf(line, "%lf %lf", &value, &other) < 1)
            value = -1;
    if (out)
        fclose(out);
    bool succeeded = child_succeeded(pid);
    if (second)
        *second = succeeded ? other : -1;
    return succeeded ? value : -1;
}

/* Runs this program as a child writing to our standard output. */
static int run_child_printing(const char *self, const char *const *args, const char *const *env)
{
    return child_succeeded(start_child(self, args, env, -1, true)) ? 0 : -1;
}

static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        perror("bench_overhead: sched_setaffinity");
}

/* The first CPU this process may run on. */
static int first_allowed_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int i = 0; i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &set))
                return i;
    return 0;
}

/* The median of a configuration's rounds; -1 (a failure) if any round failed. */
static double median_of_rounds(double *values, int rounds)
{
    for (int r = 0; r < rounds; r++)
        if (values[r] < 0)
            return -1;
    return median(values, rounds);
}

static void print_row(const char *name, double value, double base, double pass)
{
    if (value < 0) {
        printf("| %s | failed | | |\n", name);
        return;
    }
    printf("| %s | %.1f | %+.1f | %+.1f |\n", name, value, value - base, value - pass);
}

/* A paired child's rounds, within the tables' bounds. */
static int paired_rounds_arg(const char *text)
{
    int rounds = atoi(text);
    return rounds < 1 ? 1 : rounds > MAX_PAIRED_ROUNDS ? MAX_PAIRED_ROUNDS : rounds;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--record") == 0)
        return child_record((uint32_t)atoi(argv[2]));
    if (argc == 4 && strcmp(argv[1], "--record-paired") == 0)
        return child_record_paired((uint32_t)atoi(argv[2]), paired_rounds_arg(argv[3]));
    if (argc == 5 && strcmp(argv[1], "--frame-paired") == 0)
        return child_frame_paired((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]),
                                  paired_rounds_arg(argv[4]));
    if (argc == 4 && strcmp(argv[1], "--frame") == 0)
        return child_frame((uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]));
    int rounds = 5, cpu = first_allowed_cpu();
    static char icd[4096] = "VK_DRIVER_FILES=" TALLY_LAVAPIPE_ICD;
    if (getenv("VK_DRIVER_FILES"))
        snprintf(icd, sizeof icd, "VK_DRIVER_FILES=%s", getenv("VK_DRIVER_FILES"));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc) {
            cpu = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--icd") == 0 && i + 1 < argc) {
            snprintf(icd, sizeof icd, "VK_DRIVER_FILES=%s", argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_overhead [--rounds N] [--cpu C] [--icd FILE]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS)
        rounds = 5;
    pin_to(cpu);
    /* lavapipe allocates every recorded command with malloc: one allocator
     * setting for every configuration, so that glibc trimming and regrowing
     * its heap between recordings does not decide the figures. */
    setenv("GLIBC_TUNABLES",
           "glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=67108864:"
           "glibc.malloc.mmap_threshold=1073741824",
           1);
    static char layers[4096], report[256];
    /* Layers found elsewhere (a Mesa overlay brought along) come after ours. */
    const char *more = getenv("VK_ADD_LAYER_PATH");
    snprintf(layers, sizeof layers, "VK_ADD_LAYER_PATH=%s/share/vulkan/explicit_layer.d:%s%s%s",
             TALLY_BUILD_DIR, PASSTHROUGH_DIR, more ? ":" : "", more ? more : "");
    snprintf(report, sizeof report, "TALLY_OUTPUT=/tmp/bench_overhead_%ld.csv", (long)getpid());
    const config configs[] = {
        {"no layer", {icd, NULL}},
        {"pass-through layer",
         {icd, layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_passthrough", NULL}},
        {"VK_LAYER_MESA_overlay (draw counting)",
         {icd, layers, "VK_INSTANCE_LAYERS=VK_LAYER_MESA_overlay",
          "VK_LAYER_MESA_OVERLAY_CONFIG=draw=1,no_display=1", NULL}},
        {"tally, idle", {icd, layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters", NULL}},
        {"tally, per-draw CSV report",
         {icd, layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters", report, NULL}},
    };
    enum { CONFIGS = sizeof configs / sizeof configs[0] };
    static double record[CONFIGS][MAX_ROUNDS], frame[CONFIGS][MAX_ROUNDS],
        thread[CONFIGS][MAX_ROUNDS];
    char draws[16], frame_draws_text[16], submits[16];
    snprintf(draws, sizeof draws, "%d", RECORD_DRAWS);
    snprintf(frame_draws_text, sizeof frame_draws_text, "%d", FRAME_DRAWS);
    snprintf(submits, sizeof submits, "%d", FRAME_SUBMITS);
    const char *record_args[] = {"--record", draws, NULL};
    const char *frame_args[] = {"--frame", frame_draws_text, submits, NULL};
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < CONFIGS; i++) {
            record[i][r] = run_child(argv[0], record_args, configs[i].env, NULL);
            frame[i][r] = run_child(argv[0], frame_args, configs[i].env, &thread[i][r]);
        }
        fprintf(stderr, "bench_overhead: round %d of %d done\n", r + 1, rounds);
    }
    unlink(report + strlen("TALLY_OUTPUT="));
    double rec[CONFIGS], fr[CONFIGS], th[CONFIGS];
    for (int i = 0; i < CONFIGS; i++) {
        rec[i] = median_of_rounds(record[i], rounds);
        fr[i] = median_of_rounds(frame[i], rounds);
        th[i] = median_of_rounds(thread[i], rounds);
    }
    printf("driver: %s; CPU %d only; %d interleaved rounds, medians\n\n", icd, cpu, rounds);
    printf("### Recording: ns per vkCmdDraw (%d draws, median of %d recordings)\n\n", RECORD_DRAWS,
           RECORD_REPEATS);
    printf(
        "| configuration | ns per draw | over no layer | over pass-through |\n|---|---|---|---|\n");
    for (int i = 0; i < CONFIGS; i++)
        print_row(configs[i].name, rec[i], rec[0], rec[1]);
    printf("\n### Pre-recorded frame: CPU ns per submitted draw (%d draws, %d submissions, every "
           "thread)\n\n",
           FRAME_DRAWS, FRAME_SUBMITS);
    printf("| configuration | CPU ns per draw | over no layer | over pass-through |\n"
           "|---|---|---|---|\n");
    for (int i = 0; i < CONFIGS; i++)
        print_row(configs[i].name, fr[i], fr[0], fr[1]);
    printf("\n### Pre-recorded frame: the submitting thread's CPU ns per submitted draw\n\n");
    printf("| configuration | CPU ns per draw | over no layer | over pass-through |\n"
           "|---|---|---|---|\n");
    for (int i = 0; i < CONFIGS; i++)
        print_row(configs[i].name, th[i], th[0], th[1]);
    printf("\n");
    char paired_rounds[16];
    snprintf(paired_rounds, sizeof paired_rounds, "%d", 4 * rounds + 1);
    const char *paired_args[] = {"--record-paired", draws, paired_rounds, NULL};
    const char *paired_env[] = {icd, layers, NULL};
    if (run_child_printing(argv[0], paired_args, paired_env) != 0)
        printf("### Recording, paired in one process: failed\n\n");
    const char *frame_paired_args[] = {"--frame-paired", frame_draws_text, submits, paired_rounds,
                                       NULL};
    if (run_child_printing(argv[0], frame_paired_args, paired_env) != 0)
        printf("### Pre-recorded frame, paired in one process: failed\n");
    return 0;
}
