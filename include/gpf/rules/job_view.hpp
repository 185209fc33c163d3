#pragma once
// The job's view of the host, derived once from the facts before any rule runs and passed to
// every predicate: which GPUs the job gets (the index space and the parsed CUDA_VISIBLE_DEVICES),
// the driver its CUDA runtime meets, each GPU's architecture, and the compatibility matrix. Rules
// read these instead of re-parsing their inputs.
#include "gpf/facts/facts.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/rules/compat_view.hpp"
#include "gpf/rules/matrix.hpp"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gpf {

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

  // Filled by derive_job_view: rules ask per GPU, so lookups are hashed, not scans.
  std::unordered_map<std::string, std::size_t> index_by_bus; // first index of each bus id
  std::unordered_set<std::string> admitted;                  // visible.bus_ids
  std::unordered_map<std::string, std::string> name_by_bus;  // model, else UUID, for label()
};

JobView derive_job_view(const Facts& facts, const Matrix& matrix);

} // namespace gpf
