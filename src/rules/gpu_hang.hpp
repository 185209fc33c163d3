#pragma once
// One judgement for a hang between GPUs, whichever probe saw it: CUDA's peer copies
// (cuda.multi-gpu-hung) or NCCL's start-up and first all-reduce (nccl.init-hung,
// nccl.all-reduce-hung). The answer to the founding incident (a multi-GPU job hangs at start-up,
// one GPU works) is the same for both: warn, start the job on one GPU, the best-placed healthy
// one, while the cause is fixed; --min-gpus N > 1 makes it a fail (gpu.too-few-usable). The
// remedies come in the order that fixes most: NCCL_P2P_DISABLE=1 first where the GPUs are
// consumer parts (GeForce and TITAN cards carry no peer-to-peer over PCIe even where the driver
// reports it: https://github.com/NVIDIA/nccl-tests/issues/287) or the job forces peer-to-peer
// (NCCL_P2P_LEVEL, NCCL_IGNORE_DISABLED_P2P); the PCIe ACS port or IOMMU that redirects the
// traffic first where one was found on a data-centre node; the other next (NCCL's
// troubleshooting guide,
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html).
#include "common.hpp"
#include "gpf/rules/topology.hpp"

#include <algorithm>
#include <tuple>

namespace gpf {

// What a probe saw hang: the GPUs (bus ids) and pairs it covered, in its words.
struct GpuHang {
  std::vector<std::pair<std::string, std::string>> pairs; // GPUs that hung together
  std::string transport; // how they were connected: "peer-to-peer copies (cuMemcpyPeer)"
  std::string retry;     // a command that tries NCCL_P2P_DISABLE=1 again ("" = none)
};

// A GeForce or TITAN part (its model name).
inline bool consumer_gpu(const Facts& f, const std::string& bus) {
  for (const auto& g : f.gpus) {
    if (g.bus_id == bus && g.model) {
      return contains(*g.model, "GeForce") || contains(*g.model, "TITAN");
    }
  }
  return false;
}

// The job's variable that forces NCCL to use peer-to-peer ("NCCL_P2P_LEVEL=SYS"), "" when none.
inline std::string p2p_forced(const Facts& f) {
  if (const auto v = f.env.get("NCCL_IGNORE_DISABLED_P2P"); v && trim(*v) == "1") {
    return "NCCL_IGNORE_DISABLED_P2P=1";
  }
  if (const auto v = f.env.get("NCCL_P2P_LEVEL");
      v && !trim(*v).empty() && trim(*v) != "LOC" && trim(*v) != "0") {
    return "NCCL_P2P_LEVEL=" + quote_evidence(trim(*v), 16);
  }
  return "";
}

// The PCIe ports whose ACS redirects the pairs' peer traffic, each once.
inline std::vector<const PciBridge*> hang_acs_ports(const Facts& f, const GpuHang& h) {
  std::vector<const PciBridge*> out;
  for (const auto& [a, b] : h.pairs) {
    for (const PciBridge* bridge : acs_redirects_between(f.topology, a, b)) {
      if (std::find(out.begin(), out.end(), bridge) == out.end()) {
        out.push_back(bridge);
      }
    }
  }
  return out;
}

// The usable GPU the job should start on: not below a port whose ACS redirects, its link trained
// at what it can do, then the job's index order.
inline std::string best_placed_gpu(const RuleContext& c,
                                   const std::vector<const PciBridge*>& acs_ports) {
  std::vector<std::string> gpus = job_gpus(c);
  const auto score = [&](const std::string& bus) {
    const GpuPciPath* path = find_gpu_path(c.facts.topology, bus);
    bool behind_acs = false;
    bool link_short = false;
    if (path != nullptr) {
      for (const PciBridge* port : acs_ports) {
        behind_acs = behind_acs || std::find(path->bridges.begin(), path->bridges.end(),
                                             port->bus_id) != path->bridges.end();
      }
      const auto& l = path->link;
      link_short = (l.width && l.max_width && *l.width < *l.max_width) ||
                   (l.speed && l.max_speed && *l.speed < *l.max_speed);
    }
    return std::make_tuple(behind_acs, link_short,
                           c.job.index_of(bus).value_or(static_cast<std::size_t>(-1)));
  };
  const auto best = std::min_element(
      gpus.begin(), gpus.end(), [&](const auto& a, const auto& b) { return score(a) < score(b); });
  return best == gpus.end() ? std::string() : *best;
}

// The remedy, in the order that fixes most, with the GPU to start on.
inline std::string hang_remedy(const RuleContext& c, const GpuHang& h, const std::string& keep,
                               const std::vector<const PciBridge*>& acs_ports) {
  const Facts& f = c.facts;
  std::vector<std::string> gpus;
  for (const auto& [a, b] : h.pairs) {
    for (const auto* bus : {&a, &b}) {
      if (std::find(gpus.begin(), gpus.end(), *bus) == gpus.end()) {
        gpus.push_back(*bus);
      }
    }
  }
  const bool consumer = std::any_of(gpus.begin(), gpus.end(),
                                    [&](const std::string& bus) { return consumer_gpu(f, bus); });
  const std::string forced = p2p_forced(f);
  const bool vm = f.topology.iommu.hypervisor == true;
  const bool iommu = !vm && std::any_of(gpus.begin(), gpus.end(), [&](const std::string& bus) {
    return iommu_translates(f.topology, bus) == true;
  });

  std::string p2p = "export NCCL_P2P_DISABLE=1 for multi-GPU jobs (NCCL then copies between GPUs "
                    "through host memory, at a bandwidth cost)";
  if (consumer) {
    p2p += ": GeForce and TITAN GPUs carry no peer-to-peer over PCIe even where the driver "
           "reports it";
  } else if (!forced.empty()) {
    p2p += fmt::format(" and unset {}, which forces peer-to-peer", forced);
  }
  if (!h.retry.empty()) {
    p2p += fmt::format("; test it: `{}`", h.retry);
  }
  std::vector<std::string> fixes;
  for (const PciBridge* port : acs_ports) {
    fixes.push_back(fmt::format("disable ACS on {} (`setpci -s {} ECAP_ACS+0x6.w=0000` as root "
                                "at boot, or in the firmware)",
                                port->bus_id, port->bus_id));
  }
  if (iommu) {
    fixes.push_back("put the IOMMU in pass-through (`iommu=pt` on the kernel command line, or "
                    "VT-d/AMD-Vi off in the firmware)");
  }
  std::string platform =
      fixes.empty() ? std::string("check PCIe ACS on the bridges above the GPUs (`lspci -vvv`: "
                                  "ACSCtl SrcValid+/ReqRedir+/CmpltRedir+ should be off) and the "
                                  "IOMMU (`iommu=pt`, or VT-d/AMD-Vi off in the firmware)")
                    : fmt::format("{}", fmt::join(fixes, "; "));
  const bool platform_first = !consumer && forced.empty() && !fixes.empty();

  std::string remedy;
  if (!keep.empty()) {
    const GpuFacts* gpu = nullptr;
    for (const auto& g : f.gpus) {
      gpu = g.bus_id == keep ? &g : gpu;
    }
    const auto index = c.job.index_of(keep);
    const std::string value = c.options.cvd_form == CvdForm::uuid && gpu && gpu->uuid ? *gpu->uuid
                              : index ? std::to_string(*index)
                                      : keep;
    remedy = fmt::format("Start the job on one GPU, {}: CUDA_VISIBLE_DEVICES={} (the "
                         "recommendation keeps it). To use several GPUs: ",
                         c.job.label(keep), value);
  } else {
    remedy = "Start the job on one GPU. To use several GPUs: ";
  }
  remedy += platform_first ? platform + "; or " + p2p : p2p + "; then " + platform;
  if (f.kernel.version && *f.kernel.version < Version({5, 5, 0})) {
    remedy += fmt::format(
        "; kernel {} is below 5.5: upgrading it is a known remedy for multi-GPU start-up hangs",
        f.kernel.version->str());
  }
  if (vm) {
    remedy += "; on this virtual machine, ask for GPUs with peer-to-peer support";
  }
  if (!h.retry.empty()) {
    remedy += "; if it hangs without peer-to-peer too, drain the node for a GPU reset";
  }
  return remedy;
}

// The judgement: one GPU kept (the best-placed), the transport in the message, the remedy in
// order, and the ACS port that causes it named where the drain reason can show it.
inline void judge_gpu_hang(const RuleContext& c, const GpuHang& h, Hit& hit) {
  const auto ports = hang_acs_ports(c.facts, h);
  const std::string keep = best_placed_gpu(c, ports);
  hit.effect = Effect::single_gpu_only;
  hit.keep = keep;
  if (!ports.empty()) {
    hit.where = "ACS " + ports.front()->bus_id;
  }
  hit.remedy = hang_remedy(c, h, keep, ports);
}

} // namespace gpf
