/*
 * OpenCL kernel times on CLOCK_MONOTONIC, for the driver backend.
 *
 * clGetDeviceAndHostTimer (OpenCL 2.1) is not used: PoCL 3.1, the driver
 * CI runs, answers it CL_INVALID_OPERATION (its
 * CL_PLATFORM_HOST_TIMER_RESOLUTION is 0), and where a driver has it, its
 * host clock is the driver's choice (not necessarily CLOCK_MONOTONIC).
 * Instead the shim uses what every profiling queue gives: an event's
 * CL_PROFILING_COMMAND_QUEUED is "the current device time counter in
 * nanoseconds when the command ... is enqueued in a command-queue by the
 * host", that is, read during the program's clEnqueue* call. The shim reads
 * CLOCK_MONOTONIC just before and after that call (enqueue.c), so the
 * device time QUEUED pairs with the bracket's midpoint, off by at most half
 * its width. Of a recording's kernels the narrowest bracket gives the pair,
 * and every kernel's START and END of that recording are converted with it
 * and flagged TALLY_MEASURE_TIME_MONOTONIC (engine/measured.c keeps them
 * where the device ran them); the earliest is when the recording began on
 * the device (tally_submission.issued_ns: the shim submits it later). TALLY_CALIBRATE=0 leaves them
 * to the engine's correlation, as before.
 */
#include <stdatomic.h>

#include "shim.h"

void calibration_note(cl_calibration *c, uint64_t queued, cl_enqueue_bracket bracket)
{
    if (!bracket.before || bracket.after < bracket.before)
        return;
    tally_clock_pair pair = tally_clock_pair_bracketed(queued, bracket.before, bracket.after);
    if (c->valid && c->pair.deviation_ns <= pair.deviation_ns)
        return;
    *c = (cl_calibration){.valid = true, .pair = pair};
}

uint64_t calibration_apply(const cl_calibration *c, tally_measurement *values, uint32_t count)
{
    static atomic_bool said;
    if (!c->valid)
        return 0;
    if (!atomic_exchange(&said, true))
        tally_log(TALLY_LOG_INFO,
                  "OpenCL: kernel times calibrated to CLOCK_MONOTONIC (CL_PROFILING_COMMAND_QUEUED "
                  "within the enqueue call, deviation %llu ns)",
                  (unsigned long long)c->pair.deviation_ns);
    return tally_measurements_to_monotonic(&c->pair, values, count, tally_monotonic_ns());
}
