// The counters and clocks around the checker's own traffic (nvml_traffic.hpp).
#include "nvml_traffic.hpp"

#include "gpf/util/robust.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

namespace gpf {
namespace {

// nvmlClocksEventReasons bits
// (https://docs.nvidia.com/deploy/nvml-api/group__nvmlClocksEventReasons.html).
constexpr unsigned long long k_reason_idle = 0x1;
constexpr std::pair<unsigned long long, std::string_view> k_reasons[] = {
    {0x2, "applications clocks setting"}, {0x4, "software power cap"},
    {0x8, "hardware slowdown"},           {0x10, "sync boost"},
    {0x20, "software thermal slowdown"},  {0x40, "hardware thermal slowdown"},
    {0x80, "hardware power brake"},       {0x100, "display clock setting"},
};

template <class T>
void add_rise(std::vector<CounterRise>& out, const std::optional<T>& before,
              const std::optional<T>& after, std::optional<unsigned> link, std::string what,
              std::string call) {
  if (!before || !after) {
    return;
  }
  const auto b = static_cast<unsigned long long>(*before);
  const auto a = static_cast<unsigned long long>(*after);
  if (a > b) {
    out.push_back({link, std::move(what), std::move(call), b, a});
  }
}

} // namespace

std::vector<CounterRise> counter_rises(const NvmlCounters& before, const NvmlCounters& after) {
  std::vector<CounterRise> out;
  for (const auto& a : after.nvlinks) {
    const auto b = std::find_if(before.nvlinks.begin(), before.nvlinks.end(),
                                [&](const NvmlLinkErrors& l) { return l.link == a.link; });
    if (b == before.nvlinks.end()) {
      continue;
    }
    const auto call = [&](std::string_view counter) {
      return fmt::format("nvmlDeviceGetNvLinkErrorCounter(link {}, {})", a.link, counter);
    };
    add_rise(out, b->replay, a.replay, a.link, "replay errors", call("DL_REPLAY"));
    add_rise(out, b->recovery, a.recovery, a.link, "recoveries", call("DL_RECOVERY"));
    add_rise(out, b->crc_flit, a.crc_flit, a.link, "flit CRC errors", call("DL_CRC_FLIT"));
    add_rise(out, b->crc_data, a.crc_data, a.link, "data CRC errors", call("DL_CRC_DATA"));
  }
  add_rise(out, before.pcie_replay, after.pcie_replay, std::nullopt, "PCIe replays",
           "nvmlDeviceGetPcieReplayCounter");
  add_rise(out, before.ecc_volatile_corrected, after.ecc_volatile_corrected, std::nullopt,
           "corrected ECC errors", "nvmlDeviceGetTotalEccErrors(CORRECTED, VOLATILE)");
  add_rise(out, before.sram_threshold_exceeded, after.sram_threshold_exceeded, std::nullopt,
           "SRAM error threshold exceeded", "nvmlDeviceGetSramEccErrorStatus: bThresholdExceeded");
  add_rise(out, before.remap_pending, after.remap_pending, std::nullopt, "row remap pending",
           "nvmlDeviceGetRemappedRows: isPending");
  return out;
}

const NvmlTraffic* judged_window(const RuleContext& ctx, const NvmlGpu& g) {
  if (!g.traffic || !g.traffic->after || g.traffic->processes_after.value_or(0) != 0 ||
      !ctx.job.state(g.bus_id).users.empty()) {
    return nullptr;
  }
  const CudaDevice* d = ctx.facts.cuda.device_by_bus(g.bus_id);
  return d && !d->steps.empty() ? &*g.traffic : nullptr;
}

std::vector<ClockLow> clocks_below_peers(const RuleContext& ctx) {
  const auto& n = ctx.facts.nvml;
  if (!n.ran || !n.init_ok()) {
    return {};
  }
  std::map<std::string, std::vector<const NvmlGpu*>> by_model;
  for (const auto& g : n.gpus) {
    const auto* t = judged_window(ctx, g);
    const CudaDevice* d = ctx.facts.cuda.device_by_bus(g.bus_id);
    if (t && t->during.sm_clock_max_mhz && g.name && d && d->active.ran) {
      by_model[*g.name].push_back(&g);
    }
  }
  std::vector<ClockLow> low;
  for (const auto& [model, gpus] : by_model) {
    if (gpus.size() < 3) {
      continue; // two GPUs cannot say which one is held down
    }
    std::vector<double> sorted;
    for (const auto* g : gpus) {
      sorted.push_back(*g->traffic->during.sm_clock_max_mhz);
    }
    std::sort(sorted.begin(), sorted.end());
    for (const auto* g : gpus) {
      const unsigned mine = *g->traffic->during.sm_clock_max_mhz;
      const double median = median_without(sorted, mine);
      if (mine < k_clock_low_fraction * median) {
        low.push_back({g, mine, median, gpus.size() - 1});
      }
    }
  }
  return low;
}

std::string clock_reason_names(unsigned long long mask) {
  std::vector<std::string> names;
  unsigned long long known = k_reason_idle;
  for (const auto& [bit, name] : k_reasons) {
    known |= bit;
    if (mask & bit) {
      names.emplace_back(name);
    }
  }
  if (const unsigned long long rest = mask & ~known) {
    names.push_back(fmt::format("unknown reason 0x{:x}", rest));
  }
  return names.empty() ? "none given" : fmt::format("{}", fmt::join(names, ", "));
}

} // namespace gpf
