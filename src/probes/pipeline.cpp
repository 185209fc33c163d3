#include "gpf/probes/pipeline.hpp"

#include "gpf/probes/cuda_probe.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"

#include <chrono>
#include <string_view>
#include <utility>

namespace gpf {
namespace {
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
  for (const auto& probe : probe_rows()) { // each probe registers its row in its own .cpp
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
