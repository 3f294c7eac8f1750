/* The client's own GPU work, through the APIs a tool's application uses;
 * it knows nothing of tally. Each returns the compute invocations it
 * submitted (the spec's count: work-groups x local size, or work-items), or
 * -1 on failure. */
#ifndef TALLY_TESTS_MDAPI_WORK_H
#define TALLY_TESTS_MDAPI_WORK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* `count` vkCmdDispatch of groups[i] x 1 x 1 groups of 8 invocations, one
 * submission each, on lavapipe. */
int64_t mdapi_work_vulkan(const uint32_t *groups, int count);
/* `count` clEnqueueNDRangeKernel of items[i] work-items, on PoCL. */
int64_t mdapi_work_opencl(const uint32_t *items, int count);

#ifdef __cplusplus
}
#endif

#endif
