/*
 * libigdmd.so as an MDAPI tool uses it, in process: dlopen, OpenAdapterGroup,
 * the device, enumeration, streams, calculation, timestamps, and every error
 * path the header defines a code for. Work is submitted to tally's shared
 * device through libtally's own API here (the front doors' programs run in
 * mdapi_client.cpp); the truths are the dispatched work (groups x local size),
 * the C API's own view of the same device, and CLOCK_MONOTONIC.
 */
#include <atomic>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>
extern "C" {
#include <cmocka.h>
}

#include <tally/tally.h>

#include "mdapi_abi.h"

using namespace MetricsDiscovery;

enum { LOCAL_SIZE = 8 };

struct fixture {
    void *lib;
    IAdapterGroupLatest *group;
    IAdapterLatest *adapter;
    IMetricsDeviceLatest *device;
};

static void *symbol(void *lib, const char *name)
{
    void *s = dlsym(lib, name);
    assert_non_null(s);
    return s;
}

static int setup(void **state)
{
    static fixture fx;
    fx = {};
    fx.lib = dlopen(LIBIGDMD, RTLD_NOW | RTLD_LOCAL);
    if (!fx.lib)
        return -1;
    auto open = reinterpret_cast<OpenAdapterGroup_fn>(dlsym(fx.lib, "OpenAdapterGroup"));
    if (!open || open(&fx.group) != CC_OK)
        return -1;
    fx.adapter = fx.group->GetAdapter(0);
    if (!fx.adapter || fx.adapter->OpenMetricsDevice(&fx.device) != CC_OK)
        return -1;
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    int bad = fx->adapter->CloseMetricsDevice(fx->device) != CC_OK;
    bad |= fx->group->Close() != CC_OK;
    dlclose(fx->lib);
    return bad ? -1 : 0;
}

static IConcurrentGroupLatest *find_group(IMetricsDeviceLatest *device, const char *symbol)
{
    for (uint32_t g = 0; g < device->GetParams()->ConcurrentGroupsCount; g++)
        if (strcmp(device->GetConcurrentGroup(g)->GetParams()->SymbolName, symbol) == 0)
            return device->GetConcurrentGroup(g);
    fail_msg("no concurrent group %s", symbol);
    return nullptr;
}

static IMetricSetLatest *find_set(IConcurrentGroupLatest *group, const char *symbol)
{
    for (uint32_t s = 0; s < group->GetParams()->MetricSetsCount; s++)
        if (strcmp(group->GetMetricSet(s)->GetParams()->SymbolName, symbol) == 0)
            return group->GetMetricSet(s);
    fail_msg("no metric set %s", symbol);
    return nullptr;
}

static uint32_t metric_index(IMetricSetLatest *set, const char *symbol)
{
    for (uint32_t m = 0; m < set->GetParams()->MetricsCount; m++)
        if (strcmp(set->GetMetric(m)->GetParams()->SymbolName, symbol) == 0)
            return m;
    fail_msg("no metric %s", symbol);
    return 0;
}

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- work on the shared device ------------------------------------------------------- */

/* `dispatches` dispatches of `groups` groups of LOCAL_SIZE, submitted and
 * executed; returns the GPU time by which they all ran. */
static uint64_t dispatch(uint32_t dispatches, uint32_t groups)
{
    tally_device *device = nullptr;
    tally_context *ctx = nullptr;
    tally_stream *stream = nullptr;
    tally_program *program = nullptr;
    assert_int_equal(tally_device_acquire_shared(&device), TALLY_OK);
    assert_int_equal(tally_context_create(device, "igdmd-test", &ctx), TALLY_OK);
    assert_int_equal(tally_stream_create(ctx, &stream), TALLY_OK);
    tally_program_desc desc = {};
    desc.name = "fill";
    desc.stages[TALLY_STAGE_COMPUTE].present = true;
    desc.stages[TALLY_STAGE_COMPUTE].mix.alu = 10;
    desc.stages[TALLY_STAGE_COMPUTE].local_size[0] = LOCAL_SIZE;
    assert_int_equal(tally_program_create(device, &desc, &program), TALLY_OK);
    assert_int_equal(tally_stream_bind_program(stream, program), TALLY_OK);
    for (uint32_t i = 0; i < dispatches; i++) {
        tally_dispatch d = {};
        d.api_name = "dispatch";
        d.groups[0] = groups;
        d.groups[1] = d.groups[2] = 1;
        assert_int_equal(tally_stream_dispatch(stream, &d), TALLY_OK);
    }
    tally_submission sub = {};
    sub.streams = &stream;
    sub.stream_count = 1;
    sub.flags = TALLY_SUBMIT_CONSUME;
    sub.api_name = "submit";
    assert_int_equal(tally_submit(device, &sub, nullptr), TALLY_OK);
    assert_int_equal(tally_device_wait_idle(device), TALLY_OK);
    uint64_t covered = tally_device_covered_gpu_ns(device);
    tally_stream_destroy(stream);
    tally_program_release(program);
    tally_context_destroy(ctx);
    tally_device_release_shared(device);
    return covered;
}

/* The GPU time of a raw report (docs/metrics-discovery.md: u64 at 0x10). */
static uint64_t report_time(const uint8_t *report)
{
    uint64_t t;
    memcpy(&t, report + 0x10, sizeof(t));
    return t;
}

/* Reads the guide's way (wait, then read with DROP_OLD_REPORTS into a buffer
 * as large as the stream's) until a report at or after `until`; a deadline
 * only bounds a failure. */
static void read_until(IConcurrentGroupLatest *group, uint32_t buffer_size, uint32_t report_size,
                       uint64_t until, std::vector<uint8_t> &raw)
{
    std::vector<uint8_t> buffer(buffer_size);
    uint64_t deadline = now_ns(CLOCK_MONOTONIC) + 20000000000ull;
    while (raw.empty() || report_time(&raw[raw.size() - report_size]) < until) {
        assert_true(now_ns(CLOCK_MONOTONIC) < deadline);
        TCompletionCode cc = group->WaitForReports(100);
        assert_true(cc == CC_OK || cc == CC_WAIT_TIMEOUT);
        uint32_t count = buffer_size / report_size;
        cc = group->ReadIoStream(&count, reinterpret_cast<char *>(buffer.data()),
                                 IO_READ_FLAG_DROP_OLD_REPORTS);
        assert_true(cc == CC_OK || cc == CC_READ_PENDING);
        raw.insert(raw.end(), buffer.begin(), buffer.begin() + (size_t)count * report_size);
    }
}

static std::vector<TTypedValue_1_0> calculate(IMetricSetLatest *set,
                                              const std::vector<uint8_t> &raw, uint32_t *rows,
                                              std::vector<TTypedValue_1_0> *max_values = nullptr)
{
    const TMetricSetParamsLatest *p = set->GetParams();
    uint32_t reports = (uint32_t)(raw.size() / p->RawReportSize);
    uint32_t values = p->MetricsCount + p->InformationCount;
    std::vector<TTypedValue_1_0> out((size_t)reports * values);
    if (max_values)
        max_values->resize((size_t)reports * p->MetricsCount);
    assert_int_equal(set->CalculateMetrics(
                         raw.data(), (uint32_t)raw.size(), out.data(),
                         (uint32_t)(out.size() * sizeof(TTypedValue_1_0)), rows,
                         max_values ? max_values->data() : nullptr,
                         max_values ? (uint32_t)(max_values->size() * sizeof(TTypedValue_1_0)) : 0),
                     CC_OK);
    return out;
}

static uint64_t sum_u64(IMetricSetLatest *set, const std::vector<TTypedValue_1_0> &values,
                        uint32_t rows, uint32_t column)
{
    uint32_t width = set->GetParams()->MetricsCount + set->GetParams()->InformationCount;
    uint64_t sum = 0;
    for (uint32_t r = 0; r < rows; r++) {
        assert_int_equal(values[(size_t)r * width + column].ValueType, VALUE_TYPE_UINT64);
        sum += values[(size_t)r * width + column].ValueUInt64;
    }
    return sum;
}

/* --- what the device says about itself ---------------------------------------------- */

static void versions_are_the_interface_implemented(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    const TAdapterGroupParamsLatest *g = fx->group->GetParams();
    assert_int_equal(g->Version.MajorNumber, 1);
    assert_int_equal(g->Version.MinorNumber, 13);
    assert_int_equal(g->Version.BuildNumber, 180);
    assert_int_equal(g->AdapterCount, 1);
    const TMetricsDeviceParamsLatest *d = fx->device->GetParams();
    assert_memory_equal(&d->Version, &g->Version, sizeof(g->Version));
    assert_int_equal(d->OverrideCount, 0);
    const TAdapterParamsLatest *a = fx->adapter->GetParams();
    assert_string_equal(a->ShortName, d->DeviceName);
    assert_int_equal(a->SubDevicesCount, 0);
    assert_int_equal(a->CapabilityMask, ADAPTER_CAPABILITY_RENDER_SUPPORTED);
}

static void global_symbols_are_tallys_and_mdapis_names(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    tally_md_device *md = nullptr;
    assert_int_equal(tally_md_device_open_shared(&md), TALLY_OK);
    const tally_md_device_params *c = tally_md_device_get_params(md);
    assert_int_equal(fx->device->GetParams()->GlobalSymbolsCount, c->global_symbols_count + 1);
    for (uint32_t i = 0; i < c->global_symbols_count; i++)
        assert_string_equal(fx->device->GetGlobalSymbol(i)->SymbolName,
                            tally_md_device_get_global_symbol(md, i)->symbol_name);
    TTypedValue_1_0 *freq = fx->device->GetGlobalSymbolValueByName("GpuTimestampFrequency");
    assert_non_null(freq);
    tally_device_info info;
    tally_device_get_info(tally_md_device_engine(md), &info);
    assert_int_equal(freq->ValueType, VALUE_TYPE_UINT64);
    assert_int_equal(freq->ValueUInt64, info.timestamp_frequency_hz);
    TTypedValue_1_0 *eus = fx->device->GetGlobalSymbolValueByName("EuCoresTotalCount");
    assert_non_null(eus);
    assert_int_equal(eus->ValueType, VALUE_TYPE_UINT32);
    assert_int_equal(
        eus->ValueUInt32,
        tally_md_device_find_global_symbol(md, "ShaderCoresTotalCount")->value.value.u64);
    TTypedValue_1_0 *max = fx->device->GetGlobalSymbolValueByName("MaxTimestamp");
    assert_non_null(max);
    assert_int_equal(max->ValueUInt64, UINT64_MAX);
    TTypedValue_1_0 *name = fx->device->GetGlobalSymbolValueByName("DeviceName");
    assert_int_equal(name->ValueType, VALUE_TYPE_CSTRING);
    assert_string_equal(name->ValueCString, info.name);
    tally_md_device_close(md);
}

/* Groups, sets, metrics and information items are the C API's, typed as
 * MDAPI types them. */
static void enumeration_is_the_c_apis(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    tally_md_device *md = nullptr;
    assert_int_equal(tally_md_device_open_shared(&md), TALLY_OK);
    uint32_t groups = fx->device->GetParams()->ConcurrentGroupsCount;
    assert_int_equal(groups, tally_md_device_get_params(md)->concurrent_groups_count);
    for (uint32_t g = 0; g < groups; g++) {
        IConcurrentGroupLatest *group = fx->device->GetConcurrentGroup(g);
        tally_md_concurrent_group *cg = tally_md_device_get_concurrent_group(md, g);
        assert_string_equal(group->GetParams()->SymbolName,
                            tally_md_concurrent_group_get_params(cg)->symbol_name);
        assert_int_equal(group->GetParams()->MeasurementTypeMask, MEASUREMENT_TYPE_SNAPSHOT_IO);
        for (uint32_t s = 0; s < group->GetParams()->MetricSetsCount; s++) {
            IMetricSetLatest *set = group->GetMetricSet(s);
            const tally_md_metric_set_params *cp =
                tally_md_metric_set_get_params(tally_md_concurrent_group_get_metric_set(cg, s));
            const TMetricSetParamsLatest *p = set->GetParams();
            assert_string_equal(p->SymbolName, cp->symbol_name);
            assert_int_equal(p->RawReportSize, cp->raw_report_size);
            assert_int_equal(p->MetricsCount, cp->metrics_count);
            assert_int_equal(p->InformationCount, cp->information_count);
            /* Every catalogue set fits one pass (catalogue.h), and one pass
             * is what the query doors take: each set streams and is served
             * per command by the CL shim and GL_INTEL_performance_query,
             * under its catalogue position + 1 (the GL query id). */
            const tally_catalogue *cat = tally_device_catalogue(tally_md_device_engine(md));
            uint32_t position = UINT32_MAX;
            for (uint32_t i = 0; i < tally_catalogue_metric_set_count(cat); i++)
                if (strcmp(tally_catalogue_metric_set(cat, i)->symbol, p->SymbolName) == 0)
                    position = i;
            assert_int_equal(p->ApiMask,
                             API_TYPE_IOSTREAM | API_TYPE_OGL | API_TYPE_OGL4_X | API_TYPE_OCL);
            assert_int_equal(p->ApiSpecificId.OCL, position + 1);
            assert_int_equal(p->ApiSpecificId.OGLQueryIntelId, position + 1);
            assert_string_equal(p->ApiSpecificId.OGLQueryIntelName, p->SymbolName);
            assert_int_equal(p->QueryReportSize, cp->query_report_size);
            /* the header and eight bytes a raw counter */
            assert_int_equal(p->QueryReportSize, 0x28 + 8 * cp->raw_counter_count);
            tally_md_metric_set *cs = tally_md_concurrent_group_get_metric_set(cg, s);
            for (uint32_t m = 0; m < p->MetricsCount; m++) {
                const TMetricParamsLatest *mp = set->GetMetric(m)->GetParams();
                const tally_md_metric_params *cm = tally_md_metric_set_get_metric(cs, m);
                assert_string_equal(mp->SymbolName, cm->symbol_name);
                assert_string_equal(mp->MetricResultUnits, cm->units);
                assert_int_equal(mp->ApiMask, p->ApiMask);
                assert_int_equal(mp->IdInSet, m);
                assert_null(mp->IoReadEquation);
                assert_int_equal(mp->ResultType,
                                 cm->result_type == TALLY_MD_VALUE_UINT64   ? RESULT_UINT64
                                 : cm->result_type == TALLY_MD_VALUE_UINT32 ? RESULT_UINT32
                                                                            : RESULT_FLOAT);
            }
            for (uint32_t i = 0; i < p->InformationCount; i++)
                assert_string_equal(set->GetInformation(i)->GetParams()->SymbolName,
                                    tally_md_metric_set_get_information(cs, i)->symbol_name);
        }
    }
    tally_md_device_close(md);
}

/* Opens are counted; the legacy entry points share the adapter's device. */
static void opens_and_closes_are_counted(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    auto open_group = reinterpret_cast<OpenAdapterGroup_fn>(symbol(fx->lib, "OpenAdapterGroup"));
    auto open_device = reinterpret_cast<OpenMetricsDevice_fn>(symbol(fx->lib, "OpenMetricsDevice"));
    auto close_device =
        reinterpret_cast<CloseMetricsDevice_fn>(symbol(fx->lib, "CloseMetricsDevice"));
    IAdapterGroupLatest *group = nullptr;
    assert_int_equal(open_group(&group), CC_ALREADY_INITIALIZED);
    assert_ptr_equal(group, fx->group);
    IMetricsDevice_1_5 *older = nullptr;
    assert_int_equal(fx->adapter->OpenMetricsDevice(&older), CC_ALREADY_INITIALIZED);
    assert_ptr_equal(older, static_cast<IMetricsDevice_1_5 *>(fx->device));
    IMetricsDeviceLatest *legacy = nullptr;
    assert_int_equal(open_device(&legacy), CC_ALREADY_INITIALIZED);
    assert_ptr_equal(legacy, fx->device);
    assert_int_equal(close_device(legacy), CC_STILL_INITIALIZED); /* and the group's count */
    assert_int_equal(fx->adapter->CloseMetricsDevice(older), CC_STILL_INITIALIZED);
    assert_int_equal(group->Close(), CC_STILL_INITIALIZED);
    assert_int_equal(fx->adapter->Reset(), CC_ERROR_GENERAL); /* a device is open */
}

/* --- streams ------------------------------------------------------------------------------- */

/* The C API's sampling under MDAPI's calls: CsInvocations of every
 * calculated report add up to groups x local size of what was dispatched. */
static void compute_invocations_add_up_to_the_dispatched_work(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    IMetricSetLatest *set = find_set(group, "ComputeBasic");
    assert_int_equal(set->SetApiFiltering(API_TYPE_IOSTREAM), CC_OK);
    uint32_t period = 100000, size = 0;
    assert_int_equal(group->OpenIoStream(set, 0, &period, &size), CC_OK);
    assert_int_equal(period, 100000);
    assert_true(size > 0 && size % set->GetParams()->RawReportSize == 0);
    uint64_t covered = dispatch(40, 250);
    std::vector<uint8_t> raw;
    read_until(group, size, set->GetParams()->RawReportSize, covered, raw);
    assert_int_equal(group->CloseIoStream(), CC_OK);

    uint32_t rows = 0;
    std::vector<TTypedValue_1_0> max;
    std::vector<TTypedValue_1_0> values = calculate(set, raw, &rows, &max);
    assert_int_equal(rows, raw.size() / set->GetParams()->RawReportSize - 1);
    uint32_t cs = metric_index(set, "CsInvocations");
    assert_int_equal(sum_u64(set, values, rows, cs), 40ull * 250 * LOCAL_SIZE);
    assert_int_equal(sum_u64(set, values, rows, metric_index(set, "CsWorkgroups")), 40ull * 250);

    /* 1.5's max values: a percentage's is 100; an event's is itself. */
    uint32_t width = set->GetParams()->MetricsCount + set->GetParams()->InformationCount;
    uint32_t busy = metric_index(set, "GpuBusy"), metrics = set->GetParams()->MetricsCount;
    for (uint32_t r = 0; r < rows; r++) {
        assert_int_equal(max[(size_t)r * metrics + busy].ValueType, VALUE_TYPE_FLOAT);
        assert_true(max[(size_t)r * metrics + busy].ValueFloat == 100.0f);
        assert_int_equal(max[(size_t)r * metrics + cs].ValueUInt64,
                         values[(size_t)r * width + cs].ValueUInt64);
        const TTypedValue_1_0 &reason = values[(size_t)r * width + metrics + 2];
        assert_int_equal(reason.ValueUInt32, REPORT_REASON_INTERNAL_TIMER);
    }
    /* 1.1's form gives the same values. */
    std::vector<TTypedValue_1_0> again(values.size());
    uint32_t rows_again = 0;
    IMetricSet_1_1 *v11 = set;
    assert_int_equal(v11->CalculateMetrics(raw.data(), (uint32_t)raw.size(), again.data(),
                                           (uint32_t)(again.size() * sizeof(TTypedValue_1_0)),
                                           &rows_again, false),
                     CC_OK);
    assert_int_equal(rows_again, rows);
    assert_memory_equal(again.data(), values.data(), (size_t)rows * width * sizeof(again[0]));
}

/* A reader thread waits and reads (DROP_OLD_REPORTS, a buffer as large as the
 * stream's, so nothing is dropped) while this thread submits. */
static void a_reader_thread_sees_all_work_submitted_meanwhile(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    IMetricSetLatest *set = find_set(group, "ComputeBasic");
    assert_int_equal(set->SetApiFiltering(API_TYPE_IOSTREAM), CC_OK);
    uint32_t period = 50000, size = 0;
    assert_int_equal(group->OpenIoStream(set, (uint32_t)getpid(), &period, &size), CC_OK);
    std::atomic<uint64_t> until{UINT64_MAX};
    std::atomic<bool> lost{false};
    std::vector<uint8_t> raw;
    uint32_t report = set->GetParams()->RawReportSize;
    std::thread reader([&] {
        std::vector<uint8_t> buffer(size);
        uint64_t deadline = now_ns(CLOCK_MONOTONIC) + 30000000000ull;
        while ((raw.empty() || report_time(&raw[raw.size() - report]) < until.load()) &&
               now_ns(CLOCK_MONOTONIC) < deadline) {
            group->WaitForReports(50);
            uint32_t count = size / report;
            group->ReadIoStream(&count, reinterpret_cast<char *>(buffer.data()),
                                IO_READ_FLAG_DROP_OLD_REPORTS);
            TTypedValue_1_0 io[2];
            set->CalculateIoMeasurementInformation(io, 2);
            lost = lost || io[1].ValueBool;
            raw.insert(raw.end(), buffer.begin(), buffer.begin() + (size_t)count * report);
        }
    });
    uint64_t covered = 0;
    for (int i = 0; i < 20; i++)
        covered = dispatch(5, 100 + i);
    until = covered;
    reader.join();
    assert_int_equal(group->CloseIoStream(), CC_OK);
    assert_false(lost.load());
    uint32_t rows = 0;
    std::vector<TTypedValue_1_0> values = calculate(set, raw, &rows);
    uint64_t expected = 0;
    for (int i = 0; i < 20; i++)
        expected += 5ull * (100 + i) * LOCAL_SIZE;
    assert_int_equal(sum_u64(set, values, rows, metric_index(set, "CsInvocations")), expected);
}

/* OpenIoStream adjusts the period and buffer size in and out. */
static void the_period_and_buffer_size_are_adjusted(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    IMetricSetLatest *set = group->GetMetricSet(0);
    uint32_t report = set->GetParams()->RawReportSize;
    uint32_t period = 0, size = 0;
    assert_int_equal(group->OpenIoStream(set, 0, &period, &size), CC_OK);
    assert_int_equal(period, TALLY_MD_DEFAULT_INTERVAL_NS);
    assert_int_equal(size, report * (1000000000u / TALLY_MD_DEFAULT_INTERVAL_NS));
    assert_int_equal(group->CloseIoStream(), CC_OK);
    period = 1;
    size = 1;
    assert_int_equal(group->OpenIoStream(set, 0, &period, &size), CC_OK);
    assert_true(period >= TALLY_MD_MIN_INTERVAL_NS);
    assert_int_equal(size, report * TALLY_MD_MIN_BUFFER_REPORTS);
    assert_int_equal(group->CloseIoStream(), CC_OK);
}

/* One set per concurrent group at a time; other groups stream meanwhile. */
static void a_concurrent_group_streams_one_set_at_a_time(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *oa = find_group(fx->device, "OA");
    IConcurrentGroupLatest *stats = find_group(fx->device, "PipelineStatistics");
    uint32_t period = 0, size = 0;
    assert_int_equal(oa->OpenIoStream(oa->GetMetricSet(0), 0, &period, &size), CC_OK);
    assert_int_equal(oa->OpenIoStream(oa->GetMetricSet(1), 0, &period, &size),
                     CC_CONCURRENT_GROUP_LOCKED);
    assert_int_equal(oa->OpenIoStream(oa->GetMetricSet(0), 0, &period, &size),
                     CC_CONCURRENT_GROUP_LOCKED);
    assert_int_equal(fx->device->GetLastError(), CC_CONCURRENT_GROUP_LOCKED);
    /* the C API's own view of the same device sees the group as taken */
    tally_md_device *md = nullptr;
    assert_int_equal(tally_md_device_open_shared(&md), TALLY_OK);
    tally_md_concurrent_group *c_oa = tally_md_device_get_concurrent_group(md, 0);
    assert_int_equal(tally_md_open_io_stream(
                         c_oa, tally_md_concurrent_group_get_metric_set(c_oa, 0), &period, &size),
                     TALLY_ERROR_INVALID_STATE);
    tally_md_device_close(md);
    assert_int_equal(stats->OpenIoStream(stats->GetMetricSet(0), 0, &period, &size), CC_OK);
    assert_int_equal(stats->CloseIoStream(), CC_OK);
    assert_int_equal(oa->CloseIoStream(), CC_OK);
    assert_int_equal(oa->OpenIoStream(oa->GetMetricSet(1), 0, &period, &size), CC_OK);
    assert_int_equal(oa->CloseIoStream(), CC_OK);
}

/* Empties the stream: its capacity is size bytes of reports. */
static void read_everything(IConcurrentGroupLatest *group, uint32_t size)
{
    std::vector<char> buffer(size);
    TCompletionCode cc;
    do {
        uint32_t count = size / group->GetMetricSet(0)->GetParams()->RawReportSize;
        cc = group->ReadIoStream(&count, buffer.data(), 0);
    } while (cc == CC_READ_PENDING);
    assert_int_equal(cc, CC_OK);
}

/* The first report comes at open; the next not before the period (4 s). */
static void a_wait_times_out(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    uint32_t period = 4000000000u, size = 0;
    assert_int_equal(group->OpenIoStream(group->GetMetricSet(0), 0, &period, &size), CC_OK);
    assert_int_equal(group->WaitForReports(1000), CC_OK);
    read_everything(group, size);
    assert_int_equal(group->WaitForReports(1), CC_WAIT_TIMEOUT);
    assert_int_equal(group->WaitForReports(0), CC_WAIT_TIMEOUT);
    assert_int_equal(group->CloseIoStream(), CC_OK);
}

/* A wait in another thread ends with CC_INTERRUPTED when the stream closes.
 * Whether the waiter got in first is up to the scheduler: it tries again
 * until it did (a closed stream answers CC_ERROR_GENERAL). */
static void closing_a_stream_interrupts_its_wait(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    TCompletionCode seen = CC_ERROR_GENERAL;
    for (int attempt = 0; attempt < 50 && seen != CC_INTERRUPTED; attempt++) {
        uint32_t period = 4000000000u, size = 0;
        assert_int_equal(group->OpenIoStream(group->GetMetricSet(0), 0, &period, &size), CC_OK);
        assert_int_equal(group->WaitForReports(1000), CC_OK); /* the one taken at open */
        read_everything(group, size);
        std::atomic<bool> started{false};
        std::thread waiter([&] {
            started = true;
            seen = group->WaitForReports(60000);
        });
        while (!started)
            std::this_thread::yield();
        usleep(1000u * (attempt + 1));
        assert_int_equal(group->CloseIoStream(), CC_OK);
        waiter.join();
        if (seen != CC_INTERRUPTED && seen != CC_ERROR_GENERAL)
            fail_msg("the wait answered %d", seen);
    }
    assert_int_equal(seen, CC_INTERRUPTED);
}

/* A read of fewer reports than wait, with DROP_OLD_REPORTS, returns the
 * newest and says reports were lost, in the IO measurement information and
 * in the ReportLost item of the interval that spans the gap. */
static void dropped_reports_are_reported_lost(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    IMetricSetLatest *set = group->GetMetricSet(0);
    assert_int_equal(set->SetApiFiltering(API_TYPE_IOSTREAM), CC_OK);
    uint32_t report = set->GetParams()->RawReportSize;
    uint32_t period = 10000, size = 64 * report;
    assert_int_equal(group->OpenIoStream(set, 0, &period, &size), CC_OK);
    std::vector<uint8_t> two(2 * (size_t)report);
    uint32_t count = 1;
    assert_int_equal(group->WaitForReports(1000), CC_OK);
    assert_true(group->ReadIoStream(&count, reinterpret_cast<char *>(two.data()), 0) !=
                CC_ERROR_GENERAL);
    assert_int_equal(count, 1);
    TTypedValue_1_0 io[2];
    uint64_t deadline = now_ns(CLOCK_MONOTONIC) + 20000000000ull;
    do { /* until more than one report waited */
        assert_true(now_ns(CLOCK_MONOTONIC) < deadline);
        usleep(1000);
        count = 1;
        TCompletionCode cc = group->ReadIoStream(
            &count, reinterpret_cast<char *>(two.data() + report), IO_READ_FLAG_DROP_OLD_REPORTS);
        assert_true(cc == CC_OK || cc == CC_READ_PENDING);
        assert_int_equal(set->CalculateIoMeasurementInformation(io, 2), CC_OK);
        if (!io[1].ValueBool)
            memcpy(two.data(), two.data() + report, report); /* nothing lost: go on from it */
    } while (count != 1 || !io[1].ValueBool);
    assert_int_equal(io[0].ValueType, VALUE_TYPE_UINT32);
    assert_true(io[0].ValueUInt32 > 0); /* core frequency */
    assert_int_equal(group->CloseIoStream(), CC_OK);
    uint32_t rows = 0;
    std::vector<TTypedValue_1_0> values = calculate(set, two, &rows);
    assert_int_equal(rows, 1);
    uint32_t metrics = set->GetParams()->MetricsCount;
    const TTypedValue_1_0 &report_lost = values[metrics + TALLY_MD_INFO_REPORT_LOST];
    assert_int_equal(report_lost.ValueType, VALUE_TYPE_BOOL);
    assert_true(report_lost.ValueBool);
    assert_string_equal(set->GetInformation(TALLY_MD_INFO_REPORT_LOST)->GetParams()->SymbolName,
                        "ReportLost");
}

/* --- timestamps ------------------------------------------------------------------------ */

static void gpu_cpu_timestamps_pair_gpu_time_with_clock_monotonic(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    uint64_t gpu = 0, cpu = 0, gpu2 = 0, cpu2 = 0, window = 7;
    uint32_t cpu_id = UINT32_MAX;
    uint64_t before = now_ns(CLOCK_MONOTONIC);
    IMetricsDevice_1_0 *v10 = fx->device;
    assert_int_equal(v10->GetGpuCpuTimestamps(&gpu, &cpu, nullptr), CC_OK); /* the guide's call */
    uint64_t after = now_ns(CLOCK_MONOTONIC);
    assert_true(before <= cpu && cpu <= after);
    assert_int_equal(fx->device->GetGpuCpuTimestamps(&gpu2, &cpu2, &cpu_id, &window), CC_OK);
    assert_int_equal(window, 0);
    assert_true(cpu_id < (uint32_t)sysconf(_SC_NPROCESSORS_CONF));
    assert_true(gpu2 >= gpu);
    assert_int_equal(cpu2 - gpu2, cpu - gpu); /* realtime clock: one offset */
}

/* --- bad input ------------------------------------------------------------------------------ */

static void calculation_checks_its_filter_and_buffers(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    IMetricSetLatest *set = group->GetMetricSet(0);
    IMetricSetLatest *other = group->GetMetricSet(1);
    uint32_t report = set->GetParams()->RawReportSize;
    uint32_t values = set->GetParams()->MetricsCount + set->GetParams()->InformationCount;
    uint32_t row = values * (uint32_t)sizeof(TTypedValue_1_0);
    uint32_t period = 10000, size = 0;
    assert_int_equal(group->OpenIoStream(set, 0, &period, &size), CC_OK);
    assert_int_equal(set->SetApiFiltering(API_TYPE_IOSTREAM), CC_ERROR_GENERAL); /* streaming */
    std::vector<uint8_t> raw(3 * (size_t)report);
    uint32_t count = 0;
    uint64_t deadline = now_ns(CLOCK_MONOTONIC) + 20000000000ull;
    for (uint32_t got = 0; got < 3; got += count) {
        assert_true(now_ns(CLOCK_MONOTONIC) < deadline);
        group->WaitForReports(100);
        count = 3 - got;
        group->ReadIoStream(&count, reinterpret_cast<char *>(raw.data() + (size_t)got * report), 0);
    }
    assert_int_equal(group->CloseIoStream(), CC_OK);
    std::vector<TTypedValue_1_0> out(3 * (size_t)values), max(3 * (size_t)values);
    uint32_t rows = 99;
    auto calc = [&](IMetricSetLatest *s, uint32_t raw_size, uint32_t out_size, uint32_t max_size) {
        return s->CalculateMetrics(raw.data(), raw_size, out.data(), out_size, &rows,
                                   max_size ? max.data() : nullptr, max_size);
    };
    assert_int_equal(set->SetApiFiltering(0), CC_OK);
    assert_int_equal(calc(set, 3 * report, 3 * row, 0), CC_ERROR_GENERAL); /* no filter */
    assert_int_equal(set->SetApiFiltering(API_TYPE_IOSTREAM | API_TYPE_OGL),
                     CC_ERROR_INVALID_PARAMETER); /* stream and query mixed */
    assert_int_equal(set->SetApiFiltering(API_TYPE_DX11), CC_OK);
    assert_int_equal(set->GetParams()->MetricsCount, 0); /* no door of that API */
    assert_null(set->GetMetric(0));
    assert_int_equal(calc(set, 3 * report, 3 * row, 0), CC_OK);
    assert_int_equal(rows, 0);
    /* a query API: every metric, and query reports, which stream reports
     * are not */
    assert_int_equal(set->SetApiFiltering(API_TYPE_OCL | API_TYPE_OGL4_X), CC_OK);
    assert_int_equal(set->GetParams()->MetricsCount, values - set->GetParams()->InformationCount);
    assert_int_equal(calc(set, 3 * report, 3 * row, 0), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(set->SetApiFiltering(API_TYPE_IOSTREAM), CC_OK);
    assert_int_equal(set->GetParams()->MetricsCount, values - set->GetParams()->InformationCount);
    assert_int_equal(calc(set, 3 * report - 1, 3 * row, 0), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(calc(set, 3 * report, 2 * row, 0), CC_ERROR_INVALID_PARAMETER); /* small */
    assert_int_equal(calc(set, 3 * report, 3 * row - 4, 0), CC_ERROR_INVALID_PARAMETER);
    uint32_t max_row = set->GetParams()->MetricsCount * (uint32_t)sizeof(TTypedValue_1_0);
    assert_int_equal(calc(set, 3 * report, 3 * row, 2 * max_row), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(calc(set, 0, 3 * row, 0), CC_OK);
    assert_int_equal(rows, 0);
    assert_int_equal(
        set->CalculateMetrics(nullptr, 3 * report, out.data(), 3 * row, &rows, nullptr, 0),
        CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(
        set->CalculateMetrics(raw.data(), 3 * report, nullptr, 3 * row, &rows, nullptr, 0),
        CC_ERROR_INVALID_PARAMETER);
    IMetricSet_1_1 *v11 = set;
    assert_int_equal(
        v11->CalculateMetrics(raw.data(), 3 * report, out.data(), 3 * row, &rows, true),
        CC_ERROR_NOT_SUPPORTED); /* context filtering */
    assert_int_equal(calc(set, 3 * report, 3 * row, 3 * max_row), CC_OK);
    assert_int_equal(rows, 2);
    /* reports of another set are not this set's */
    assert_int_equal(other->SetApiFiltering(API_TYPE_IOSTREAM), CC_OK);
    if (other->GetParams()->RawReportSize == report)
        assert_int_equal(
            calc(other, 3 * report,
                 3 * (other->GetParams()->MetricsCount + other->GetParams()->InformationCount) *
                     (uint32_t)sizeof(TTypedValue_1_0),
                 0),
            CC_ERROR_INVALID_PARAMETER);
    TTypedValue_1_0 io[2];
    assert_int_equal(set->CalculateIoMeasurementInformation(nullptr, 2),
                     CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(set->CalculateIoMeasurementInformation(io, 1), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(fx->device->GetLastError(), CC_ERROR_INVALID_PARAMETER);
}

static void bad_stream_calls_get_the_defined_codes(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IConcurrentGroupLatest *group = find_group(fx->device, "OA");
    IConcurrentGroupLatest *stats = find_group(fx->device, "PipelineStatistics");
    IMetricSetLatest *set = group->GetMetricSet(0);
    uint32_t period = 0, size = 0, count = 1;
    char buffer[4096];
    assert_int_equal(group->OpenIoStream(nullptr, 0, &period, &size), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(group->OpenIoStream(set, 0, nullptr, &size), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(group->OpenIoStream(set, 0, &period, nullptr), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(group->OpenIoStream(stats->GetMetricSet(0), 0, &period, &size),
                     CC_ERROR_INVALID_PARAMETER); /* another group's set */
    assert_int_equal(group->OpenIoStream(set, (uint32_t)getpid() + 1, &period, &size),
                     CC_ERROR_NOT_SUPPORTED); /* another process */
    assert_int_equal(group->ReadIoStream(&count, buffer, 0), CC_ERROR_GENERAL); /* not open */
    assert_int_equal(count, 0);
    assert_int_equal(group->WaitForReports(0), CC_ERROR_GENERAL);
    assert_int_equal(group->CloseIoStream(), CC_ERROR_GENERAL);
    assert_int_equal(group->OpenIoStream(set, 0, &period, &size), CC_OK);
    assert_int_equal(group->ReadIoStream(nullptr, buffer, 0), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(group->ReadIoStream(&count, nullptr, 0), CC_ERROR_INVALID_PARAMETER);
    count = 0;
    assert_int_equal(group->ReadIoStream(&count, buffer, 0), CC_OK);
    assert_int_equal(group->SetIoStreamSamplingType(SAMPLING_TYPE_OA_EVENT),
                     CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(group->SetIoStreamSamplingType(SAMPLING_TYPE_OA_TIMER), CC_OK);
    assert_int_equal(group->CloseIoStream(), CC_OK);
    assert_int_equal(group->CloseIoStream(), CC_ERROR_GENERAL); /* closed */
    count = 1;
    assert_int_equal(group->ReadIoStream(&count, buffer, 0), CC_ERROR_GENERAL);
    assert_int_equal(fx->device->GetLastError(), CC_ERROR_GENERAL);
}

static void out_of_range_and_unsupported_calls_answer_null_or_a_code(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IMetricsDeviceLatest *d = fx->device;
    IConcurrentGroupLatest *group = find_group(d, "OA");
    IMetricSetLatest *set = group->GetMetricSet(0);
    assert_int_equal(d->GetLastError(), CC_OK);
    assert_null(d->GetConcurrentGroup(d->GetParams()->ConcurrentGroupsCount));
    assert_int_equal(d->GetLastError(), CC_ERROR_INVALID_PARAMETER);
    assert_null(d->GetGlobalSymbol(d->GetParams()->GlobalSymbolsCount));
    assert_null(d->GetGlobalSymbolValueByName(nullptr));
    assert_null(d->GetGlobalSymbolValueByName("NoSuchSymbol"));
    assert_null(d->GetOverride(0));
    assert_null(d->GetOverrideByName("FrequencyOverride"));
    uint64_t t = 0;
    assert_int_equal(d->GetGpuCpuTimestamps(nullptr, &t, nullptr, nullptr),
                     CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(d->GetGpuCpuTimestamps(&t, nullptr, nullptr, nullptr),
                     CC_ERROR_INVALID_PARAMETER);
    assert_null(group->GetMetricSet(group->GetParams()->MetricSetsCount));
    assert_int_equal(group->GetParams()->IoMeasurementInformationCount, 2);
    assert_string_equal(group->GetIoMeasurementInformation(1)->GetParams()->SymbolName,
                        "ReportLost");
    assert_null(group->GetIoMeasurementInformation(2));
    assert_null(group->GetIoGpuContextInformation(0));
    assert_null(group->GetMetricEnumerator());
    assert_null(group->GetMetricEnumeratorFromFile("metrics.bin"));
    assert_null(group->AddMetricSet("Custom", "Custom set"));
    assert_int_equal(group->RemoveMetricSet(nullptr), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(group->RemoveMetricSet(set), CC_ERROR_NOT_SUPPORTED);
    assert_null(set->GetMetric(set->GetParams()->MetricsCount));
    assert_null(set->GetInformation(set->GetParams()->InformationCount));
    assert_null(set->GetComplementaryMetricSet(0));
    assert_null(set->AddCustomMetric("X", "X", "G", "L", "", 0, API_TYPE_IOSTREAM, RESULT_UINT64,
                                     "events", METRIC_TYPE_EVENT, 0, 0, HW_UNIT_GPU, "dw@0x0",
                                     nullptr, nullptr, nullptr, nullptr, nullptr));
    assert_null(set->AddCustomMetric("X", "X", "G", "L", "", 0, API_TYPE_IOSTREAM, RESULT_UINT64,
                                     "events", METRIC_TYPE_EVENT, 0, 0, HW_UNIT_GPU, "dw@0x0",
                                     nullptr, nullptr, nullptr, nullptr, nullptr, 0));
    assert_int_equal(set->Open(), CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(set->AddMetric(nullptr), CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(set->RemoveMetric(nullptr), CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(set->Finalize(), CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(set->Activate(), CC_OK);
    assert_int_equal(set->Deactivate(), CC_OK);
    assert_int_equal(d->GetLastError(), CC_ERROR_NOT_SUPPORTED);
}

static void adapter_and_entry_points_refuse_bad_input(void **state)
{
    fixture *fx = static_cast<fixture *>(*state);
    IAdapterLatest *a = fx->adapter;
    IMetricsDeviceLatest *device = fx->device;
    assert_null(fx->group->GetAdapter(1));
    assert_int_equal(a->OpenMetricsDevice(static_cast<IMetricsDeviceLatest **>(nullptr)),
                     CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(a->CloseMetricsDevice(nullptr), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(a->CloseMetricsDevice(reinterpret_cast<IMetricsDevice_1_5 *>(fx->group)),
                     CC_ERROR_INVALID_PARAMETER); /* not its device */
    IMetricsDeviceLatest *out = device;
    assert_int_equal(a->OpenMetricsDeviceFromFile("metrics.bin", nullptr, &out),
                     CC_ERROR_NOT_SUPPORTED);
    assert_null(out);
    assert_int_equal(a->OpenMetricsDeviceFromFile(nullptr, nullptr, &out),
                     CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(a->SaveMetricsDeviceToFile("metrics.bin", nullptr, device, 1, 13),
                     CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(a->SaveMetricsDeviceToFile(nullptr, nullptr, device, 1, 13),
                     CC_ERROR_INVALID_PARAMETER);
    out = device;
    assert_int_equal(a->OpenMetricsSubDevice(0, &out), CC_ERROR_INVALID_PARAMETER);
    assert_null(out);
    assert_int_equal(a->OpenMetricsSubDeviceFromFile(0, "metrics.bin", nullptr, &out),
                     CC_ERROR_INVALID_PARAMETER);
    assert_null(a->GetSubDeviceParams(0));
    assert_null(a->GetEngineParams(0, 0));

    auto open_group = reinterpret_cast<OpenAdapterGroup_fn>(symbol(fx->lib, "OpenAdapterGroup"));
    auto open_device = reinterpret_cast<OpenMetricsDevice_fn>(symbol(fx->lib, "OpenMetricsDevice"));
    auto close_device =
        reinterpret_cast<CloseMetricsDevice_fn>(symbol(fx->lib, "CloseMetricsDevice"));
    auto from_file = reinterpret_cast<OpenMetricsDeviceFromFile_fn>(
        symbol(fx->lib, "OpenMetricsDeviceFromFile"));
    auto save =
        reinterpret_cast<SaveMetricsDeviceToFile_fn>(symbol(fx->lib, "SaveMetricsDeviceToFile"));
    assert_int_equal(open_group(nullptr), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(open_device(nullptr), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(close_device(nullptr), CC_ERROR_INVALID_PARAMETER);
    out = device;
    assert_int_equal(from_file("metrics.bin", nullptr, &out), CC_ERROR_NOT_SUPPORTED);
    assert_null(out);
    assert_int_equal(from_file(nullptr, nullptr, &out), CC_ERROR_INVALID_PARAMETER);
    assert_int_equal(save("metrics.bin", nullptr, device), CC_ERROR_NOT_SUPPORTED);
    assert_int_equal(save("metrics.bin", nullptr, nullptr), CC_ERROR_INVALID_PARAMETER);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(versions_are_the_interface_implemented, setup, teardown),
        cmocka_unit_test_setup_teardown(global_symbols_are_tallys_and_mdapis_names, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(enumeration_is_the_c_apis, setup, teardown),
        cmocka_unit_test_setup_teardown(opens_and_closes_are_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(compute_invocations_add_up_to_the_dispatched_work, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_reader_thread_sees_all_work_submitted_meanwhile, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_period_and_buffer_size_are_adjusted, setup, teardown),
        cmocka_unit_test_setup_teardown(a_concurrent_group_streams_one_set_at_a_time, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_wait_times_out, setup, teardown),
        cmocka_unit_test_setup_teardown(closing_a_stream_interrupts_its_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(dropped_reports_are_reported_lost, setup, teardown),
        cmocka_unit_test_setup_teardown(gpu_cpu_timestamps_pair_gpu_time_with_clock_monotonic,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(calculation_checks_its_filter_and_buffers, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_stream_calls_get_the_defined_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(out_of_range_and_unsupported_calls_answer_null_or_a_code,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(adapter_and_entry_points_refuse_bad_input, setup, teardown),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
