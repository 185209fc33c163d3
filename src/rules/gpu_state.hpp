#pragma once
// The judgements that several probes' readings of one GPU setting share (JobView::state): the rows
// of sibling ids (gpu.compute-mode-prohibited and nvml.compute-prohibited; pcie.link-downtrained
// and nvml.pcie-width-degraded) call the same predicate, so a condition is judged the same
// whichever probe ran. Internal to src/rules.
#include "gpf/rules/rule.hpp"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// CUcomputemode (cuda.h) and nvmlComputeMode_t share their numbers: 0 DEFAULT, 1 EXCLUSIVE_THREAD
// (removed in later toolkits), 2 PROHIBITED, 3 EXCLUSIVE_PROCESS.
inline std::string_view compute_mode_name(int mode) {
  switch (mode) {
  case 1:
    return "EXCLUSIVE_THREAD";
  case 2:
    return "PROHIBITED";
  case 3:
    return "EXCLUSIVE_PROCESS";
  default:
    return "DEFAULT";
  }
}

// Where compute mode Prohibited is documented: no process may create a context on the GPU.
constexpr std::string_view k_compute_modes_source =
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#compute-modes";

// The one judgement of compute mode Prohibited, for gpu.compute-mode-prohibited (source "cuda")
// and nvml.compute-prohibited ("nvml"): no context can be created, so the GPU is unusable
// whichever probe saw it: fail, dropped. Each GPU gets one finding, from the row of the probe
// whose reading leads in GpuState (the CUDA attribute when CUDA read it), its evidence quoting
// every probe's reading: one condition, one finding, and each id still names the probe that saw it.
inline std::vector<Hit> compute_prohibited_hits(const RuleContext& c, std::string_view source) {
  std::vector<std::string> buses;
  if (source == "cuda") {
    for (const auto& d : c.facts.cuda.devices) {
      buses.push_back(d.bus_id);
    }
  } else {
    for (const auto& g : c.facts.nvml.gpus) {
      buses.push_back(g.bus_id);
    }
  }
  std::vector<Hit> hits;
  for (const auto& bus : buses) {
    const auto& readings = c.job.state(bus).compute_mode;
    const auto* lead = leading(readings);
    if (!lead || lead->source != source || lead->value != 2) {
      continue;
    }
    std::vector<std::string> evidence;
    for (const auto& r : readings) {
      const auto* d = r.source == "cuda" ? c.facts.cuda.device_by_bus(bus) : nullptr;
      evidence.push_back(d ? fmt::format("CUDA {} ({}): CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = {} ({})",
                                         d->index, bus, r.value, compute_mode_name(r.value))
                           : fmt::format("{}: nvmlDeviceGetComputeMode = {} ({})", bus, r.value,
                                         compute_mode_name(r.value)));
    }
    hits.emplace_back(
        fmt::format("{} is in compute mode Prohibited: no process can create a CUDA context on it",
                    c.job.label(bus)),
        std::move(evidence), bus, Effect::gpu_unusable);
  }
  return hits;
}

// The one judgement of another process on a GPU, for process.holds-gpu (the processes proc sees
// holding /dev/nvidiaN) and nvml.processes-present (those only NVML lists): a busy GPU is in use,
// not broken. A warning where the node is meant to be idle (--expect-idle), or where the process
// holds GPU memory that the job would share (NVML says how much); information otherwise, for a
// process seen only holding the node open.
inline Severity gpu_user_severity(const RuleContext& c, bool holds_memory) {
  return c.options.expect_idle || holds_memory ? Severity::warn : Severity::info;
}

// It stays in the recommendation, unless the job was promised idle GPUs (--expect-idle): then the
// recommendation is the GPUs nobody else uses, as the finding's remedy says.
inline Effect gpu_user_effect(const RuleContext& c) {
  return c.options.expect_idle ? Effect::gpu_unusable : Effect::none;
}

// "pid 4242 (python3, 1024 MiB)": the one way both rows name a process on a GPU.
inline std::string gpu_user_text(const GpuUser& u) {
  std::string what = u.comm;
  if (u.in_nvml) {
    const std::string memory =
        u.used_bytes ? fmt::format("{} MiB", *u.used_bytes >> 20) : "memory not available";
    what = what.empty() ? memory : what + ", " + memory;
  }
  return what.empty() ? fmt::format("pid {}", u.pid) : fmt::format("pid {} ({})", u.pid, what);
}

} // namespace gpf
