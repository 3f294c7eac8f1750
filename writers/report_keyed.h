/* The report writer's entry for the engine's writer thread. Internal to libtally. */
#ifndef TALLY_REPORT_KEYED_H
#define TALLY_REPORT_KEYED_H

#include "tally/report.h"

/* tally_report_write for a producer that says when the record's strings
 * change: rows with the same strings_key, the same kind and api_name
 * pointers (static storage) and the same context, frame, submission and
 * stream reuse the previous row's text for those columns without comparing
 * the strings. */
tally_status report_write_keyed(tally_report *report, const tally_command_record *record,
                                const tally_value *values, uint64_t strings_key);

#endif
