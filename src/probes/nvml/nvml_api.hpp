#pragma once
// The NVML API as the probe's children see it: the types and versioned entry points the probe
// uses, declared here with the layouts of NVIDIA's nvml.h (x86-64 / LP64; checked by
// tests/unit/nvml_layout_test.cpp), loaded at run time with dlopen. Versioned names
// (nvmlInit_v2, nvmlDeviceGetPciInfo_v3, ...) are asked for explicitly: the un-suffixed symbols
// keep older layouts. Only child processes load this; the parent never calls NVML.
#include "probes/child/library.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::nvml {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlGpuInstance_st;
using nvmlGpuInstance_t = nvmlGpuInstance_st*;
using nvmlEnableState_t = int;
using nvmlComputeMode_t = int;
using nvmlDeviceArchitecture_t = unsigned int;
using nvmlGpuFabricState_t = unsigned char;

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

struct nvmlProcessInfo_v2_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// The legacy struct of nvmlDeviceGetGpuFabricInfo (R525+), the one R535 exports.
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
};

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

// nvmlEccSramErrorStatus_v1_t (R550+).
struct nvmlEccSramErrorStatus_t {
  unsigned int version; // NVML_STRUCT_VERSION(EccSramErrorStatus, 1)
  unsigned long long aggregateUncParity;
  unsigned long long aggregateUncSecDed;
  unsigned long long aggregateCor;
  unsigned long long volatileUncParity;
  unsigned long long volatileUncSecDed;
  unsigned long long volatileCor;
  unsigned long long aggregateUncBucketL2;
  unsigned long long aggregateUncBucketSm;
  unsigned long long aggregateUncBucketPcie;
  unsigned long long aggregateUncBucketMcu;
  unsigned long long aggregateUncBucketOther;
  unsigned int bThresholdExceeded;
};

// nvmlMemory_t (v1), the struct of the un-suffixed nvmlDeviceGetMemoryInfo (R450 on).
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// MIG (R450 on): a GPU instance's place in the GPU's memory slices.
struct nvmlGpuInstancePlacement_t {
  unsigned int start;
  unsigned int size;
};

// The v1 struct of nvmlDeviceGetGpuInstanceProfileInfo (v2, with a version word first, is only
// for nvmlDeviceGetGpuInstanceProfileInfoV).
struct nvmlGpuInstanceProfileInfo_t {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB; // MiB, as nvml.h's comment says
};

struct nvmlGpuInstanceInfo_t {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
};

// Constants of nvml.h the probe uses.
inline constexpr unsigned k_init_flag_no_attach = 2;
inline constexpr int k_memory_error_corrected = 0;
inline constexpr int k_memory_error_uncorrected = 1;
inline constexpr int k_volatile_ecc = 0;
inline constexpr int k_aggregate_ecc = 1;
inline constexpr int k_retire_cause_sbe = 0;
inline constexpr int k_retire_cause_dbe = 1;
inline constexpr int k_temperature_gpu = 0;
inline constexpr int k_threshold_slowdown = 1;
inline constexpr unsigned k_field_recovery_action = 230; // NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
inline constexpr int k_value_type_uint = 1;
inline constexpr int k_value_type_ulong = 2;
inline constexpr int k_value_type_ull = 3;
inline constexpr int k_value_type_sll = 4;
inline constexpr int k_value_type_sint = 5;
inline constexpr unsigned k_max_links_probed =
    36;                              // newest NVML_NVLINK_MAX_LINKS; stop earlier on 2
inline constexpr int k_clock_sm = 1; // NVML_CLOCK_SM
// nvmlNvLinkErrorCounter_t: DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA
inline constexpr int k_nvlink_error_replay = 0;
inline constexpr int k_nvlink_error_recovery = 1;
inline constexpr int k_nvlink_error_crc_flit = 2;
inline constexpr int k_nvlink_error_crc_data = 3;
inline constexpr unsigned k_sram_status_version =
    static_cast<unsigned>(sizeof(nvmlEccSramErrorStatus_t)) | (1U << 24U);
inline constexpr int k_insufficient_size = 7;
inline constexpr int k_invalid_argument = 2;
inline constexpr unsigned k_mig_enable = 1; // NVML_DEVICE_MIG_ENABLE
// NVML_GPU_INSTANCE_PROFILE_COUNT of the newest nvml.h (17: up to _2_SLICE_ALL_ME = 16; CUDA
// 11.8's header stops at _1_SLICE_REV1 = 7, count 8). The probe asks every index below it; an
// older driver answers INVALID_ARGUMENT or NOT_SUPPORTED for those it does not know.
inline constexpr unsigned k_gpu_instance_profile_count = 17;

// Typed pointers to the entry points; an optional one the library lacks stays nullptr.
struct NvmlApi {
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlInitWithFlags)(unsigned int flags) = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t result) = nullptr;
  nvmlReturn_t (*nvmlSystemGetNVMLVersion)(char* version, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char* version, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCount_v2)(unsigned int* count) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2)(unsigned int index, nvmlDevice_t* device) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByPciBusId_v2)(const char* bus_id,
                                                   nvmlDevice_t* device) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPciInfo_v3)(nvmlDevice_t device, nvmlPciInfo_t* pci) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t device, char* name, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t device, char* uuid, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMinorNumber)(nvmlDevice_t device, unsigned int* minor) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetArchitecture)(nvmlDevice_t device,
                                            nvmlDeviceArchitecture_t* arch) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetEccMode)(nvmlDevice_t device, nvmlEnableState_t* current,
                                       nvmlEnableState_t* pending) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTotalEccErrors)(nvmlDevice_t device, int error_type, int counter_type,
                                              unsigned long long* count) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetRetiredPages)(nvmlDevice_t device, int cause, unsigned int* count,
                                            unsigned long long* addresses) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetRetiredPagesPendingStatus)(nvmlDevice_t device,
                                                         nvmlEnableState_t* pending) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetRemappedRows)(nvmlDevice_t device, unsigned int* corr,
                                            unsigned int* unc, unsigned int* pending,
                                            unsigned int* failure) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetFieldValues)(nvmlDevice_t device, int count,
                                           nvmlFieldValue_t* values) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrentClocksEventReasons)(nvmlDevice_t device,
                                                         unsigned long long* reasons) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrentClocksThrottleReasons)(nvmlDevice_t device,
                                                            unsigned long long* reasons) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t device, int sensor,
                                           unsigned int* temp) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTemperatureThreshold)(nvmlDevice_t device, int threshold,
                                                    unsigned int* temp) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPersistenceMode)(nvmlDevice_t device,
                                               nvmlEnableState_t* mode) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetComputeMode)(nvmlDevice_t device, nvmlComputeMode_t* mode) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMigMode)(nvmlDevice_t device, unsigned int* current,
                                       unsigned int* pending) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrPcieLinkGeneration)(nvmlDevice_t device,
                                                      unsigned int* gen) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxPcieLinkGeneration)(nvmlDevice_t device,
                                                     unsigned int* gen) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCurrPcieLinkWidth)(nvmlDevice_t device,
                                                 unsigned int* width) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxPcieLinkWidth)(nvmlDevice_t device, unsigned int* width) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkState)(nvmlDevice_t device, unsigned int link,
                                           nvmlEnableState_t* active) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetGpuFabricInfo)(nvmlDevice_t device,
                                             nvmlGpuFabricInfo_t* info) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetComputeRunningProcesses_v2)(nvmlDevice_t device, unsigned int* count,
                                                          nvmlProcessInfo_v2_t* infos) = nullptr;
  // The counters read around the checker's own traffic, and the clocks sampled during it.
  nvmlReturn_t (*nvmlDeviceGetNvLinkErrorCounter)(nvmlDevice_t device, unsigned int link,
                                                  int counter, unsigned long long* value) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPcieReplayCounter)(nvmlDevice_t device,
                                                 unsigned int* value) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetSramEccErrorStatus)(nvmlDevice_t device,
                                                  nvmlEccSramErrorStatus_t* status) = nullptr;
  nvmlReturn_t (*nvmlDeviceValidateInforom)(nvmlDevice_t device) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetClockInfo)(nvmlDevice_t device, int type,
                                         unsigned int* clock) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t device, unsigned int* power) = nullptr;
  // The GPU's memory and, with MIG enabled, its GPU instances (read-only queries).
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t device, nvmlMemory_t* memory) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetGpuInstanceProfileInfo)(nvmlDevice_t device, unsigned int profile,
                                                      nvmlGpuInstanceProfileInfo_t* info) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetGpuInstances)(nvmlDevice_t device, unsigned int profileId,
                                            nvmlGpuInstance_t* gpuInstances,
                                            unsigned int* count) = nullptr;
  nvmlReturn_t (*nvmlGpuInstanceGetInfo)(nvmlGpuInstance_t gpuInstance,
                                         nvmlGpuInstanceInfo_t* info) = nullptr;
};

using EntryPoint = child::EntryPoint<NvmlApi>;
const std::vector<EntryPoint>& entry_points();

// An open libnvidia-ml. Never closed: the child _exits right after.
using LoadedNvml = child::LoadedLibrary<NvmlApi>;
using LoadResult = child::LoadResult<NvmlApi>;

// dlopen(library) (loader search when it has no '/'), then every entry point. Never throws.
LoadResult load_nvml(const std::string& library);

// nvmlErrorString's words, or "" when the library cannot say.
std::string error_text(const NvmlApi& api, nvmlReturn_t code);

} // namespace gpf::nvml
