/*
 * libigdmd.so's binary interface against Intel's: every vtable slot and
 * struct offset the library relies on, as numbers derived by hand from
 * Intel's public header (intel/metrics-discovery,
 * inc/common/instrumentation/api/metrics_discovery_api.h, interface 1.13,
 * MD_API_BUILD_NUMBER_CURRENT 180), Itanium C++ ABI on x86-64 (arm64 lays
 * out the same; only its pointers to members differ, see slot_of):
 *
 *   slot   = position in declaration order through the inheritance chain;
 *            the virtual destructor is slots 0 and 1; an override with a
 *            covariant return at offset 0 keeps its slot; an overload is new;
 *   offset = natural alignment, a POD base's full size before the derived
 *            members, a non-POD base's tail padding reused (SubDevicesCount).
 *
 * Intel's header cannot be built here (no Debian package ships it), so these
 * numbers are the bridge: md/igdmd/mdapi_abi.h must produce them (the first
 * tests), and the built library must answer through them (the last test,
 * which calls it through raw vtable slots, not through the declarations).
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
extern "C" {
#include <cmocka.h>
}

#include "mdapi_abi.h"

using namespace MetricsDiscovery;

/* A pointer to a virtual member is 1 + the slot's byte offset in the
 * vtable (Itanium C++ ABI 2.3). ARM's variant of the ABI (arm64, the
 * Raspberry Pi's) keeps the plain byte offset and marks "virtual" in the low
 * bit of the adjustment instead, since a function's address may be odd
 * there. Vtables and slots are the same on both. */
template <typename F> static long slot_of(F member)
{
    struct {
        uintptr_t ptr;
        ptrdiff_t adj;
    } rep;
    static_assert(sizeof(member) == sizeof(rep), "a pointer to member is two words");
    memcpy(&rep, &member, sizeof(rep));
#if defined(__aarch64__) || defined(__arm__)
    return (rep.adj & 1) ? (long)(rep.ptr / sizeof(void *)) : -1;
#else
    return (rep.ptr & 1) ? (long)((rep.ptr - 1) / sizeof(void *)) : -1;
#endif
}

#define SLOT(cls, fn, expected) assert_int_equal(slot_of(&cls::fn), expected)
#define SLOT_AS(cls, type, fn, expected)                                                           \
    assert_int_equal(slot_of(static_cast<type>(&cls::fn)), expected)
#define OFFSET(type, field, expected) assert_int_equal(offsetof(type, field), expected)

/* --- vtables ------------------------------------------------------------------------- */

static void adapter_group_slots_are_intels(void **)
{
    /* IAdapterGroup_1_6: ~ (0, 1), GetParams, GetAdapter, Close; 1.8-1.13
     * only narrow GetAdapter's return. */
    SLOT(IAdapterGroup_1_13, GetParams, 2);
    SLOT(IAdapterGroup_1_13, GetAdapter, 3);
    SLOT(IAdapterGroup_1_13, Close, 4);
}

static void adapter_slots_are_intels(void **)
{
    using A = IAdapter_1_13;
    /* 1.6 */
    SLOT(A, GetParams, 2);
    SLOT(A, Reset, 3);
    SLOT_AS(A, TCompletionCode(A::*)(IMetricsDevice_1_5 **), OpenMetricsDevice, 4);
    SLOT_AS(A, TCompletionCode(A::*)(const char *, void *, IMetricsDevice_1_5 **),
            OpenMetricsDeviceFromFile, 5);
    SLOT(A, CloseMetricsDevice, 6);
    SLOT_AS(A, TCompletionCode(A::*)(const char *, void *, IMetricsDevice_1_5 *),
            SaveMetricsDeviceToFile, 7);
    /* 1.9 */
    SLOT(A, GetSubDeviceParams, 8);
    SLOT(A, GetEngineParams, 9);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, IMetricsDevice_1_5 **), OpenMetricsSubDevice, 10);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, const char *, void *, IMetricsDevice_1_5 **),
            OpenMetricsSubDeviceFromFile, 11);
    /* 1.10 */
    SLOT_AS(A, TCompletionCode(A::*)(IMetricsDevice_1_10 **), OpenMetricsDevice, 12);
    SLOT_AS(A, TCompletionCode(A::*)(const char *, void *, IMetricsDevice_1_10 **),
            OpenMetricsDeviceFromFile, 13);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, IMetricsDevice_1_10 **), OpenMetricsSubDevice, 14);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, const char *, void *, IMetricsDevice_1_10 **),
            OpenMetricsSubDeviceFromFile, 15);
    /* 1.11 */
    SLOT_AS(A, TCompletionCode(A::*)(IMetricsDevice_1_11 **), OpenMetricsDevice, 16);
    SLOT_AS(A, TCompletionCode(A::*)(const char *, void *, IMetricsDevice_1_11 **),
            OpenMetricsDeviceFromFile, 17);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, IMetricsDevice_1_11 **), OpenMetricsSubDevice, 18);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, const char *, void *, IMetricsDevice_1_11 **),
            OpenMetricsSubDeviceFromFile, 19);
    SLOT_AS(A,
            TCompletionCode(A::*)(const char *, void *, IMetricsDevice_1_11 *, uint32_t, uint32_t),
            SaveMetricsDeviceToFile, 20);
    /* 1.13 */
    SLOT_AS(A, TCompletionCode(A::*)(IMetricsDevice_1_13 **), OpenMetricsDevice, 21);
    SLOT_AS(A, TCompletionCode(A::*)(const char *, void *, IMetricsDevice_1_13 **),
            OpenMetricsDeviceFromFile, 22);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, IMetricsDevice_1_13 **), OpenMetricsSubDevice, 23);
    SLOT_AS(A, TCompletionCode(A::*)(uint32_t, const char *, void *, IMetricsDevice_1_13 **),
            OpenMetricsSubDeviceFromFile, 24);
}

static void metrics_device_slots_are_intels(void **)
{
    using D = IMetricsDevice_1_13;
    SLOT(D, GetParams, 2);
    SLOT(D, GetConcurrentGroup, 3);
    SLOT(D, GetGlobalSymbol, 4);
    SLOT(D, GetGlobalSymbolValueByName, 5);
    SLOT(D, GetLastError, 6);
    SLOT_AS(D, TCompletionCode(D::*)(uint64_t *, uint64_t *, uint32_t *), GetGpuCpuTimestamps, 7);
    SLOT(D, GetOverride, 8);       /* 1.2 */
    SLOT(D, GetOverrideByName, 9); /* 1.2 */
    SLOT_AS(D, TCompletionCode(D::*)(uint64_t *, uint64_t *, uint32_t *, uint64_t *),
            GetGpuCpuTimestamps, 10); /* 1.10 */
}

static void concurrent_group_slots_are_intels(void **)
{
    using G = IConcurrentGroup_1_13;
    SLOT(G, GetParams, 2);
    SLOT(G, GetMetricSet, 3);
    SLOT(G, OpenIoStream, 4);
    SLOT(G, ReadIoStream, 5);
    SLOT(G, CloseIoStream, 6);
    SLOT(G, WaitForReports, 7);
    SLOT(G, GetIoMeasurementInformation, 8);
    SLOT(G, GetIoGpuContextInformation, 9);
    SLOT(G, SetIoStreamSamplingType, 10); /* 1.3 */
    SLOT(G, GetMetricEnumerator, 11);     /* 1.13 */
    SLOT(G, GetMetricEnumeratorFromFile, 12);
    SLOT(G, AddMetricSet, 13);
    SLOT(G, RemoveMetricSet, 14);
}

static void metric_set_slots_are_intels(void **)
{
    using S = IMetricSet_1_13;
    SLOT(S, GetParams, 2);
    SLOT(S, GetMetric, 3);
    SLOT(S, GetInformation, 4);
    SLOT(S, GetComplementaryMetricSet, 5);
    SLOT(S, Activate, 6);
    SLOT(S, Deactivate, 7);
    SLOT_AS(S,
            IMetric_1_0 * (S::*)(const char *, const char *, const char *, const char *,
                                 const char *, uint32_t, uint32_t, TMetricResultType, const char *,
                                 TMetricType, int64_t, int64_t, THwUnitType, const char *,
                                 const char *, const char *, const char *, const char *,
                                 const char *),
            AddCustomMetric, 8);
    SLOT(S, SetApiFiltering, 9); /* 1.1 */
    SLOT_AS(S,
            TCompletionCode(S::*)(const uint8_t *, uint32_t, TTypedValue_1_0 *, uint32_t,
                                  uint32_t *, bool),
            CalculateMetrics, 10);
    SLOT(S, CalculateIoMeasurementInformation, 11);
    SLOT_AS(S,
            TCompletionCode(S::*)(const uint8_t *, uint32_t, TTypedValue_1_0 *, uint32_t,
                                  uint32_t *, TTypedValue_1_0 *, uint32_t),
            CalculateMetrics, 12); /* 1.5 */
    SLOT(S, Open, 13);             /* 1.13 */
    SLOT(S, AddMetric, 14);
    SLOT(S, RemoveMetric, 15);
    SLOT(S, Finalize, 16);
    SLOT_AS(S,
            IMetric_1_13 * (S::*)(const char *, const char *, const char *, const char *,
                                  const char *, uint32_t, uint32_t, TMetricResultType, const char *,
                                  TMetricType, int64_t, int64_t, THwUnitType, const char *,
                                  const char *, const char *, const char *, const char *,
                                  const char *, uint32_t),
            AddCustomMetric, 17);
}

static void metric_and_information_slots_are_intels(void **)
{
    SLOT(IMetric_1_13, GetParams, 2);
    SLOT(IInformation_1_0, GetParams, 2);
}

/* --- structs and values -------------------------------------------------------------- */

static void typed_value_and_symbol_layouts_are_intels(void **)
{
    assert_int_equal(sizeof(TTypedValue_1_0), 16);
    OFFSET(TTypedValue_1_0, ValueType, 0);
    OFFSET(TTypedValue_1_0, ValueUInt32, 8);
    OFFSET(TTypedValue_1_0, ValueUInt64, 8);
    OFFSET(TTypedValue_1_0, ValueFloat, 8);
    OFFSET(TTypedValue_1_0, ValueBool, 8);
    OFFSET(TTypedValue_1_0, ValueCString, 8);
    assert_int_equal(sizeof(TGlobalSymbol_1_0), 24);
    OFFSET(TGlobalSymbol_1_0, SymbolTypedValue, 8);
    assert_int_equal(sizeof(TApiVersion_1_0), 12);
    OFFSET(TApiVersion_1_0, MinorNumber, 4);
    OFFSET(TApiVersion_1_0, BuildNumber, 8);
    assert_int_equal(sizeof(TDeltaFunction_1_0), 8);
    OFFSET(TDeltaFunction_1_0, BitsCount, 4);
}

static void device_adapter_and_group_params_are_intels(void **)
{
    OFFSET(TMetricsDeviceParams_1_2, ConcurrentGroupsCount, 12);
    OFFSET(TMetricsDeviceParams_1_2, GlobalSymbolsCount, 16);
    OFFSET(TMetricsDeviceParams_1_2, DeltaFunctionsCount, 20);
    OFFSET(TMetricsDeviceParams_1_2, EquationElementTypesCount, 24);
    OFFSET(TMetricsDeviceParams_1_2, EquationOperationsCount, 28);
    OFFSET(TMetricsDeviceParams_1_2, DeviceName, 32);
    OFFSET(TMetricsDeviceParams_1_2, OverrideCount, 40);
    assert_int_equal(sizeof(TMetricsDeviceParams_1_2), 48);

    OFFSET(TAdapterGroupParams_1_6, AdapterCount, 12);
    assert_int_equal(sizeof(TAdapterGroupParams_1_6), 16);

    OFFSET(TAdapterParams_1_9, SystemId, 8);
    OFFSET(TAdapterParams_1_9, VendorId, 20);
    OFFSET(TAdapterParams_1_9, DeviceId, 28);
    OFFSET(TAdapterParams_1_9, Platform, 32);
    OFFSET(TAdapterParams_1_9, FunctionNumber, 44);
    OFFSET(TAdapterParams_1_9, Type, 48);
    OFFSET(TAdapterParams_1_9, CapabilityMask, 52);
    OFFSET(TAdapterParams_1_9, DomainNumber, 56);
    OFFSET(TAdapterParams_1_9, SubDevicesCount, 60); /* in the 1.8 struct's tail padding */
    assert_int_equal(sizeof(TAdapterParams_1_9), 64);

    OFFSET(TConcurrentGroupParams_1_13, Description, 8);
    OFFSET(TConcurrentGroupParams_1_13, MeasurementTypeMask, 16);
    OFFSET(TConcurrentGroupParams_1_13, MetricSetsCount, 20);
    OFFSET(TConcurrentGroupParams_1_13, IoMeasurementInformationCount, 24);
    OFFSET(TConcurrentGroupParams_1_13, IoGpuContextInformationCount, 28);
    OFFSET(TConcurrentGroupParams_1_13, StreamEventName, 32);
    assert_int_equal(sizeof(TConcurrentGroupParams_1_13), 40);
}

static void metric_set_metric_and_information_params_are_intels(void **)
{
    OFFSET(TMetricSetParams_1_11, ShortName, 8);
    OFFSET(TMetricSetParams_1_11, ApiMask, 16);
    OFFSET(TMetricSetParams_1_11, CategoryMask, 20);
    OFFSET(TMetricSetParams_1_11, RawReportSize, 24);
    OFFSET(TMetricSetParams_1_11, QueryReportSize, 28);
    OFFSET(TMetricSetParams_1_11, MetricsCount, 32);
    OFFSET(TMetricSetParams_1_11, InformationCount, 36);
    OFFSET(TMetricSetParams_1_11, ComplementarySetsCount, 40);
    OFFSET(TMetricSetParams_1_11, ApiSpecificId, 48);
    assert_int_equal(sizeof(TApiSpecificId_1_0), 56);
    OFFSET(TApiSpecificId_1_0, OGLQueryIntelName, 32);
    OFFSET(TMetricSetParams_1_11, PlatformMask, 104);
    OFFSET(TMetricSetParams_1_11, GtMask, 112);
    OFFSET(TMetricSetParams_1_11, AvailabilityEquation, 120);
    assert_int_equal(sizeof(TMetricSetParams_1_11), 128);

    OFFSET(TMetricParams_1_13, GroupId, 4);
    OFFSET(TMetricParams_1_13, SymbolName, 8);
    OFFSET(TMetricParams_1_13, ShortName, 16);
    OFFSET(TMetricParams_1_13, GroupName, 24);
    OFFSET(TMetricParams_1_13, LongName, 32);
    OFFSET(TMetricParams_1_13, DxToOglAlias, 40);
    OFFSET(TMetricParams_1_13, UsageFlagsMask, 48);
    OFFSET(TMetricParams_1_13, ApiMask, 52);
    OFFSET(TMetricParams_1_13, ResultType, 56);
    OFFSET(TMetricParams_1_13, MetricResultUnits, 64);
    OFFSET(TMetricParams_1_13, MetricType, 72);
    OFFSET(TMetricParams_1_13, LowWatermark, 80);
    OFFSET(TMetricParams_1_13, HighWatermark, 88);
    OFFSET(TMetricParams_1_13, HwUnitType, 96);
    OFFSET(TMetricParams_1_13, IoReadEquation, 104);
    OFFSET(TMetricParams_1_13, QueryReadEquation, 112);
    OFFSET(TMetricParams_1_13, DeltaFunction, 120);
    OFFSET(TMetricParams_1_13, NormEquation, 128);
    OFFSET(TMetricParams_1_13, MaxValueEquation, 136);
    OFFSET(TMetricParams_1_13, QueryModeMask, 144);
    assert_int_equal(sizeof(TMetricParams_1_13), 152);

    OFFSET(TInformationParams_1_0, SymbolName, 8);
    OFFSET(TInformationParams_1_0, ShortName, 16);
    OFFSET(TInformationParams_1_0, GroupName, 24);
    OFFSET(TInformationParams_1_0, LongName, 32);
    OFFSET(TInformationParams_1_0, ApiMask, 40);
    OFFSET(TInformationParams_1_0, InfoType, 44);
    OFFSET(TInformationParams_1_0, InfoUnits, 48);
    OFFSET(TInformationParams_1_0, IoReadEquation, 56);
    OFFSET(TInformationParams_1_0, QueryReadEquation, 64);
    OFFSET(TInformationParams_1_0, OverflowFunction, 72);
    assert_int_equal(sizeof(TInformationParams_1_0), 80);
}

static void enumerator_values_are_intels(void **)
{
    assert_int_equal(CC_READ_PENDING, 1);
    assert_int_equal(CC_ALREADY_INITIALIZED, 2);
    assert_int_equal(CC_STILL_INITIALIZED, 3);
    assert_int_equal(CC_CONCURRENT_GROUP_LOCKED, 4);
    assert_int_equal(CC_WAIT_TIMEOUT, 5);
    assert_int_equal(CC_INTERRUPTED, 7);
    assert_int_equal(CC_ERROR_INVALID_PARAMETER, 40);
    assert_int_equal(CC_ERROR_NO_MEMORY, 41);
    assert_int_equal(CC_ERROR_GENERAL, 42);
    assert_int_equal(CC_ERROR_NOT_SUPPORTED, 44);
    assert_int_equal(VALUE_TYPE_FLOAT, 2);
    assert_int_equal(VALUE_TYPE_BOOL, 3);
    assert_int_equal(VALUE_TYPE_CSTRING, 4);
    assert_int_equal(RESULT_BOOL, 2); /* not VALUE_TYPE's order */
    assert_int_equal(RESULT_FLOAT, 3);
    assert_int_equal(METRIC_TYPE_RATIO, 6);
    assert_int_equal(INFORMATION_TYPE_TIMESTAMP, 3);
    assert_int_equal(API_TYPE_IOSTREAM, 1);
    assert_int_equal(IO_READ_FLAG_DROP_OLD_REPORTS, 1);
    assert_int_equal(MEASUREMENT_TYPE_SNAPSHOT_IO, 1);
    assert_int_equal(REPORT_REASON_INTERNAL_GO, 0x10);
    assert_int_equal(SAMPLING_TYPE_OA_TIMER, 1);
    assert_int_equal(DELTA_N_BITS, 1);
}

/* --- the built library, called through raw slots ---------------------------------------- */

/* obj->vtable[slot](obj, args...): how a program built against any header
 * with this layout calls it. */
template <typename R, typename... Args> static R call(void *obj, int slot, Args... args)
{
    void **vtable = *static_cast<void ***>(obj);
    return reinterpret_cast<R (*)(void *, Args...)>(vtable[slot])(obj, args...);
}

static void the_library_answers_through_intels_slots(void **)
{
    void *lib = dlopen(LIBIGDMD, RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    auto open_group = reinterpret_cast<int (*)(void **)>(dlsym(lib, "OpenAdapterGroup"));
    assert_non_null(open_group);
    void *group = nullptr;
    assert_int_equal(open_group(&group), 0);

    auto *gp = call<const TAdapterGroupParams_1_6 *>(group, 2);
    assert_int_equal(gp->Version.MajorNumber, 1);
    assert_int_equal(gp->Version.MinorNumber, 13);
    assert_int_equal(gp->Version.BuildNumber, 180);
    assert_int_equal(gp->AdapterCount, 1);
    assert_null(call<void *>(group, 3, 1u)); /* GetAdapter(1): out of range */
    void *adapter = call<void *>(group, 3, 0u);
    assert_non_null(adapter);
    auto *ap = call<const uint8_t *>(adapter, 2);
    assert_non_null(*reinterpret_cast<const char *const *>(ap));       /* ShortName */
    assert_int_equal(*reinterpret_cast<const uint32_t *>(ap + 60), 0); /* SubDevicesCount */

    void *device = nullptr;
    assert_int_equal(call<int>(adapter, 21, &device), 0); /* OpenMetricsDevice(1.13) */
    void *again = nullptr;
    assert_int_equal(call<int>(adapter, 4, &again), 2); /* (1.5): ALREADY_INITIALIZED */
    assert_ptr_equal(again, device);
    auto *dp = call<const TMetricsDeviceParams_1_2 *>(device, 2);
    assert_int_equal(dp->Version.MinorNumber, 13);
    assert_true(dp->ConcurrentGroupsCount >= 1);
    uint64_t gpu = 0, cpu = 0, window = 1;
    uint32_t cpu_id = 0;
    assert_int_equal(call<int>(device, 10, &gpu, &cpu, &cpu_id, &window), 0);
    assert_int_equal(window, 0);
    assert_int_equal(call<int>(device, 7, (uint64_t *)nullptr, &cpu, &cpu_id), 40);
    assert_int_equal(call<int>(device, 6), 40); /* GetLastError */

    void *cg = call<void *>(device, 3, 0u);
    auto *cgp = call<const TConcurrentGroupParams_1_13 *>(cg, 2);
    assert_string_equal(cgp->SymbolName, "OA");
    uint32_t count = 1;
    char byte;
    assert_int_equal(call<int>(cg, 5, &count, &byte, 0u), 42); /* ReadIoStream: no stream */
    assert_int_equal(call<int>(cg, 10, SAMPLING_TYPE_OA_TIMER), 0);
    void *set = call<void *>(cg, 3, 0u);
    auto *sp = call<const TMetricSetParams_1_11 *>(set, 2);
    assert_string_equal(sp->SymbolName, "RenderBasic");
    assert_int_equal(call<int>(set, 9, (uint32_t)API_TYPE_IOSTREAM), 0); /* SetApiFiltering */
    void *metric = call<void *>(set, 3, 0u);
    auto *mp = call<const TMetricParams_1_13 *>(metric, 2);
    assert_string_equal(mp->SymbolName, "GpuTime");
    void *info = call<void *>(set, 4, 0u);
    assert_string_equal(call<const TInformationParams_1_0 *>(info, 2)->SymbolName,
                        "QueryBeginTime");
    assert_int_equal(call<int>(set, 12, (const uint8_t *)nullptr, 0u, (TTypedValue_1_0 *)nullptr,
                               0u, (uint32_t *)nullptr, (TTypedValue_1_0 *)nullptr, 0u),
                     40);                     /* CalculateMetrics(1.5) */
    assert_int_equal(call<int>(set, 13), 44); /* Open: flexible sets */

    assert_int_equal(call<int>(adapter, 6, device), 3); /* CloseMetricsDevice: STILL */
    assert_int_equal(call<int>(adapter, 6, device), 0);
    assert_int_equal(call<int>(group, 4), 0); /* Close */
    dlclose(lib);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(adapter_group_slots_are_intels),
        cmocka_unit_test(adapter_slots_are_intels),
        cmocka_unit_test(metrics_device_slots_are_intels),
        cmocka_unit_test(concurrent_group_slots_are_intels),
        cmocka_unit_test(metric_set_slots_are_intels),
        cmocka_unit_test(metric_and_information_slots_are_intels),
        cmocka_unit_test(typed_value_and_symbol_layouts_are_intels),
        cmocka_unit_test(device_adapter_and_group_params_are_intels),
        cmocka_unit_test(metric_set_metric_and_information_params_are_intels),
        cmocka_unit_test(enumerator_values_are_intels),
        cmocka_unit_test(the_library_answers_through_intels_slots),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
