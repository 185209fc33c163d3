#pragma once
// The job's view of the host, derived once from the facts before any rule runs and passed to
// every predicate: which GPUs the job gets (the index space and the parsed CUDA_VISIBLE_DEVICES),
// the driver its CUDA runtime meets, each GPU's architecture, and the compatibility matrix. Rules
// read these instead of re-parsing their inputs.
#include "gpf/facts/facts.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/knowledge/matrix.hpp"
#include "gpf/rules/compat_view.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gpf {

// One probe's reading of a GPU setting: the value and which probe read it ("cuda", "nvml",
// "sysfs"), so a finding can quote it and a condition is judged the same whichever probe ran.
template <class T> struct Reading {
  T value{};
  std::string_view source;
};

// A GPU's own PCIe link (GPU to its parent port): the width it trained at and the widest both
// ends support. sysfs: current_link_width against the smaller max_link_width of the two ends;
// NVML: nvmlDeviceGetCurrPcieLinkWidth against nvmlDeviceGetMaxPcieLinkWidth, which is already
// "possible with this device and system" (an x16 GPU in an x8 slot reports x8):
// https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
struct LinkWidth {
  unsigned width = 0; // 0 = the link is down, narrower than it could be too
  unsigned max_width = 0;
  // The one predicate of pcie.link-downtrained and nvml.pcie-width-degraded.
  bool downtrained() const { return width < max_width; }
};

// A process on a GPU as the probes saw it: holding /dev/nvidiaN open (proc/<pid>/fd, matched by
// device number, with its name) and/or in NVML's list of the GPU's compute processes (with the
// memory it holds there). NVIDIA's own daemons are left out: they hold the nodes by design.
struct GpuUser {
  unsigned pid = 0;
  std::string comm;                             // proc/<pid>/comm; "" when only NVML listed it
  std::optional<unsigned long long> used_bytes; // NVML's figure; nullopt: not listed, or none
  bool in_proc = false;                         // seen by the gpu-processes probe
  bool in_nvml = false;                         // listed by nvmlDeviceGetComputeRunningProcesses
  // It holds GPU memory the job would share (NVML said how much, and it is not 0).
  bool holds_memory() const { return used_bytes && *used_bytes > 0; }
};

// One GPU's settings as every probe that read them saw them, the reading rules judge by first:
// the CUDA attribute before NVML's compute mode (CUDA is the API the job uses; both report the one
// driver setting with the same numbers, 0 Default, 2 Prohibited, 3 Exclusive-Process), sysfs
// before NVML for the link (sysfs also sees the port above). Empty: no probe read it.
struct GpuState {
  std::vector<Reading<int>> compute_mode;
  std::vector<Reading<LinkWidth>> link_width;
  std::vector<Reading<bool>> persistence_mode; // NVML only: no other input carries it
  std::vector<GpuUser> users;                  // proc's and NVML's, one entry per pid, by pid
};

// The reading a rule judges by (the first), nullptr when no probe read the setting.
template <class T> const Reading<T>* leading(const std::vector<Reading<T>>& readings) {
  return readings.empty() ? nullptr : &readings.front();
}

struct JobView {
  // The host's GPUs in the index space CUDA_VISIBLE_DEVICES integers refer to: CUDA's own order
  // when the CUDA probe enumerated devices, else the driver's list (PCI bus-id order).
  std::vector<GpuRef> index_space;
  bool pci_order = true;      // those indices rely on CUDA_DEVICE_ORDER=PCI_BUS_ID
  VisibleDevices visible;     // CUDA_VISIBLE_DEVICES parsed against index_space
  DriverView driver;          // the driver the job's CUDA runtime meets
  std::vector<GpuArch> archs; // each GPU's architecture (driver's list plus CUDA-only devices)
  const Matrix* matrix = nullptr;

  // The GPU's index in index_space, nullopt when it has none (outside CUDA's list).
  std::optional<std::size_t> index_of(const std::string& bus_id) const;
  // Whether CUDA_VISIBLE_DEVICES (or its absence) admits the GPU.
  bool admits(const std::string& bus_id) const;
  // The one way a message names a GPU: "GPU 3 (0000:3b:00.0, NVIDIA H100 80GB HBM3)" — the index
  // CUDA_VISIBLE_DEVICES would use, the bus id, and the model (else the UUID, when only the kernel
  // log or CUDA knows it). A GPU outside the index space: "GPU 0000:5d:00.0 (NVIDIA H100 …)".
  std::string label(const std::string& bus_id) const;
  // The GPU's merged state (empty when no probe read any of it).
  const GpuState& state(const std::string& bus_id) const;
  // The bus id of the GPU behind /dev/nvidiaN (the driver's minor), nullptr when none has it.
  const std::string* bus_of_minor(unsigned minor) const;

  // Filled by derive_job_view: rules ask per GPU, so lookups are hashed, not scans.
  std::unordered_map<std::string, std::size_t> index_by_bus; // first index of each bus id
  std::unordered_set<std::string> admitted;                  // visible.bus_ids
  std::unordered_map<std::string, std::string> name_by_bus;  // model, else UUID, for label()
  std::unordered_map<std::string, GpuState> state_by_bus;
  std::unordered_map<unsigned, std::string> bus_by_minor;
};

JobView derive_job_view(const Facts& facts, const Matrix& matrix);

} // namespace gpf
