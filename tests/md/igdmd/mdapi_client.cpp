/*
 * An MDAPI tool written from Intel's guide (shared/specs/
 * intel_metrics_discovery_api.txt), step by step: load the library with
 * dlopen, OpenAdapterGroup, GetAdapter(0), OpenMetricsDevice (or the
 * sub-device), print the global symbols, enumerate groups, sets, metrics and
 * information items, SetApiFiltering(API_TYPE_IOSTREAM), OpenIoStream, a
 * collector thread looping on WaitForReports and ReadIoStream with
 * IO_READ_FLAG_DROP_OLD_REPORTS, CloseIoStream, CalculateMetrics,
 * GetGpuCpuTimestamps to map report times to CLOCK_MONOTONIC, then
 * CloseMetricsDevice and Close. It knows nothing of tally: it loads
 * "libigdmd.so" by name, as tools do, and submits its own work through
 * Vulkan or OpenCL while the collector runs.
 *
 * It checks what it measured against what it submitted: the ComputeBasic
 * set's CsInvocations over all calculated reports must equal the work's
 * invocations exactly, and the first report's time must map into this
 * process's lifetime. Exit status 0 when both hold.
 *
 * Usage: mdapi_client vulkan|opencl
 */
#include <atomic>
#include <dlfcn.h>
#include <mutex>
#include <stdio.h>
#include <string.h>
#include <thread>
#include <time.h>
#include <vector>

#include "mdapi_abi.h"
#include "mdapi_work.h"

namespace md = MetricsDiscovery;

static uint64_t monotonic_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void print_value(const md::TTypedValue_1_0 &v)
{
    switch (v.ValueType) {
    case md::VALUE_TYPE_UINT32: printf("%u", v.ValueUInt32); break;
    case md::VALUE_TYPE_UINT64: printf("%llu", (unsigned long long)v.ValueUInt64); break;
    case md::VALUE_TYPE_FLOAT: printf("%g", v.ValueFloat); break;
    case md::VALUE_TYPE_BOOL: printf("%s", v.ValueBool ? "true" : "false"); break;
    case md::VALUE_TYPE_CSTRING: printf("%s", v.ValueCString); break;
    default: break;
    }
}

/* The guide's enumeration: every group, set, metric and information item. */
static void enumerate(md::IMetricsDeviceLatest *device)
{
    printf("Device Name: %s\n", device->GetParams()->DeviceName);
    for (uint32_t i = 0; i < device->GetParams()->GlobalSymbolsCount; ++i) {
        md::TGlobalSymbol_1_0 *symbol = device->GetGlobalSymbol(i);
        printf("%s: ", symbol->SymbolName);
        print_value(symbol->SymbolTypedValue);
        printf("\n");
    }
    for (uint32_t gid = 0; gid < device->GetParams()->ConcurrentGroupsCount; ++gid) {
        md::IConcurrentGroup_1_5 *group = device->GetConcurrentGroup(gid);
        printf("Metric Group %u: %s\n", gid, group->GetParams()->SymbolName);
        for (uint32_t sid = 0; sid < group->GetParams()->MetricSetsCount; ++sid) {
            md::IMetricSet_1_5 *set = group->GetMetricSet(sid);
            printf("\tMetric Set %u: %s (%s)\n", sid, set->GetParams()->SymbolName,
                   set->GetParams()->ShortName);
            for (uint32_t mid = 0; mid < set->GetParams()->MetricsCount; ++mid) {
                md::IMetric_1_0 *metric = set->GetMetric(mid);
                printf("\t\tMetric %u: %s (%s)\n", mid, metric->GetParams()->SymbolName,
                       metric->GetParams()->ShortName);
            }
            for (uint32_t iid = 0; iid < set->GetParams()->InformationCount; ++iid) {
                md::IInformation_1_0 *info = set->GetInformation(iid);
                printf("\t\tInfo %u: %s (%s)\n", iid + set->GetParams()->MetricsCount,
                       info->GetParams()->SymbolName, info->GetParams()->ShortName);
            }
        }
    }
}

struct collection {
    md::IConcurrentGroup_1_5 *group = nullptr;
    md::IMetricSet_1_5 *set = nullptr; /* the search for the set stops at the first */
    uint32_t buffer_size = 0;
    std::mutex lock;
    std::vector<uint8_t> storage; /* every raw report read, in order */
    std::atomic<bool> stop{false};
    std::atomic<bool> failed{false};
};

/* The guide's collector loop, in its own thread. */
static void collect(collection *c)
{
    std::vector<char> buffer(c->buffer_size, 0);
    uint32_t max_report_count = c->buffer_size / c->set->GetParams()->RawReportSize;
    uint32_t wait_time = 500; /* ms */
    while (!c->stop) {
        md::TCompletionCode status = c->group->WaitForReports(wait_time);
        if (status != md::CC_OK && status != md::CC_WAIT_TIMEOUT && status != md::CC_INTERRUPTED)
            c->failed = true;
        uint32_t report_count = max_report_count;
        status =
            c->group->ReadIoStream(&report_count, buffer.data(), md::IO_READ_FLAG_DROP_OLD_REPORTS);
        if (status != md::CC_OK && status != md::CC_READ_PENDING)
            c->failed = true;
        if (report_count > 0) {
            std::lock_guard<std::mutex> guard(c->lock);
            c->storage.insert(c->storage.end(), buffer.begin(),
                              buffer.begin() +
                                  (size_t)report_count * c->set->GetParams()->RawReportSize);
        }
    }
}

/* The guide's calculation over everything collected so far. */
static std::vector<md::TTypedValue_1_0> calculate(collection *c, uint32_t *calculated_report_count)
{
    std::vector<uint8_t> storage;
    {
        std::lock_guard<std::mutex> guard(c->lock);
        storage = c->storage;
    }
    md::IMetricSet_1_5 *set = c->set;
    uint32_t raw_report_count = (uint32_t)(storage.size() / set->GetParams()->RawReportSize);
    uint32_t calculated_report_size =
        set->GetParams()->MetricsCount + set->GetParams()->InformationCount;
    std::vector<md::TTypedValue_1_0> calculated_reports(calculated_report_size * raw_report_count);
    *calculated_report_count = 0;
    if (raw_report_count == 0)
        return calculated_reports;
    md::TCompletionCode status =
        set->CalculateMetrics(storage.data(), (uint32_t)storage.size(), calculated_reports.data(),
                              (uint32_t)(calculated_reports.size() * sizeof(md::TTypedValue_1_0)),
                              calculated_report_count, nullptr, 0);
    if (status != md::CC_OK) {
        fprintf(stderr, "mdapi_client: CalculateMetrics: %d\n", status);
        c->failed = true;
    }
    calculated_reports.resize(*calculated_report_count * calculated_report_size);
    return calculated_reports;
}

static uint32_t metric_index(md::IMetricSet_1_5 *set, const char *symbol)
{
    for (uint32_t m = 0; m < set->GetParams()->MetricsCount; m++)
        if (strcmp(set->GetMetric(m)->GetParams()->SymbolName, symbol) == 0)
            return m;
    return UINT32_MAX;
}

static uint32_t information_index(md::IMetricSet_1_5 *set, const char *symbol)
{
    for (uint32_t i = 0; i < set->GetParams()->InformationCount; i++)
        if (strcmp(set->GetInformation(i)->GetParams()->SymbolName, symbol) == 0)
            return set->GetParams()->MetricsCount + i;
    return UINT32_MAX;
}

static uint64_t sum_column(const std::vector<md::TTypedValue_1_0> &rows, uint32_t width,
                           uint32_t column)
{
    uint64_t sum = 0;
    for (size_t r = 0; r + 1 <= rows.size() / width; r++)
        sum += rows[r * width + column].ValueUInt64;
    return sum;
}

static int64_t run_work(const char *api)
{
    static const uint32_t sizes[] = {1000, 17, 250, 4096, 3, 640, 99, 1, 2048, 512};
    const int count = sizeof(sizes) / sizeof(sizes[0]);
    if (strcmp(api, "vulkan") == 0)
        return mdapi_work_vulkan(sizes, count);
    if (strcmp(api, "opencl") == 0) {
        uint32_t items[count];
        for (int i = 0; i < count; i++)
            items[i] = sizes[i] * 8;
        return mdapi_work_opencl(items, count);
    }
    return -1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s vulkan|opencl\n", argv[0]);
        return 2;
    }
    uint64_t started = monotonic_ns();

    /* Load the MD library and create the device. */
    void *handle = dlopen("libigdmd.so", RTLD_NOW);
    if (!handle) {
        fprintf(stderr, "mdapi_client: %s\n", dlerror());
        return 1;
    }
    auto OpenAdapterGroup = (md::OpenAdapterGroup_fn)dlsym(handle, "OpenAdapterGroup");
    md::IAdapterGroupLatest *adapter_group = nullptr;
    md::TCompletionCode status = OpenAdapterGroup(&adapter_group);
    if (status != md::CC_OK) {
        fprintf(stderr, "mdapi_client: OpenAdapterGroup: %d\n", status);
        return 1;
    }
    md::IAdapter_1_9 *adapter = adapter_group->GetAdapter(0 /* device id */);
    md::IMetricsDevice_1_5 *device = nullptr;
    uint32_t sub_devices_count = adapter->GetParams()->SubDevicesCount;
    if (sub_devices_count == 0)
        status = adapter->OpenMetricsDevice(&device);
    else
        status = adapter->OpenMetricsSubDevice(0 /* sub-device id */, &device);
    if (status != md::CC_OK && status != md::CC_ALREADY_INITIALIZED) {
        fprintf(stderr, "mdapi_client: OpenMetricsDevice: %d\n", status);
        return 1;
    }
    /* The newest interface, as the adapter of version 1.13 hands it out. */
    md::IMetricsDeviceLatest *latest = nullptr;
    static_cast<md::IAdapterLatest *>(adapter_group->GetAdapter(0))->OpenMetricsDevice(&latest);
    enumerate(latest);

    /* Choose the set and start collecting. */
    collection c;
    for (uint32_t g = 0; g < device->GetParams()->ConcurrentGroupsCount && !c.set; g++) {
        md::IConcurrentGroup_1_5 *group = device->GetConcurrentGroup(g);
        for (uint32_t s = 0; s < group->GetParams()->MetricSetsCount; s++)
            if (strcmp(group->GetMetricSet(s)->GetParams()->SymbolName, "ComputeBasic") == 0) {
                c.group = group;
                c.set = group->GetMetricSet(s);
            }
    }
    if (!c.set) {
        fprintf(stderr, "mdapi_client: no ComputeBasic set\n");
        return 1;
    }
    uint32_t sampling_interval = 100000; /* ns */
    uint32_t buffer_size = 0;            /* the library decides */
    if (c.set->SetApiFiltering(md::API_TYPE_IOSTREAM) != md::CC_OK ||
        c.group->OpenIoStream(c.set, 0, &sampling_interval, &buffer_size) != md::CC_OK ||
        buffer_size == 0) {
        fprintf(stderr, "mdapi_client: OpenIoStream failed\n");
        return 1;
    }
    printf("sampling every %u ns into %u bytes\n", sampling_interval, buffer_size);
    c.buffer_size = buffer_size;
    std::thread collector(collect, &c);

    /* This program's own work, while the collector runs. */
    int64_t submitted = run_work(argv[1]);
    if (submitted < 0) {
        fprintf(stderr, "mdapi_client: the %s work failed\n", argv[1]);
        c.stop = true;
        collector.join();
        return 1;
    }

    /* Keep collecting until the reports show the work and one interval that
     * begins after it; the deadline only bounds a failure. */
    uint32_t width = c.set->GetParams()->MetricsCount + c.set->GetParams()->InformationCount;
    uint32_t cs = metric_index(c.set, "CsInvocations");
    uint32_t begin = information_index(c.set, "QueryBeginTime");
    if (cs == UINT32_MAX || begin == UINT32_MAX) {
        fprintf(stderr, "mdapi_client: ComputeBasic lacks CsInvocations or QueryBeginTime\n");
        return 1;
    }
    uint64_t deadline = monotonic_ns() + 30000000000ull;
    uint64_t after = UINT64_MAX;
    for (;;) {
        uint32_t rows = 0;
        std::vector<md::TTypedValue_1_0> values = calculate(&c, &rows);
        if (after == UINT64_MAX && sum_column(values, width, cs) >= (uint64_t)submitted) {
            uint64_t cpu = 0;
            device->GetGpuCpuTimestamps(&after, &cpu, nullptr);
        }
        if (after != UINT64_MAX && rows &&
            values[(size_t)(rows - 1) * width + begin].ValueUInt64 >= after)
            break;
        if (monotonic_ns() > deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    c.stop = true;
    collector.join();
    if (c.group->CloseIoStream() != md::CC_OK)
        c.failed = true;

    /* The calculation, and GPU report times on CLOCK_MONOTONIC. */
    uint32_t rows = 0;
    std::vector<md::TTypedValue_1_0> values = calculate(&c, &rows);
    uint64_t measured = sum_column(values, width, cs);
    uint64_t cpu_snap_point = 0, gpu_snap_point = 0;
    status = device->GetGpuCpuTimestamps(&gpu_snap_point, &cpu_snap_point, nullptr);
    uint64_t first = rows ? values[begin].ValueUInt64 : 0;
    uint64_t first_cpu = first > gpu_snap_point ? cpu_snap_point + (first - gpu_snap_point)
                                                : cpu_snap_point - (gpu_snap_point - first);
    bool in_lifetime =
        status == md::CC_OK && rows && started <= first_cpu && first_cpu <= monotonic_ns();
    printf("%u calculated reports\n", rows);
    printf("CsInvocations %llu submitted %lld\n", (unsigned long long)measured,
           (long long)submitted);
    printf("first report at CLOCK_MONOTONIC %llu, within this process: %s\n",
           (unsigned long long)first_cpu, in_lifetime ? "yes" : "no");

    /* Release, as the guide does. */
    adapter->CloseMetricsDevice(latest);
    status = adapter->CloseMetricsDevice(device);
    if (status != md::CC_OK)
        fprintf(stderr, "mdapi_client: CloseMetricsDevice: %d\n", status);
    if (adapter_group->Close() != md::CC_OK)
        c.failed = true;
    dlclose(handle);
    bool ok = !c.failed && status == md::CC_OK && measured == (uint64_t)submitted && in_lifetime;
    printf("%s\n", ok ? "mdapi_client: ok" : "mdapi_client: FAILED");
    return ok ? 0 : 1;
}
