// The probe's NVML declarations (src/probes/nvml/nvml_api.hpp) against NVIDIA's own nvml.h
// (Debian non-free libnvidia-ml-dev), compiled by tests/real/nvml-header-test.sh: every struct's
// size and every field's offset, and every entry point's type with the header's types mapped to
// the probe's (an enum is passed as the int the probe declares; a struct as the probe's struct).
// Nothing runs: a mismatch is a compile error. nvml_api.hpp's own layout test
// (tests/unit/nvml_layout_test.cpp) checks the same numbers without the header.
#include <nvml.h>

#include "probes/nvml/nvml_api.hpp"

#include <cstddef>
#include <type_traits>

namespace ours = gpf::nvml;

namespace {

// The probe's type for a type of nvml.h.
template <class T, class = void> struct mapped {
  using type = T; // scalars and the typedefs both declare alike (unsigned int, char, ...)
};
template <class T> struct mapped<T, std::enable_if_t<std::is_enum_v<T>>> {
  static_assert(sizeof(T) == sizeof(int), "an NVML enum the probe passes as int");
  using type = int;
};
template <> struct mapped<::nvmlDevice_st> { using type = ours::nvmlDevice_st; };
template <> struct mapped<::nvmlPciInfo_t> { using type = ours::nvmlPciInfo_t; };
template <> struct mapped<::nvmlProcessInfo_v2_t> { using type = ours::nvmlProcessInfo_v2_t; };
template <> struct mapped<::nvmlFieldValue_t> { using type = ours::nvmlFieldValue_t; };
template <> struct mapped<::nvmlMemory_t> { using type = ours::nvmlMemory_t; };
template <> struct mapped<::nvmlGpuInstance_st> { using type = ours::nvmlGpuInstance_st; };
template <> struct mapped<::nvmlGpuInstanceProfileInfo_t> {
  using type = ours::nvmlGpuInstanceProfileInfo_t;
};
template <> struct mapped<::nvmlGpuInstanceInfo_t> { using type = ours::nvmlGpuInstanceInfo_t; };
template <class T> struct mapped<const T> { using type = const typename mapped<T>::type; };
template <class T> struct mapped<T*> { using type = typename mapped<T>::type*; };
template <class R, class... A> struct mapped<R (*)(A...)> {
  using type = typename mapped<R>::type (*)(typename mapped<A>::type...);
};

// Size and offsets of one struct, field by field.
#define SAME_SIZE(T) static_assert(sizeof(::T) == sizeof(ours::T), #T ": size")
#define SAME_FIELD(T, f) static_assert(offsetof(::T, f) == offsetof(ours::T, f), #T "." #f)

SAME_SIZE(nvmlPciInfo_t);
SAME_FIELD(nvmlPciInfo_t, busIdLegacy);
SAME_FIELD(nvmlPciInfo_t, domain);
SAME_FIELD(nvmlPciInfo_t, bus);
SAME_FIELD(nvmlPciInfo_t, device);
SAME_FIELD(nvmlPciInfo_t, pciDeviceId);
SAME_FIELD(nvmlPciInfo_t, pciSubSystemId);
SAME_FIELD(nvmlPciInfo_t, busId);

SAME_SIZE(nvmlProcessInfo_v2_t);
SAME_FIELD(nvmlProcessInfo_v2_t, pid);
SAME_FIELD(nvmlProcessInfo_v2_t, usedGpuMemory);
SAME_FIELD(nvmlProcessInfo_v2_t, gpuInstanceId);
SAME_FIELD(nvmlProcessInfo_v2_t, computeInstanceId);

SAME_SIZE(nvmlValue_t);
SAME_SIZE(nvmlFieldValue_t);
SAME_FIELD(nvmlFieldValue_t, fieldId);
SAME_FIELD(nvmlFieldValue_t, scopeId);
SAME_FIELD(nvmlFieldValue_t, timestamp);
SAME_FIELD(nvmlFieldValue_t, latencyUsec);
SAME_FIELD(nvmlFieldValue_t, valueType);
SAME_FIELD(nvmlFieldValue_t, nvmlReturn);
SAME_FIELD(nvmlFieldValue_t, value);

SAME_SIZE(nvmlMemory_t);
SAME_FIELD(nvmlMemory_t, total);
SAME_FIELD(nvmlMemory_t, free);
SAME_FIELD(nvmlMemory_t, used);

SAME_SIZE(nvmlGpuInstancePlacement_t);
SAME_FIELD(nvmlGpuInstancePlacement_t, start);
SAME_FIELD(nvmlGpuInstancePlacement_t, size);

SAME_SIZE(nvmlGpuInstanceProfileInfo_t);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, id);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, isP2pSupported);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, sliceCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, instanceCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, multiprocessorCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, copyEngineCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, decoderCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, encoderCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, jpegCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, ofaCount);
SAME_FIELD(nvmlGpuInstanceProfileInfo_t, memorySizeMB);

SAME_SIZE(nvmlGpuInstanceInfo_t);
SAME_FIELD(nvmlGpuInstanceInfo_t, device);
SAME_FIELD(nvmlGpuInstanceInfo_t, id);
SAME_FIELD(nvmlGpuInstanceInfo_t, profileId);
SAME_FIELD(nvmlGpuInstanceInfo_t, placement);
static_assert(std::is_same_v<decltype(::nvmlGpuInstanceInfo_t::device), ::nvmlDevice_t>);

// The constants the probe copies.
static_assert(ours::k_init_flag_no_attach == NVML_INIT_FLAG_NO_ATTACH);
static_assert(ours::k_memory_error_uncorrected == NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
static_assert(ours::k_volatile_ecc == NVML_VOLATILE_ECC &&
              ours::k_aggregate_ecc == NVML_AGGREGATE_ECC);
static_assert(ours::k_retire_cause_sbe ==
              NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
static_assert(ours::k_retire_cause_dbe == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
static_assert(ours::k_temperature_gpu == NVML_TEMPERATURE_GPU);
static_assert(ours::k_threshold_slowdown == NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
static_assert(ours::k_value_type_uint == NVML_VALUE_TYPE_UNSIGNED_INT &&
              ours::k_value_type_ulong == NVML_VALUE_TYPE_UNSIGNED_LONG &&
              ours::k_value_type_ull == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG &&
              ours::k_value_type_sll == NVML_VALUE_TYPE_SIGNED_LONG_LONG);
// NVML_VALUE_TYPE_SIGNED_INT (5) came after this header: the next value after the last one here.
static_assert(ours::k_value_type_sint == NVML_VALUE_TYPE_COUNT);
static_assert(ours::k_insufficient_size == NVML_ERROR_INSUFFICIENT_SIZE);
static_assert(ours::k_memory_error_corrected == NVML_MEMORY_ERROR_TYPE_CORRECTED);
static_assert(ours::k_clock_sm == NVML_CLOCK_SM);
static_assert(ours::k_nvlink_error_replay == NVML_NVLINK_ERROR_DL_REPLAY &&
              ours::k_nvlink_error_recovery == NVML_NVLINK_ERROR_DL_RECOVERY &&
              ours::k_nvlink_error_crc_flit == NVML_NVLINK_ERROR_DL_CRC_FLIT &&
              ours::k_nvlink_error_crc_data == NVML_NVLINK_ERROR_DL_CRC_DATA);
static_assert(ours::k_invalid_argument == NVML_ERROR_INVALID_ARGUMENT);
static_assert(ours::k_mig_enable == NVML_DEVICE_MIG_ENABLE);
// The profile indexes this header knows are a prefix of those the probe asks (the newer ones,
// _2_SLICE_REV1 = 8 to _2_SLICE_ALL_ME = 16, count 17, are in newer headers only).
static_assert(NVML_GPU_INSTANCE_PROFILE_1_SLICE == 0 &&
              NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1 == 7 && NVML_GPU_INSTANCE_PROFILE_COUNT == 8 &&
              ours::k_gpu_instance_profile_count >= NVML_GPU_INSTANCE_PROFILE_COUNT);

// Each entry point: the probe's pointer type is the header's prototype, mapped.
#define SAME_ENTRY(f)                                                                              \
  static_assert(std::is_same_v<mapped<decltype(&::f)>::type, decltype(ours::NvmlApi::f)>, #f)

SAME_ENTRY(nvmlInit_v2);
SAME_ENTRY(nvmlInitWithFlags);
SAME_ENTRY(nvmlErrorString);
SAME_ENTRY(nvmlSystemGetNVMLVersion);
SAME_ENTRY(nvmlSystemGetDriverVersion);
SAME_ENTRY(nvmlDeviceGetCount_v2);
SAME_ENTRY(nvmlDeviceGetHandleByIndex_v2);
SAME_ENTRY(nvmlDeviceGetHandleByPciBusId_v2);
SAME_ENTRY(nvmlDeviceGetPciInfo_v3);
SAME_ENTRY(nvmlDeviceGetName);
SAME_ENTRY(nvmlDeviceGetUUID);
SAME_ENTRY(nvmlDeviceGetMinorNumber);
SAME_ENTRY(nvmlDeviceGetArchitecture);
SAME_ENTRY(nvmlDeviceGetEccMode);
SAME_ENTRY(nvmlDeviceGetTotalEccErrors);
SAME_ENTRY(nvmlDeviceGetRetiredPages);
SAME_ENTRY(nvmlDeviceGetRetiredPagesPendingStatus);
SAME_ENTRY(nvmlDeviceGetRemappedRows);
SAME_ENTRY(nvmlDeviceGetFieldValues);
SAME_ENTRY(nvmlDeviceGetCurrentClocksThrottleReasons);
SAME_ENTRY(nvmlDeviceGetTemperature);
SAME_ENTRY(nvmlDeviceGetTemperatureThreshold);
SAME_ENTRY(nvmlDeviceGetPersistenceMode);
SAME_ENTRY(nvmlDeviceGetComputeMode);
SAME_ENTRY(nvmlDeviceGetMigMode);
SAME_ENTRY(nvmlDeviceGetCurrPcieLinkGeneration);
SAME_ENTRY(nvmlDeviceGetMaxPcieLinkGeneration);
SAME_ENTRY(nvmlDeviceGetCurrPcieLinkWidth);
SAME_ENTRY(nvmlDeviceGetMaxPcieLinkWidth);
SAME_ENTRY(nvmlDeviceGetNvLinkState);
SAME_ENTRY(nvmlDeviceGetComputeRunningProcesses_v2);
SAME_ENTRY(nvmlDeviceGetNvLinkErrorCounter);
SAME_ENTRY(nvmlDeviceGetPcieReplayCounter);
SAME_ENTRY(nvmlDeviceValidateInforom);
SAME_ENTRY(nvmlDeviceGetClockInfo);
SAME_ENTRY(nvmlDeviceGetPowerUsage);
SAME_ENTRY(nvmlDeviceGetMemoryInfo);
SAME_ENTRY(nvmlDeviceGetGpuInstanceProfileInfo);
SAME_ENTRY(nvmlDeviceGetGpuInstances);
SAME_ENTRY(nvmlGpuInstanceGetInfo);
constexpr std::size_t k_checked = 40;

// Newer than this header (CUDA 11.8's NVML), checked against NVIDIA's documentation only
// (nvml_layout_test.cpp): nvmlDeviceGetCurrentClocksEventReasons (R535, the throttle-reasons
// prototype renamed), nvmlDeviceGetGpuFabricInfo with nvmlGpuFabricInfo_t (R525) and
// nvmlDeviceGetSramEccErrorStatus with nvmlEccSramErrorStatus_v1_t (R550).
static_assert(std::is_same_v<decltype(ours::NvmlApi::nvmlDeviceGetCurrentClocksEventReasons),
                             decltype(ours::NvmlApi::nvmlDeviceGetCurrentClocksThrottleReasons)>);
constexpr std::size_t k_newer = 3;

// Every entry point of the probe is above: one added to NvmlApi without a line here fails.
static_assert(sizeof(ours::NvmlApi) == (k_checked + k_newer) * sizeof(void (*)()),
              "an NvmlApi entry point is not checked against nvml.h");

} // namespace
