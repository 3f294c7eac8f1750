/*
 * The evaluator of derived counters: a small stack machine over a counter's
 * RPN program. Integer counters evaluate in unsigned 64-bit arithmetic
 * (subtraction stops at 0), floating-point counters in double; x / 0 is 0 in
 * both, and the result is clamped to the counter's range. The same inputs give
 * the same bits on every machine (the build disables FP contraction).
 */
#include "engine.h"

static bool is_float(tally_storage storage)
{
    return storage == TALLY_STORAGE_FLOAT32 || storage == TALLY_STORAGE_FLOAT64;
}

static uint64_t apply_u64(uint8_t opcode, uint64_t a, uint64_t b)
{
    switch (opcode) {
    case TALLY_EXPR_ADD: return a + b;
    case TALLY_EXPR_SUB: return a > b ? a - b : 0;
    case TALLY_EXPR_MUL: return a * b;
    case TALLY_EXPR_DIV: return b ? a / b : 0;
    case TALLY_EXPR_MIN: return a < b ? a : b;
    default: return a > b ? a : b;
    }
}

static double apply_f64(uint8_t opcode, double a, double b)
{
    switch (opcode) {
    case TALLY_EXPR_ADD: return a + b;
    case TALLY_EXPR_SUB: return a - b;
    case TALLY_EXPR_MUL: return a * b;
    case TALLY_EXPR_DIV: return b != 0.0 ? a / b : 0.0;
    case TALLY_EXPR_MIN: return a < b ? a : b;
    default: return a > b ? a : b;
    }
}

static uint64_t operand(const struct tally_expr_op *op, const uint64_t *raw,
                        const uint64_t *constants)
{
    switch (op->opcode) {
    case TALLY_EXPR_RAW: return raw[op->arg];
    case TALLY_EXPR_CONST: return constants ? constants[op->arg] : 0;
    default: return op->literal;
    }
}

static tally_value run(const struct tally_expr *expr, bool floating, const uint64_t *raw,
                       const uint64_t *constants)
{
    tally_value stack[TALLY_EXPR_MAX_DEPTH];
    uint32_t depth = 0;
    for (uint32_t i = 0; i < expr->op_count; i++) {
        const struct tally_expr_op *op = &expr->ops[i];
        if (op->opcode <= TALLY_EXPR_INT) {
            uint64_t v = operand(op, raw, constants);
            if (floating)
                stack[depth++].f64 = (double)v;
            else
                stack[depth++].u64 = v;
            continue;
        }
        depth--;
        if (floating)
            stack[depth - 1].f64 = apply_f64(op->opcode, stack[depth - 1].f64, stack[depth].f64);
        else
            stack[depth - 1].u64 = apply_u64(op->opcode, stack[depth - 1].u64, stack[depth].u64);
    }
    return stack[0];
}

static tally_value clamp(const tally_counter_info *c, tally_value v)
{
    if (is_float(c->storage)) {
        if (!(v.f64 >= c->min_value.f64)) /* also catches NaN */
            v.f64 = c->min_value.f64;
        if (v.f64 > c->max_value.f64)
            v.f64 = c->max_value.f64;
    } else if (c->storage == TALLY_STORAGE_UINT32 || c->storage == TALLY_STORAGE_UINT64) {
        if (v.u64 < c->min_value.u64)
            v.u64 = c->min_value.u64;
        if (v.u64 > c->max_value.u64)
            v.u64 = c->max_value.u64;
    }
    return v;
}

uint32_t tally_catalogue_counter_raw_inputs(const tally_catalogue *cat, uint32_t counter,
                                            uint32_t *slots, uint32_t capacity)
{
    if (!cat || counter >= cat->counter_count)
        return 0;
    uint32_t raw = cat->counters[counter].raw_index;
    if (raw != TALLY_NOT_RAW) {
        if (capacity)
            slots[0] = raw;
        return 1;
    }
    const struct tally_expr *e = &cat->expressions[counter];
    uint32_t n = 0;
    for (uint32_t op = 0; op < e->op_count; op++) {
        if (e->ops[op].opcode != TALLY_EXPR_RAW)
            continue;
        if (n < capacity)
            slots[n] = e->ops[op].arg;
        n++;
    }
    return n;
}

tally_status tally_catalogue_evaluate(const tally_catalogue *cat, uint32_t counter,
                                      const uint64_t *raw, const uint64_t *constants,
                                      tally_value *out)
{
    if (!cat || !raw || !out)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (counter >= cat->counter_count)
        return TALLY_ERROR_UNKNOWN_COUNTER;
    const tally_counter_info *c = &cat->counters[counter];
    tally_value v;
    if (c->raw_index != TALLY_NOT_RAW) {
        v.u64 = raw[c->raw_index];
        if (is_float(c->storage))
            v.f64 = (double)v.u64;
    } else {
        v = run(&cat->expressions[counter], is_float(c->storage), raw, constants);
    }
    *out = clamp(c, v);
    return TALLY_OK;
}

/* A counter whose value is one raw slot as it is: no expression, and a
 * clamp that cannot change it. */
bool tally_counter_is_plain_raw(const struct tally_catalogue *cat, uint32_t counter,
                                uint32_t *raw_index)
{
    const tally_counter_info *c = &cat->counters[counter];
    if (c->raw_index == TALLY_NOT_RAW || c->storage != TALLY_STORAGE_UINT64 ||
        c->min_value.u64 != 0 || c->max_value.u64 != UINT64_MAX)
        return false;
    *raw_index = c->raw_index;
    return true;
}
