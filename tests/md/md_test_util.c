/* Helpers of the Metrics-Discovery tests; see md_test_util.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "md_test_util.h"

tally_md_metric_set *md_find_set(tally_md_device *md, const char *symbol)
{
    const tally_md_device_params *p = tally_md_device_get_params(md);
    for (uint32_t g = 0; g < p->concurrent_groups_count; g++) {
        tally_md_concurrent_group *group = tally_md_device_get_concurrent_group(md, g);
        const tally_md_concurrent_group_params *gp = tally_md_concurrent_group_get_params(group);
        for (uint32_t s = 0; s < gp->metric_sets_count; s++) {
            tally_md_metric_set *set = tally_md_concurrent_group_get_metric_set(group, s);
            if (strcmp(tally_md_metric_set_get_params(set)->symbol_name, symbol) == 0)
                return set;
        }
    }
    fail_msg("no metric set %s", symbol);
    return NULL;
}

tally_md_concurrent_group *md_group_of(tally_md_metric_set *set)
{
    return tally_md_metric_set_get_concurrent_group(set);
}

uint32_t md_metric_index(const tally_md_metric_set *set, const char *symbol)
{
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    for (uint32_t m = 0; m < p->metrics_count; m++)
        if (strcmp(tally_md_metric_set_get_metric(set, m)->symbol_name, symbol) == 0)
            return m;
    fail_msg("no metric %s in %s", symbol, p->symbol_name);
    return 0;
}

void md_read_all(tally_md_concurrent_group *group, const tally_md_metric_set *set,
                 struct md_reports *reports)
{
    uint32_t size = tally_md_metric_set_get_params(set)->raw_report_size;
    reports->report_size = size;
    enum { CHUNK = 256, MAX_CHUNKS = 64 };
    /* a realtime stream keeps producing: stop after a bounded amount */
    for (int chunk = 0; chunk < MAX_CHUNKS; chunk++) {
        uint8_t *grown = realloc(reports->bytes, (size_t)(reports->count + CHUNK) * size);
        assert_non_null(grown);
        reports->bytes = grown;
        uint32_t count = CHUNK, status = 0;
        assert_int_equal(tally_md_read_io_stream(group, &count,
                                                 reports->bytes + (size_t)reports->count * size, 0,
                                                 &status),
                         TALLY_OK);
        reports->status_flags |= status;
        reports->count += count;
        if (count < CHUNK)
            return;
    }
}

void md_reports_free(struct md_reports *reports)
{
    free(reports->bytes);
    *reports = (struct md_reports){0};
}

tally_md_typed_value *md_calculate_all(const tally_md_metric_set *set,
                                       const struct md_reports *reports, uint32_t *rows)
{
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    size_t width = (size_t)p->metrics_count + p->information_count;
    size_t capacity = (size_t)(reports->count ? reports->count : 1) * width;
    tally_md_typed_value *values = calloc(capacity, sizeof(*values));
    assert_non_null(values);
    assert_int_equal(tally_md_calculate_metrics(set, reports->bytes,
                                                (size_t)reports->count * p->raw_report_size, values,
                                                capacity, rows),
                     TALLY_OK);
    assert_int_equal(*rows, reports->count ? reports->count - 1 : 0);
    return values;
}

const tally_md_typed_value *md_at(const tally_md_metric_set *set,
                                  const tally_md_typed_value *values, uint32_t row, uint32_t column)
{
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(set);
    return &values[(size_t)row * (p->metrics_count + p->information_count) + column];
}

uint64_t md_sum_u64(const tally_md_metric_set *set, const tally_md_typed_value *values,
                    uint32_t rows, uint32_t column)
{
    uint64_t sum = 0;
    for (uint32_t r = 0; r < rows; r++) {
        const tally_md_typed_value *v = md_at(set, values, r, column);
        if (v->type == TALLY_MD_VALUE_UINT32)
            sum += v->value.u32;
        else if (v->type == TALLY_MD_VALUE_BOOL)
            sum += v->value.b;
        else
            sum += v->value.u64;
    }
    return sum;
}

tally_program *md_create_program(tally_device *device)
{
    tally_program_desc desc = {.name = "md-test"};
    desc.stages[TALLY_STAGE_VERTEX] = (tally_stage_profile){.present = true, .mix = {.alu = 12}};
    desc.stages[TALLY_STAGE_FRAGMENT] =
        (tally_stage_profile){.present = true, .mix = {.alu = 20, .tex = 2}};
    tally_program *program = NULL;
    assert_int_equal(tally_program_create(device, &desc, &program), TALLY_OK);
    return program;
}

void md_record_draws(tally_stream *stream, tally_program *program, uint32_t draws,
                     uint32_t vertices)
{
    tally_render_state rs = {
        .width = 256, .height = 256, .layers = 1, .samples = 1, .color_bytes_per_pixel = 4};
    assert_int_equal(tally_stream_set_render_state(stream, &rs), TALLY_OK);
    assert_int_equal(tally_stream_bind_program(stream, program), TALLY_OK);
    for (uint32_t i = 0; i < draws; i++) {
        tally_draw draw = {.api_name = "draw",
                           .count = vertices,
                           .instance_count = 1,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        assert_int_equal(tally_stream_draw(stream, &draw), TALLY_OK);
    }
}
