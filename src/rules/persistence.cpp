// Rules whose id starts with "persistence.": persistence mode / nvidia-persistenced, which keeps
// GPUs initialised between jobs.
#include "common.hpp"

namespace gpf {
namespace {

constexpr double k_slow_init_ms = 1000;

} // namespace

std::span<const Rule> persistence_rules() {
  static const Rule rows[] = {
      {.id = "persistence.not-running",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "nvidia-persistenced runs when CUDA start-up is slow",
       .remedy =
           "Enable the persistence daemon: `systemctl enable --now nvidia-persistenced` (legacy `nvidia-smi -pm 1` is deprecated)",
       .source = "docs/sources.md#persistence",
       .explanation =
           "Without nvidia-persistenced the driver tears GPU state down when the last client exits, so each job start pays the full initialisation (seconds per GPU, more with many GPUs) and a short start-up timeout can fire. Reported only when the CUDA probe measured a slow start (1 s or more).",
       .evidence =
           "The CUDA probe's cuInit and primary-context times; the process table (nvidia-persiste).",
       .cases = {fires("persistence-off-slow-init"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& cuda = c.facts.cuda;
         const auto& s = c.facts.topology.services;
         if (!cuda.ran || !sees_host_processes(s) || !s.persistenced.empty()) {
           return {};
         }
         std::vector<std::string> evidence;
         if (cuda.init.ok && cuda.init.duration_ms >= k_slow_init_ms) {
           evidence.push_back(
               fmt::format("cuInit (enumeration): {:.0f} ms", cuda.init.duration_ms));
         }
         for (const auto& d : cuda.devices) {
           if (d.init_ms && *d.init_ms >= k_slow_init_ms && evidence.size() < k_max_lines) {
             evidence.push_back(fmt::format("{}: cuInit + primary context {:.0f} ms",
                                            c.job.label(d.bus_id), *d.init_ms));
           }
         }
         if (evidence.empty()) {
           return {};
         }
         evidence.push_back(
             "/proc/*/comm: no nvidia-persistenced process (comm \"nvidia-persiste\")");
         return {
             {"CUDA start-up is slow and nvidia-persistenced is not running: without it the driver tears GPU state down when the last client exits, and every job start pays the full initialisation",
              std::move(evidence)}};
       }},
  };
  return rows;
}

} // namespace gpf
