// The iommu.* rows (src/rules/iommu.cpp) on facts built in code: the IOMMU's translation of the
// GPUs' DMA.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE(
    "the IOMMU: group type first, the command line when the type is unknown, a VM is explained") {
  CHECK(run_rule("iommu.not-passthrough", two_gpus(std::nullopt, "identity")).empty());
  auto dma = two_gpus(std::nullopt, "DMA-FQ");
  auto hits = run_rule("iommu.not-passthrough", dma);
  REQUIRE(hits.size() == 1);
  CHECK_FALSE(hits[0].severity);
  CHECK(hits[0].evidence.at(0) ==
        "/sys/kernel/iommu_groups/30/type: DMA-FQ — GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3)");
  CHECK(run_rule("iommu.not-passthrough", dma, {k_a}).empty()); // one GPU: no peer-to-peer

  dma.topology.iommu.hypervisor = true;
  hits = run_rule("iommu.not-passthrough", dma);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::info);
  CHECK(hits[0].message.find("virtual machine") != std::string::npos);

  auto untyped = two_gpus(std::nullopt);
  untyped.topology.iommu.group_type.clear();
  CHECK(run_rule("iommu.not-passthrough", untyped).size() == 1); // groups, no iommu=pt
  untyped.topology.iommu.cmdline_passthrough = true;
  CHECK(run_rule("iommu.not-passthrough", untyped).empty());
  untyped.topology.iommu.cmdline_passthrough = false;
  untyped.topology.iommu.cmdline.reset();
  CHECK(run_rule("iommu.not-passthrough", untyped).empty()); // unknown is not a finding
  untyped.topology.iommu.groups = 0;
  untyped.topology.iommu.cmdline = "ro";
  CHECK(run_rule("iommu.not-passthrough", untyped).empty()); // no IOMMU at all
}
