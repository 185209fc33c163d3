#pragma once
// Facts built in code for the tests of the rows that judge the topology: two H100s under one PCIe
// switch with their bridges, IOMMU groups and ACS control, a GB200 compute tray, and one row run
// on its own.
#include "gpf/rules/rule.hpp"
#include "gpf/rules/verdict.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::test::topology_rule_facts {

inline const std::string k_a = "0000:18:00.0";
inline const std::string k_b = "0000:2a:00.0";

inline Environment env_of(std::map<std::string, std::string> vars) {
  return Environment(std::move(vars));
}

inline std::vector<Hit> run_rule(std::string_view id, const Facts& facts,
                                 std::set<std::string> usable = {}) {
  const Rule* rule = find_rule(id);
  REQUIRE(rule);
  if (usable.empty()) {
    for (const auto& g : facts.gpus) {
      usable.insert(g.bus_id);
    }
  }
  const CheckOptions options;
  const std::vector<std::string> recommended;
  const JobView job = derive_job_view(facts, Matrix::get());
  RuleContext ctx{facts, job, options, usable, recommended};
  ctx.rule = rule;
  return rule->check(ctx);
}

inline PciBridge bridge(const std::string& bus, unsigned port_type,
                        std::optional<unsigned> acs_control, AcsState state = AcsState::present) {
  PciBridge b;
  b.bus_id = bus;
  b.path = "sys/devices/pci0000:15/" + bus;
  b.config.size = 4096;
  b.config.port_type = static_cast<std::uint8_t>(port_type);
  b.config.acs_state = acs_control ? AcsState::present : state;
  if (acs_control) {
    AcsControl acs;
    acs.control = static_cast<std::uint16_t>(*acs_control);
    acs.offset = 0x148;
    b.config.acs = acs;
  }
  return b;
}

// Two H100s under one switch (root port 15:01.0, upstream 16:00.0, downstream 17:00.0 / 17:01.0);
// downstream ports with the given ACS control; IOMMU groups of type group_type.
inline Facts two_gpus(std::optional<unsigned> acs_control,
                      const std::string& group_type = "identity") {
  Facts f;
  for (const auto& bus : {k_a, k_b}) {
    GpuFacts g;
    g.bus_id = bus;
    g.model = "NVIDIA H100 80GB HBM3";
    g.uuid = "GPU-" + bus;
    f.gpus.push_back(g);
  }
  auto& t = f.topology;
  t.pcie.ran = true;
  t.pcie.bridges.emplace("0000:15:01.0", bridge("0000:15:01.0", 4, acs_control));
  t.pcie.bridges.emplace("0000:16:00.0", bridge("0000:16:00.0", 5, std::nullopt, AcsState::absent));
  t.pcie.bridges.emplace("0000:17:00.0", bridge("0000:17:00.0", 6, acs_control));
  t.pcie.bridges.emplace("0000:17:01.0", bridge("0000:17:01.0", 6, acs_control));
  int group = 30;
  for (const auto& [bus, down] :
       {std::pair{k_a, std::string("0000:17:00.0")}, std::pair{k_b, std::string("0000:17:01.0")}}) {
    GpuPciPath p;
    p.bus_id = bus;
    p.path = "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/" + down + "/" + bus;
    p.root = "pci0000:15";
    p.bridges = {"0000:15:01.0", "0000:16:00.0", down};
    p.device_id = 0x2330;
    p.iommu_group = std::to_string(group);
    t.iommu.group_type[std::to_string(group++)] = group_type;
    t.pcie.gpus.push_back(p);
  }
  t.iommu.ran = true;
  t.iommu.groups = 2;
  t.iommu.cmdline = "ro quiet";
  t.iommu.hypervisor = false;
  return f;
}

// A GB200 compute tray: the driver loaded, one GB200, a PCI bus read without an NVSwitch.
inline Facts gb200_tray() {
  Facts f;
  f.driver.loaded = true;
  GpuFacts gpu;
  gpu.bus_id = k_a;
  gpu.model = "NVIDIA GB200";
  f.gpus.push_back(gpu);
  f.topology.pcie.ran = true;
  f.topology.pcie.devices_seen = 12;
  return f;
}

} // namespace gpf::test::topology_rule_facts
