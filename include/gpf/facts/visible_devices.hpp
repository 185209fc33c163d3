#pragma once
// CUDA_VISIBLE_DEVICES as CUDA reads it: comma-separated integer indices, GPU UUIDs or unique
// UUID prefixes, or MIG-<GPU-UUID>/<gi>/<ci>; the first entry naming no device ends the list; set
// but empty means no GPU. A fact about the job's environment, so probes and rules both use it.
// https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpf {

struct GpuRef {
  std::string bus_id;
  std::optional<std::string> uuid;
};

struct VisibleDevices {
  bool set = false; // the variable exists (even empty)
  std::string raw;
  std::vector<std::string> bus_ids; // the GPUs it admits, in the order listed, no duplicates
  // Every entry CUDA honours, trimmed, with the GPU it names (duplicates kept), in order. A
  // MIG-<uuid> entry names its GPU only through CUDA's or NVML's list of MIG devices: when neither
  // is known its GPU is "" (not checkable), and it does not end the list.
  std::vector<std::pair<std::string, std::string>> entries;
  bool mig = false; // an honoured entry names a MIG instance (MIG-GPU-<uuid>/<gi>/<ci>, MIG-<uuid>)
  std::vector<std::string> ignored; // the first entry naming no GPU and everything after it
};

// gpus: the host's GPUs in index order (the index space integer entries refer to).
VisibleDevices parse_visible_devices(const std::optional<std::string>& value,
                                     const std::vector<GpuRef>& gpus);

// CUDA_VISIBLE_DEVICES entry "MIG-<GPU-UUID>/<gi>/<ci>" -> its parts; nullopt for any other form.
struct MigReference {
  std::string gpu_uuid;
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
};
std::optional<MigReference> parse_mig_reference(std::string_view entry);

} // namespace gpf
