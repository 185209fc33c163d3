#pragma once
// Facts from the NVML probe: per-GPU health as the driver reports it through libnvidia-ml.
// Live: children that dlopen libnvidia-ml.so.1 under a deadline; replay: a snapshot's nvml.json.
// Every value NVML may decline to give is std::optional; why it declined is in `calls`.
#include "gpf/facts/isolation.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

// nvmlReturn_t values the probe and the rules name (nvml.h).
inline constexpr int k_nvml_success = 0;
inline constexpr int k_nvml_not_supported = 3;
inline constexpr int k_nvml_no_permission = 4;
inline constexpr int k_nvml_driver_not_loaded = 9;
inline constexpr int k_nvml_function_not_found = 13;
inline constexpr int k_nvml_corrupted_inforom = 14;
inline constexpr int k_nvml_gpu_is_lost = 15;
inline constexpr int k_nvml_reset_required = 16;
inline constexpr int k_nvml_lib_rm_version_mismatch = 18;
inline constexpr int k_nvml_argument_version_mismatch = 25;
inline constexpr int k_nvml_gpu_not_found = 28;
inline constexpr int k_nvml_unknown = 999;
// Not an nvmlReturn_t: the entry point is absent from the library (older driver).
inline constexpr int k_nvml_symbol_missing = -1;

// NVML_DEVICE_ARCH_AMPERE: row remapping replaces page retirement and errors are contained.
inline constexpr unsigned k_nvml_arch_ampere = 7;

// One query that did not answer NVML_SUCCESS (NOT_SUPPORTED included: the rules skip those).
struct NvmlCall {
  std::string name; // the probe's step name, e.g. "remapped_rows"
  int code = 0;     // nvmlReturn_t, or k_nvml_symbol_missing
  std::string text; // nvmlErrorString's words, or "not exported by the library"

  // Every member (the JSON round-trip tests compare whole facts).
  bool operator==(const NvmlCall&) const = default;
};

// A step of a child that did not finish: the deadline killed it inside this call.
struct NvmlHang {
  std::string step;
  double after_ms = 0; // how long the child had run when it was killed

  bool operator==(const NvmlHang&) const = default;
};

struct NvmlProcess {
  unsigned pid = 0;
  std::optional<unsigned long long> used_bytes; // nullopt: NVML_VALUE_NOT_AVAILABLE

  bool operator==(const NvmlProcess&) const = default;
};

// One NVLink's data-link error counters (nvmlDeviceGetNvLinkErrorCounter); nullopt: not given.
struct NvmlLinkErrors {
  unsigned link = 0;
  std::optional<unsigned long long> replay;   // NVML_NVLINK_ERROR_DL_REPLAY
  std::optional<unsigned long long> recovery; // NVML_NVLINK_ERROR_DL_RECOVERY
  std::optional<unsigned long long> crc_flit; // NVML_NVLINK_ERROR_DL_CRC_FLIT
  std::optional<unsigned long long> crc_data; // NVML_NVLINK_ERROR_DL_CRC_DATA

  bool operator==(const NvmlLinkErrors&) const = default;
};

// The counters the checker's own traffic could raise, read by one function before and after it.
struct NvmlCounters {
  std::optional<unsigned long long> ecc_volatile_corrected;
  std::optional<unsigned long long> ecc_volatile_uncorrected;
  std::optional<unsigned> pcie_replay;
  std::optional<bool> sram_threshold_exceeded; // nvmlEccSramErrorStatus_v1_t.bThresholdExceeded
  std::optional<bool> remap_pending;
  std::vector<NvmlLinkErrors> nvlinks; // the links nvlink_active lists as up

  bool operator==(const NvmlCounters&) const = default;
};

// Clocks and power sampled while the CUDA stage ran (its start-up, copies and active step).
struct NvmlSamples {
  unsigned count = 0;
  std::optional<unsigned> sm_clock_max_mhz;   // the highest NVML_CLOCK_SM reading
  std::optional<unsigned> power_max_mw;       // the highest nvmlDeviceGetPowerUsage reading
  unsigned long long clock_event_reasons = 0; // every reason bit any sample had

  bool operator==(const NvmlSamples&) const = default;
};

// The window around the checker's own traffic: the GPU's child reads `before`, samples while it
// waits for the parent's word that the CUDA stage ended, then reads `after`.
struct NvmlTraffic {
  NvmlCounters before;
  std::optional<NvmlCounters> after; // nullopt: not read, not_read says why
  NvmlSamples during;
  std::optional<unsigned> processes_after; // compute processes NVML listed after the stage
  std::string not_read;
  double waited_ms = 0; // from `before` to the parent's word

  bool operator==(const NvmlTraffic&) const = default;
};

// One GPU instance of a GPU in MIG mode: nvmlGpuInstanceGetInfo, with the profile it was listed
// under (nvmlDeviceGetGpuInstanceProfileInfo). NVIDIA's DRA driver names its MIG devices from these
// (docs/integrations/kubernetes.md).
struct NvmlGpuInstance {
  unsigned profile = 0; // the NVML_GPU_INSTANCE_PROFILE_* index it was listed under
  unsigned profile_id =
      0;           // the profile's id (nvmlGpuInstanceInfo_t.profileId; `nvidia-smi mig -lgip`)
  unsigned id = 0; // the GPU instance id (nvmlGpuInstanceInfo_t.id)
  unsigned placement_start = 0; // the first memory slice it occupies
  unsigned placement_size = 0;  // how many memory slices it occupies
  unsigned slice_count = 0; // the profile's GPU slices (nvmlGpuInstanceProfileInfo_t.sliceCount)
  unsigned long long memory_mib = 0; // the profile's memory (memorySizeMB, in MiB)

  bool operator==(const NvmlGpuInstance&) const = default;
};

struct NvmlGpu {
  std::optional<unsigned> index; // NVML's own index (not CUDA's, not the host's)
  std::string bus_id;            // normalised "dddd:bb:dd.f", the join key with the driver's GPUs
  std::string nvml_bus_id;       // as NVML printed it ("00000000:3B:00.0")
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<unsigned> minor;
  std::optional<unsigned> architecture; // NVML_DEVICE_ARCH_*

  std::optional<bool> ecc_enabled;
  std::optional<bool> ecc_pending_enabled;
  std::optional<unsigned long long> ecc_volatile_uncorrected;
  std::optional<unsigned long long> ecc_aggregate_uncorrected;
  std::optional<unsigned> retired_pages_sbe;
  std::optional<unsigned> retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> remapped_correctable;
  std::optional<unsigned> remapped_uncorrectable;
  std::optional<bool> remap_pending;
  std::optional<bool> remap_failure;
  std::optional<unsigned> recovery_action; // nvmlDeviceGpuRecoveryAction_t (field 230)

  std::optional<unsigned long long> clock_event_reasons; // bit mask
  std::optional<unsigned> temperature_c;
  std::optional<unsigned> slowdown_temperature_c;
  std::optional<bool> persistence_mode;
  std::optional<int> compute_mode; // nvmlComputeMode_t
  std::optional<unsigned> mig_current;
  std::optional<unsigned> mig_pending;
  std::optional<unsigned long long> memory_total_bytes; // nvmlDeviceGetMemoryInfo's total
  // MIG enabled now (mig_current): its GPU instances, by profile index then placement; nullopt
  // when MIG is off or the list could not be read whole (calls says why).
  std::optional<std::vector<NvmlGpuInstance>> gpu_instances;
  std::optional<unsigned> pcie_gen;
  std::optional<unsigned> pcie_gen_max;
  std::optional<unsigned> pcie_width;
  std::optional<unsigned> pcie_width_max;
  std::vector<bool> nvlink_active;      // per link, in link order; empty: no NVLink
  std::optional<unsigned> fabric_state; // NVML_GPU_FABRIC_STATE_*
  std::optional<int> fabric_status;     // nvmlReturn_t, meaningful when the state is completed
  std::optional<std::vector<NvmlProcess>> processes; // nullopt: could not be listed
  std::optional<bool> inforom_valid;                 // nvmlDeviceValidateInforom
  std::optional<NvmlTraffic> traffic; // nullopt: its child read no window (system child, hang)

  std::vector<NvmlCall> calls; // queries that did not answer NVML_SUCCESS
  // The GPU could not be asked at all: its handle call failed (lost, no permission, ...).
  std::optional<NvmlCall> handle_error;
  std::optional<NvmlHang> hang; // its child was killed at the deadline inside this step
  std::string child_error;      // its child died or spoke garbage

  // The call's failure, when it did not answer NVML_SUCCESS.
  const NvmlCall* call(const std::string& name) const {
    for (const auto& c : calls) {
      if (c.name == name) {
        return &c;
      }
    }
    return nullptr;
  }
  // Every query the child was asked for answered (or declined) before it finished.
  bool answered() const { return !hang && child_error.empty() && !handle_error; }

  bool operator==(const NvmlGpu&) const = default;
};

struct NvmlFacts {
  bool ran = false;                         // live or replayed
  std::string source;                       // "live", "nvml.json"
  std::string library;                      // the path or soname asked for
  std::string library_path;                 // the file the loader picked, when known
  std::string load_error;                   // dlopen's words when the library could not be loaded
  std::vector<std::string> missing_symbols; // required entry points absent
  std::vector<std::string> missing_optional_symbols; // optional ones (a measurement is skipped)
  std::string nvml_version;          // nvmlSystemGetNVMLVersion (works without init)
  std::string driver_version;        // nvmlSystemGetDriverVersion
  std::string init_call;             // "nvmlInitWithFlags" or "nvmlInit_v2"
  std::optional<int> init_code;      // nvmlReturn_t of init; nullopt when init never returned
  std::string init_text;             // nvmlErrorString(init_code)
  std::optional<NvmlHang> init_hang; // init did not return before the deadline
  std::optional<unsigned> device_count;
  std::vector<NvmlGpu> gpus; // sorted by bus id
  bool deadline_hit = false;
  double timeout_s = 0;
  double wall_ms = 0;
  std::string child_error;                 // the system child died or spoke garbage
  std::optional<ChildIsolation> isolation; // as the first child reported it; nullopt: not known

  bool init_ok() const { return init_code && *init_code == k_nvml_success; }
  const NvmlGpu* gpu_by_bus(const std::string& bus_id) const {
    for (const auto& g : gpus) {
      if (g.bus_id == bus_id) {
        return &g;
      }
    }
    return nullptr;
  }

  bool operator==(const NvmlFacts&) const = default;
};

} // namespace gpf
