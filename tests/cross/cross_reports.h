/*
 * What the cross-API tests share: tests/layer/vk_workload.c run under the
 * layer on lavapipe, and finding one command in a per-command report.
 */
#ifndef TALLY_TESTS_CROSS_REPORTS_H
#define TALLY_TESTS_CROSS_REPORTS_H

#include "layer_harness.h"

#include <stddef.h>

/* vk_workload's shapes (see tests/layer/vk_workload.c): each topology drawn
 * with vkCmdDraw(12, 2, 0, 0), then indexed with vkCmdDrawIndexed(12, 3, 0,
 * 0, 0) in the order of VkPrimitiveTopology; vkCmdDispatch(4, 3, 2) and
 * vkCmdDispatchBase(1, 0, 0, 5, 1, 1) of a shader whose local size is 8x1x1. */
enum {
    VK_WORKLOAD_VERTICES = 12,
    VK_WORKLOAD_INSTANCES = 2,
    VK_WORKLOAD_INDICES = 12,
    VK_WORKLOAD_INDEXED_INSTANCES = 3,
    VK_WORKLOAD_LOCAL_SIZE = 8,
};

/* Runs vk_workload under the explicitly activated layer with TALLY_COUNTERS
 * set to `counters`; the program's own lines (the driver's pipeline
 * statistics) and the report's commands are in the same order. */
run_result run_vk_workload(const char *counters);

/* The n-th (from 0) command of the report named `api_name` and, unless
 * `label` is NULL, carrying that label; NULL if there is none. `index`
 * receives its position in the report when not NULL. */
json_object *find_command(json_object *commands, const char *api_name, const char *label, size_t n,
                          size_t *index);

#endif
