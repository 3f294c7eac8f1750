/* Calculation goldens: raw reports written by hand from the documented
 * layout (docs/metrics-discovery.md), and values computed by hand. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "fixture.h"
#include "md_test_util.h"

#define REPORT_SIZE 112
#define N 16
#define WRAP (1ull << 40)

/* RenderBasic's raw counters, in report order (first use by its metrics). */
enum {
    GPU_TIME,
    GPU_CORE_CLOCKS,
    GPU_BUSY_CYCLES,
    DRAW_CALLS,
    VS_INVOCATIONS,
    RASTERIZED_PIXELS,
    FS_INVOCATIONS,
    SAMPLES_WRITTEN,
    SHADER_ALU,
    SHADER_TEX,
    SHADER_BUSY_CYCLES,
    TEXELS,
    L2_HITS,
    L2_REQUESTS,
    DRAM_READ,
    DRAM_WRITE
};

struct report {
    uint32_t id, reason, context_id, mhz, switches;
    bool context_valid;
    uint64_t timestamp_ns;
    uint16_t set;
    uint64_t counters[N];
};

static void put(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void write_report(const struct report *r, uint8_t *p)
{
    memset(p, 0, REPORT_SIZE);
    put(p + 0x00, r->id, 4);
    put(p + 0x04, r->reason | (r->context_valid ? 1u << 31 : 0), 4);
    put(p + 0x08, r->context_id, 4);
    put(p + 0x0c, r->mhz, 4);
    put(p + 0x10, r->timestamp_ns, 8);
    put(p + 0x18, r->switches, 4);
    put(p + 0x1c, r->set, 2);
    put(p + 0x1e, N, 2);
    for (int k = 0; k < N; k++) {
        put(p + 0x20 + 4 * k, r->counters[k] & 0xffffffffu, 4);
        p[0x20 + 4 * N + k] = (uint8_t)(r->counters[k] >> 32);
    }
}

struct calc_fixture {
    tally_device *device;
    tally_md_device *md;
    tally_md_metric_set *set;
    uint16_t set_index;
    uint8_t raw[3 * REPORT_SIZE];
};

static int setup(void **state)
{
    static struct calc_fixture fx;
    memset(&fx, 0, sizeof fx);
    fx.device = open_virtual_device();
    if (tally_md_device_open(fx.device, &fx.md) != TALLY_OK)
        return -1;
    fx.set = md_find_set(fx.md, "RenderBasic");
    const tally_catalogue *cat = tally_device_catalogue(fx.device);
    for (uint32_t i = 0; i < tally_catalogue_metric_set_count(cat); i++)
        if (strcmp(tally_catalogue_metric_set(cat, i)->symbol, "RenderBasic") == 0)
            fx.set_index = (uint16_t)i;
    /* A: counters just below the 40-bit wrap, and one about to carry out of
     * its low dword */
    struct report a = {.id = 7,
                       .reason = 1,
                       .context_id = 3,
                       .context_valid = true,
                       .mhz = 1000,
                       .timestamp_ns = 1000000,
                       .switches = 5,
                       .set = fx.set_index};
    a.counters[GPU_TIME] = WRAP - 256;
    a.counters[GPU_CORE_CLOCKS] = WRAP - 100;
    a.counters[GPU_BUSY_CYCLES] = 1000;
    a.counters[DRAW_CALLS] = 10;
    a.counters[VS_INVOCATIONS] = 0xffffffffu;
    a.counters[FS_INVOCATIONS] = 0;
    a.counters[SHADER_BUSY_CYCLES] = 5000;
    a.counters[L2_HITS] = 70;
    a.counters[L2_REQUESTS] = 100;
    a.counters[DRAM_READ] = 123456789;
    /* B, 100 us later: both clocks wrapped */
    struct report b = a;
    b.id = 8;
    b.timestamp_ns = 1100000;
    b.counters[GPU_TIME] = 100000 - 256;
    b.counters[GPU_CORE_CLOCKS] = 100000 - 100;
    b.counters[GPU_BUSY_CYCLES] = 51000;
    b.counters[DRAW_CALLS] = 14;
    b.counters[VS_INVOCATIONS] = 0x100000005ull;
    b.counters[FS_INVOCATIONS] = WRAP - 1;
    b.counters[SHADER_BUSY_CYCLES] = 30000;
    b.counters[L2_HITS] = 100;
    b.counters[L2_REQUESTS] = 140;
    /* C: reports 9 lost, the clock at 1200 MHz, a context switch, 200 us of
     * idle time with no core clocks counted */
    struct report c = b;
    c.id = 10;
    c.context_id = 4;
    c.mhz = 1200;
    c.switches = 6;
    c.timestamp_ns = 1300000;
    c.counters[GPU_TIME] = b.counters[GPU_TIME] + 200000;
    write_report(&a, fx.raw);
    write_report(&b, fx.raw + REPORT_SIZE);
    write_report(&c, fx.raw + 2 * REPORT_SIZE);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_device_close(fx->md);
    tally_device_close(fx->device);
    return 0;
}

#define WIDTH (16 + TALLY_MD_INFO_COUNT)

static const tally_md_typed_value *metric(struct calc_fixture *fx, const tally_md_typed_value *row,
                                          const char *symbol)
{
    return &row[md_metric_index(fx->set, symbol)];
}

static void counters_are_deltas_modulo_2_to_the_40(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_typed_value out[2 * WIDTH];
    uint32_t rows = 0;
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, sizeof fx->raw, out, 2 * WIDTH, &rows),
        TALLY_OK);
    assert_int_equal(rows, 2);
    const tally_md_typed_value *r = out;
    assert_int_equal(metric(fx, r, "GpuTime")->type, TALLY_MD_VALUE_UINT64);
    assert_int_equal(metric(fx, r, "GpuTime")->value.u64, 100000);
    assert_int_equal(metric(fx, r, "GpuCoreClocks")->value.u64, 100000);
    assert_int_equal(metric(fx, r, "DrawCalls")->value.u64, 4);
    /* 0xffffffff -> 0x1_00000005: the carry into the high byte is counted */
    assert_int_equal(metric(fx, r, "VsInvocations")->value.u64, 6);
    /* the largest delta a 40-bit counter can express */
    assert_int_equal(metric(fx, r, "PsInvocations")->value.u64, WRAP - 1);
    assert_int_equal(metric(fx, r, "RasterizedPixels")->value.u64, 0);
    assert_int_equal(metric(fx, r, "GtiReadBytes")->value.u64, 0);
}

static void derived_metrics_follow_their_equations(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_typed_value out[2 * WIDTH];
    uint32_t rows = 0;
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, sizeof fx->raw, out, 2 * WIDTH, &rows),
        TALLY_OK);
    const tally_md_typed_value *r = out;
    /* 50000 busy of 100000 cycles */
    assert_int_equal(metric(fx, r, "GpuBusy")->type, TALLY_MD_VALUE_DOUBLE);
    assert_true(metric(fx, r, "GpuBusy")->value.f64 == 50.0);
    /* 25000 of 100000 */
    assert_true(metric(fx, r, "EuActive")->value.f64 == 25.0);
    /* 30 hits of 40 requests */
    assert_true(metric(fx, r, "L2CacheHitRate")->value.f64 == 75.0);
    /* 100000 cycles in 100000 ns */
    assert_true(metric(fx, r, "AvgGpuCoreFrequency")->value.f64 == 1e9);
    /* second interval: no cycles counted, so the ratios divide by zero: 0 */
    const tally_md_typed_value *s = out + WIDTH;
    assert_int_equal(metric(fx, s, "GpuTime")->value.u64, 200000);
    assert_true(metric(fx, s, "GpuBusy")->value.f64 == 0.0);
    assert_true(metric(fx, s, "AvgGpuCoreFrequency")->value.f64 == 0.0);
    assert_true(metric(fx, s, "L2CacheHitRate")->value.f64 == 0.0);
}

static void information_items_describe_each_interval(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_typed_value out[2 * WIDTH];
    uint32_t rows = 0;
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, sizeof fx->raw, out, 2 * WIDTH, &rows),
        TALLY_OK);
    const tally_md_typed_value *r = out + 16, *s = out + WIDTH + 16;
    assert_int_equal(r[TALLY_MD_INFO_QUERY_BEGIN_TIME].value.u64, 1000000);
    assert_int_equal(r[TALLY_MD_INFO_QUERY_END_TIME].value.u64, 1100000);
    assert_int_equal(r[TALLY_MD_INFO_REPORT_REASON].value.u32, TALLY_MD_REPORT_REASON_TIMER);
    assert_int_equal(r[TALLY_MD_INFO_REPORT_ID].value.u32, 8);
    assert_true(r[TALLY_MD_INFO_CONTEXT_ID_VALID].value.b);
    assert_int_equal(r[TALLY_MD_INFO_CONTEXT_ID].value.u32, 3);
    assert_int_equal(r[TALLY_MD_INFO_CORE_FREQUENCY_MHZ].value.u32, 1000);
    assert_false(r[TALLY_MD_INFO_CORE_FREQUENCY_CHANGED].value.b);
    assert_false(r[TALLY_MD_INFO_QUERY_SPLIT_OCCURRED].value.b);
    assert_false(r[TALLY_MD_INFO_REPORT_LOST].value.b);
    assert_int_equal(s[TALLY_MD_INFO_QUERY_BEGIN_TIME].value.u64, 1100000);
    assert_int_equal(s[TALLY_MD_INFO_QUERY_END_TIME].value.u64, 1300000);
    assert_int_equal(s[TALLY_MD_INFO_REPORT_ID].value.u32, 10);
    assert_int_equal(s[TALLY_MD_INFO_CONTEXT_ID].value.u32, 4);
    assert_int_equal(s[TALLY_MD_INFO_CORE_FREQUENCY_MHZ].value.u32, 1200);
    assert_true(s[TALLY_MD_INFO_CORE_FREQUENCY_CHANGED].value.b);
    assert_true(s[TALLY_MD_INFO_QUERY_SPLIT_OCCURRED].value.b);
    assert_true(s[TALLY_MD_INFO_REPORT_LOST].value.b);
}

static void the_same_bytes_give_the_same_values(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_typed_value a[2 * WIDTH], b[2 * WIDTH];
    memset(a, 0xa5, sizeof a);
    memset(b, 0x5a, sizeof b);
    uint32_t rows_a = 0, rows_b = 0;
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, sizeof fx->raw, a, 2 * WIDTH, &rows_a),
        TALLY_OK);
    /* another view of another device: only the set and the bytes matter */
    tally_device *device = open_virtual_device();
    tally_md_device *md = NULL;
    assert_int_equal(tally_md_device_open(device, &md), TALLY_OK);
    assert_int_equal(tally_md_calculate_metrics(md_find_set(md, "RenderBasic"), fx->raw,
                                                sizeof fx->raw, b, 2 * WIDTH, &rows_b),
                     TALLY_OK);
    assert_int_equal(rows_a, rows_b);
    for (uint32_t i = 0; i < 2 * WIDTH; i++) {
        assert_int_equal(a[i].type, b[i].type);
        if (a[i].type == TALLY_MD_VALUE_BOOL)
            assert_int_equal(a[i].value.b, b[i].value.b);
        else if (a[i].type == TALLY_MD_VALUE_UINT32)
            assert_int_equal(a[i].value.u32, b[i].value.u32);
        else
            assert_memory_equal(&a[i].value.u64, &b[i].value.u64, 8);
    }
    tally_md_device_close(md);
    tally_device_close(device);
}

static void a_short_output_holds_whole_reports_and_says_so(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_typed_value out[2 * WIDTH - 1];
    uint32_t rows = 9;
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, sizeof fx->raw, out, 2 * WIDTH - 1, &rows),
        TALLY_INCOMPLETE);
    assert_int_equal(rows, 1);
    assert_int_equal(out[md_metric_index(fx->set, "DrawCalls")].value.u64, 4);
    /* one report opens an interval and closes none */
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, REPORT_SIZE, out, 2 * WIDTH - 1, &rows),
        TALLY_OK);
    assert_int_equal(rows, 0);
}

static void reports_of_another_set_or_a_partial_report_are_invalid(void **state)
{
    struct calc_fixture *fx = *state;
    tally_md_typed_value out[2 * WIDTH];
    uint32_t rows = 9;
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, fx->raw, sizeof fx->raw - 1, out, 2 * WIDTH, &rows),
        TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(rows, 0);
    tally_md_metric_set *compute = md_find_set(fx->md, "ComputeBasic");
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(compute);
    assert_int_not_equal(p->raw_report_size, 0);
    uint8_t other[2 * REPORT_SIZE];
    memcpy(other, fx->raw, sizeof other);
    other[0x1c] ^= 1; /* another set's index */
    assert_int_equal(
        tally_md_calculate_metrics(fx->set, other, sizeof other, out, 2 * WIDTH, &rows),
        TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(
        tally_md_calculate_metrics(NULL, fx->raw, sizeof fx->raw, out, 2 * WIDTH, &rows),
        TALLY_ERROR_INVALID_ARGUMENT);
}

/* --- query reports (one command each) ------------------------------------- */

#define QUERY_SIZE (0x28 + 8 * N) /* the header and eight bytes a counter */

/* RenderBasic's raw counters in report order, by catalogue symbol. */
static const char *const raw_symbols[N] = {"GpuTime",
                                           "GpuCoreClocks",
                                           "GpuBusyCycles",
                                           "DrawCalls",
                                           "VsInvocations",
                                           "RasterizedPixels",
                                           "FsInvocations",
                                           "SamplesWritten",
                                           "ShaderAluInstructions",
                                           "ShaderTexInstructions",
                                           "ShaderBusyCycles",
                                           "TexelsFetched",
                                           "L2CacheHits",
                                           "L2CacheRequests",
                                           "DramReadBytes",
                                           "DramWriteBytes"};

/* The interval A to B of the stream fixture as one command's deltas. */
static void write_query(uint16_t set, const uint64_t deltas[N], uint8_t *p)
{
    memset(p, 0, QUERY_SIZE);
    put(p + 0x00, 42, 4);       /* query id */
    put(p + 0x04, 1u << 31, 4); /* no reason; context valid */
    put(p + 0x08, 3, 4);        /* context */
    put(p + 0x0c, 1000, 4);     /* MHz */
    put(p + 0x10, 1000000, 8);  /* began */
    put(p + 0x18, 1100000, 8);  /* ended */
    put(p + 0x20, set, 2);
    put(p + 0x22, N, 2);
    put(p + 0x24, 0x59525154u, 4); /* "TQRY" */
    for (int k = 0; k < N; k++)
        put(p + 0x28 + 8 * k, deltas[k], 8);
}

static void a_query_report_is_one_commands_counters(void **state)
{
    struct calc_fixture *fx = *state;
    const tally_md_metric_set_params *p = tally_md_metric_set_get_params(fx->set);
    assert_int_equal(p->query_report_size, QUERY_SIZE);
    uint64_t deltas[N] = {0};
    deltas[GPU_TIME] = 100000;
    deltas[GPU_CORE_CLOCKS] = 100000;
    deltas[GPU_BUSY_CYCLES] = 50000;
    deltas[DRAW_CALLS] = 4;
    deltas[VS_INVOCATIONS] = 6;
    deltas[FS_INVOCATIONS] = 1ull << 41; /* wider than a stream counter */
    deltas[SHADER_BUSY_CYCLES] = 25000;
    deltas[L2_HITS] = 30;
    deltas[L2_REQUESTS] = 40;
    uint8_t golden[QUERY_SIZE];
    write_query(fx->set_index, deltas, golden);

    /* written from an engine raw vector and slot info, it is the golden */
    const tally_catalogue *cat = tally_device_catalogue(fx->device);
    uint64_t raw[256] = {0};
    assert_true(tally_catalogue_raw_count(cat) <= 256);
    for (int k = 0; k < N; k++) {
        uint32_t index;
        assert_int_equal(tally_catalogue_find(cat, raw_symbols[k], &index), TALLY_OK);
        raw[tally_catalogue_counter(cat, index)->raw_index] = deltas[k];
    }
    tally_slot_info info = {.begin_ns = 1000000, .end_ns = 1100000, .context_id = 3};
    uint8_t written[QUERY_SIZE];
    assert_int_equal(
        tally_md_encode_query_report(fx->set, raw, &info, 42, 1000, written, sizeof written),
        TALLY_OK);
    assert_memory_equal(written, golden, QUERY_SIZE);

    tally_md_typed_value out[WIDTH];
    uint32_t rows = 0;
    assert_int_equal(
        tally_md_calculate_query_metrics(fx->set, golden, QUERY_SIZE, out, WIDTH, &rows), TALLY_OK);
    assert_int_equal(rows, 1);
    assert_int_equal(metric(fx, out, "GpuTime")->value.u64, 100000);
    assert_int_equal(metric(fx, out, "DrawCalls")->value.u64, 4);
    assert_int_equal(metric(fx, out, "PsInvocations")->value.u64, 1ull << 41);
    assert_true(metric(fx, out, "GpuBusy")->value.f64 == 50.0);
    assert_true(metric(fx, out, "EuActive")->value.f64 == 25.0);
    assert_true(metric(fx, out, "L2CacheHitRate")->value.f64 == 75.0);
    const tally_md_typed_value *i = out + 16;
    assert_int_equal(i[TALLY_MD_INFO_QUERY_BEGIN_TIME].value.u64, 1000000);
    assert_int_equal(i[TALLY_MD_INFO_QUERY_END_TIME].value.u64, 1100000);
    assert_int_equal(i[TALLY_MD_INFO_REPORT_REASON].value.u32, 0);
    assert_int_equal(i[TALLY_MD_INFO_REPORT_ID].value.u32, 42);
    assert_true(i[TALLY_MD_INFO_CONTEXT_ID_VALID].value.b);
    assert_int_equal(i[TALLY_MD_INFO_CONTEXT_ID].value.u32, 3);
    assert_int_equal(i[TALLY_MD_INFO_CORE_FREQUENCY_MHZ].value.u32, 1000);
    assert_false(i[TALLY_MD_INFO_REPORT_LOST].value.b);

    /* stream reports are not query reports, nor a short one */
    uint8_t stream[QUERY_SIZE];
    memcpy(stream, fx->raw, sizeof stream);
    assert_int_equal(
        tally_md_calculate_query_metrics(fx->set, stream, QUERY_SIZE, out, WIDTH, &rows),
        TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(
        tally_md_calculate_query_metrics(fx->set, golden, QUERY_SIZE - 8, out, WIDTH, &rows),
        TALLY_ERROR_INVALID_ARGUMENT);
    assert_int_equal(tally_md_encode_query_report(fx->set, raw, &info, 42, 1000, written, 8),
                     TALLY_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counters_are_deltas_modulo_2_to_the_40, setup, teardown),
        cmocka_unit_test_setup_teardown(derived_metrics_follow_their_equations, setup, teardown),
        cmocka_unit_test_setup_teardown(information_items_describe_each_interval, setup, teardown),
        cmocka_unit_test_setup_teardown(the_same_bytes_give_the_same_values, setup, teardown),
        cmocka_unit_test_setup_teardown(a_short_output_holds_whole_reports_and_says_so, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(reports_of_another_set_or_a_partial_report_are_invalid,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_query_report_is_one_commands_counters, setup, teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
