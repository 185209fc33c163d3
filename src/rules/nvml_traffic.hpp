#pragma once
// What the nvml.* rows about the checker's own traffic judge by: the counters that rose between
// the NVML child's reads before and after the CUDA stage, the GPUs whose window may be judged at
// all, and the SM clocks sampled during the stage against the node's GPUs of the same model.
// Internal to src/rules.
#include "gpf/facts/nvml_facts.hpp"
#include "gpf/rules/rule.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpf {

// One counter that rose during the window, e.g. NVLink 3's replay counter from 0 to 2.
struct CounterRise {
  std::optional<unsigned> link; // the NVLink, when it is one link's counter
  std::string what;             // "replay errors", "PCIe replays", "corrected ECC errors", …
  std::string call;             // the NVML call and argument that read it
  unsigned long long before = 0;
  unsigned long long after = 0;
};

// Every counter that rose from before to after, links first; the uncorrectable ECC count is left
// out (a row of its own). A flag that went from false to true counts as 0 -> 1.
std::vector<CounterRise> counter_rises(const NvmlCounters& before, const NvmlCounters& after);

// The GPU's window when its counters may be judged: both reads were made, the CUDA stage ran on it
// (the checker's traffic), and no other process was on it before (proc, NVML) or after (NVML).
// nullptr otherwise: a GPU another process uses may count errors of that process's doing.
const NvmlTraffic* judged_window(const RuleContext& ctx, const NvmlGpu& g);

// A GPU whose highest SM clock during the CUDA stage's active step lies far below the median of
// the other GPUs of its model on this node.
struct ClockLow {
  const NvmlGpu* gpu = nullptr;
  unsigned mhz = 0;
  double peers_median = 0;
  std::size_t peers = 0;
};

// "Far below": under k_clock_low_fraction of the median of at least two other GPUs of the same
// model, each judged (judged_window) and loaded by the active step.
inline constexpr double k_clock_low_fraction = 0.75;
std::vector<ClockLow> clocks_below_peers(const RuleContext& ctx);

// NVML's clock-event reasons by name ("hardware slowdown, software power cap"), the idle bit left
// out; unknown bits as hexadecimal; "none given" when no bit is set.
std::string clock_reason_names(unsigned long long mask);

} // namespace gpf
