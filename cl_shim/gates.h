/*
 * Gates: a command that waits, directly or through other commands, on a
 * user event the program had not completed when it enqueued the command
 * may never run. The shim holds what follows such a command until the
 * command's own event completed (driver_profiling.c), and leaves out of
 * the report what still waits at exit.
 *
 * A wait on another gated command's event is a wait on that command's user
 * events: a kernel on one queue behind a kernel that waits on a user event
 * on another never runs either while the user event is not completed. So
 * every gate is known process-wide until its command completed.
 */
#ifndef TALLY_CL_GATES_H
#define TALLY_CL_GATES_H

#include "shim.h"

/* A gated command's own event and the user events it waits on, all
 * retained by the gate. command NULL: no gate. */
typedef struct cl_gate {
    cl_event command;
    cl_event *waits;
    uint32_t wait_count;
} cl_gate;

/* The gate of `command` (enqueued with this wait list), known process-wide
 * until the command completed; no gate where nothing in the list waits on
 * an uncompleted user event, or where there is no memory for one. */
SHIM_HIDDEN cl_gate cl_gate_make(cl_event command, cl_uint num_events, const cl_event *wait_list);
/* A retained copy of g (the later recordings of an in-order queue wait on
 * it too); no gate when there is no memory for one. */
SHIM_HIDDEN cl_gate cl_gate_copy(const cl_gate *g);
SHIM_HIDDEN void cl_gate_release(cl_gate *g);
/* True once the gate's command completed (or failed): it ran, or never
 * will; the gate is released then. True for no gate. */
SHIM_HIDDEN bool cl_gate_open(cl_gate *g);
/* Whether the gate still waits on a user event: its command never ran. */
SHIM_HIDDEN bool cl_gate_shut(const cl_gate *g);
/* In a forked child: the parent's gates are not the child's to release. */
SHIM_HIDDEN void cl_gates_forget_inherited(void);

#endif
