/* The subcommands of the tally command. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

int tally_cli_list(int argc, char **argv);
int tally_cli_demo(int argc, char **argv);
int tally_cli_run(int argc, char **argv);

#endif
