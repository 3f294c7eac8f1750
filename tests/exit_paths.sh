#!/bin/sh
# Runs an exit-path test program (tests/exit_paths.h) with its per-command
# report going to REPORT, then prints the report for the test's expression
# to match. Fails, printing no report, when the program did not exit 0, or
# when EXPECT (an extended grep pattern; empty: none) is missing from its
# standard error, which is passed on as it is (sanitizers' reports
# included).
#
#   exit_paths.sh REPORT EXPECT PROGRAM MODE
report=$1
expect=$2
shift 2
errors=$report.stderr
rm -f "$report" "$errors"
TALLY_OUTPUT=$report "$@" 2>"$errors"
status=$?
cat "$errors" >&2
if [ "$status" -ne 0 ]; then
    echo "exit_paths.sh: $* exited with status $status"
    exit 1
fi
if [ -n "$expect" ] && ! grep -Eq "$expect" "$errors"; then
    echo "exit_paths.sh: the standard error of $* does not say: $expect"
    exit 1
fi
cat "$report"
