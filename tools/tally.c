/* The tally command: dispatches to its subcommands. */
#include <stdio.h>
#include <string.h>

#include <tally/tally.h>

#include "tally_cli.h"

static void usage(FILE *out)
{
    fputs("usage: tally COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  list [--backend NAME] [--api vk|gl|cl|md] [--groups|--sets|--md]\n"
          "        a backend's counter catalogue, or one API's view of it\n"
          "        (tally list --help)\n"
          "  run [OPTIONS] [--] PROGRAM [ARGS...]\n"
          "        run a program with the Vulkan layer and the GL, EGL and CL shims\n"
          "        active, and say where the reports went (tally run --help)\n"
          "  summary [OPTIONS] REPORT...\n"
          "        what reports add up to: totals, frame percentiles, the most expensive\n"
          "        commands, totals by label, API command and pipeline (tally summary -h)\n"
          "  diff [OPTIONS] BASE NEW | --baseline FILE REPORT... | --write-baseline FILE REPORT...\n"
          "        two runs compared counter by counter; exit status 1 when a rule breaks\n"
          "        (tally diff -h)\n"
          "  report --html OUT.html [--base BASE] REPORT [TRACE]\n"
          "        one self-contained HTML page: per-frame plots, the top commands, the\n"
          "        metadata; with --base, two runs overlaid (tally report -h)\n"
          "  --version\n"
          "        tally's version\n"
          "  demo  run a built-in workload of draws and dispatches on simgpu and\n"
          "        print a per-command counter table (always simgpu: measure a real\n"
          "        program with tally run --backend driver -- ./app)\n"
          "\n"
          "environment: TALLY_BACKEND, TALLY_PROFILE, TALLY_OUTPUT, TALLY_TRACE,\n"
          "TALLY_COUNTERS, TALLY_GRANULARITY, TALLY_CALIBRATE, TALLY_LOG (see README.md)\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "list") == 0)
        return tally_cli_list(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return tally_cli_run(argc - 1, argv + 1);
    if (strcmp(argv[1], "summary") == 0)
        return tally_cli_summary(argc - 1, argv + 1);
    if (strcmp(argv[1], "diff") == 0)
        return tally_cli_diff(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return tally_cli_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "demo") == 0)
        return tally_cli_demo(argc - 1, argv + 1);
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("tally %d.%d.%d\n", TALLY_VERSION_MAJOR, TALLY_VERSION_MINOR, TALLY_VERSION_PATCH);
        return 0;
    }
    fprintf(stderr, "tally: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
