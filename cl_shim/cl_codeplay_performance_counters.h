/*
 * cl_codeplay_performance_counters (version 1, revision 2 enums), as its
 * specification defines it. libtally_cl.so implements it over any OpenCL
 * driver; programs include this header to use it.
 */
#ifndef TALLY_CL_CODEPLAY_PERFORMANCE_COUNTERS_H
#define TALLY_CL_CODEPLAY_PERFORMANCE_COUNTERS_H

#include <CL/cl.h>

#ifdef __cplusplus
extern "C" {
#endif

#define cl_codeplay_performance_counters 1
#define CL_CODEPLAY_PERFORMANCE_COUNTERS_EXTENSION_NAME "cl_codeplay_performance_counters"

#define CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY 0x4260
#define CL_QUEUE_PERFORMANCE_COUNTERS_CODEPLAY 0x4261
#define CL_PROFILING_COMMAND_PERFORMANCE_COUNTERS_CODEPLAY 0x4262

typedef cl_int cl_performance_counter_unit_codeplay;
#define CL_PERFORMANCE_COUNTER_UNIT_GENERIC_CODEPLAY 0x0
#define CL_PERFORMANCE_COUNTER_UNIT_PERCENTAGE_CODEPLAY 0x1
#define CL_PERFORMANCE_COUNTER_UNIT_NANOSECONDS_CODEPLAY 0x2
#define CL_PERFORMANCE_COUNTER_UNIT_BYTES_CODEPLAY 0x3
#define CL_PERFORMANCE_COUNTER_UNIT_BYTES_PER_SECOND_CODEPLAY 0x4
#define CL_PERFORMANCE_COUNTER_UNIT_KELVIN_CODEPLAY 0x5
#define CL_PERFORMANCE_COUNTER_UNIT_WATTS_CODEPLAY 0x6
#define CL_PERFORMANCE_COUNTER_UNIT_VOLTS_CODEPLAY 0x7
#define CL_PERFORMANCE_COUNTER_UNIT_AMPS_CODEPLAY 0x8
#define CL_PERFORMANCE_COUNTER_UNIT_HERTZ_CODEPLAY 0x9
#define CL_PERFORMANCE_COUNTER_UNIT_CYCLES_CODEPLAY 0xA

typedef cl_int cl_performance_counter_storage_codeplay;
#define CL_PERFORMANCE_COUNTER_RESULT_TYPE_INT32_CODEPLAY 0x0
#define CL_PERFORMANCE_COUNTER_RESULT_TYPE_INT64_CODEPLAY 0x1
#define CL_PERFORMANCE_COUNTER_RESULT_TYPE_UINT32_CODEPLAY 0x2
#define CL_PERFORMANCE_COUNTER_RESULT_TYPE_UINT64_CODEPLAY 0x3
#define CL_PERFORMANCE_COUNTER_RESULT_TYPE_FLOAT32_CODEPLAY 0x4
#define CL_PERFORMANCE_COUNTER_RESULT_TYPE_FLOAT64_CODEPLAY 0x5

typedef struct cl_performance_counter_codeplay {
    cl_performance_counter_unit_codeplay unit;
    cl_performance_counter_storage_codeplay storage;
    cl_uint uuid;
    char name[256];
    char category[256];
    char description[256];
} cl_performance_counter_codeplay;

typedef struct cl_performance_counter_desc_codeplay {
    cl_uint uuid;
    void *data;
} cl_performance_counter_desc_codeplay;

typedef struct cl_performance_counter_config_codeplay {
    cl_uint count;
    cl_performance_counter_desc_codeplay *descs;
} cl_performance_counter_config_codeplay;

typedef struct cl_performance_counter_result_codeplay {
    union {
        cl_int int32;
        cl_long int64;
        cl_uint uint32;
        cl_ulong uint64;
        cl_float float32;
        cl_double float64;
    };
} cl_performance_counter_result_codeplay;

#ifdef __cplusplus
}
#endif

#endif
