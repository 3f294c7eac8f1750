/*
 * GL_GPU_DISJOINT_EXT shared by the program and the shim
 * (GL_EXT_disjoint_timer_query). The driver's flag says whether a disjoint
 * operation happened since it was last read, and reading clears it, so
 * whichever of the two reads it first would hide the event from the other.
 * Each keeps what the other read: the program's next read answers the
 * driver's flag or one the shim read since; the shim's next check answers
 * the driver's flag or one the program read since. No GL here: the shim's
 * callers read the driver and pass its answer in.
 */
#ifndef TALLY_GL_DISJOINT_FLAG_H
#define TALLY_GL_DISJOINT_FLAG_H

#include <stdbool.h>

typedef struct gl_disjoint_flag {
    bool for_program; /* the shim read a disjoint the program has not seen */
    bool for_shim;    /* the program read a disjoint the shim has not seen */
} gl_disjoint_flag;

/* The program read the driver's flag (`driver`): what it is answered. */
bool gl_disjoint_program_reads(gl_disjoint_flag *flag, bool driver);
/* The shim read the driver's flag: whether its window was disjoint. */
bool gl_disjoint_shim_reads(gl_disjoint_flag *flag, bool driver);

#endif
