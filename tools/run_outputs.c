/*
 * Owns the files of one `tally run`: every process of the run writes its
 * own (the front doors read "%p" in a path as their process id), and
 * afterwards each is said with its rows, or, for a run of one process,
 * given the name the user asked for.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <tally/tally.h>

#include "run_outputs.h"

/* A regular file, or none yet: one a process makes for itself. A device or
 * FIFO (/dev/stdout, a pipe) is shared by every process, as a shell
 * redirection would share it. */
static bool per_process(const char *path)
{
    struct stat st;
    return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/* "r.csv" -> "r.%p.csv", "trace" -> "trace.%p": the process id before the
 * extension, so the file keeps its type. */
static bool pattern_of(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    const char *dot = strrchr(base ? base + 1 : path, '.');
    if (!dot || dot == (base ? base + 1 : path))
        dot = path + strlen(path);
    int n = snprintf(out, size, "%.*s.%%p%s", (int)(dot - path), path, dot);
    return n > 0 && (size_t)n < size;
}

bool run_output_prepare(struct run_output *o, const char *var, const char *what, const char *path)
{
    *o = (struct run_output){.var = var, .what = what, .asked = path};
    /* the clock file times are taken from, so that a file made after this
     * moment never has an earlier time */
    clock_gettime(CLOCK_REALTIME_COARSE, &o->start);
    if (!path)
        return true;
    if (strstr(path, "%p") || !per_process(path)) {
        snprintf(o->pattern, sizeof o->pattern, "%s", path);
        o->renamed_when_alone = false;
    } else {
        if (!pattern_of(path, o->pattern, sizeof o->pattern))
            return false;
        o->renamed_when_alone = true;
    }
    return setenv(var, o->pattern, 1) == 0;
}

/* Whether name, in the pattern's folder, is the pattern with digits for
 * its one "%p". */
static bool matches(const char *pattern_base, const char *name)
{
    const char *mark = strstr(pattern_base, "%p");
    size_t head = (size_t)(mark - pattern_base), tail = strlen(mark + 2);
    size_t n = strlen(name);
    if (n <= head + tail || strncmp(name, pattern_base, head) != 0 ||
        strcmp(name + n - tail, mark + 2) != 0)
        return false;
    for (size_t i = head; i < n - tail; i++)
        if (name[i] < '0' || name[i] > '9')
            return false;
    return true;
}

static bool after(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

/* Data rows of a CSV report (its lines less the header), or of a JSON one
 * (its command lines); -1 if it cannot be read. */
static long rows_of(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    bool json = tally_report_format_for_path(path) == TALLY_REPORT_JSON;
    long lines = 0;
    char line[4096];
    bool line_start = true;
    while (fgets(line, sizeof line, f)) {
        if (line_start && (json ? line[0] == '{' && line[1] == '"' && line[2] == 's' : true))
            lines++;
        line_start = strchr(line, '\n') != NULL;
    }
    fclose(f);
    return json ? lines : lines - 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

/* The files this run made that the pattern names, in order of name, so
 * that they are listed the same way every time. */
static int collect(const struct run_output *o, char files[][PATH_MAX], int most)
{
    char folder[PATH_MAX];
    const char *slash = strrchr(o->pattern, '/');
    snprintf(folder, sizeof folder, "%.*s", slash ? (int)(slash - o->pattern) : 1,
             slash ? o->pattern : ".");
    if (slash == o->pattern)
        snprintf(folder, sizeof folder, "/");
    const char *base = slash ? slash + 1 : o->pattern;
    DIR *dir = opendir(folder);
    if (!dir)
        return 0;
    int count = 0;
    for (struct dirent *e; count < most && (e = readdir(dir));) {
        char path[PATH_MAX];
        struct stat st;
        if (!matches(base, e->d_name) ||
            snprintf(path, sizeof path, "%s/%s", folder, e->d_name) >= (int)sizeof path ||
            stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !after(&st.st_mtim, &o->start))
            continue;
        snprintf(files[count++], PATH_MAX, "%s", slash ? path : e->d_name);
    }
    closedir(dir);
    qsort(files, (size_t)count, PATH_MAX, by_name);
    return count;
}

/* A CSV report's sidecar goes with it. */
static void rename_with_sidecar(const char *from, const char *to)
{
    char from_meta[PATH_MAX], to_meta[PATH_MAX];
    if (rename(from, to) != 0) {
        fprintf(stderr, "tally run: cannot name %s %s: %s\n", from, to, strerror(errno));
        return;
    }
    if (tally_report_metadata_path(from, from_meta, sizeof from_meta) &&
        tally_report_metadata_path(to, to_meta, sizeof to_meta) && strcmp(from_meta, from) != 0)
        rename(from_meta, to_meta); /* none, for a trace or a JSON report */
}

static void say_file(const struct run_output *o, const char *path, bool report)
{
    long rows = report ? rows_of(path) : -1;
    if (rows >= 0)
        fprintf(stderr, "tally run: %s: %s (%ld rows)\n", o->what, path, rows);
    else
        fprintf(stderr, "tally run: %s: %s\n", o->what, path);
}

/* Why no file is there: a kill that no handler sees (SIGKILL) or a whole
 * file (JSON) that was never finished, else the program never asked. */
static void say_missing(const struct run_output *o, int killed_by)
{
    if (killed_by)
        fprintf(stderr,
                "tally run: no %s was written to %s: the program was killed by SIG%s before it "
                "had one%s\n",
                o->what, o->asked, sigabbrev_np(killed_by) ? sigabbrev_np(killed_by) : "?",
                tally_report_format_for_path(o->asked) == TALLY_REPORT_JSON
                    ? " (a JSON file is written only whole: a CSV report or a Perfetto trace "
                      "keeps what was written before a kill)"
                    : "");
    else
        fprintf(stderr,
                "tally run: no %s was written to %s (the program used no front door, or a "
                "message above says why)\n",
                o->what, o->asked);
}

void run_output_finish(const struct run_output *o, bool report, bool quiet, int killed_by)
{
    enum { MOST = 256 };
    if (!o->asked || !strstr(o->pattern, "%p")) {
        return; /* a device or FIFO: written into as it went, or an error said why */
    }
    static char files[MOST][PATH_MAX];
    int count = collect(o, files, MOST);
    if (count == 1 && o->renamed_when_alone) {
        rename_with_sidecar(files[0], o->asked);
        snprintf(files[0], PATH_MAX, "%s", o->asked);
    }
    if (quiet)
        return;
    if (count == 0)
        say_missing(o, killed_by);
    if (count > 1)
        fprintf(stderr, "tally run: %d processes wrote a %s each:\n", count, o->what);
    for (int i = 0; i < count; i++)
        say_file(o, files[i], report);
}
