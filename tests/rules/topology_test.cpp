// The GPU-pair analysis of src/rules/topology.cpp behind the pcie.* and iommu.* rows, on facts
// built in code: the PCIe tree against the pair-by-pair answer, and the cause named for a
// peer-to-peer failure.
#include "gpf/rules/topology.hpp"
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <random>
#include <set>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

// The tree answers what a loop over every pair answers (the rules used to loop; 2000 GPUs made
// that 61 s): random forests of host bridges, root ports, switches and GPUs at any depth,
// including GPUs right on a host bridge and GPUs with an unknown path.
TEST_CASE("the PCIe tree agrees with the pair-by-pair answer on random topologies") {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 300; ++round) {
    TopologyFacts t;
    std::vector<std::string> gpus;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      GpuPciPath p;
      p.bus_id = fmt::format("0000:{:02x}:00.0", 0x80 + i);
      p.root = fmt::format("pci0000:{:02x}", rng() % 2);
      p.path = "sys/devices/" + p.root + "/" + p.bus_id;
      // up to 3 bridges, each one of two below its parent (named by the way down, so the same
      // name is the same bridge): pairs share prefixes often
      const int depth = static_cast<int>(rng() % 4);
      std::string way = p.root + "/";
      for (int d = 0; d < depth; ++d) {
        way += static_cast<char>('0' + rng() % 2);
        p.bridges.push_back(way);
      }
      if (rng() % 10 == 0) {
        p.error = "unknown"; // left out, like a GPU whose sysfs path was not found
      }
      t.pcie.gpus.push_back(p);
      gpus.push_back(p.bus_id);
    }
    const PcieTree tree = place_gpus(t, gpus);
    std::set<std::string> between_any;
    std::map<std::string, std::set<std::string>> groups;
    std::size_t known = 0;
    std::size_t apart = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        const auto between = bridges_between(t, gpus[i], gpus[j]);
        const auto shared = shared_bridge(t, gpus[i], gpus[j]);
        between_any.insert(between.begin(), between.end());
        if (between.empty() && shared.empty()) {
          continue;
        }
        ++known;
        if (shared.empty()) {
          ++apart;
        } else {
          groups[shared].insert({gpus[i], gpus[j]});
        }
      }
    }
    INFO("round " << round);
    CHECK(tree.known_pairs() == known);
    CHECK(tree.pairs_apart() == apart);
    std::map<std::string, std::set<std::string>> tree_groups;
    for (const auto& [bridge, members] : tree.shared_groups()) {
      tree_groups[bridge] = {members.begin(), members.end()};
    }
    CHECK(tree_groups == groups);
    for (const auto& [bridge, below] : tree.under) {
      CHECK(tree.between_some_pair(bridge) == (between_any.count(bridge) != 0));
    }
  }
}

TEST_CASE("the cause named for a peer-to-peer failure") {
  auto f = two_gpus(0x0004, "DMA");
  const auto causes = p2p_causes(f, k_a, k_b);
  REQUIRE(causes.size() == 3);
  CHECK(
      causes[0] ==
      "ACS redirect is enabled on switch downstream port 0000:17:00.0 between GPUs 0000:18:00.0 and 0000:2a:00.0");
  CHECK(
      causes[2] ==
      "the IOMMU translates the DMA of GPUs 0000:18:00.0 and 0000:2a:00.0 (not in passthrough mode)");
  f.topology.iommu.hypervisor = true;
  CHECK(p2p_causes(f, k_a, k_b).size() == 2);
  CHECK(p2p_causes(two_gpus(0x0000), k_a, k_b).empty());
  CHECK(p2p_causes(two_gpus(0x0004), k_a, "0000:99:00.0").empty()); // a GPU without a known path
}
