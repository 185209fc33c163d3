// The GPU-pair analysis behind pcie.* and iommu.* and the cause named by the CUDA probe's
// multi-GPU finding. ACS semantics: PCI Express Base specification (ACS extended capability);
// NCCL troubleshooting guide "PCI Access Control Services (ACS)"
// (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html).
#include "gpf/rules/topology.hpp"

#include "gpf/facts/visible_devices.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/enum_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace gpf {
namespace {

// How many bridges from the root both paths share (0 under different host bridges).
std::size_t common_depth(const GpuPciPath& a, const GpuPciPath& b) {
  if (a.root != b.root) {
    return 0;
  }
  std::size_t k = 0;
  while (k < a.bridges.size() && k < b.bridges.size() && a.bridges[k] == b.bridges[k]) {
    ++k;
  }
  return k;
}

char bit(bool on) {
  return on ? '+' : '-';
}

// sys/kernel/iommu_groups/N/type: "identity" = passthrough, "DMA"/"DMA-FQ" = translated.
std::optional<bool> type_translates(const std::string& type) {
  if (type == "identity") {
    return false;
  }
  if (type.rfind("DMA", 0) == 0) {
    return true;
  }
  return std::nullopt;
}

std::optional<unsigned> smaller(std::optional<unsigned> a, std::optional<unsigned> b) {
  if (a && b) {
    return std::min(*a, *b);
  }
  return a ? a : b;
}

// Whether the port at position i of a path (bridges, then the GPU) is the upper end of a link.
bool starts_link(const TopologyFacts& t, const std::string& bus, std::size_t i) {
  const auto it = t.pcie.bridges.find(bus);
  if (it != t.pcie.bridges.end() && it->second.config.port_type) {
    const auto type = *it->second.config.port_type;
    if (type == 4 || type == 6) { // root port, switch downstream port
      return true;
    }
    if (type == 5) { // switch upstream port: its lower side is the switch's internal bus
      return false;
    }
  }
  return i % 2 == 0;
}

} // namespace

std::optional<unsigned> PcieHop::width() const {
  if (lower_link && lower_link->width) {
    return lower_link->width;
  }
  return upper_link ? upper_link->width : std::nullopt;
}

std::optional<unsigned> PcieHop::could_width() const {
  return smaller(upper_link ? upper_link->max_width : std::nullopt,
                 lower_link ? lower_link->max_width : std::nullopt);
}

std::optional<unsigned> PcieHop::speed() const {
  if (lower_link && lower_link->speed) {
    return lower_link->speed;
  }
  return upper_link ? upper_link->speed : std::nullopt;
}

std::optional<unsigned> PcieHop::could_speed() const {
  return smaller(upper_link ? upper_link->max_speed : std::nullopt,
                 lower_link ? lower_link->max_speed : std::nullopt);
}

std::vector<PcieHop> pcie_hops(const TopologyFacts& t, const std::vector<std::string>& gpus) {
  std::vector<PcieHop> hops;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> index; // (upper, lower)
  for (const PcieTree::Placed& gpu : place_gpus(t, gpus).placed) {
    const std::string& bus = gpu.bus_id;
    const GpuPciPath* path = gpu.path; // clang 14 cannot capture a structured binding
    // the path from the root port down, then the GPU (views into the facts, which outlive index)
    std::vector<std::string_view> chain(path->bridges.begin(), path->bridges.end());
    chain.push_back(path->bus_id);
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
      if (!starts_link(t, std::string(chain[i]), i)) {
        continue;
      }
      const auto [at, added] = index.try_emplace({chain[i], chain[i + 1]}, hops.size());
      if (added) {
        PcieHop hop;
        hop.upper = chain[i];
        hop.lower = chain[i + 1];
        const auto port = [&](const std::string& b, std::string& dir, const PciLinkState*& link,
                              const AerCounts*& aer) {
          if (b == path->bus_id) {
            dir = path->path;
            link = &path->link;
            aer = &path->aer;
          } else if (auto it = t.pcie.bridges.find(b); it != t.pcie.bridges.end()) {
            dir = it->second.path;
            link = &it->second.link;
            aer = &it->second.aer;
          }
        };
        port(hop.upper, hop.upper_path, hop.upper_link, hop.upper_aer);
        port(hop.lower, hop.lower_path, hop.lower_link, hop.lower_aer);
        hops.push_back(std::move(hop));
      }
      hops[at->second].gpus.push_back(bus);
    }
  }
  return hops;
}

const GpuPciPath* find_gpu_path(const TopologyFacts& t, const std::string& bus_id) {
  for (const auto& g : t.pcie.gpus) {
    if (g.bus_id == bus_id && g.error.empty() && !g.path.empty()) {
      return &g;
    }
  }
  return nullptr;
}

std::vector<std::string> job_gpus(const RuleContext& c) {
  std::vector<std::string> out;
  for (const auto& gpu : c.facts.gpus) {
    if (c.job.admits(gpu.bus_id) && c.usable_gpus.count(gpu.bus_id) != 0) {
      out.push_back(gpu.bus_id);
    }
  }
  return out;
}

std::vector<std::string> bridges_between(const TopologyFacts& t, const std::string& a,
                                         const std::string& b) {
  const auto* pa = find_gpu_path(t, a);
  const auto* pb = find_gpu_path(t, b);
  if (!pa || !pb) {
    return {};
  }
  const std::size_t k = common_depth(*pa, *pb);
  std::vector<std::string> out(pa->bridges.begin() + static_cast<std::ptrdiff_t>(k),
                               pa->bridges.end());
  for (std::size_t i = k; i < pb->bridges.size(); ++i) {
    if (std::find(out.begin(), out.end(), pb->bridges[i]) == out.end()) {
      out.push_back(pb->bridges[i]);
    }
  }
  return out;
}

std::string shared_bridge(const TopologyFacts& t, const std::string& a, const std::string& b) {
  const auto* pa = find_gpu_path(t, a);
  const auto* pb = find_gpu_path(t, b);
  if (!pa || !pb) {
    return {};
  }
  const std::size_t k = common_depth(*pa, *pb);
  return k == 0 ? std::string() : pa->bridges[k - 1];
}

PcieTree place_gpus(const TopologyFacts& t, const std::vector<std::string>& gpus) {
  std::unordered_map<std::string_view, const GpuPciPath*> paths; // the first usable entry wins,
  for (const auto& g : t.pcie.gpus) {                            // as in find_gpu_path
    if (g.error.empty() && !g.path.empty()) {
      paths.emplace(g.bus_id, &g);
    }
  }
  PcieTree tree;
  std::unordered_set<std::string_view> seen;
  for (const auto& bus : gpus) {
    const auto it = paths.find(bus);
    if (it == paths.end() || !seen.insert(it->first).second) {
      continue;
    }
    tree.placed.push_back({bus, it->second});
    for (const auto& bridge : it->second->bridges) {
      tree.under[bridge].push_back(bus);
    }
  }
  for (auto& [bridge, below] : tree.under) {
    std::sort(below.begin(), below.end());
  }
  return tree;
}

bool PcieTree::between_some_pair(const std::string& bridge) const {
  const auto it = under.find(bridge);
  return it != under.end() && it->second.size() < placed.size();
}

std::map<std::string, std::vector<std::string>> PcieTree::shared_groups() const {
  // A bridge is the deepest one two GPUs share when they leave it by different ways down: through
  // different bridges, or one or both ending at it.
  std::unordered_map<std::string_view, std::size_t> index_of; // index into placed
  for (std::size_t i = 0; i < placed.size(); ++i) {
    index_of.emplace(placed[i].bus_id, i);
  }
  std::map<std::string, std::vector<std::string>> groups;
  for (const auto& [bridge, below] : under) {
    std::unordered_set<std::string_view> ways;
    for (const auto& gpu : below) {
      const auto& bridges = placed[index_of.at(gpu)].path->bridges;
      const auto at = std::find(bridges.begin(), bridges.end(), bridge);
      ways.insert(at + 1 == bridges.end() ? std::string_view(gpu) : std::string_view(*(at + 1)));
      if (ways.size() > 1) {
        groups.emplace(bridge, below);
        break;
      }
    }
  }
  return groups;
}

std::size_t PcieTree::known_pairs() const {
  const auto pairs = [](std::size_t n) { return n < 2 ? 0 : n * (n - 1) / 2; };
  std::size_t bare = 0; // GPUs right on a host bridge: two of them have nothing between or above
  for (const auto& p : placed) {
    bare += p.path->bridges.empty() ? 1 : 0;
  }
  return pairs(placed.size()) - pairs(bare);
}

std::size_t PcieTree::pairs_apart() const {
  // Two GPUs share a bridge exactly when they sit under one host bridge and one first bridge.
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> tops;
  for (const auto& p : placed) {
    if (!p.path->bridges.empty()) {
      ++tops[{p.path->root, p.path->bridges.front()}];
    }
  }
  std::size_t sharing = 0;
  for (const auto& [top, n] : tops) {
    sharing += n < 2 ? 0 : n * (n - 1) / 2;
  }
  return known_pairs() - sharing;
}

std::string acs_evidence(const PciBridge& bridge) {
  const std::string file = "/" + bridge.path + "/config";
  if (!bridge.config.acs) {
    return fmt::format("{}: {}", file,
                       bridge.config.note.empty() ? "no ACS capability" : bridge.config.note);
  }
  const AcsControl& a = *bridge.config.acs;
  return fmt::format(
      "{}: ACS control 0x{:04x} at 0x{:03x} (SrcValid{} TransBlk{} ReqRedir{} CmpltRedir{} UpstreamFwd{} EgressCtrl{} DirectTrans{})",
      file, a.control, a.offset + 6, bit(a.source_validation()), bit(a.translation_blocking()),
      bit(a.request_redirect()), bit(a.completion_redirect()), bit(a.upstream_forwarding()),
      bit(a.egress_control()), bit(a.direct_translated()));
}

std::vector<const PciBridge*> acs_redirects_between(const TopologyFacts& t, const std::string& a,
                                                    const std::string& b) {
  std::vector<const PciBridge*> out;
  for (const auto& bus : bridges_between(t, a, b)) {
    const auto it = t.pcie.bridges.find(bus);
    if (it != t.pcie.bridges.end() && it->second.config.acs &&
        it->second.config.acs->redirects_p2p()) {
      out.push_back(&it->second);
    }
  }
  return out;
}

std::optional<bool> iommu_translates(const TopologyFacts& t, const std::string& bus_id) {
  const auto& iommu = t.iommu;
  if (const auto* path = find_gpu_path(t, bus_id); path && path->iommu_group) {
    if (auto it = iommu.group_type.find(*path->iommu_group); it != iommu.group_type.end()) {
      if (auto known = type_translates(it->second)) {
        return known;
      }
    }
  }
  // the default domain type is system-wide: the other GPUs' groups tell it
  std::optional<bool> others;
  for (const auto& [group, type] : iommu.group_type) {
    if (auto known = type_translates(type)) {
      others = others.value_or(false) || *known;
    }
  }
  if (others) {
    return others;
  }
  if (!iommu.ran || (!iommu.groups && iommu.units.empty())) {
    return std::nullopt;
  }
  const bool present = (iommu.groups && *iommu.groups > 0) || !iommu.units.empty();
  if (!present || iommu.cmdline_off) {
    return false;
  }
  if (!iommu.cmdline) {
    return std::nullopt;
  }
  return !iommu.cmdline_passthrough;
}

std::vector<std::string> p2p_causes(const Facts& f, const std::string& a, const std::string& b) {
  std::vector<std::string> out;
  for (const PciBridge* bridge : acs_redirects_between(f.topology, a, b)) {
    out.push_back(fmt::format("ACS redirect is enabled on {} {} between GPUs {} and {}",
                              port_kind(*bridge), bridge->bus_id, a, b));
  }
  const bool vm = f.topology.iommu.hypervisor == true;
  if (!vm && (iommu_translates(f.topology, a) == true || iommu_translates(f.topology, b) == true)) {
    out.push_back(fmt::format(
        "the IOMMU translates the DMA of GPUs {} and {} (not in passthrough mode)", a, b));
  }
  return out;
}

} // namespace gpf
