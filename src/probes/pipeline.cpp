#include "gpf/probes/pipeline.hpp"

#include "gpf/probes/cuda_probe.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/probes.hpp"

#include <array>
#include <chrono>

namespace gpf {
namespace {
// The fixed order: later probes may use earlier facts (devices needs the GPUs' minors; cuda, last,
// starts a child per driver GPU whose UUID is known).
constexpr std::array<ProbeFn, 14> k_pipeline{
    probe_kernel,   probe_modules, probe_driver, probe_devices, probe_kernel_log,
    probe_compat,   probe_pcie,    probe_iommu,  probe_shm,     probe_services,
    probe_firmware, probe_mig,     probe_cuda,   probe_nvml};
} // namespace

Facts collect_facts(const Host& host, const ProbeOptions& options) {
  Facts facts;
  facts.env = host.environment();
  for (ProbeFn probe : k_pipeline) {
    if (probe == probe_cuda) {
      start_nvml(host, options, facts); // NVML's children work while the CUDA stage runs
    }
    const auto start = std::chrono::steady_clock::now();
    ProbeStatus status = probe(host, options, facts);
    status.duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    facts.probes.push_back(std::move(status));
  }
  return facts;
}

} // namespace gpf
