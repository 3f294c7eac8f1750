/* GL_GPU_DISJOINT_EXT, read by the program and by the shim: each sees
 * every disjoint event (disjoint_flag.h). */
#include "disjoint_flag.h"

bool gl_disjoint_program_reads(gl_disjoint_flag *flag, bool driver)
{
    bool answer = driver || flag->for_program;
    flag->for_program = false;
    flag->for_shim |= driver;
    return answer;
}

bool gl_disjoint_shim_reads(gl_disjoint_flag *flag, bool driver)
{
    bool disjoint = driver || flag->for_shim;
    flag->for_shim = false;
    flag->for_program |= driver;
    return disjoint;
}
