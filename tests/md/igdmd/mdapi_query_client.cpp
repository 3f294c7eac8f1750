/*
 * An MDAPI query-mode (event-based sampling) tool, written from Intel's
 * header semantics and opencl-intercept-layer's documented `--mdapi-ebs`
 * flow: load libigdmd.so by name, OpenAdapterGroup, OpenMetricsDevice, find
 * the named set among those whose ApiMask has API_TYPE_OCL,
 * SetApiFiltering(OCL | OGL4_X) (the intercept layer's mask on Linux),
 * Activate, get clCreatePerfCountersCommandQueueINTEL from the platform,
 * create the queue with the set's ApiSpecificId.OCL, enqueue an NDRange,
 * read CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL (QueryReportSize bytes) from
 * its event and CalculateMetrics on that one report.
 *
 * Usage:
 *   mdapi_query_client check TALLY_CLI DIR   runs the tool under
 *       `tally run -o DIR/report.csv -c all`, then checks its values
 *       against the report's row for its kernel
 *   mdapi_query_client tool VALUES           the tool itself: writes
 *       "symbol,value" per metric to VALUES
 *
 * Truths: CsInvocations must equal the NDRange's global size exactly (the
 * OpenCL spec's count of work-items), and every metric whose symbol is a
 * report column must equal that column in the kernel's row.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <cmath>
#include <dlfcn.h>
#include <map>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "mdapi_abi.h"

namespace md = MetricsDiscovery;

#define CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL 0x407F
typedef cl_command_queue(CL_API_CALL *create_perf_queue_fn)(cl_context, cl_device_id,
                                                            cl_command_queue_properties, cl_uint,
                                                            cl_int *);

static const size_t global_size = 65536;
static const char *const set_name = "ComputeBasic";
static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond);                      \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static double as_double(const md::TTypedValue_1_0 &v)
{
    switch (v.ValueType) {
    case md::VALUE_TYPE_UINT32: return v.ValueUInt32;
    case md::VALUE_TYPE_UINT64: return (double)v.ValueUInt64;
    case md::VALUE_TYPE_FLOAT: return v.ValueFloat;
    case md::VALUE_TYPE_BOOL: return v.ValueBool;
    default: return NAN;
    }
}

/* The intercept layer's FindMetricSetForDevice: the named set of an API it
 * asks for. */
static md::IMetricSet_1_13 *find_set(md::IMetricsDevice_1_13 *device, uint32_t api_mask,
                                     uint32_t *ocl_sets)
{
    md::IMetricSet_1_13 *found = nullptr;
    for (uint32_t g = 0; g < device->GetParams()->ConcurrentGroupsCount; g++) {
        md::IConcurrentGroup_1_13 *group = device->GetConcurrentGroup(g);
        for (uint32_t s = 0; s < group->GetParams()->MetricSetsCount; s++) {
            md::IMetricSet_1_13 *set = group->GetMetricSet(s);
            const md::TMetricSetParams_1_11 *p = set->GetParams();
            if (!(p->ApiMask & api_mask))
                continue;
            ++*ocl_sets;
            if (!found && strcmp(p->SymbolName, set_name) == 0)
                found = set;
        }
    }
    return found;
}

static cl_kernel build_kernel(cl_context context, cl_device_id device)
{
    static const char source[] = "kernel void fill(global uint *out)\n"
                                 "{\n"
                                 "    out[get_global_id(0) % 1024] = (uint)get_global_id(0);\n"
                                 "}\n";
    const char *text = source;
    cl_int err;
    cl_program program = clCreateProgramWithSource(context, 1, &text, NULL, &err);
    if (clBuildProgram(program, 1, &device, "", NULL, NULL) != CL_SUCCESS)
        return NULL;
    cl_kernel kernel = clCreateKernel(program, "fill", &err);
    clReleaseProgram(program);
    return kernel;
}

/* One NDRange on the perf-counters queue; its query report, or empty. */
static std::vector<uint8_t> measure_kernel(uint32_t configuration, uint32_t report_size)
{
    std::vector<uint8_t> report;
    cl_platform_id platform;
    cl_device_id device;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS)
        return report;
    auto create = (create_perf_queue_fn)clGetExtensionFunctionAddressForPlatform(
        platform, "clCreatePerfCountersCommandQueueINTEL");
    CHECK(create != nullptr, "clCreatePerfCountersCommandQueueINTEL not found");
    if (!create)
        return report;
    cl_int err;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    /* Intel's runtime's checks: a profiling queue, a configuration it takes. */
    CHECK(!create(context, device, 0, configuration, &err) && err == CL_INVALID_QUEUE_PROPERTIES,
          "no profiling: %d", err);
    CHECK(!create(context, device, CL_QUEUE_PROFILING_ENABLE, 0, &err) &&
              err == CL_INVALID_OPERATION,
          "configuration 0: %d", err);
    cl_command_queue queue =
        create(context, device, CL_QUEUE_PROFILING_ENABLE, configuration, &err);
    CHECK(queue && err == CL_SUCCESS, "queue: %d", err);
    cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, 4096, NULL, &err);
    cl_kernel kernel = build_kernel(context, device);
    cl_event event = NULL;
    if (queue && kernel && clSetKernelArg(kernel, 0, sizeof(out), &out) == CL_SUCCESS &&
        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global_size, NULL, 0, NULL, &event) ==
            CL_SUCCESS &&
        clWaitForEvents(1, &event) == CL_SUCCESS) {
        report.assign(report_size, 0);
        size_t size = 0;
        CHECK(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL, 1,
                                      report.data(), NULL) == CL_INVALID_VALUE,
              "a buffer too small");
        err = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_PERFCOUNTERS_INTEL, report.size(),
                                      report.data(), &size);
        CHECK(err == CL_SUCCESS && size == report_size, "report: %d, %zu bytes", err, size);
        if (err != CL_SUCCESS)
            report.clear();
    }
    if (event)
        clReleaseEvent(event);
    if (kernel)
        clReleaseKernel(kernel);
    clReleaseMemObject(out);
    if (queue)
        clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return report;
}

/* The legacy entry point while the group's device is open: Intel's library
 * hands out the same device, counted, with CC_ALREADY_INITIALIZED. */
static void check_legacy_open(void *library, md::IMetricsDevice_1_13 *device)
{
    auto open = (md::OpenMetricsDevice_fn)dlsym(library, "OpenMetricsDevice");
    auto close = (md::CloseMetricsDevice_fn)dlsym(library, "CloseMetricsDevice");
    md::IMetricsDeviceLatest *again = nullptr;
    md::TCompletionCode cc = open ? open(&again) : md::CC_ERROR_GENERAL;
    CHECK(cc == md::CC_ALREADY_INITIALIZED && again == device, "legacy open: %d", cc);
    if (again)
        CHECK(close(again) == md::CC_STILL_INITIALIZED, "legacy close");
}

static int run_tool(const char *values_path)
{
    void *library = dlopen("libigdmd.so", RTLD_NOW | RTLD_LOCAL);
    CHECK(library, "dlopen: %s", dlerror());
    if (!library)
        return 1;
    auto open_group = (md::OpenAdapterGroup_fn)dlsym(library, "OpenAdapterGroup");
    md::IAdapterGroupLatest *group = nullptr;
    md::IMetricsDevice_1_13 *device = nullptr;
    md::IAdapter_1_13 *adapter = nullptr;
    if (!open_group || open_group(&group) != md::CC_OK || !(adapter = group->GetAdapter(0)) ||
        adapter->OpenMetricsDevice(&device) != md::CC_OK) {
        CHECK(false, "no metrics device");
        return 1;
    }
    uint32_t query_api = md::API_TYPE_OCL | md::API_TYPE_OGL4_X;
    uint32_t ocl_sets = 0;
    md::IMetricSet_1_13 *set = find_set(device, query_api, &ocl_sets);
    CHECK(set, "no %s set for OpenCL among %u OpenCL sets", set_name, ocl_sets);
    check_legacy_open(library, device);
    if (set) {
        CHECK(set->SetApiFiltering(query_api) == md::CC_OK, "filter");
        const md::TMetricSetParams_1_11 *p = set->GetParams();
        CHECK(p->MetricsCount > 0 && p->QueryReportSize > 0, "%u metrics, %u bytes",
              p->MetricsCount, p->QueryReportSize);
        CHECK(set->Activate() == md::CC_OK, "activate");
        std::vector<uint8_t> report = measure_kernel(p->ApiSpecificId.OCL, p->QueryReportSize);
        uint32_t values = p->MetricsCount + p->InformationCount, count = 0;
        std::vector<md::TTypedValue_1_0> out(values);
        md::TCompletionCode cc =
            report.empty()
                ? md::CC_ERROR_GENERAL
                : set->CalculateMetrics(report.data(), (uint32_t)report.size(), out.data(),
                                        values * sizeof(out[0]), &count, false);
        CHECK(cc == md::CC_OK && count == 1, "CalculateMetrics: %d, %u reports", cc, count);
        FILE *f = fopen(values_path, "w");
        for (uint32_t m = 0; cc == md::CC_OK && count == 1 && m < p->MetricsCount; m++) {
            const char *symbol = set->GetMetric(m)->GetParams()->SymbolName;
            if (strcmp(symbol, "CsInvocations") == 0)
                CHECK(out[m].ValueType == md::VALUE_TYPE_UINT64 &&
                          out[m].ValueUInt64 == global_size,
                      "CsInvocations %.0f, global size %zu", as_double(out[m]), global_size);
            if (f)
                fprintf(f, "%s,%.9g\n", symbol, as_double(out[m]));
        }
        if (f)
            fclose(f);
        const md::TTypedValue_1_0 *info = &out[p->MetricsCount];
        CHECK(cc == md::CC_OK && info[0].ValueUInt64 < info[1].ValueUInt64,
              "QueryBeginTime before QueryEndTime");
        set->Deactivate();
    }
    adapter->CloseMetricsDevice(device);
    group->Close();
    return failures ? 1 : 0;
}

/* --- check: the tool under tally run, against the report --------------------- */

static std::vector<std::string> split(const std::string &line)
{
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1)
        fields.push_back(line.substr(start, comma - start));
    fields.push_back(line.substr(start));
    return fields;
}

/* The report's row of the kernel (its only NDRange), by column name. */
static std::map<std::string, std::string> kernel_row(const std::string &path)
{
    std::map<std::string, std::string> row;
    FILE *f = fopen(path.c_str(), "r");
    if (!f)
        return row;
    char line[65536];
    std::vector<std::string> header;
    int kernels = 0;
    while (fgets(line, sizeof line, f)) {
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.pop_back();
        std::vector<std::string> fields = split(text);
        if (header.empty()) {
            header = fields;
            continue;
        }
        std::map<std::string, std::string> candidate;
        for (size_t i = 0; i < header.size() && i < fields.size(); i++)
            candidate[header[i]] = fields[i];
        if (candidate["api_name"] == "clEnqueueNDRangeKernel") {
            row = candidate;
            kernels++;
        }
    }
    fclose(f);
    CHECK(kernels == 1, "%d kernel rows in %s", kernels, path.c_str());
    return row;
}

static int run_check(const char *tally_cli, const char *self, const char *dir)
{
    std::string report = std::string(dir) + "/query-report.csv";
    std::string values = std::string(dir) + "/query-values.csv";
    remove(report.c_str());
    remove(values.c_str());
    pid_t pid = fork();
    if (pid == 0) {
        execl(tally_cli, tally_cli, "run", "-q", "--no-vulkan", "--no-gl", "--no-egl", "-o",
              report.c_str(), "-c", "all", "--", self, "tool", values.c_str(), (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the tool failed (status %d)", status);
    std::map<std::string, std::string> row = kernel_row(report);
    FILE *f = fopen(values.c_str(), "r");
    CHECK(f, "no values from the tool");
    int compared = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        std::vector<std::string> kv = split(std::string(line, strcspn(line, "\n")));
        if (kv.size() != 2 || row.find(kv[0]) == row.end())
            continue; /* a metric under MDAPI's name only (CsThreads, EuActive) */
        double mine = atof(kv[1].c_str()), theirs = atof(row[kv[0]].c_str());
        /* MDAPI's float is 32 bits; the report writes 3 decimals */
        double slack = fmax(1e-3, fabs(theirs) * 1e-6);
        CHECK(fabs(mine - theirs) <= slack, "%s: query %s, report %s", kv[0].c_str(), kv[1].c_str(),
              row[kv[0]].c_str());
        compared++;
    }
    if (f)
        fclose(f);
    CHECK(compared >= 10, "only %d metrics compared with the report", compared);
    CHECK(row["CsInvocations"] == std::to_string(global_size), "report CsInvocations %s",
          row["CsInvocations"].c_str());
    printf("mdapi_query_client: %d metrics equal the report's row\n", compared);
    if (!failures)
        printf("mdapi_query_client: ok\n");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "tool") == 0)
        return run_tool(argv[2]);
    if (argc == 4 && strcmp(argv[1], "check") == 0)
        return run_check(argv[2], argv[0], argv[3]);
    fprintf(stderr, "usage: mdapi_query_client check TALLY_CLI DIR | tool VALUES\n");
    return 2;
}
