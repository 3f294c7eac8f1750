/* The subcommands of the tally command. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

/* tally list [--backend NAME] [--api vk|gl|cl|md] [--groups|--sets|--md] */
int tally_cli_list(int argc, char **argv);
int tally_cli_demo(int argc, char **argv);
int tally_cli_run(int argc, char **argv);
/* tally summary [OPTIONS] REPORT... (summary.c) */
int tally_cli_summary(int argc, char **argv);
/* tally diff [OPTIONS] BASE NEW, or --baseline FILE / --write-baseline FILE (diff.c) */
int tally_cli_diff(int argc, char **argv);
/* tally report --html OUT.html [--base BASE] REPORT [TRACE] (report_html.c) */
int tally_cli_report(int argc, char **argv);

#endif
