// The pcie.* rows (src/rules/pcie.cpp) on facts built in code: ACS redirects and unreadable ACS
// on the bridges between the GPUs a job uses together.
#include "gpf/rules/topology.hpp"
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("ACS redirect: each downstream port between the GPUs, not the bridges above both") {
  const auto hits = run_rule("pcie.acs-redirect", two_gpus(0x001D));
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].message.find("switch downstream port 0000:17:00.0 above GPU 0000:18:00.0") !=
        std::string::npos);
  CHECK(hits[0].evidence.at(0).find(
            "ACS control 0x001d at 0x14e (SrcValid+ TransBlk- ReqRedir+ CmpltRedir+") !=
        std::string::npos);
  CHECK(hits[0].remedy.find("setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000") != std::string::npos);
  CHECK(hits[1].message.find("0000:17:01.0") != std::string::npos);
  CHECK(run_rule("pcie.acs-redirect", two_gpus(0x0011))
            .empty()); // SrcValid+ UpstreamFwd+ only: no redirect
  CHECK(run_rule("pcie.acs-redirect", two_gpus(std::nullopt)).empty());
}

TEST_CASE("ACS is judged only between GPUs the job uses together") {
  auto f = two_gpus(0x001D);
  CHECK(run_rule("pcie.acs-redirect", f, {k_a}).empty()); // the other GPU is unusable
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1"}});
  CHECK(run_rule("pcie.acs-redirect", f).empty());
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1,0"}});
  CHECK(run_rule("pcie.acs-redirect", f).size() == 2);
}

TEST_CASE("GPUs under different host bridges: every bridge on both paths is between them") {
  auto f = two_gpus(0x0004);
  auto& second = f.topology.pcie.gpus[1];
  second.root = "pci0000:26";
  second.bridges = {"0000:26:01.0"};
  f.topology.pcie.bridges.emplace("0000:26:01.0", bridge("0000:26:01.0", 4, 0x0004));
  const auto between = bridges_between(f.topology, k_a, k_b);
  CHECK(between ==
        std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:26:01.0"});
  CHECK(shared_bridge(f.topology, k_a, k_b).empty());
  CHECK(run_rule("pcie.acs-redirect", f).size() == 3); // both root ports and the downstream port
  const auto pairs = run_rule("pcie.gpu-pairs-share-switch", f);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].message.find("No two GPUs share") == 0);
}

TEST_CASE("unreadable ACS is reported as not checked, only for bridges between the GPUs") {
  auto f = two_gpus(std::nullopt);
  CHECK(run_rule("pcie.acs-not-checked", f).empty());
  f.topology.pcie.bridges.at("0000:17:00.0").config.acs_state = AcsState::unknown;
  f.topology.pcie.bridges.at("0000:17:00.0").config.note = "only the 64-byte header is readable";
  f.topology.pcie.bridges.at("0000:15:01.0").config.acs_state =
      AcsState::unknown; // above both: irrelevant
  const auto hits = run_rule("pcie.acs-not-checked", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("1 bridge between") != std::string::npos);
  CHECK(hits[0].evidence ==
        std::vector<std::string>{
            "/sys/devices/pci0000:15/0000:17:00.0/config: only the 64-byte header is readable"});
}
