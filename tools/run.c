/*
 * tally run: runs a program with every front door of tally active (the Vulkan
 * layer explicitly, the GL, EGL and CL shims preloaded, libigdmd.so on the
 * library path for MDAPI tools), with nothing installed system-wide, then
 * says where the reports went.
 *
 * Everything is passed through the environment the front doors already read,
 * so `tally run` is exactly what a user could type by hand; the paths come
 * from where this binary lives, which makes the build tree and any install
 * prefix work alike.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tally/tally.h>

#include "run_checks.h"
#include "run_outputs.h"
#include "tally_cli.h"

#define LAYER_NAME "VK_LAYER_TALLY_counters"

static const char *const shim_names[] = {"libtally_gl.so", "libtally_egl.so", "libtally_cl.so"};
enum { SHIM_GL, SHIM_EGL, SHIM_CL, SHIM_COUNT };

struct run_options {
    const char *output, *trace, *counters, *sample, *sample_set, *sample_output;
    char *checked_counters; /* -c's names (or TALLY_COUNTERS's), checked, each once */
    const char *backend, *profile, *clock, *granularity;
    const char *frames, *delay, *duration, *trigger; /* the capture window */
    bool implicit_layer;
    bool skip_vulkan;
    bool skip_shim[SHIM_COUNT];
    bool skip_md;
    bool quiet;
};

static void usage(FILE *out)
{
    fputs("usage: tally run [OPTIONS] [--] PROGRAM [ARGS...]\n"
          "\n"
          "Runs PROGRAM with tally's Vulkan layer and GL, EGL and CL shims active,\n"
          "and tally's libigdmd.so first on the library path (for MDAPI tools).\n"
          "\n"
          "  -o, --output FILE         per-command report (.json: JSON, else CSV), one per\n"
          "                            process (%p in FILE: the process id)\n"
          "  -t, --trace FILE          timeline: Perfetto's protobuf for .perfetto-trace or\n"
          "                            .pftrace, else Chrome trace-event JSON\n"
          "  -c, --counters LIST       counters the report carries (symbols separated by\n"
          "                            commas, or all; tally list --backend NAME shows them)\n"
          "  -s, --sample INTERVAL     sample a metric set every INTERVAL (100us, 1ms, 2s)\n"
          "      --set NAME            the metric set to sample (default: the first;\n"
          "                            tally list --sets); with -s only\n"
          "      --sample-output FILE  where samples go (default tally-samples.csv); with -s\n"
          "      --backend NAME        simgpu (default) or driver\n"
          "      --profile FILE        device profile replacing simgpu's parameters\n"
          "      --clock MODE          realtime (default) or virtual\n"
          "      --granularity LEVEL   Vulkan under the driver backend: what one GPU\n"
          "                            measurement brackets: command (default: each draw\n"
          "                            and dispatch), render-pass (each subpass, each run\n"
          "                            of dispatches) or command-buffer (as few as Vulkan\n"
          "                            allows); GL and OpenCL measure each command\n"
          "      --frames A-B          report only frames A to B (from 0, inclusive; A-: from\n"
          "                            A on)\n"
          "      --delay TIME          report only what is submitted TIME (2s, 500ms) after\n"
          "                            the program's first API use\n"
          "      --duration TIME       ... and for TIME from then\n"
          "      --trigger SIGNAL|FILE report only while capture is on: SIGUSR1 or SIGUSR2\n"
          "                            toggles it (kill -USR1 PID), an absolute FILE turns\n"
          "                            it on while the file exists (touch, rm)\n"
          "      --implicit            activate the layer through its implicit manifest\n"
          "      --no-vulkan, --no-gl, --no-egl, --no-cl, --no-md\n"
          "                            leave that front door out\n"
          "  -q, --quiet               do not say where the reports went, nor, without\n"
          "                            -o, -t and -s, how many commands were seen\n"
          "  -h, --help                this text\n"
          "\n"
          "Every option is checked before PROGRAM starts: a bad one exits with 2.\n",
          out);
}

/* The directory holding the directory of this executable: build/ or the
 * install prefix. */
static bool find_prefix(char *prefix, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    for (int level = 0; level < 2; level++) {
        char *slash = strrchr(exe, '/');
        if (!slash)
            return false;
        *slash = '\0';
    }
    return snprintf(prefix, size, "%s", exe[0] ? exe : "/") < (int)size;
}

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The front doors are found in <prefix>/<libdir> as installed, or in
 * <prefix>/lib as in the build tree. */
static bool find_library(const char *prefix, const char *name, char *path, size_t size)
{
    const char *const libdirs[] = {TALLY_INSTALL_LIBDIR, "lib"};
    for (size_t i = 0; i < sizeof(libdirs) / sizeof(libdirs[0]); i++) {
        if (snprintf(path, size, "%s/%s/%s", prefix, libdirs[i], name) < (int)size && is_file(path))
            return true;
    }
    return false;
}

/* VAR=value:old, or VAR=old:value; an empty old value is not kept. */
static int add_to_list(const char *var, const char *value, bool in_front)
{
    const char *old = getenv(var);
    if (!old || !*old)
        return setenv(var, value, 1);
    size_t size = strlen(old) + strlen(value) + 2;
    char *joined = malloc(size);
    if (!joined)
        return -1;
    snprintf(joined, size, "%s:%s", in_front ? value : old, in_front ? old : value);
    int r = setenv(var, joined, 1);
    free(joined);
    return r;
}

/* Report paths are made absolute, so a program that changes directory
 * still writes where the user asked. */
/* path, or the environment's own var when path is NULL, made absolute: the
 * program may change its directory before it opens the file. */
static int set_path_var(const char *var, const char *path)
{
    path = path ? path : getenv(var);
    if (!path || !path[0])
        return 0;
    if (path[0] == '/')
        return setenv(var, path, 1);
    char cwd[PATH_MAX], absolute[2 * PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        return -1;
    snprintf(absolute, sizeof(absolute), "%s/%s", cwd, path);
    return setenv(var, absolute, 1);
}

static int set_var(const char *var, const char *value)
{
    return value ? setenv(var, value, 1) : 0;
}

static int activate_vulkan(const struct run_options *o, const char *prefix)
{
    char dir[PATH_MAX + 64];
    const char *kind = o->implicit_layer ? "implicit" : "explicit";
    snprintf(dir, sizeof(dir), "%s/share/vulkan/%s_layer.d", prefix, kind);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0; /* built without the layer */
    if (!o->implicit_layer) {
        /* First in the list: closest to the program, as the implicit
         * manifest would place it. */
        if (add_to_list("VK_ADD_LAYER_PATH", dir, true) ||
            add_to_list("VK_INSTANCE_LAYERS", LAYER_NAME, true))
            return -1;
        return 0;
    }
    /* The loader on Debian 12 ignores VK_ADD_IMPLICIT_LAYER_PATH; it finds
     * implicit manifests through XDG_DATA_DIRS (default /usr/local/share:/usr/share). */
    char share[PATH_MAX + 16];
    snprintf(share, sizeof(share), "%s/share", prefix);
    if (!getenv("XDG_DATA_DIRS") && setenv("XDG_DATA_DIRS", "/usr/local/share:/usr/share", 1))
        return -1;
    if (add_to_list("XDG_DATA_DIRS", share, true) || setenv("TALLY", "1", 1))
        return -1;
    return 0;
}

/* The GL and EGL shims are preloaded. The OpenCL shim goes in as the ICD
 * loader's layer (OPENCL_LAYERS) instead: every call reaches the driver
 * through the loader, also from a program that dlopens libOpenCL and calls
 * through its own handle, which a preloaded shim never sees (Intel's
 * cliloader does; issue 35, item 20). */
static int preload_shims(const struct run_options *o, const char *prefix)
{
    for (int i = 0; i < SHIM_COUNT; i++) {
        char path[PATH_MAX + 64];
        if (o->skip_shim[i] || !find_library(prefix, shim_names[i], path, sizeof(path)))
            continue;
        /* After what the user preloads: a sanitizer runtime must stay first. */
        if (add_to_list(i == SHIM_CL ? "OPENCL_LAYERS" : "LD_PRELOAD", path, false))
            return -1;
    }
    return 0;
}

/* MDAPI tools dlopen Intel's library by name (libigdmd.so or .so.1): the
 * folder of tally's goes in front of the loader's search path, so they find
 * it before any installed one. */
static int expose_igdmd(const char *prefix)
{
    char path[PATH_MAX + 64];
    if (!find_library(prefix, "libigdmd.so.1", path, sizeof(path)))
        return 0; /* built without it */
    *strrchr(path, '/') = '\0';
    return add_to_list("LD_LIBRARY_PATH", path, true);
}

static bool set_and_not_empty(const char *var)
{
    const char *value = getenv(var);
    return value && *value;
}

/* With no file asked for, each process that used a front door says at its
 * end how many commands each door saw and how to get a report (the
 * library's engine/run_note.c), so that a run is never silent; -q keeps it
 * quiet. */
static int ask_for_the_note(const struct run_options *o)
{
    bool files = set_and_not_empty("TALLY_OUTPUT") || set_and_not_empty("TALLY_TRACE") ||
                 set_and_not_empty("TALLY_SAMPLE");
    return o->quiet || files ? unsetenv("TALLY_RUN_NOTE") : setenv("TALLY_RUN_NOTE", "1", 1);
}

/* A trigger that is no signal's name is a file; tally run makes it
 * absolute, as the library asks. */
static bool trigger_is_file(const char *trigger)
{
    return trigger && strncmp(trigger, "SIG", 3) != 0 && strncmp(trigger, "USR", 3) != 0;
}

static int set_trigger(const char *trigger)
{
    if (trigger_is_file(trigger))
        return set_path_var("TALLY_CAPTURE_TRIGGER", trigger);
    return set_var("TALLY_CAPTURE_TRIGGER", trigger);
}

static int prepare_environment(const struct run_options *o, const char *prefix)
{
    if (set_path_var("TALLY_OUTPUT", o->output) || set_path_var("TALLY_TRACE", o->trace) ||
        set_var("TALLY_COUNTERS", o->checked_counters) || set_var("TALLY_BACKEND", o->backend) ||
        set_path_var("TALLY_PROFILE", o->profile) || set_var("TALLY_CLOCK", o->clock) ||
        set_var("TALLY_GRANULARITY", o->granularity) ||
        set_var("TALLY_CAPTURE_FRAMES", o->frames) || set_var("TALLY_CAPTURE_DELAY", o->delay) ||
        set_var("TALLY_CAPTURE_DURATION", o->duration) || set_trigger(o->trigger))
        return -1;
    if (o->sample) {
        const char *samples = o->sample_output ? o->sample_output : "tally-samples.csv";
        if (setenv("TALLY_SAMPLE", o->sample, 1) || set_var("TALLY_SAMPLE_SET", o->sample_set) ||
            set_path_var("TALLY_SAMPLE_OUTPUT", samples))
            return -1;
    }
    if (ask_for_the_note(o))
        return -1;
    if (!o->skip_vulkan && activate_vulkan(o, prefix))
        return -1;
    if (!o->skip_md && expose_igdmd(prefix))
        return -1;
    return preload_shims(o, prefix);
}

/* The program's exit status, or 128 + the signal that ended it (in
 * *killed_by; 0 when it exited), as a shell says it. */
static int run_program(char **argv, int *killed_by)
{
    /* As system(3) does: an interrupt at the terminal is the program's to
     * handle; tally waits for it either way. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        execvp(argv[0], argv);
        fprintf(stderr, "tally run: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    if (pid < 0) {
        fprintf(stderr, "tally run: cannot start a process: %s\n", strerror(errno));
        status = -1;
    } else {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    *killed_by = 0;
    if (status < 0)
        return 127;
    if (WIFSIGNALED(status)) {
        *killed_by = WTERMSIG(status);
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}

/* Refuses, before the program runs, a report path that can never be
 * written: a directory. */
static bool check_destination(const char *option, const char *path)
{
    struct stat st;
    if (path && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "tally run: %s %s is a directory; give a file name\n", option, path);
        return false;
    }
    return true;
}

/* What the front doors will read: the option's value, else the
 * environment's; and the name to say it by. */
struct setting {
    const char *value, *name;
};

static struct setting setting_of(const char *option_value, const char *option, const char *var)
{
    if (option_value)
        return (struct setting){option_value, option};
    return (struct setting){getenv(var), var};
}

static bool sampling_options_usable(const struct run_options *o, const char *backend)
{
    if (!o->sample && (o->sample_set || o->sample_output)) {
        fprintf(stderr, "tally run: %s: only with -s INTERVAL, which samples\n",
                o->sample_set ? "--set" : "--sample-output");
        return false;
    }
    struct setting interval = setting_of(o->sample, "-s", "TALLY_SAMPLE");
    if (!interval.value || !*interval.value)
        return true;
    struct setting set = setting_of(o->sample_set, "--set", "TALLY_SAMPLE_SET");
    return run_check_interval(interval.name, interval.value) &&
           run_check_metric_set(set.name, backend, set.value);
}

/*
 * Every value the front doors will read, checked before the program starts
 * (options, and what the environment already holds for those not given),
 * as the library will read it; false after saying what is wrong. The
 * counter list is kept checked, each name once.
 */
/* The capture window, by the library's own parser; the message names the
 * option the user gave rather than the variable. */
static bool capture_usable(const struct run_options *o)
{
    static const struct {
        const char *option, *variable;
    } names[] = {{"--frames", "TALLY_CAPTURE_FRAMES"},
                 {"--delay", "TALLY_CAPTURE_DELAY"},
                 {"--duration", "TALLY_CAPTURE_DURATION"},
                 {"--trigger", "TALLY_CAPTURE_TRIGGER"}};
    /* A relative file is made absolute before the program runs. */
    const char *trigger = trigger_is_file(o->trigger) ? "/any-file" : o->trigger;
    tally_device_options window = {.capture_frames = o->frames,
                                   .capture_delay = o->delay,
                                   .capture_duration = o->duration,
                                   .capture_trigger = trigger};
    char error[256];
    if (tally_capture_options_valid(&window, error, sizeof error))
        return true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i].variable);
        if (strncmp(error, names[i].variable, n) == 0) {
            fprintf(stderr, "tally run: %s%s\n", names[i].option, error + n);
            return false;
        }
    }
    fprintf(stderr, "tally run: %s\n", error);
    return false;
}

static bool options_usable(struct run_options *o)
{
    static const char *const clocks[] = {"realtime", "virtual"};
    static const char *const granularities[] = {"command", "render-pass", "command-buffer"};
    struct setting backend = setting_of(o->backend, "--backend", "TALLY_BACKEND");
    struct setting profile = setting_of(o->profile, "--profile", "TALLY_PROFILE");
    struct setting clock = setting_of(o->clock, "--clock", "TALLY_CLOCK");
    struct setting granularity = setting_of(o->granularity, "--granularity", "TALLY_GRANULARITY");
    struct setting counters = setting_of(o->counters, "-c", "TALLY_COUNTERS");
    if (!run_check_backend(backend.name, backend.value) ||
        !run_check_profile(profile.name, backend.value, profile.value) ||
        !run_check_choice(clock.name, clock.value, "clock mode", clocks, 2) ||
        !run_check_choice(granularity.name, granularity.value, "granularity", granularities, 3) ||
        !sampling_options_usable(o, backend.value) || !capture_usable(o))
        return false;
    if (!counters.value || (!o->counters && !*counters.value))
        return true; /* an empty variable is unset, as the library reads it */
    o->checked_counters = run_check_counters(counters.name, backend.value, counters.value);
    return o->checked_counters != NULL;
}

enum {
    OPT_SET = 256,
    OPT_SAMPLE_OUTPUT,
    OPT_BACKEND,
    OPT_PROFILE,
    OPT_CLOCK,
    OPT_IMPLICIT,
    OPT_NO_VULKAN,
    OPT_NO_GL,
    OPT_NO_EGL,
    OPT_NO_CL,
    OPT_NO_MD,
    OPT_GRANULARITY,
    OPT_FRAMES,
    OPT_DELAY,
    OPT_DURATION,
    OPT_TRIGGER,
    OPT_HELP
};

static const struct option long_options[] = {
    {"output", required_argument, NULL, 'o'},
    {"trace", required_argument, NULL, 't'},
    {"counters", required_argument, NULL, 'c'},
    {"sample", required_argument, NULL, 's'},
    {"set", required_argument, NULL, OPT_SET},
    {"sample-output", required_argument, NULL, OPT_SAMPLE_OUTPUT},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"clock", required_argument, NULL, OPT_CLOCK},
    {"granularity", required_argument, NULL, OPT_GRANULARITY},
    {"frames", required_argument, NULL, OPT_FRAMES},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"trigger", required_argument, NULL, OPT_TRIGGER},
    {"implicit", no_argument, NULL, OPT_IMPLICIT},
    {"no-vulkan", no_argument, NULL, OPT_NO_VULKAN},
    {"no-gl", no_argument, NULL, OPT_NO_GL},
    {"no-egl", no_argument, NULL, OPT_NO_EGL},
    {"no-cl", no_argument, NULL, OPT_NO_CL},
    {"no-md", no_argument, NULL, OPT_NO_MD},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

/* Returns -1 to go on, or the exit status. */
static int parse_option(int opt, struct run_options *o)
{
    switch (opt) {
    case 'o': o->output = optarg; break;
    case 't': o->trace = optarg; break;
    case 'c': o->counters = optarg; break;
    case 's': o->sample = optarg; break;
    case 'q': o->quiet = true; break;
    case OPT_SET: o->sample_set = optarg; break;
    case OPT_SAMPLE_OUTPUT: o->sample_output = optarg; break;
    case OPT_BACKEND: o->backend = optarg; break;
    case OPT_PROFILE: o->profile = optarg; break;
    case OPT_GRANULARITY: o->granularity = optarg; break;
    case OPT_CLOCK: o->clock = optarg; break;
    case OPT_FRAMES: o->frames = optarg; break;
    case OPT_DELAY: o->delay = optarg; break;
    case OPT_DURATION: o->duration = optarg; break;
    case OPT_TRIGGER: o->trigger = optarg; break;
    case OPT_IMPLICIT: o->implicit_layer = true; break;
    case OPT_NO_VULKAN: o->skip_vulkan = true; break;
    case OPT_NO_GL: o->skip_shim[SHIM_GL] = true; break;
    case OPT_NO_EGL: o->skip_shim[SHIM_EGL] = true; break;
    case OPT_NO_CL: o->skip_shim[SHIM_CL] = true; break;
    case OPT_NO_MD: o->skip_md = true; break;
    case 'h':
    case OPT_HELP: usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    return -1;
}

/* Destinations that can never be written, refused before the program runs. */
static bool destinations_usable(const struct run_options *o)
{
    if (!check_destination("--output", o->output) || !check_destination("--trace", o->trace) ||
        !check_destination("--sample-output", o->sample_output))
        return false;
    if (o->output && o->trace && tally_output_same_file(o->output, o->trace)) {
        fprintf(stderr,
                "tally run: --output and --trace name the same file, %s; give each its "
                "own\n",
                o->trace);
        return false;
    }
    return true;
}

/* Sets up the environment and the outputs, runs the program and says where
 * its files went; the program's status, or 2. */
static int run_checked(const struct run_options *o, char **program)
{
    char prefix[PATH_MAX];
    if (!find_prefix(prefix, sizeof(prefix))) {
        fputs("tally run: cannot tell where tally is installed\n", stderr);
        return 2;
    }
    if (prepare_environment(o, prefix)) {
        fprintf(stderr, "tally run: cannot set up the environment: %s\n", strerror(errno));
        return 2;
    }
    struct run_output outputs[3];
    static const char *const vars[3] = {"TALLY_OUTPUT", "TALLY_TRACE", "TALLY_SAMPLE_OUTPUT"};
    static const char *const whats[3] = {"per-command report", "trace", "sample file"};
    for (int i = 0; i < 3; i++) {
        const char *path = i < 2 || o->sample ? getenv(vars[i]) : NULL;
        if (path && !*path)
            path = NULL; /* set but empty, as the library reads it: none */
        if (!run_output_prepare(&outputs[i], vars[i], whats[i], path)) {
            fprintf(stderr, "tally run: cannot set up %s: %s\n", vars[i], strerror(errno));
            return 2;
        }
    }
    int killed_by = 0;
    int status = run_program(program, &killed_by);
    if (killed_by && !o->quiet)
        fprintf(stderr, "tally run: %s was ended by SIG%s\n", program[0],
                sigabbrev_np(killed_by) ? sigabbrev_np(killed_by) : "?");
    for (int i = 0; i < 3; i++)
        run_output_finish(&outputs[i], i == 0, o->quiet, killed_by);
    /* Ended by an interrupt, tally run ends by it too, so that a script
     * running it stops as it would for the program itself. */
    if (killed_by == SIGINT) {
        signal(killed_by, SIG_DFL);
        raise(killed_by);
    }
    return status;
}

int tally_cli_run(int argc, char **argv)
{
    struct run_options o = {0};
    int opt;
    optind = 1;
    argv[0] = "tally run"; /* how getopt's messages name us */
    /* "+": options end at the program's name, so its own options are its. */
    while ((opt = getopt_long(argc, argv, "+o:t:c:s:qh", long_options, NULL)) != -1) {
        int status = parse_option(opt, &o);
        if (status >= 0)
            return status;
    }
    if (optind >= argc) {
        fputs("tally run: no program given\n", stderr);
        usage(stderr);
        return 2;
    }
    int status = options_usable(&o) && destinations_usable(&o) ? run_checked(&o, argv + optind) : 2;
    free(o.checked_counters);
    return status;
}
