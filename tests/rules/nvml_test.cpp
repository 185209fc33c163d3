// The nvml.* rows (src/rules/nvml.cpp) on facts built in code: the fabric remedy of a GB200
// compute tray.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("a GB200 compute tray without NVSwitch: the fabric remedy names IMEX, not the host FM") {
  Facts f = gb200_tray();
  f.nvml.ran = true;
  f.nvml.init_code = 0;
  NvmlGpu g;
  g.bus_id = k_a;
  g.fabric_state = 1; // not started
  f.nvml.gpus.push_back(g);
  auto hits = run_rule("nvml.fabric-incomplete", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.find("Do not start nvidia-fabricmanager") != std::string::npos);
  CHECK(hits[0].remedy.find("IMEX service (nvidia-imex)") != std::string::npos);
  CHECK(hits[0].remedy.find("/dev/nvidia-caps-imex-channels/channel0") != std::string::npos);
  CHECK(std::any_of(hits[0].evidence.begin(), hits[0].evidence.end(), [](const std::string& e) {
    return e.find("no NVSwitch") != std::string::npos;
  }));
  // an HGX node with its NVSwitches on the bus keeps the Fabric Manager remedy (the row's own)
  f.topology.pcie.nvswitches = {"0000:00:05.0"};
  hits = run_rule("nvml.fabric-incomplete", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.empty());
  // so does a GPU that is not a GB200/GB300 (a VM whose NVSwitches are not passed through)
  f.topology.pcie.nvswitches.clear();
  f.gpus[0].model = "NVIDIA H100 80GB HBM3";
  hits = run_rule("nvml.fabric-incomplete", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.empty());
}
