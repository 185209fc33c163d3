#include "gpf/probes/pipeline.hpp"

#include "gpf/probes/cuda_probe.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/probes.hpp"

#include <array>
#include <chrono>
#include <string_view>

namespace gpf {
namespace {
// One row per probe: the name reports and snapshots know it by, and the function. The fixed
// order: later probes may use earlier facts (devices needs the GPUs' minors; cuda starts a child
// per driver GPU whose UUID is known; nvml's children run beside cuda's).
struct ProbeRow {
  std::string_view name;
  ProbeFn run;
};
constexpr std::array<ProbeRow, 14> k_pipeline{{
    {"kernel", probe_kernel},
    {"modules", probe_modules},
    {"driver", probe_driver},
    {"devices", probe_devices},
    {"kernel-log", probe_kernel_log},
    {"compat", probe_compat},
    {"pcie", probe_pcie},
    {"iommu", probe_iommu},
    {"shm", probe_shm},
    {"services", probe_services},
    {"firmware", probe_firmware},
    {"mig", probe_mig},
    {"cuda", probe_cuda},
    {"nvml", probe_nvml},
}};
} // namespace

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
    status.duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    facts.probes.push_back(std::move(status));
  }
  return facts;
}

} // namespace gpf
