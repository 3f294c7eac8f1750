/*
 * What a trace calls a command: its API command and its label, as a slice
 * name that both trace formats share ("shadow/cascade 0: vkCmdDrawIndexed",
 * or "vkCmdDrawIndexed" without a label). The label comes first because
 * timelines cut long names at the right, and the label is what tells one
 * pass's draws from another's. Internal to libtally.
 */
#ifndef TALLY_TRACE_COMMAND_H
#define TALLY_TRACE_COMMAND_H

#include <stdio.h>

#include "tally/report.h"

enum { TRACE_COMMAND_NAME_SIZE = 640 };

/* The name, cut to fit size bytes. */
static inline const char *trace_command_name(const tally_command_record *r, char *out, size_t size)
{
    const char *command = r->api_name ? r->api_name : r->kind;
    if (r->label && *r->label)
        snprintf(out, size, "%s: %s", r->label, command);
    else
        snprintf(out, size, "%s", command);
    return out;
}

#endif
