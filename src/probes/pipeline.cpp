#include "gpf/probes/pipeline.hpp"

#include "gpf/probes/cuda_probe.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"

#include <array>
#include <chrono>
#include <string_view>
#include <utility>

namespace gpf {
namespace {
// One row per probe: the name reports and snapshots know it by, what it checks in a user's words
// (the report's "not checked" line), and the function. The fixed
// order: later probes may use earlier facts (devices needs the GPUs' minors; cuda starts a child
// per driver GPU whose UUID is known; nvml's children run beside cuda's).
struct ProbeRow {
  std::string_view name;
  std::string_view what;
  ProbeFn run;
};
constexpr std::array<ProbeRow, 16> k_pipeline{{
    {"kernel", "kernel release", probe_kernel},
    {"modules", "kernel modules", probe_modules},
    {"driver", "driver files", probe_driver},
    {"devices", "device nodes", probe_devices},
    {"kernel-log", "kernel log", probe_kernel_log},
    {"compat", "driver libraries and CUDA version", probe_compat},
    {"pcie", "PCIe topology", probe_pcie},
    {"iommu", "IOMMU", probe_iommu},
    {"shm", "shared-memory size", probe_shm},
    {"services", "daemons", probe_services},
    {"firmware", "GSP firmware files", probe_firmware},
    {"mig", "MIG instances", probe_mig},
    {"rdma", "InfiniBand/RoCE ports", probe_rdma},
    {"gpu-processes", "processes on the GPUs", probe_gpu_processes},
    {"cuda", "CUDA start-up", probe_cuda},
    {"nvml", "GPU health (NVML)", probe_nvml},
}};

ProgressFn& progress_listener() {
  static ProgressFn listener;
  return listener;
}
} // namespace

ProgressFn set_progress_listener(ProgressFn listener) {
  return std::exchange(progress_listener(), std::move(listener));
}

void report_progress(const std::string& text) {
  if (const auto& listener = progress_listener()) {
    listener(text);
  }
}

Facts collect_facts(const Host& host, const ProbeOptions& options) {
  Facts facts;
  facts.env = host.environment();
  for (const auto& probe : k_pipeline) {
    if (probe.run == probe_cuda) {
      start_nvml(host, options, facts); // NVML's children work while the CUDA stage runs
    }
    const auto start = std::chrono::steady_clock::now();
    ProbeStatus status = probe.run(host, options, facts);
    status.name = probe.name;
    status.what = probe.what;
    status.duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    status.cut = host.take_cut_reads();
    facts.probes.push_back(std::move(status));
  }
  return facts;
}

} // namespace gpf
