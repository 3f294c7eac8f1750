/*
 * What the layer costs, on lavapipe, all in one run:
 *  - recording cost per vkCmdDraw with no layer, a minimal pass-through
 *    layer, VK_LAYER_MESA_overlay, tally idle and tally writing a report;
 *  - gfxrecon-replay frames per second of a vkcube capture without and with
 *    the tally report (under Xvfb);
 *  - peak memory of a program that records and submits one million draws,
 *    with and without the report.
 * Each configuration runs in a child process of this program, since layers
 * are chosen when the loader creates the instance. Prints a markdown table.
 *
 * Usage: bench_layer                     the whole table
 *        bench_layer --backends          only the recording cost, of no layer, the
 *                                        pass-through layer and tally on simgpu and on
 *                                        the driver backend, idle and reporting, in
 *                                        BENCH_ROUNDS (7) interleaved rounds; the driver
 *                                        is lavapipe unless BENCH_VK_DRIVER_FILES names
 *                                        another
 * A configuration that could not be measured (no driver, a run that failed)
 * is said as such, never as a figure, and the exit status is 1.
 *        bench_layer --record N          (child) ns per recorded vkCmdDraw
 *        bench_layer --submit N          (child) records and submits N draws, prints peak RSS
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vk_context.h"

enum { BATCH = 1000, RECORD_REPEATS = 25, RECORD_DRAWS = 20000 };

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void begin_pass(vk_context *c, VkCommandBuffer cb)
{
    vk_context_begin_render_pass(c, cb, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, c->triangle);
}

/* Records `draws` draws into cb (begun), timing only the draw calls. */
static uint64_t record_draws(vk_context *c, VkCommandBuffer cb, uint32_t draws)
{
    begin_pass(c, cb);
    uint64_t start = now_ns();
    for (uint32_t i = 0; i < draws; i++)
        vkCmdDraw(cb, 3, 1, 0, 0);
    uint64_t elapsed = now_ns() - start;
    vkCmdEndRenderPass(cb);
    return elapsed;
}

/* One command buffer re-recorded, as programs do every frame: each layer's
 * steady state, not its first-use allocations. */
static int child_record(uint32_t draws)
{
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options))
        return 1;
    VkCommandBuffer cb = vk_context_begin(&c);
    double best = 1e30;
    for (int r = 0; r < RECORD_REPEATS; r++) {
        if (r > 0) {
            VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            vkBeginCommandBuffer(cb, &begin);
        }
        double ns = (double)record_draws(&c, cb, draws) / draws;
        best = ns < best ? ns : best;
        vkEndCommandBuffer(cb);
    }
    vk_context_submit(&c, cb, UINT32_MAX);
    vkFreeCommandBuffers(c.device, c.pool, 1, &cb);
    printf("%.1f\n", best);
    vk_context_destroy(&c);
    return 0;
}

static int child_submit(uint32_t draws)
{
    vk_context c;
    vk_context_options options = {.keep_environment = true};
    if (!vk_context_create(&c, &options))
        return 1;
    VkCommandBuffer cb = vk_context_begin(&c);
    record_draws(&c, cb, BATCH);
    vkEndCommandBuffer(cb);
    for (uint32_t done = 0; done < draws; done += BATCH)
        vk_context_submit(&c, cb, UINT32_MAX);
    vkFreeCommandBuffers(c.device, c.pool, 1, &cb);
    vk_context_destroy(&c);
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("%ld\n", usage.ru_maxrss);
    return 0;
}

typedef struct config {
    const char *name;
    const char *env[7];
} config;

static char tally_layers[4096], passthrough_layers[4096];
static const char *const ICD = "VK_DRIVER_FILES=" TALLY_LAVAPIPE_ICD;

/* Runs a command with extra environment; returns its first output line as a number. */
static double run_child(const char *const *argv, const char *const *env, char *line, size_t size)
{
    int pipe_fd[2];
    if (pipe(pipe_fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(pipe_fd[0]);
        dup2(pipe_fd[1], STDOUT_FILENO);
        for (const char *const *e = env; e && *e; e++)
            putenv((char *)*e);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pipe_fd[1]);
    FILE *out = fdopen(pipe_fd[0], "r");
    char buffer[4096] = "";
    double value = -1;
    while (fgets(buffer, sizeof(buffer), out)) {
        if (line && strstr(buffer, line)) {
            const char *at = strstr(buffer, line) + strlen(line);
            value = atof(at);
        } else if (!line && value < 0) {
            value = atof(buffer);
        }
    }
    fclose(out);
    int status;
    waitpid(pid, &status, 0);
    (void)size;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? value : -1;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A configuration's figure, or that it could not be measured: a failed
 * run (its child exited with an error, or printed nothing) is never shown
 * as a number. */
static void print_row(const char *name, double ns, double base)
{
    if (ns < 0)
        printf("| %s | not measured (the run failed) | |\n", name);
    else if (base <= 0)
        printf("| %s | %.1f | |\n", name, ns);
    else
        printf("| %s | %.1f | %.2fx |\n", name, ns, ns / base);
}

/* The median of a configuration's rounds; -1 (a failure) if any round failed. */
static double median_of_rounds(double *rounds, int count)
{
    for (int k = 0; k < count; k++)
        if (rounds[k] < 0)
            return -1;
    qsort(rounds, (size_t)count, sizeof(double), compare_double);
    return rounds[count / 2];
}

/* The Vulkan driver the figures are of must be there to measure anything. */
static bool driver_present(const char *files)
{
    if (access(files, R_OK) == 0)
        return true;
    fprintf(stderr,
            "bench_layer: no Vulkan driver manifest at %s: nothing can be measured (lavapipe is "
            "Debian's mesa-vulkan-drivers; BENCH_VK_DRIVER_FILES names another driver's)\n",
            files);
    return false;
}

/* The recording cost of tally's two backends (the driver backend at each
 * TALLY_GRANULARITY) beside no layer, in interleaved rounds (each
 * configuration once per round), medians. Exits 1, after saying which, if
 * a configuration could not be measured. */
static int backends_table(const char *self)
{
    static char icd[1024];
    const char *files = getenv("BENCH_VK_DRIVER_FILES");
    files = files ? files : TALLY_LAVAPIPE_ICD;
    if (!driver_present(files))
        return 1;
    snprintf(icd, sizeof(icd), "VK_DRIVER_FILES=%s", files);
    const char *layer = "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters";
    const char *report = "TALLY_OUTPUT=/tmp/tally_bench_report.csv";
    const char *render_pass = "TALLY_GRANULARITY=render-pass";
    const char *command_buffer = "TALLY_GRANULARITY=command-buffer";
    const config configs[] = {
        {"no layer", {icd, NULL}},
        {"pass-through layer",
         {icd, passthrough_layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_passthrough", NULL}},
        {"tally simgpu, idle", {icd, tally_layers, layer, "TALLY_BACKEND=simgpu", NULL}},
        {"tally simgpu, per-draw report",
         {icd, tally_layers, layer, "TALLY_BACKEND=simgpu", report, NULL}},
        {"tally driver, idle", {icd, tally_layers, layer, "TALLY_BACKEND=driver", NULL}},
        {"tally driver, per-draw report",
         {icd, tally_layers, layer, "TALLY_BACKEND=driver", report, NULL}},
        /* TALLY_GRANULARITY: one measurement around the render pass of draws. */
        {"tally driver per render pass, idle",
         {icd, tally_layers, layer, "TALLY_BACKEND=driver", render_pass, NULL}},
        {"tally driver per render pass, per-draw report",
         {icd, tally_layers, layer, "TALLY_BACKEND=driver", render_pass, report}},
        {"tally driver per command buffer, idle",
         {icd, tally_layers, layer, "TALLY_BACKEND=driver", command_buffer, NULL}},
        {"tally driver per command buffer, per-draw report",
         {icd, tally_layers, layer, "TALLY_BACKEND=driver", command_buffer, report}},
    };
    enum { CONFIGS = sizeof(configs) / sizeof(configs[0]), MAX_ROUNDS = 63 };
    /* BENCH_ROUNDS (default 7, odd) where the driver's own figures vary more. */
    const char *rounds_env = getenv("BENCH_ROUNDS");
    int ROUNDS = rounds_env ? atoi(rounds_env) | 1 : 7;
    ROUNDS = ROUNDS < 1 ? 1 : ROUNDS > MAX_ROUNDS ? MAX_ROUNDS : ROUNDS;
    double r[CONFIGS][MAX_ROUNDS];
    const char *args[] = {self, "--record", "20000", NULL};
    for (int k = 0; k < ROUNDS; k++)
        for (int i = 0; i < CONFIGS; i++)
            r[i][k] = run_child(args, configs[i].env, NULL, 0);
    printf("## Recording cost per vkCmdDraw by backend (%s; best of %d x %d draws per run, "
           "median of %d interleaved runs)\n\n",
           files, RECORD_REPEATS, RECORD_DRAWS, ROUNDS);
    printf("| configuration | ns per draw | vs no layer |\n|---|---|---|\n");
    double base = -1;
    int failed = 0;
    for (int i = 0; i < CONFIGS; i++) {
        double ns = median_of_rounds(r[i], ROUNDS);
        if (i == 0)
            base = ns;
        failed += ns < 0;
        print_row(configs[i].name, ns, base);
    }
    unlink("/tmp/tally_bench_report.csv");
    if (failed)
        fprintf(stderr,
                "bench_layer: %d of %d configurations could not be measured on %s (a run "
                "exited with an error; run one by hand: bench_layer --record 20000)\n",
                failed, CONFIGS, files);
    return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--record") == 0)
        return child_record((uint32_t)atoi(argv[2]));
    if (argc == 3 && strcmp(argv[1], "--submit") == 0)
        return child_submit((uint32_t)atoi(argv[2]));
    /* lavapipe allocates every recorded command with malloc: whether glibc
     * trims and re-grows its heap between recordings (which depends on what
     * else the process loaded) would otherwise dominate the figures. One
     * allocator setting for every configuration measures the layers. */
    setenv("GLIBC_TUNABLES",
           "glibc.malloc.trim_threshold=1073741824:glibc.malloc.top_pad=67108864:"
           "glibc.malloc.mmap_threshold=1073741824",
           1);
    snprintf(tally_layers, sizeof(tally_layers),
             "VK_ADD_LAYER_PATH=%s/share/vulkan/explicit_layer.d:%s", TALLY_BUILD_DIR,
             PASSTHROUGH_DIR);
    snprintf(passthrough_layers, sizeof(passthrough_layers), "%s", tally_layers);
    if (argc == 2 && strcmp(argv[1], "--backends") == 0)
        return backends_table(argv[0]);
    if (!driver_present(ICD + strlen("VK_DRIVER_FILES=")))
        return 1;
    const char *report = "TALLY_OUTPUT=/tmp/tally_bench_report.csv";
    const config configs[] = {
        {"no layer", {ICD, NULL}},
        {"pass-through layer",
         {ICD, passthrough_layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_passthrough", NULL}},
        {"VK_LAYER_MESA_overlay (draw counting)",
         {ICD, "VK_INSTANCE_LAYERS=VK_LAYER_MESA_overlay",
          "VK_LAYER_MESA_OVERLAY_CONFIG=draw=1,no_display=1", NULL}},
        {"tally, idle", {ICD, tally_layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters", NULL}},
        {"tally, per-draw report",
         {ICD, tally_layers, "VK_INSTANCE_LAYERS=VK_LAYER_TALLY_counters", report, NULL}},
    };
    enum { CONFIGS = sizeof(configs) / sizeof(configs[0]) };
    printf(
        "## Recording cost per vkCmdDraw (lavapipe, best of %d x %d draws, median of 3 runs)\n\n",
        RECORD_REPEATS, RECORD_DRAWS);
    printf("| configuration | ns per draw | vs pass-through |\n|---|---|---|\n");
    double ns[CONFIGS];
    for (int i = 0; i < CONFIGS; i++) {
        const char *args[] = {argv[0], "--record", "20000", NULL};
        double r[3];
        for (int k = 0; k < 3; k++)
            r[k] = run_child(args, configs[i].env, NULL, 0);
        ns[i] = median_of_rounds(r, 3);
    }
    int failed = 0;
    for (int i = 0; i < CONFIGS; i++) {
        print_row(configs[i].name, ns[i], ns[1]);
        failed += ns[i] < 0;
    }
    fflush(stdout);

    printf("\n## gfxrecon-replay of a 1000-frame vkcube capture (Xvfb, median of 5 interleaved "
           "runs)\n\n");
    const char *capture = "/tmp/tally_bench_vkcube.gfxr";
    const char *capture_env[] = {ICD, "GFXRECON_CAPTURE_FILE=/tmp/tally_bench_vkcube.gfxr",
                                 "GFXRECON_CAPTURE_FILE_TIMESTAMP=false",
                                 "VK_INSTANCE_LAYERS=VK_LAYER_LUNARG_gfxreconstruct", NULL};
    const char *cube[] = {"xvfb-run", "-a", "vkcube", "--c", "1000", NULL};
    run_child(cube, capture_env, NULL, 0);
    const char *replay[] = {"xvfb-run", "-a", "gfxrecon-replay", capture, NULL};
    const int replay_configs[] = {0, 3, 4};
    double fps[3];
    printf("| configuration | replay fps | vs no layer |\n|---|---|---|\n");
    /* Interleaved, round after round: a machine that speeds up or slows
     * down during the runs then weighs on every configuration alike. */
    double r[3][5];
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < 3; i++)
            r[i][k] = run_child(replay, configs[replay_configs[i]].env, "Replay FPS: ", 0);
    for (int i = 0; i < 3; i++) {
        fps[i] = median_of_rounds(r[i], 5);
        failed += fps[i] < 0;
        if (fps[i] < 0)
            printf("| %s | not measured (the run failed) | |\n", configs[replay_configs[i]].name);
        else
            printf("| %s | %.1f | %.3f |\n", configs[replay_configs[i]].name, fps[i],
                   fps[0] > 0 ? fps[i] / fps[0] : 0.0);
    }
    unlink(capture);
    fflush(stdout);

    printf("\n## Peak resident memory recording and submitting draws (1000 per submission)\n\n");
    printf("| configuration | 100 000 draws | 1 000 000 draws |\n|---|---|---|\n");
    for (int i = 3; i < 5; i++) {
        const char *small[] = {argv[0], "--submit", "100000", NULL};
        const char *large[] = {argv[0], "--submit", "1000000", NULL};
        double a = run_child(small, configs[i].env, NULL, 0);
        double b = run_child(large, configs[i].env, NULL, 0);
        failed += (a < 0) + (b < 0);
        if (a < 0 || b < 0)
            printf("| %s | not measured (the run failed) | |\n", configs[i].name);
        else
            printf("| %s | %.0f KiB | %.0f KiB |\n", configs[i].name, a, b);
    }
    unlink("/tmp/tally_bench_report.csv");
    if (failed)
        fprintf(stderr, "bench_layer: %d measurements failed (rows \"not measured\")\n", failed);
    return failed ? 1 : 0;
}
