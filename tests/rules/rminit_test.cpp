// The rminit.* rows (src/rules/rminit.cpp) on fixture snapshots and an inline log: RmInitAdapter
// failures decoded, pinned to their GPU, and their likely cause.
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/log_rule_facts.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using namespace gpf::test::log_rule_facts;

TEST_CASE("fixture: RmInitAdapter 0x26 (the seed case) is decoded and pinned to its GPU") {
  const auto r = check_fixture("log-rminit-0x26");
  CHECK(r.assessment.verdict == Verdict::fail);
  const auto* f = finding(r.assessment, "rminit.adapter-failed");
  REQUIRE(f);
  CHECK(f->gpu == "0000:18:00.0");
  CHECK(contains(f->message,
                 "GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3): failed to initialise: "
                 "RM_INIT_GPU_DMA_CONFIGURATION_FAILED (0x26), NV_ERR_GENERIC (0xffff)"));
  CHECK(contains(f->message, "3 times, first at [31.402113], last at [187.993001]"));
  CHECK(any_evidence(*f, "NVRM: GPU 0000:18:00.0: RmInitAdapter failed! (0x26:0xffff:1481)"));
  CHECK(any_evidence(*f, "rm_init_adapter failed, device minor number 0"));
  CHECK(contains(f->remedy, "IOMMU"));
  CHECK_FALSE(gpu(r.assessment, "0000:18:00.0").usable);
  CHECK(finding(r.assessment, "gpu.too-few-usable"));
}

// RmInitAdapter 0x26 whole: the same boot's BAR lines are the evidence, and in a VM (cpuinfo's
// hypervisor flag) the likely cause is the pass-through not mapping the BAR.
TEST_CASE("fixture: RmInitAdapter 0x26 in a VM names the unmapped BAR as the likely cause") {
  const auto r = check_fixture("log-rminit-0x26-vm-bar");
  CHECK(r.assessment.verdict == Verdict::fail);
  const auto* f = finding(r.assessment, "rminit.adapter-failed");
  REQUIRE(f);
  CHECK(f->gpu == "0000:18:00.0");
  CHECK(any_evidence(*f, "RmInitAdapter failed! (0x26:0xffff:1481)"));
  CHECK(
      any_evidence(*f, "pci 0000:18:00.0: BAR 1: no space for [mem size 0x4000000000 64bit pref]"));
  CHECK(any_evidence(*f, "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:18:00.0)"));
  CHECK(contains(f->message, "likely cause: the hypervisor's PCI pass-through did not map"));
  CHECK(contains(f->remedy, "stop and start"));
  CHECK_FALSE(contains(f->remedy, "Above 4G"));
}

// On bare metal with only an IOMMU fault: the IOMMU is the likely cause; a DMAR fault naming
// another PCI device (a NIC) is neither evidence here nor a "GPU missing from the driver".
TEST_CASE("fixture: RmInitAdapter 0x26 on bare metal with a DMAR fault names the IOMMU") {
  const auto r = check_fixture("log-rminit-0x26-iommu");
  const auto* f = finding(r.assessment, "rminit.adapter-failed");
  REQUIRE(f);
  CHECK(any_evidence(*f, "Request device [18:00.0] fault addr 0xfffff000"));
  CHECK_FALSE(any_evidence(*f, "[5e:00.0]"));
  CHECK(contains(f->message, "likely cause: the IOMMU blocked the GPU's DMA"));
  CHECK(contains(f->remedy, "iommu=pt"));
  CHECK_FALSE(finding(r.assessment, "log.gpu-missing-from-driver"));
  REQUIRE(r.facts.log.gpu_events.count("0000:5e:00.0") == 1);
  CHECK(r.facts.log.gpu_events.at("0000:5e:00.0").front().kind == LogEventKind::dma_setup);
}

// The same BAR lines on bare metal point at the firmware.
TEST_CASE("RmInitAdapter with an unassigned BAR on bare metal: Above 4G decoding") {
  Facts f;
  f.driver.loaded = true;
  GpuFacts g;
  g.bus_id = "0000:18:00.0";
  g.device_minor = 0;
  f.gpus.push_back(g);
  f.topology.iommu.hypervisor = false;
  f.log =
      scan_kernel_log(dmesg({"pci 0000:18:00.0: BAR 1: no space for [mem size 0x4000000000 "
                             "64bit pref]",
                             "NVRM: GPU 0000:18:00.0: RmInitAdapter failed! (0x26:0xffff:1481)"}));
  const auto a = assess(f, test::kernel_log_rules(), {});
  const auto* hit = finding(a, "rminit.adapter-failed");
  REQUIRE(hit);
  CHECK(contains(hit->message, "firmware did not place the GPU's large BAR (bare metal)"));
  CHECK(contains(hit->remedy, "Above 4G decoding"));
  CHECK(any_evidence(*hit, "BAR 1: no space for"));
}
