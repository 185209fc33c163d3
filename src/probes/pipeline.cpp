#include "gpf/probes/pipeline.hpp"

#include "gpf/probes/cuda_probe.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"

#include <array>
#include <chrono>
#include <memory>
#include <string_view>
#include <utility>

namespace gpf {
namespace {
// One row per probe: the name reports and snapshots know it by, what it checks in a user's words
// (the report's "not checked" line), and its function(s). The fixed order: later probes may use
// earlier facts (devices needs the GPUs' minors; cuda starts a child per driver GPU whose UUID is
// known). A probe in two phases starts just before another row, so that its children work beside
// that probe's (nvml's beside cuda's), and finishes at its own row.
struct ProbeRow {
  std::string_view name;
  std::string_view what;
  ProbeFn run = nullptr; // one phase: the whole probe, at its row
  // Two phases: start runs just before the row named start_before, and what it returns is handed
  // to finish at this row.
  ProbeStartFn start = nullptr;
  std::string_view start_before{};
  ProbeFinishFn finish = nullptr;
  // A row that must have run before this probe's first phase: its facts are read, or it must not
  // see this probe's children.
  std::string_view after{};
};
// gpu-processes lists the processes holding a GPU's device node: it runs before the CUDA and
// NVML children exist, so that the checker's own children never count as holders (and cuda takes
// --skip-busy and each busy GPU's holders from it).
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
    {.name = "cuda", .what = "CUDA start-up", .run = probe_cuda, .after = "gpu-processes"},
    {.name = "nvml",
     .what = "GPU health (NVML)",
     .start = start_nvml,
     .start_before = "cuda",
     .finish = probe_nvml,
     .after = "gpu-processes"},
}};

constexpr std::size_t row_index(std::string_view name) {
  for (std::size_t i = 0; i < k_pipeline.size(); ++i) {
    if (k_pipeline[i].name == name) {
      return i;
    }
  }
  return k_pipeline.size();
}

// Where a row's first phase runs: before the row its start names, else at its own.
constexpr std::size_t first_phase_at(std::size_t row) {
  return k_pipeline[row].start ? row_index(k_pipeline[row].start_before) : row;
}

// Each row runs in one phase or two; a start comes no later than its own row; the row named in
// `after` exists and runs before the row's first phase; names are unique.
constexpr bool rows_well_formed() {
  for (std::size_t i = 0; i < k_pipeline.size(); ++i) {
    const ProbeRow& r = k_pipeline[i];
    const bool one_phase = r.run && !r.start && !r.finish;
    const bool two_phases = !r.run && r.start && r.finish;
    if ((!one_phase && !two_phases) || row_index(r.name) != i || first_phase_at(i) > i) {
      return false;
    }
    if (!r.after.empty() && row_index(r.after) >= first_phase_at(i)) {
      return false;
    }
  }
  return true;
}
static_assert(rows_well_formed(), "k_pipeline: a row's phases or its `after` are out of order");

// One step of collect_facts: a row's start phase, or the row itself (run or finish).
struct Phase {
  std::size_t row = 0;
  bool start = false;
};

constexpr std::size_t k_start_phases = [] {
  std::size_t n = 0;
  for (const auto& r : k_pipeline) {
    n += r.start ? 1 : 0;
  }
  return n;
}();

// The rows in order, each preceded by the start phases of the rows that start before it.
constexpr auto k_schedule = [] {
  std::array<Phase, k_pipeline.size() + k_start_phases> out{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < k_pipeline.size(); ++i) {
    for (std::size_t j = 0; j < k_pipeline.size(); ++j) {
      if (k_pipeline[j].start && first_phase_at(j) == i) {
        out[n++] = {j, true};
      }
    }
    out[n++] = {i, false};
  }
  return out;
}();

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

std::vector<std::string> probe_schedule() {
  std::vector<std::string> out;
  for (const auto& phase : k_schedule) {
    const std::string name(k_pipeline[phase.row].name);
    out.push_back(phase.start ? "start " + name : name);
  }
  return out;
}

Facts collect_facts(const Host& host, const ProbeOptions& options) {
  Facts facts;
  facts.env = host.environment();
  // A started probe's in-flight work (its children), held here until its row finishes it.
  std::array<std::unique_ptr<ProbeStarted>, k_pipeline.size()> started;
  for (const auto& phase : k_schedule) {
    const ProbeRow& probe = k_pipeline[phase.row];
    if (phase.start) {
      started[phase.row] = probe.start(host, options, facts);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    ProbeStatus status = probe.finish
                             ? probe.finish(host, options, facts, std::move(started[phase.row]))
                             : probe.run(host, options, facts);
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
