/* The report writer's entry for the engine's writer thread. Internal to libtally. */
#ifndef TALLY_REPORT_KEYED_H
#define TALLY_REPORT_KEYED_H

#include "report_ring.h"
#include "tally/report.h"

/* tally_report_write for each row of a run from the report ring. A run
 * whose strings_key, kind and api_name pointers (static storage), context,
 * frame, submission and stream equal the previous run's reuses that run's
 * text for those columns without comparing the strings: the producer
 * changes the key whenever context_api or the label may have changed. */
tally_status report_write_run(tally_report *report, const report_ring_run *run);

#endif
