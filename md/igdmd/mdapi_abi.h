/*
 * Intel's Metrics Discovery API (MDAPI) binary interface, declared for tally.
 *
 * These are tally's own declarations of the interface that Intel's public
 * header (metrics_discovery_api.h, MIT, interface version 1.13, build 180)
 * defines: the same names, the same enumerator values, the same struct
 * layouts and the same order of virtual functions, because a program built
 * against Intel's header calls libigdmd.so through exactly those virtual
 * tables and reads exactly those structs. What is fixed by the ABI:
 *
 *   - every interface is a class whose only data is its vtable pointer;
 *   - a newer interface version derives from the previous one, so its vtable
 *     is the older one followed by the functions it adds; an override with a
 *     covariant return type (a pointer to the newer struct or interface, at
 *     offset 0 of the older one) reuses the older slot;
 *   - a new overload (GetGpuCpuTimestamps with four parameters,
 *     OpenMetricsDevice taking a newer device type) is a new slot;
 *   - the virtual destructor takes two slots (Itanium C++ ABI: the complete
 *     and the deleting destructor), first in each root interface.
 *
 * tests/md/igdmd/test_igdmd_layout.cpp pins every slot and struct offset the
 * library relies on against numbers derived by hand from Intel's header.
 * Functions are pure here: tally implements them in the .cpp files beside this.
 */
#ifndef TALLY_MDAPI_ABI_H
#define TALLY_MDAPI_ABI_H

#include <stdint.h>

#define MD_STDCALL /* stdcall on 32-bit Windows only */

/* The interface version tally implements, reported by GetParams(). */
#define MD_API_BUILD_NUMBER_CURRENT 180

#define MD_API_VERSION_COMBINE_MAJOR_MINOR(version)                                                \
    ((uint64_t)(version).MajorNumber << 32 | (uint64_t)(version).MinorNumber)
#define MD_API_VERSION_AT_LEAST(required, current)                                                 \
    (MD_API_VERSION_COMBINE_MAJOR_MINOR(current) > MD_API_VERSION_COMBINE_MAJOR_MINOR(required) || \
     (MD_API_VERSION_COMBINE_MAJOR_MINOR(current) ==                                               \
          MD_API_VERSION_COMBINE_MAJOR_MINOR(required) &&                                          \
      (current).BuildNumber >= (required).BuildNumber))

namespace MetricsDiscovery
{

/* --- versions and completion codes --------------------------------------------- */

typedef enum EMD_API_MAJOR_VERSION {
    MD_API_MAJOR_NUMBER_1 = 1,
    MD_API_MAJOR_NUMBER_CURRENT = MD_API_MAJOR_NUMBER_1,
    MD_API_MAJOR_NUMBER_CEIL = 0xFFFFFFFF
} MD_API_MAJOR_VERSION;

/* Each minor version added the capability named beside it. */
typedef enum EMD_API_MINOR_VERSION {
    MD_API_MINOR_NUMBER_0 = 0,
    MD_API_MINOR_NUMBER_1 = 1,   /* calculation */
    MD_API_MINOR_NUMBER_2 = 2,   /* overrides */
    MD_API_MINOR_NUMBER_3 = 3,   /* batch buffer sampling */
    MD_API_MINOR_NUMBER_4 = 4,   /* GT-dependent metric sets */
    MD_API_MINOR_NUMBER_5 = 5,   /* max values in calculation */
    MD_API_MINOR_NUMBER_6 = 6,   /* adapters */
    MD_API_MINOR_NUMBER_7 = 7,   /* compile-time equations */
    MD_API_MINOR_NUMBER_8 = 8,   /* adapter params */
    MD_API_MINOR_NUMBER_9 = 9,   /* sub-devices */
    MD_API_MINOR_NUMBER_10 = 10, /* GPU/CPU timestamps with a correlation indicator */
    MD_API_MINOR_NUMBER_11 = 11, /* availability equations */
    MD_API_MINOR_NUMBER_12 = 12, /* information sets in concurrent groups */
    MD_API_MINOR_NUMBER_13 = 13, /* flexible metric sets */
    MD_API_MINOR_NUMBER_CURRENT = MD_API_MINOR_NUMBER_13,
    MD_API_MINOR_NUMBER_CEIL = 0xFFFFFFFF
} MD_API_MINOR_VERSION;

typedef enum ECompletionCode {
    CC_OK = 0,
    CC_READ_PENDING = 1,
    CC_ALREADY_INITIALIZED = 2,
    CC_STILL_INITIALIZED = 3,
    CC_CONCURRENT_GROUP_LOCKED = 4,
    CC_WAIT_TIMEOUT = 5,
    CC_TRY_AGAIN = 6,
    CC_INTERRUPTED = 7,
    CC_ERROR_INVALID_PARAMETER = 40,
    CC_ERROR_NO_MEMORY = 41,
    CC_ERROR_GENERAL = 42,
    CC_ERROR_FILE_NOT_FOUND = 43,
    CC_ERROR_NOT_SUPPORTED = 44,
    CC_ERROR_ACCESS_DENIED = 45,
    CC_LAST_1_0 = 46
} TCompletionCode;

class IMetricsDevice_1_0;
class IMetricsDevice_1_1;
class IMetricsDevice_1_2;
class IMetricsDevice_1_5;
class IMetricsDevice_1_10;
class IMetricsDevice_1_11;
class IMetricsDevice_1_13;
class IOverride_1_2;
class IConcurrentGroup_1_0;
class IConcurrentGroup_1_1;
class IConcurrentGroup_1_3;
class IConcurrentGroup_1_5;
class IConcurrentGroup_1_11;
class IConcurrentGroup_1_13;
class IMetricSet_1_0;
class IMetricSet_1_1;
class IMetricSet_1_4;
class IMetricSet_1_5;
class IMetricSet_1_11;
class IMetricSet_1_13;
class IMetric_1_0;
class IMetric_1_13;
class IInformation_1_0;
class IEquation_1_0;
class IMetricPrototype_1_13;
class IMetricEnumerator_1_13;

/* --- typed values and global symbols ------------------------------------------- */

typedef enum EValueType {
    VALUE_TYPE_UINT32,
    VALUE_TYPE_UINT64,
    VALUE_TYPE_FLOAT,
    VALUE_TYPE_BOOL,
    VALUE_TYPE_CSTRING,
    VALUE_TYPE_BYTEARRAY,
    VALUE_TYPE_UINT32_RANGE,
    VALUE_TYPE_UINT64_RANGE,
    VALUE_TYPE_LAST,
} TValueType;

typedef struct SByteArray_1_0 {
    uint32_t Size;
    uint8_t *Data;
} TByteArray_1_0;

/* 16 bytes: the type, then an 8-byte union at offset 8. */
typedef struct STypedValue_1_0 {
    TValueType ValueType;
    union {
        uint32_t ValueUInt32;
        uint64_t ValueUInt64;
        struct {
            uint32_t Low;
            uint32_t High;
        } ValueUInt64Fields;
        float ValueFloat;
        bool ValueBool;
        char *ValueCString;
        TByteArray_1_0 *ValueByteArray;
    };
} TTypedValue_1_0;

typedef struct SGlobalSymbol_1_0 {
    const char *SymbolName;
    TTypedValue_1_0 SymbolTypedValue;
} TGlobalSymbol_1_0;

typedef struct SApiVersion_1_0 {
    uint32_t MajorNumber;
    uint32_t MinorNumber;
    uint32_t BuildNumber;
} TApiVersion_1_0;

/* --- device, adapter and group parameters -------------------------------------- */

typedef struct SMetricsDeviceParams_1_0 {
    TApiVersion_1_0 Version;
    uint32_t ConcurrentGroupsCount;
    uint32_t GlobalSymbolsCount;
    uint32_t DeltaFunctionsCount;
    uint32_t EquationElementTypesCount;
    uint32_t EquationOperationsCount;
    const char *DeviceName;
} TMetricsDeviceParams_1_0;

typedef struct SMetricsDeviceParams_1_2 : public SMetricsDeviceParams_1_0 {
    uint32_t OverrideCount;
} TMetricsDeviceParams_1_2;

typedef enum EMetricApiType {
    API_TYPE_IOSTREAM = 0x00000001, /* stream sampling, independent of any graphics API */
    API_TYPE_DX9 = 0x00000002,
    API_TYPE_DX10 = 0x00000004,
    API_TYPE_DX11 = 0x00000008,
    API_TYPE_OGL = 0x00000010,
    API_TYPE_OGL4_X = 0x00000020,
    API_TYPE_OCL = 0x00000040,
    API_TYPE_MEDIA = 0x00000080,
    API_TYPE_DX12 = 0x00000100,
    API_TYPE_BBSTREAM = 0x00000200,
    API_TYPE_VULKAN = 0x00000400,
    API_TYPE_RESERVED = 0x00000800,
    API_TYPE_ALL = 0xFFFFFFFF
} TMetricApiType;

typedef enum EMeasurementType {
    MEASUREMENT_TYPE_SNAPSHOT_IO = 0x00000001,
    MEASUREMENT_TYPE_SNAPSHOT_QUERY = 0x00000002,
    MEASUREMENT_TYPE_DELTA_QUERY = 0x00000004,
    MEASUREMENT_TYPE_ALL = 0x0000FFFF,
} TMeasurementType;

typedef enum EMetricUsageFlag {
    USAGE_FLAG_OVERVIEW = 0x00000001,
    USAGE_FLAG_INDICATE = 0x00000002,
    USAGE_FLAG_CORRELATE = 0x00000004,
    USAGE_FLAG_SYSTEM = 0x00000020,
    USAGE_FLAG_FRAME = 0x00000040,
    USAGE_FLAG_BATCH = 0x00000080,
    USAGE_FLAG_DRAW = 0x00000100,
    USAGE_FLAG_TIER_1 = 0x00000400,
    USAGE_FLAG_TIER_2 = 0x00000800,
    USAGE_FLAG_TIER_3 = 0x00001000,
    USAGE_FLAG_TIER_4 = 0x00002000,
    USAGE_FLAG_GLASS_JAW = 0x00004000,
    USAGE_FLAG_ALL = 0x0000FFFF,
} TMetricUsageFlag;

typedef enum ESamplingType {
    SAMPLING_TYPE_OA_TIMER = 0x00000001,
    SAMPLING_TYPE_OA_EVENT = 0x00000002,
    SAMPLING_TYPE_GPU_QUERY = 0x00000004,
    SAMPLING_TYPE_DMA_BUFFER = 0x00000008,
    SAMPLING_TYPE_OAM_TIMER = 0x00000010,
    SAMPLING_TYPE_ALL = 0x0000FFFF,
} TSamplingType;

typedef enum EMetricCategory {
    GPU_RENDER = 0x0001,
    GPU_COMPUTE = 0x0002,
    GPU_MEDIA = 0x0004,
    GPU_GENERIC = 0x0008,
} TMetricCategory;

typedef enum EIoReadFlag {
    IO_READ_FLAG_DROP_OLD_REPORTS = 0x00000001,
    IO_READ_FLAG_GET_CONTEXT_ID_TAGS = 0x00000002,
} TIoReadFlag;

typedef enum EOverrideMode {
    OVERRIDE_MODE_GLOBAL = 0x0001,
    OVERRIDE_MODE_LOCAL = 0x0002,
} TOverrideMode;

typedef enum EAdapterCapability {
    ADAPTER_CAPABILITY_UNDEFINED = 0,
    ADAPTER_CAPABILITY_RENDER_SUPPORTED = 1 << 0,
} TAdapterCapability;

typedef enum EAdapterType {
    ADAPTER_TYPE_UNDEFINED = 0,
    ADAPTER_TYPE_INTEGRATED,
    ADAPTER_TYPE_DISCRETE,
} TAdapterType;

typedef enum EAdapterIdType {
    ADAPTER_ID_TYPE_UNDEFINED = 0,
    ADAPTER_ID_TYPE_LUID,
    ADAPTER_ID_TYPE_MAJOR_MINOR,
} TAdapterIdType;

typedef struct SAdapterIdLuid_1_6 {
    uint32_t LowPart;
    int32_t HighPart;
} TAdapterIdLuid_1_6;

typedef struct SAdapterIdMajorMinor_1_6 {
    int32_t Major;
    int32_t Minor;
} TAdapterIdMajorMinor_1_6;

typedef struct SAdapterId_1_6 {
    TAdapterIdType Type;
    union {
        TAdapterIdLuid_1_6 Luid;
        TAdapterIdMajorMinor_1_6 MajorMinor;
    };
} TAdapterId_1_6;

typedef struct SAdapterParams_1_6 {
    const char *ShortName;
    TAdapterId_1_6 SystemId;
    uint32_t VendorId;
    uint32_t SubVendorId;
    uint32_t DeviceId;
    uint32_t Platform;
    uint32_t BusNumber;
    uint32_t DeviceNumber;
    uint32_t FunctionNumber;
    TAdapterType Type;
    uint32_t CapabilityMask; /* TAdapterCapability bits */
} TAdapterParams_1_6;

typedef struct SAdapterParams_1_8 : public SAdapterParams_1_6 {
    uint32_t DomainNumber;
} TAdapterParams_1_8;

/* SubDevicesCount sits in the tail padding of the 1.8 struct (offset 60):
 * a derived, non-POD base lends its padding to the next member. */
typedef struct SAdapterParams_1_9 : public SAdapterParams_1_8 {
    uint32_t SubDevicesCount;
} TAdapterParams_1_9;

typedef struct SSubDeviceParams_1_9 {
    uint32_t EnginesCount;
} TSubDeviceParams_1_9;

typedef enum EEngineIdType { ENGINE_ID_TYPE_CLASS_INSTANCE = 0 } TEngineIdType;

typedef struct SEngineIdClassInstance_1_9 {
    uint32_t Class;
    uint32_t Instance;
} TEngineIdClassInstance_1_9;

typedef struct SEngineId_1_9 {
    TEngineIdType Type;
    union {
        TEngineIdClassInstance_1_9 ClassInstance;
    };
} TEngineId_1_9;

typedef struct SEngineParams_1_9 {
    TEngineId_1_9 EngineId;
} TEngineParams_1_9;

typedef struct SEngineParams_1_13 : public SEngineParams_1_9 {
    uint32_t GtId;
    uint32_t OaUnit;
} TEngineParams_1_13;

typedef struct SAdapterGroupParams_1_6 {
    TApiVersion_1_0 Version;
    uint32_t AdapterCount;
} TAdapterGroupParams_1_6;

typedef struct SConcurrentGroupParams_1_0 {
    const char *SymbolName;  /* "OA" */
    const char *Description; /* a sentence */
    uint32_t MeasurementTypeMask;
    uint32_t MetricSetsCount;
    uint32_t IoMeasurementInformationCount;
    uint32_t IoGpuContextInformationCount;
} TConcurrentGroupParams_1_0;

typedef struct SConcurrentGroupParams_1_13 : SConcurrentGroupParams_1_0 {
    const char *StreamEventName;
} TConcurrentGroupParams_1_13;

/* --- overrides (tally offers none) --------------------------------------------- */

typedef struct SOverrideParams_1_2 {
    const char *SymbolName;
    const char *Description;
    uint32_t ApiMask;
    uint32_t PlatformMask;
    uint32_t OverrideModeMask;
} TOverrideParams_1_2;

typedef struct SSetOverrideParams_1_2 {
    bool Enable;
} TSetOverrideParams_1_2;

typedef struct SSetFrequencyOverrideParams_1_2 : SSetOverrideParams_1_2 {
    uint32_t FrequencyMhz;
    uint32_t Pid;
} TSetFrequencyOverrideParams_1_2;

typedef struct SSetQueryOverrideParams_1_2 : SSetOverrideParams_1_2 {
    uint32_t Period; /* ns */
} TSetQueryOverrideParams_1_2;

typedef struct SSetDriverOverrideParams_1_2 : SSetOverrideParams_1_2 {
    uint32_t Value;
} TSetDriverOverrideParams_1_2;

/* --- metric sets, metrics, information ----------------------------------------- */

/* How each graphics API names the set's query. */
typedef struct SApiSpecificId_1_0 {
    uint32_t D3D9QueryId;
    uint32_t D3D9Fourcc;
    uint32_t D3D1XQueryId;
    uint32_t D3D1XDevDependentId;
    const char *D3D1XDevDependentName;
    uint32_t OGLQueryIntelId;
    const char *OGLQueryIntelName;
    uint32_t OGLQueryARBTargetId;
    uint32_t OCL;
    uint32_t HwConfigId;
    uint32_t placeholder[1];
} TApiSpecificId_1_0;

typedef struct SMetricSetParams_1_0 {
    const char *SymbolName; /* "RenderBasic" */
    const char *ShortName;
    uint32_t ApiMask;
    uint32_t CategoryMask;
    uint32_t RawReportSize;   /* bytes of one stream report */
    uint32_t QueryReportSize; /* bytes of one query report */
    uint32_t MetricsCount;
    uint32_t InformationCount;
    uint32_t ComplementarySetsCount;
    TApiSpecificId_1_0 ApiSpecificId;
    uint32_t PlatformMask;
} TMetricSetParams_1_0;

typedef struct SMetricSetParams_1_4 : SMetricSetParams_1_0 {
    uint32_t GtMask;
} TMetricSetParams_1_4;

typedef struct SMetricSetParams_1_11 : SMetricSetParams_1_4 {
    const char *AvailabilityEquation;
} TMetricSetParams_1_11;

typedef enum EMetricResultType {
    RESULT_UINT32,
    RESULT_UINT64,
    RESULT_BOOL,
    RESULT_FLOAT,
    RESULT_LAST
} TMetricResultType;

typedef enum EMetricType {
    METRIC_TYPE_DURATION,
    METRIC_TYPE_EVENT,
    METRIC_TYPE_EVENT_WITH_RANGE,
    METRIC_TYPE_THROUGHPUT,
    METRIC_TYPE_TIMESTAMP,
    METRIC_TYPE_FLAG,
    METRIC_TYPE_RATIO,
    METRIC_TYPE_RAW,
    METRIC_TYPE_LAST
} TMetricType;

typedef enum EInformationType {
    INFORMATION_TYPE_REPORT_REASON,
    INFORMATION_TYPE_VALUE,
    INFORMATION_TYPE_FLAG,
    INFORMATION_TYPE_TIMESTAMP,
    INFORMATION_TYPE_CONTEXT_ID_TAG,
    INFORMATION_TYPE_SAMPLE_PHASE,
    INFORMATION_TYPE_GPU_NODE,
    INFORMATION_TYPE_LAST
} TInformationType;

typedef enum EReportReason {
    REPORT_REASON_UNDEFINED = 0x0000,
    REPORT_REASON_INTERNAL_TIMER = 0x0001,
    REPORT_REASON_INTERNAL_TRIGGER1 = 0x0002,
    REPORT_REASON_INTERNAL_TRIGGER2 = 0x0004,
    REPORT_REASON_INTERNAL_CONTEXT_SWITCH = 0x0008,
    REPORT_REASON_INTERNAL_GO = 0x0010,
    REPORT_REASON_INTERNAL_FREQUENCY_CHANGE = 0x0020,
    REPORT_REASON_INTERNAL_MMIO_TRIGGER = 0x0040,
    REPORT_REASON_QUERY_DEFAULT = 0x0100,
    REPORT_REASON_QUERY_INTERNAL_RESOLVE = 0x0200,
    REPORT_REASON_QUERY_INTERNAL_CLEAR = 0x0400,
} TReportReason;

typedef enum ESamplePhase { SAMPLE_PHASE_END, SAMPLE_PHASE_BEGIN, SAMPLE_PHASE_LAST } TSamplePhase;

typedef enum EInformationGpuNode {
    INFORMATION_GPUNODE_3D = 0,
    INFORMATION_GPUNODE_VIDEO = 1,
    INFORMATION_GPUNODE_BLT = 2,
    INFORMATION_GPUNODE_VE = 3,
    INFORMATION_GPUNODE_VCS2 = 4,
    INFORMATION_GPUNODE_REAL_MAX = 5,
    INFORMATION_GPUNODE_LAST
} TInformationGpuNode;

typedef enum EHwUnitType {
    HW_UNIT_GPU,
    HW_UNIT_SLICE,
    HW_UNIT_SUBSLICE,
    HW_UNIT_SUBSLICE_BANK,
    HW_UNIT_EU_UNIT,
    HW_UNIT_UNCORE,
    HW_UNIT_DUALSUBSLICE,
    HW_UNIT_LAST
} THwUnitType;

typedef enum EDeltaFunctionType {
    DELTA_FUNCTION_NULL = 0,
    DELTA_N_BITS,
    DELTA_BOOL_OR,
    DELTA_BOOL_XOR,
    DELTA_GET_PREVIOUS,
    DELTA_GET_LAST,
    DELTA_NS_TIME,
    DELTA_FUNCTION_LAST_1_0
} TDeltaFunctionType;

typedef struct SDeltaFunction_1_0 {
    TDeltaFunctionType FunctionType;
    union {
        uint32_t BitsCount; /* for DELTA_N_BITS */
    };
} TDeltaFunction_1_0;

/* Equations are not offered (every equation pointer is null); the element is
 * declared for the IEquation_1_0 interface's signature only. */
typedef enum EEquationElementType {
    EQUATION_ELEM_OPERATION,
    EQUATION_ELEM_RD_BITFIELD,
    EQUATION_ELEM_RD_UINT8,
    EQUATION_ELEM_RD_UINT16,
    EQUATION_ELEM_RD_UINT32,
    EQUATION_ELEM_RD_UINT64,
    EQUATION_ELEM_RD_FLOAT,
    EQUATION_ELEM_RD_40BIT_CNTR,
    EQUATION_ELEM_IMM_UINT64,
    EQUATION_ELEM_IMM_FLOAT,
    EQUATION_ELEM_SELF_COUNTER_VALUE,
    EQUATION_ELEM_GLOBAL_SYMBOL,
    EQUATION_ELEM_LOCAL_COUNTER_SYMBOL,
    EQUATION_ELEM_OTHER_SET_COUNTER_SYMBOL,
    EQUATION_ELEM_LOCAL_METRIC_SYMBOL,
    EQUATION_ELEM_OTHER_SET_METRIC_SYMBOL,
    EQUATION_ELEM_INFORMATION_SYMBOL,
    EQUATION_ELEM_STD_NORM_GPU_DURATION,
    EQUATION_ELEM_STD_NORM_EU_AGGR_DURATION,
    EQUATION_ELEM_MASK,
    EQUATION_ELEM_LAST_1_0
} TEquationElementType;

typedef struct SEquationElement_1_0 TEquationElement_1_0;

typedef enum EQueryModeMask {
    QUERY_MODE_MASK_NONE = 0x00000000,
    QUERY_MODE_MASK_RENDER = 0x00000001,
    QUERY_MODE_MASK_COMPUTE = 0x00000002,
    QUERY_MODE_MASK_GLOBAL = 0x00000004,
    QUERY_MODE_MASK_GLOBAL_EXTENDED = 0x00000008,
    QUERY_MODE_MASK_ALL = 0xFFFFFFFF
} TQueryModeMask;

typedef enum EOptionDescriptorType {
    OPTION_DESCRIPTOR_TYPE_DISAGGREGATION = 0,
    OPTION_DESCRIPTOR_TYPE_LATENCY = 1,
    OPTION_DESCRIPTOR_TYPE_NORMALIZATION_UTILIZATION = 2,
    OPTION_DESCRIPTOR_TYPE_NORMALIZATION_AVERAGE = 3,
    OPTION_DESCRIPTOR_TYPE_NORMALIZATION_RATE = 4,
    OPTION_DESCRIPTOR_TYPE_NORMALIZATION_BYTE = 5,
    OPTION_DESCRIPTOR_TYPE_LAST
} TOptionDescriptorType;

/* Metric prototypes (flexible sets, 1.13) are not offered: declared for the
 * signatures of the functions that answer null or NOT_SUPPORTED. */
typedef struct SMetricPrototypeParams_1_13 TMetricPrototypeParams_1_13;
typedef struct SMetricPrototypeOptionDescriptor_1_13 TMetricPrototypeOptionDescriptor_1_13;

typedef struct SMetricParams_1_0 {
    uint32_t IdInSet; /* position in the set as filtered */
    uint32_t GroupId;
    const char *SymbolName; /* "CsInvocations" */
    const char *ShortName;
    const char *GroupName;
    const char *LongName;
    const char *DxToOglAlias;
    uint32_t UsageFlagsMask;
    uint32_t ApiMask;
    TMetricResultType ResultType;
    const char *MetricResultUnits;
    TMetricType MetricType;
    uint64_t LowWatermark;
    uint64_t HighWatermark;
    THwUnitType HwUnitType;
    IEquation_1_0 *IoReadEquation;
    IEquation_1_0 *QueryReadEquation;
    TDeltaFunction_1_0 DeltaFunction;
    IEquation_1_0 *NormEquation;
    IEquation_1_0 *MaxValueEquation;
} TMetricParams_1_0;

typedef struct SMetricParams_1_13 : public SMetricParams_1_0 {
    uint32_t QueryModeMask; /* TQueryModeMask bits */
} TMetricParams_1_13;

typedef struct SInformationParams_1_0 {
    uint32_t IdInSet;
    const char *SymbolName; /* "QueryBeginTime" */
    const char *ShortName;
    const char *GroupName;
    const char *LongName;
    uint32_t ApiMask;
    TInformationType InfoType;
    const char *InfoUnits;
    IEquation_1_0 *IoReadEquation;
    IEquation_1_0 *QueryReadEquation;
    TDeltaFunction_1_0 OverflowFunction;
} TInformationParams_1_0;

/* --- interfaces -------------------------------------------------------------------- */

class IEquation_1_0
{
  public:
    virtual ~IEquation_1_0() {}
    virtual uint32_t GetEquationElementsCount(void) = 0;
    virtual TEquationElement_1_0 *GetEquationElement(uint32_t index) = 0;
};

class IInformation_1_0
{
  public:
    virtual ~IInformation_1_0() {}
    virtual TInformationParams_1_0 *GetParams() = 0;
};

class IMetric_1_0
{
  public:
    virtual ~IMetric_1_0() {}
    virtual TMetricParams_1_0 *GetParams() = 0;
};

class IMetric_1_13 : public IMetric_1_0
{
  public:
    TMetricParams_1_13 *GetParams() override = 0;
};

class IMetricPrototype_1_13
{
  public:
    virtual ~IMetricPrototype_1_13() {}
    virtual const TMetricPrototypeParams_1_13 *GetParams(void) const = 0;
    virtual IMetricPrototype_1_13 *Clone(void) = 0;
    virtual const TMetricPrototypeOptionDescriptor_1_13 *
    GetOptionDescriptor(uint32_t index) const = 0;
    virtual TCompletionCode SetOption(const TOptionDescriptorType optionType,
                                      const TTypedValue_1_0 *typedValue) = 0;
    virtual TCompletionCode ChangeNames(const char *symbolName, const char *shortName,
                                        const char *longName, const char *resultUnits) = 0;
};

class IMetricEnumerator_1_13
{
  public:
    virtual ~IMetricEnumerator_1_13() {}
    virtual uint32_t GetMetricPrototypeCount(void) = 0;
    virtual IMetricPrototype_1_13 *GetMetricPrototype(const uint32_t index) = 0;
    virtual TCompletionCode GetMetricPrototypes(const uint32_t index, uint32_t *count,
                                                IMetricPrototype_1_13 **metrics) = 0;
    virtual TCompletionCode RemoveClonedMetricPrototype(IMetricPrototype_1_13 *clonedPrototype) = 0;
};

class IMetricSet_1_0
{
  public:
    virtual ~IMetricSet_1_0() {}
    virtual TMetricSetParams_1_0 *GetParams(void) = 0;
    virtual IMetric_1_0 *GetMetric(uint32_t index) = 0;
    virtual IInformation_1_0 *GetInformation(uint32_t index) = 0;
    virtual IMetricSet_1_0 *GetComplementaryMetricSet(uint32_t index) = 0;
    virtual TCompletionCode Activate(void) = 0;
    virtual TCompletionCode Deactivate(void) = 0;
    virtual IMetric_1_0 *
    AddCustomMetric(const char *symbolName, const char *shortName, const char *groupName,
                    const char *longName, const char *dxToOglAlias, uint32_t usageFlagsMask,
                    uint32_t apiMask, TMetricResultType resultType, const char *resultUnits,
                    TMetricType metricType, int64_t loWatermark, int64_t hiWatermark,
                    THwUnitType hwType, const char *ioReadEquation, const char *deltaFunction,
                    const char *queryReadEquation, const char *normalizationEquation,
                    const char *maxValueEquation, const char *signalName) = 0;
};

/* 1.1: calculation. outSize is in bytes; the bool asks for context filtering. */
class IMetricSet_1_1 : public IMetricSet_1_0
{
  public:
    virtual TCompletionCode SetApiFiltering(uint32_t apiMask) = 0;
    virtual TCompletionCode CalculateMetrics(const uint8_t *rawData, uint32_t rawDataSize,
                                             TTypedValue_1_0 *out, uint32_t outSize,
                                             uint32_t *outReportCount,
                                             bool enableContextFiltering) = 0;
    virtual TCompletionCode CalculateIoMeasurementInformation(TTypedValue_1_0 *out,
                                                              uint32_t outSize) = 0;
};

class IMetricSet_1_4 : public IMetricSet_1_1
{
  public:
    TMetricSetParams_1_4 *GetParams(void) override = 0;
};

/* 1.5: calculation with each metric's maximum value beside its value. */
class IMetricSet_1_5 : public IMetricSet_1_4
{
  public:
    using IMetricSet_1_1::CalculateMetrics;
    IMetricSet_1_5 *GetComplementaryMetricSet(uint32_t index) override = 0;
    virtual TCompletionCode CalculateMetrics(const uint8_t *rawData, uint32_t rawDataSize,
                                             TTypedValue_1_0 *out, uint32_t outSize,
                                             uint32_t *outReportCount,
                                             TTypedValue_1_0 *outMaxValues,
                                             uint32_t outMaxValuesSize) = 0;
};

class IMetricSet_1_11 : public IMetricSet_1_5
{
  public:
    TMetricSetParams_1_11 *GetParams(void) override = 0;
};

/* 1.13: flexible sets built from metric prototypes. */
class IMetricSet_1_13 : public IMetricSet_1_11
{
  public:
    virtual TCompletionCode Open() = 0;
    virtual TCompletionCode AddMetric(IMetricPrototype_1_13 *metricPrototype) = 0;
    virtual TCompletionCode RemoveMetric(IMetricPrototype_1_13 *metricPrototype) = 0;
    virtual TCompletionCode Finalize() = 0;
    IMetric_1_13 *GetMetric(uint32_t index) override = 0;
    using IMetricSet_1_0::AddCustomMetric;
    virtual IMetric_1_13 *AddCustomMetric(
        const char *symbolName, const char *shortName, const char *groupName, const char *longName,
        const char *dxToOglAlias, uint32_t usageFlagsMask, uint32_t apiMask,
        TMetricResultType resultType, const char *resultUnits, TMetricType metricType,
        int64_t loWatermark, int64_t hiWatermark, THwUnitType hwType, const char *ioReadEquation,
        const char *deltaFunction, const char *queryReadEquation, const char *normalizationEquation,
        const char *maxValueEquation, const char *signalName, uint32_t queryModeMask) = 0;
};

/* Stream sampling happens on a concurrent group, one metric set at a time. */
class IConcurrentGroup_1_0
{
  public:
    virtual ~IConcurrentGroup_1_0() {}
    virtual TConcurrentGroupParams_1_0 *GetParams(void) = 0;
    virtual IMetricSet_1_0 *GetMetricSet(uint32_t index) = 0;
    virtual TCompletionCode OpenIoStream(IMetricSet_1_0 *metricSet, uint32_t processId,
                                         uint32_t *nsTimerPeriod, uint32_t *oaBufferSize) = 0;
    virtual TCompletionCode ReadIoStream(uint32_t *reportsCount, char *reportData,
                                         uint32_t readFlags) = 0;
    virtual TCompletionCode CloseIoStream(void) = 0;
    virtual TCompletionCode WaitForReports(uint32_t milliseconds) = 0;
    virtual IInformation_1_0 *GetIoMeasurementInformation(uint32_t index) = 0;
    virtual IInformation_1_0 *GetIoGpuContextInformation(uint32_t index) = 0;
};

class IConcurrentGroup_1_1 : public IConcurrentGroup_1_0
{
  public:
    IMetricSet_1_1 *GetMetricSet(uint32_t index) override = 0;
};

class IConcurrentGroup_1_3 : public IConcurrentGroup_1_1
{
  public:
    virtual TCompletionCode SetIoStreamSamplingType(TSamplingType type) = 0;
};

class IConcurrentGroup_1_5 : public IConcurrentGroup_1_3
{
  public:
    IMetricSet_1_5 *GetMetricSet(uint32_t index) override = 0;
};

class IConcurrentGroup_1_11 : public IConcurrentGroup_1_5
{
  public:
    IMetricSet_1_11 *GetMetricSet(uint32_t index) override = 0;
};

class IConcurrentGroup_1_13 : public IConcurrentGroup_1_11
{
  public:
    TConcurrentGroupParams_1_13 *GetParams(void) override = 0;
    IMetricSet_1_13 *GetMetricSet(uint32_t index) override = 0;
    virtual IMetricEnumerator_1_13 *GetMetricEnumerator(void) = 0;
    virtual IMetricEnumerator_1_13 *GetMetricEnumeratorFromFile(const char *fileName) = 0;
    virtual IMetricSet_1_13 *AddMetricSet(const char *symbolName, const char *shortName) = 0;
    virtual TCompletionCode RemoveMetricSet(IMetricSet_1_13 *metricSet) = 0;
};

class IOverride_1_2
{
  public:
    virtual ~IOverride_1_2() {}
    virtual TOverrideParams_1_2 *GetParams(void) = 0;
    virtual TCompletionCode SetOverride(TSetOverrideParams_1_2 *params, uint32_t paramsSize) = 0;
};

class IMetricsDevice_1_0
{
  public:
    virtual ~IMetricsDevice_1_0() {}
    virtual TMetricsDeviceParams_1_0 *GetParams(void) = 0;
    virtual IConcurrentGroup_1_0 *GetConcurrentGroup(uint32_t index) = 0;
    virtual TGlobalSymbol_1_0 *GetGlobalSymbol(uint32_t index) = 0;
    virtual TTypedValue_1_0 *GetGlobalSymbolValueByName(const char *name) = 0;
    virtual TCompletionCode GetLastError(void) = 0;
    virtual TCompletionCode GetGpuCpuTimestamps(uint64_t *gpuTimestampNs, uint64_t *cpuTimestampNs,
                                                uint32_t *cpuId) = 0;
};

class IMetricsDevice_1_1 : public IMetricsDevice_1_0
{
  public:
    IConcurrentGroup_1_1 *GetConcurrentGroup(uint32_t index) override = 0;
};

class IMetricsDevice_1_2 : public IMetricsDevice_1_1
{
  public:
    TMetricsDeviceParams_1_2 *GetParams(void) override = 0;
    virtual IOverride_1_2 *GetOverride(uint32_t index) = 0;
    virtual IOverride_1_2 *GetOverrideByName(const char *symbolName) = 0;
};

class IMetricsDevice_1_5 : public IMetricsDevice_1_2
{
  public:
    IConcurrentGroup_1_5 *GetConcurrentGroup(uint32_t index) override = 0;
};

/* 1.10: the pair with the width of the window it was read in. */
class IMetricsDevice_1_10 : public IMetricsDevice_1_5
{
  public:
    using IMetricsDevice_1_0::GetGpuCpuTimestamps;
    virtual TCompletionCode GetGpuCpuTimestamps(uint64_t *gpuTimestampNs, uint64_t *cpuTimestampNs,
                                                uint32_t *cpuId,
                                                uint64_t *correlationIndicatorNs) = 0;
};

class IMetricsDevice_1_11 : public IMetricsDevice_1_10
{
  public:
    IConcurrentGroup_1_11 *GetConcurrentGroup(uint32_t index) override = 0;
};

class IMetricsDevice_1_13 : public IMetricsDevice_1_11
{
  public:
    IConcurrentGroup_1_13 *GetConcurrentGroup(uint32_t index) override = 0;
};

class IAdapter_1_6
{
  public:
    virtual ~IAdapter_1_6() {}
    virtual const TAdapterParams_1_6 *GetParams(void) const = 0;
    virtual TCompletionCode Reset() = 0;
    virtual TCompletionCode OpenMetricsDevice(IMetricsDevice_1_5 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                                      IMetricsDevice_1_5 **metricsDevice) = 0;
    virtual TCompletionCode CloseMetricsDevice(IMetricsDevice_1_5 *metricsDevice) = 0;
    virtual TCompletionCode SaveMetricsDeviceToFile(const char *fileName, void *saveParams,
                                                    IMetricsDevice_1_5 *metricsDevice) = 0;
};

class IAdapter_1_8 : public IAdapter_1_6
{
  public:
    const TAdapterParams_1_8 *GetParams(void) const override = 0;
};

class IAdapter_1_9 : public IAdapter_1_8
{
  public:
    const TAdapterParams_1_9 *GetParams(void) const override = 0;
    virtual const TSubDeviceParams_1_9 *GetSubDeviceParams(const uint32_t subDeviceIndex) = 0;
    virtual const TEngineParams_1_9 *GetEngineParams(const uint32_t subDeviceIndex,
                                                     const uint32_t engineIndex) = 0;
    virtual TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                                 IMetricsDevice_1_5 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                         const char *fileName, void *openParams,
                                                         IMetricsDevice_1_5 **metricsDevice) = 0;
};

/* 1.10, 1.11 and 1.13 add overloads that hand out newer device interfaces. */
class IAdapter_1_10 : public IAdapter_1_9
{
  public:
    using IAdapter_1_6::OpenMetricsDevice;
    using IAdapter_1_6::OpenMetricsDeviceFromFile;
    using IAdapter_1_9::OpenMetricsSubDevice;
    using IAdapter_1_9::OpenMetricsSubDeviceFromFile;
    virtual TCompletionCode OpenMetricsDevice(IMetricsDevice_1_10 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                                      IMetricsDevice_1_10 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                                 IMetricsDevice_1_10 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                         const char *fileName, void *openParams,
                                                         IMetricsDevice_1_10 **metricsDevice) = 0;
};

class IAdapter_1_11 : public IAdapter_1_10
{
  public:
    using IAdapter_1_10::OpenMetricsDevice;
    using IAdapter_1_10::OpenMetricsDeviceFromFile;
    using IAdapter_1_10::OpenMetricsSubDevice;
    using IAdapter_1_10::OpenMetricsSubDeviceFromFile;
    virtual TCompletionCode OpenMetricsDevice(IMetricsDevice_1_11 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                                      IMetricsDevice_1_11 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                                 IMetricsDevice_1_11 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                         const char *fileName, void *openParams,
                                                         IMetricsDevice_1_11 **metricsDevice) = 0;
    using IAdapter_1_6::SaveMetricsDeviceToFile;
    virtual TCompletionCode SaveMetricsDeviceToFile(const char *fileName, void *saveParams,
                                                    IMetricsDevice_1_11 *metricsDevice,
                                                    const uint32_t minMajorApiVersion,
                                                    const uint32_t minMinorApiVersion) = 0;
};

class IAdapter_1_13 : public IAdapter_1_11
{
  public:
    using IAdapter_1_11::OpenMetricsDevice;
    using IAdapter_1_11::OpenMetricsDeviceFromFile;
    using IAdapter_1_11::OpenMetricsSubDevice;
    using IAdapter_1_11::OpenMetricsSubDeviceFromFile;
    virtual TCompletionCode OpenMetricsDevice(IMetricsDevice_1_13 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsDeviceFromFile(const char *fileName, void *openParams,
                                                      IMetricsDevice_1_13 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDevice(const uint32_t subDeviceIndex,
                                                 IMetricsDevice_1_13 **metricsDevice) = 0;
    virtual TCompletionCode OpenMetricsSubDeviceFromFile(const uint32_t subDeviceIndex,
                                                         const char *fileName, void *openParams,
                                                         IMetricsDevice_1_13 **metricsDevice) = 0;
    const TEngineParams_1_13 *GetEngineParams(const uint32_t subDeviceIndex,
                                              const uint32_t engineIndex) override = 0;
};

class IAdapterGroup_1_6
{
  public:
    virtual ~IAdapterGroup_1_6() {}
    virtual const TAdapterGroupParams_1_6 *GetParams(void) const = 0;
    virtual IAdapter_1_6 *GetAdapter(uint32_t index) = 0;
    virtual TCompletionCode Close() = 0;
};

class IAdapterGroup_1_8 : public IAdapterGroup_1_6
{
  public:
    IAdapter_1_8 *GetAdapter(uint32_t index) override = 0;
};

class IAdapterGroup_1_9 : public IAdapterGroup_1_8
{
  public:
    IAdapter_1_9 *GetAdapter(uint32_t index) override = 0;
};

class IAdapterGroup_1_10 : public IAdapterGroup_1_9
{
  public:
    IAdapter_1_10 *GetAdapter(uint32_t index) override = 0;
};

class IAdapterGroup_1_11 : public IAdapterGroup_1_10
{
  public:
    IAdapter_1_11 *GetAdapter(uint32_t index) override = 0;
};

class IAdapterGroup_1_13 : public IAdapterGroup_1_11
{
  public:
    IAdapter_1_13 *GetAdapter(uint32_t index) override = 0;
};

/* --- the newest of each, and the exported entry points -------------------------- */

using IAdapterGroupLatest = IAdapterGroup_1_13;
using IAdapterLatest = IAdapter_1_13;
using IConcurrentGroupLatest = IConcurrentGroup_1_13;
using IEquationLatest = IEquation_1_0;
using IInformationLatest = IInformation_1_0;
using IMetricEnumeratorLatest = IMetricEnumerator_1_13;
using IMetricLatest = IMetric_1_13;
using IMetricPrototypeLatest = IMetricPrototype_1_13;
using IMetricSetLatest = IMetricSet_1_13;
using IMetricsDeviceLatest = IMetricsDevice_1_13;
using IOverrideLatest = IOverride_1_2;
using TAdapterGroupParamsLatest = TAdapterGroupParams_1_6;
using TAdapterParamsLatest = TAdapterParams_1_9;
using TApiVersionLatest = TApiVersion_1_0;
using TConcurrentGroupParamsLatest = TConcurrentGroupParams_1_13;
using TEngineParamsLatest = TEngineParams_1_13;
using TGlobalSymbolLatest = TGlobalSymbol_1_0;
using TInformationParamsLatest = TInformationParams_1_0;
using TMetricParamsLatest = TMetricParams_1_13;
using TMetricSetParamsLatest = TMetricSetParams_1_11;
using TMetricsDeviceParamsLatest = TMetricsDeviceParams_1_2;
using TSubDeviceParamsLatest = TSubDeviceParams_1_9;
using TTypedValueLatest = TTypedValue_1_0;

extern "C" {
typedef TCompletionCode(MD_STDCALL *OpenAdapterGroup_fn)(IAdapterGroupLatest **adapterGroup);
/* The entry points from before adapters: the default adapter's device. */
typedef TCompletionCode(MD_STDCALL *OpenMetricsDevice_fn)(IMetricsDeviceLatest **metricsDevice);
typedef TCompletionCode(MD_STDCALL *OpenMetricsDeviceFromFile_fn)(
    const char *fileName, void *openParams, IMetricsDeviceLatest **metricsDevice);
typedef TCompletionCode(MD_STDCALL *CloseMetricsDevice_fn)(IMetricsDeviceLatest *metricsDevice);
typedef TCompletionCode(MD_STDCALL *SaveMetricsDeviceToFile_fn)(
    const char *fileName, void *saveParams, IMetricsDeviceLatest *metricsDevice);
}

} // namespace MetricsDiscovery

#endif
