/*
 * tally: one GPU performance-counter engine behind many counter APIs.
 *
 *   types.h      status codes and counter values
 *   catalogue.h  counters, groups, metric sets, pass planning
 *   device.h     devices, contexts, programs, clocks
 *   stream.h     recording canonical commands and submitting them
 *   results.h    counter results of marked scopes
 *   timeline.h   timeline events
 *   sampler.h    periodic sampling
 *   report.h     report and trace writers
 *   metrics_discovery.h  the Metrics-Discovery-style API
 *   spirv.h      a shader stage's static profile from its SPIR-V
 */
#ifndef TALLY_TALLY_H
#define TALLY_TALLY_H

#include "tally/types.h"
#include "tally/catalogue.h"
#include "tally/device.h"
#include "tally/metrics_discovery.h"
#include "tally/report.h"
#include "tally/results.h"
#include "tally/sampler.h"
#include "tally/spirv.h"
#include "tally/stream.h"
#include "tally/timeline.h"

#endif
