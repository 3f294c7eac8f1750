/* The files of one `tally run`, a set per process (run_outputs.c). */
#ifndef TALLY_RUN_OUTPUTS_H
#define TALLY_RUN_OUTPUTS_H

#include <limits.h>
#include <stdbool.h>
#include <time.h>

struct run_output {
    const char *var, *what;  /* "TALLY_OUTPUT", "per-command report" */
    const char *asked;       /* the user's path; NULL: none */
    char pattern[PATH_MAX];  /* what the processes are given: "%p" their id */
    bool renamed_when_alone; /* one process's file takes the asked name */
    struct timespec start;   /* files older than the run are not its own */
};

/* Before the run: sets var for the processes to a path of their own. */
bool run_output_prepare(struct run_output *o, const char *var, const char *what, const char *path);
/* After the run: a run of one process gets the asked name; each file is
 * said with its rows (report: a report's), unless quiet. killed_by: the
 * signal that ended the program (0: it exited), which explains a missing
 * file. */
void run_output_finish(const struct run_output *o, bool report, bool quiet, int killed_by);

#endif
