// The nvswitch.* rows (src/rules/nvswitch.cpp): SXids on inline logs and fixture snapshots, and the
// Fabric Manager on facts built in code.
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/log_rule_facts.hpp"
#include "support/rule_subset.hpp"
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using namespace gpf::test::log_rule_facts;
using namespace gpf::test::topology_rule_facts;

// Issue 29's repros: NVIDIA's catalogs, whole, and the line's own severity word.
TEST_CASE("SXid 22003 (always fatal, Minion Halt) fails the fabric; an unlisted SXid follows its "
          "line's word") {
  static const auto rules = test::rule_subset({"nvswitch.sxid-fatal", "nvswitch.sxid-nonfatal"});
  const auto judge = [](const std::string& line) {
    Facts f;
    f.log = scan_kernel_log(dmesg({line}));
    return assess(f, rules, {});
  };
  {
    const auto a = judge("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 22003, Fatal, Link 12 "
                         "MINION Link Halt");
    const auto* f = finding(a, "nvswitch.sxid-fatal");
    REQUIRE(f);
    CHECK(f->severity == Severity::fail);
    CHECK(contains(f->message, "Minion Halt"));
    CHECK_FALSE(finding(a, "nvswitch.sxid-nonfatal"));
  }
  {
    const auto a = judge("nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 29001, Fatal, Link 3 new");
    const auto* f = finding(a, "nvswitch.sxid-fatal");
    REQUIRE(f);
    CHECK(contains(f->message, "the line says \"Fatal\""));
    CHECK_FALSE(finding(a, "nvswitch.sxid-nonfatal"));
  }
  {
    const auto a = judge("nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 29002, Non-fatal, Link 3");
    REQUIRE(finding(a, "nvswitch.sxid-nonfatal"));
    CHECK(finding(a, "nvswitch.sxid-nonfatal")->severity == Severity::warn);
    CHECK_FALSE(finding(a, "nvswitch.sxid-fatal"));
  }
}

TEST_CASE("fixtures: SXid 22003 fails the fabric; NVLink5 Xids follow their own words") {
  {
    const auto r = check_fixture("log-sxid-minion-halt");
    CHECK(r.assessment.verdict == Verdict::fail);
    const auto* f = finding(r.assessment, "nvswitch.sxid-fatal");
    REQUIRE(f);
    CHECK(contains(f->message, "SXid 22003 (Minion Halt; fatal to the NVSwitch fabric)"));
    CHECK(any_evidence(*f, "22003, Fatal, Link 12 MINION Link Halt"));
  }
  {
    const auto r = check_fixture("log-xid-nvlink5-words");
    CHECK(r.assessment.verdict == Verdict::warn);
    const auto* reset = finding(r.assessment, "xid.reset-required");
    REQUIRE(reset);
    CHECK(contains(reset->message, "Xid 149 (NVLINK_NETIR_ERROR)"));
    CHECK_FALSE(gpu(r.assessment, "0000:2a:00.0").usable);
    const auto* warn = finding(r.assessment, "xid.warning");
    REQUIRE(warn);
    CHECK(contains(warn->message, "Xid 145 (NVLINK_RLW_ERROR)"));
    CHECK(gpu(r.assessment, "0000:3a:00.0").usable);
  }
}

TEST_CASE("Fabric Manager: missing, unchecked in a container, wrong version") {
  auto f = two_gpus(std::nullopt);
  auto& s = f.topology.services;
  s.ran = true;
  s.process_table = true;
  s.init_comm = "systemd";
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).empty()); // no NVSwitch
  s.nvswitch_nodes = {"dev/nvidia-nvswitch0"};
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).size() == 1);
  CHECK(run_rule("nvswitch.fabric-manager-unchecked", f).empty());
  s.init_comm = "bash";
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).empty());
  CHECK(run_rule("nvswitch.fabric-manager-unchecked", f).size() == 1);
  s.init_comm = "systemd";
  s.fabric_manager = {{1450, "nv-fabricmanage"}};
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).empty());
  f.driver.version = Version({550, 54, 14});
  f.driver.version_text = "550.54.14";
  f.driver.version_source = "proc/driver/nvidia/version";
  s.fabric_manager_version = "550.54.14";
  CHECK(run_rule("nvswitch.fabric-manager-version", f).empty());
  s.fabric_manager_version = "550.54.15";
  const auto hits = run_rule("nvswitch.fabric-manager-version", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("550.54.15 does not match the driver 550.54.14") != std::string::npos);
}
