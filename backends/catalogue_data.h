/*
 * The in-memory form of a backend's catalogue, as gen_catalogue.py emits it
 * from the backend's catalogue.toml. Only the engine and generated code see it.
 */
#ifndef TALLY_CATALOGUE_DATA_H
#define TALLY_CATALOGUE_DATA_H

#include "tally/catalogue.h"

/* One step of a derived counter's RPN program. */
enum tally_expr_opcode {
    TALLY_EXPR_RAW,   /* push raw[arg] */
    TALLY_EXPR_CONST, /* push constants[arg] */
    TALLY_EXPR_INT,   /* push literal */
    TALLY_EXPR_ADD,
    TALLY_EXPR_SUB,
    TALLY_EXPR_MUL,
    TALLY_EXPR_DIV,
    TALLY_EXPR_MIN,
    TALLY_EXPR_MAX,
};

struct tally_expr_op {
    uint8_t opcode;
    uint32_t arg;
    uint64_t literal;
};

struct tally_expr {
    uint32_t op_count; /* 0 for raw counters */
    const struct tally_expr_op *ops;
};

#define TALLY_EXPR_MAX_DEPTH 16

/* A device profile parameter; values are unsigned integers. */
struct tally_parameter_info {
    const char *name;
    const char *section;
    const char *description;
    uint64_t default_value;
    uint64_t min_value;
    uint64_t max_value;
};

struct tally_catalogue {
    const char *backend;
    uint32_t group_count;
    const tally_group_info *groups;
    uint32_t counter_count;
    const tally_counter_info *counters;
    const struct tally_expr *expressions; /* one per counter */
    uint32_t raw_count;
    const uint32_t *raw_counters; /* counter index of each raw slot */
    uint32_t constant_count;
    const tally_constant_info *constants;
    const uint32_t *constant_parameters; /* parameter index of each constant */
    const uint64_t *constant_scales;
    uint32_t unit_count;
    const tally_unit_info *units;
    uint32_t concurrent_group_count;
    const tally_concurrent_group_info *concurrent_groups;
    uint32_t metric_set_count;
    const tally_metric_set_info *metric_sets;
    uint32_t parameter_count;
    const struct tally_parameter_info *parameters;
};

#endif
