// The xid.* rows (src/rules/xid.cpp) on fixture snapshots and inline logs: every log row's
// finding, recovery actions, the line's own severity word, NVIDIA's catalog, and an old Xid
// weighed against the GPU's state now.
#include "gpf/knowledge/xid_catalog.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/log_rule_facts.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <functional>
#include <set>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using gpf::test::findings;
using namespace gpf::test::log_rule_facts;

TEST_CASE("fixture: application-level Xids 13/31/43/45 only (pass)") {
  const auto r = check_fixture("log-app-xids");
  CHECK(r.assessment.verdict == Verdict::pass);
  CHECK_FALSE(has_warn_or_fail(r.assessment));
  const auto app = findings(r.assessment, "xid.application");
  REQUIRE(app.size() == 2);
  std::set<unsigned> xids;
  for (const auto& [bus, events] : r.facts.log.gpu_events) {
    for (const auto& e : events) {
      xids.insert(*e.xid);
    }
  }
  CHECK(xids == std::set<unsigned>{13, 31, 43, 45});
  CHECK(r.assessment.usable_count() == 4);
  CHECK(any_evidence(*app[0], "name=python3"));
}

TEST_CASE("Xid 154's recovery action decides for its GPU") {
  const std::string x48 = "NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=a, DBE";
  const auto x154 = [](std::string_view action) {
    return fmt::format(
        "NVRM: Xid (PCI:0000:2a:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 ({})",
        action);
  };
  {
    const auto r = judge_log(dmesg({x48, x154("GPU Reset Required")}));
    const auto* f = finding(r.assessment, "xid.recovery-action");
    REQUIRE(f);
    CHECK(f->severity == Severity::fail);
    CHECK_FALSE(gpu(r.assessment, "0000:2a:00.0").usable);
    CHECK(finding(r.assessment, "xid.reset-required")->severity == Severity::info);
  }
  {
    const auto r = judge_log(dmesg({x48, x154("None")}));
    CHECK(finding(r.assessment, "xid.recovery-action")->severity == Severity::info);
    CHECK(gpu(r.assessment, "0000:2a:00.0").usable);
    CHECK_FALSE(has_warn_or_fail(r.assessment));
  }
  {
    const auto r = judge_log(dmesg({x48, x154("Drain P2P")}));
    CHECK(finding(r.assessment, "xid.recovery-action")->severity == Severity::warn);
    CHECK(gpu(r.assessment, "0000:2a:00.0").usable);
  }
  {
    // a reset-class Xid after the last 154 is judged on its own again
    const auto r = judge_log(dmesg({x154("None"), x48}));
    CHECK(finding(r.assessment, "xid.reset-required")->severity == Severity::fail);
    CHECK_FALSE(gpu(r.assessment, "0000:2a:00.0").usable);
  }
}

TEST_CASE("a driver reload after a reset-class Xid clears it; fallen off the bus stays") {
  const auto cleared = judge_log(
      dmesg({k_loading, "NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=a, DBE", k_loading}));
  CHECK(finding(cleared.assessment, "xid.reset-required")->severity == Severity::info);
  CHECK(gpu(cleared.assessment, "0000:2a:00.0").usable);
  const auto again =
      judge_log(dmesg({k_loading, "NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=a, DBE", k_loading,
                       "NVRM: Xid (PCI:0000:2a:00): 48, pid=2, name=b, DBE"}));
  CHECK(findings(again.assessment, "xid.reset-required").size() == 2);
  CHECK_FALSE(gpu(again.assessment, "0000:2a:00.0").usable);
  const auto off = judge_log(
      dmesg({k_loading, "NVRM: Xid (PCI:0000:2a:00): 79, GPU has fallen off the bus.", k_loading}));
  CHECK(finding(off.assessment, "gpu.fallen-off-bus")->severity == Severity::fail);
  CHECK_FALSE(gpu(off.assessment, "0000:2a:00.0").usable);
}

TEST_CASE("every log rule row fires on its input") {
  struct RowCase {
    std::string id;
    std::string log;
    Severity severity;
    std::optional<std::string> dropped; // the GPU made unusable
  };
  const std::vector<RowCase> cases{
      {"xid.reset-required",
       dmesg({"NVRM: Xid (PCI:0000:18:00): 119, Timeout after 6s of waiting for RPC response"}),
       Severity::fail, "0000:18:00.0"},
      {"xid.reboot-required", dmesg({"NVRM: Xid (PCI:0000:18:00): 110, pid=1, name=a, SEC fault"}),
       Severity::fail, "0000:18:00.0"},
      {"xid.update-required", dmesg({"NVRM: Xid (PCI:0000:18:00): 78, vGPU start failed"}),
       Severity::fail, "0000:18:00.0"},
      {"xid.warning",
       dmesg({"NVRM: Xid (PCI:0000:18:00): 63, pid=1, Row Remapper: New row marked for remapping"}),
       Severity::warn, std::nullopt},
      {"xid.application", dmesg({"NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=a, x"}),
       Severity::info, std::nullopt},
      {"xid.informational", dmesg({"NVRM: Xid (PCI:0000:18:00): 93, x"}), Severity::info,
       std::nullopt},
      {"xid.unknown", dmesg({"NVRM: Xid (PCI:0000:18:00): 250, something new"}), Severity::warn,
       std::nullopt},
      {"xid.recovery-action",
       dmesg(
           {"NVRM: Xid (PCI:0000:18:00): 154, GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"}),
       Severity::fail, "0000:18:00.0"},
      {"rminit.adapter-failed",
       dmesg({"NVRM: GPU 0000:18:00.0: RmInitAdapter failed! (0x62:0x65:2097)"}), Severity::fail,
       "0000:18:00.0"},
      {"rminit.adapter-failed",
       dmesg({"NVRM: rm_init_adapter failed for device bearing minor number 1"}), Severity::fail,
       "0000:2a:00.0"},
      {"gpu.fallen-off-bus", dmesg({"NVRM: GPU at PCI:0000:18:00: GPU has fallen off the bus."}),
       Severity::fail, "0000:18:00.0"},
      {"gpu.bar-invalid",
       dmesg({"NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:",
              "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:18:00.0)"}),
       Severity::fail, "0000:18:00.0"},
      {"gpu.not-supported",
       dmesg({"NVRM: The NVIDIA GPU 0000:18:00.0 (PCI ID: 10de:2330)",
              "NVRM: installed in this system is not supported by the",
              "NVRM: NVIDIA 535.54.03 driver release."}),
       Severity::fail, "0000:18:00.0"},
      {"gpu.not-supported-open-module",
       dmesg({"NVRM: The NVIDIA GPU 0000:18:00.0 (PCI ID: 10de:1db6)",
              "NVRM: installed in this system is not supported by open",
              "NVRM: nvidia.ko because it does not include the required GPU",
              "NVRM: System Processor (GSP)."}),
       Severity::fail, "0000:18:00.0"},
      {"gpu.power-cables",
       dmesg({"NVRM: GPU 0000:18:00.0: GPU does not have the necessary power cables connected."}),
       Severity::fail, "0000:18:00.0"},
      {"gpu.power-cables", dmesg({"NVRM: Xid (PCI:0000:18:00): 54, pid=1, name=a, aux power"}),
       Severity::fail, "0000:18:00.0"},
      {"gsp.firmware-load-failed",
       dmesg(
           {"nvidia 0000:18:00.0: Direct firmware load for nvidia/550.54.14/gsp_ga10x.bin failed with error -2"}),
       Severity::fail, "0000:18:00.0"},
      {"gsp.firmware-load-failed",
       dmesg({"NVRM: RmInitAdapter: Cannot initialize GSP firmware RM"}), Severity::warn,
       std::nullopt},
      {"driver.api-mismatch",
       dmesg({"NVRM: API mismatch: the client has the version 535.86.05, but",
              "NVRM: this kernel module has the version 535.54.03.  Please"}),
       Severity::info, std::nullopt}, // the loaded module is 550.54.14 now: reloaded since
      {"driver.probe-not-called",
       dmesg({"NVRM: The NVIDIA probe routine was not called for 1 device(s)."}), Severity::warn,
       std::nullopt},
      {"driver.probe-failed", dmesg({"NVRM: The NVIDIA probe routine failed for 1 device(s)."}),
       Severity::warn, std::nullopt},
      {"driver.no-gpu-initialized", dmesg({"NVRM: None of the NVIDIA devices were initialized."}),
       Severity::warn, std::nullopt},
      {"gpu.crash-dump",
       dmesg({"NVRM: A GPU crash dump has been created. If possible, please run"}), Severity::warn,
       std::nullopt},
      {"log.gpu-missing-from-driver", dmesg({"nouveau 0000:9a:00.0: DRM: VRAM: 8192 MiB"}),
       Severity::warn, std::nullopt},
      {"log.earlier-boot",
       dmesg({"NVRM: Xid (PCI:0000:18:00): 48, x", "Linux version 5.15.0 (b@h) #1 SMP"}),
       Severity::info, std::nullopt},
      {"log.damaged-input", std::string("[    1.000000] a\0b\n", 19), Severity::info, std::nullopt},
  };
  std::set<std::string> seen;
  for (const auto& c : cases) {
    INFO(c.id << "\n" << c.log);
    const auto r = judge_log(c.log);
    const auto* f = finding(r.assessment, c.id);
    REQUIRE(f);
    CHECK(f->severity == c.severity);
    CHECK_FALSE(f->evidence.empty());
    CHECK_FALSE(f->remedy.empty());
    if (c.dropped) {
      CHECK(f->gpu == *c.dropped);
      CHECK_FALSE(gpu(r.assessment, *c.dropped).usable);
    } else {
      CHECK(r.assessment.usable_count() == 2);
    }
    seen.insert(c.id);
  }
  for (const auto& rule : test::kernel_log_rules()) {
    if (rule.id != "log.not-readable") { // covered by the fixture above
      INFO(rule.id);
      CHECK(seen.count(std::string(rule.id)) == 1);
    }
  }
}

// Issue 29's repros: NVIDIA's catalogs, whole, and the line's own severity word.
TEST_CASE("Xids 144-150 follow the line's Fatal / Nonfatal word unless an Xid 154 follows") {
  const std::string fatal = "NVRM: Xid (PCI:0000:2a:00): 149, NETIR Fatal XC0 i0 Link -1 "
                            "(0x004e7004 0x00000002 0x00000000 0x00000000 0x00000000 0x00000000)";
  const std::string nonfatal = "NVRM: Xid (PCI:0000:2a:00): 145, RLW_RXPIPE Nonfatal XC0 i0 Link "
                               "13 (0x00000000 0x00000000 0x00000000 0x00000000)";
  {
    const auto r = judge_log(dmesg({fatal}));
    const auto* f = finding(r.assessment, "xid.reset-required");
    REQUIRE(f);
    CHECK(f->severity == Severity::fail);
    CHECK(contains(f->message, "the line says Fatal"));
    CHECK_FALSE(gpu(r.assessment, "0000:2a:00.0").usable);
  }
  {
    const auto r = judge_log(dmesg({nonfatal}));
    REQUIRE(finding(r.assessment, "xid.warning"));
    CHECK_FALSE(finding(r.assessment, "xid.reset-required"));
    CHECK(gpu(r.assessment, "0000:2a:00.0").usable);
  }
  {
    const auto r = judge_log(dmesg(
        {fatal,
         "NVRM: Xid (PCI:0000:2a:00): 154, GPU recovery action changed from 0x0 (None) to 0x0 "
         "(None)"}));
    CHECK(finding(r.assessment, "xid.reset-required")->severity == Severity::info);
    CHECK(gpu(r.assessment, "0000:2a:00.0").usable);
  }
}

TEST_CASE("Xids 155/156 need a reset, 110 a reboot (the stated choice), 56-58 warn, and codes "
          "NVIDIA resolves by restarting the application no longer warn") {
  for (unsigned x : {155u, 156u}) {
    INFO(x);
    const auto r = judge_log(dmesg({fmt::format("NVRM: Xid (PCI:0000:2a:00): {}, text", x)}));
    REQUIRE(finding(r.assessment, "xid.reset-required"));
    CHECK_FALSE(gpu(r.assessment, "0000:2a:00.0").usable);
  }
  {
    const auto r = judge_log(dmesg({"NVRM: Xid (PCI:0000:2a:00): 110, pid=1, name=a, Security "
                                    "fault, please cold reset the system"}));
    REQUIRE(finding(r.assessment, "xid.reboot-required"));
    const XidInfo* row = find_xid(110);
    CHECK(row->immediate == "RESET_GPU");
    CHECK(contains(std::string(row->note), "cold reset"));
  }
  for (unsigned x : {56u, 57u, 58u}) {
    INFO(x);
    const auto r = judge_log(dmesg({fmt::format("NVRM: Xid (PCI:0000:2a:00): {}, text", x)}));
    const auto* f = finding(r.assessment, "xid.warning");
    REQUIRE(f);
    CHECK(f->severity == Severity::warn);
  }
  for (unsigned x : {25u, 60u, 82u, 96u, 105u, 139u, 14u, 66u, 106u, 142u, 166u, 170u}) {
    INFO(x);
    const auto r = judge_log(dmesg({fmt::format("NVRM: Xid (PCI:0000:2a:00): {}, text", x)}));
    CHECK_FALSE(finding(r.assessment, "xid.unknown"));
  }
  {
    // a code no table lists whose line says Fatal drops the GPU; without a word it warns
    const auto r = judge_log(dmesg({"NVRM: Xid (PCI:0000:2a:00): 199, XYZ Fatal link"}));
    REQUIRE(finding(r.assessment, "xid.reset-required"));
    CHECK(contains(finding(r.assessment, "xid.reset-required")->message, "does not list"));
    const auto w = judge_log(dmesg({"NVRM: Xid (PCI:0000:2a:00): 199, something"}));
    CHECK(finding(w.assessment, "xid.unknown")->severity == Severity::warn);
  }
}

TEST_CASE("an Xid 154 line without the usual recovery-action text is a warning") {
  const auto r =
      judge_log(dmesg({"NVRM: Xid (PCI:0000:2a:00): 154, pid=1, name=a, Reset required"}));
  const auto* f = finding(r.assessment, "xid.recovery-action");
  REQUIRE(f);
  CHECK(f->severity == Severity::warn);
  CHECK(contains(f->message, "does not say which recovery action"));
  CHECK(contains(f->remedy, "0000:2a:00.0"));
}

TEST_CASE("an old reset-class Xid is weighed against the GPU's state now (NVML and CUDA)") {
  const std::string x48 = "NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=a, DBE (0x1)";
  const std::string bus = "0000:2a:00.0";
  // The log's facts, plus NVML and CUDA as they answer now for every GPU.
  const auto judge = [&](const std::function<void(NvmlGpu&, CudaDevice&)>& now) {
    Facts f = judge_log(dmesg({x48})).facts;
    f.nvml.ran = true;
    f.nvml.init_code = 0;
    f.cuda.ran = true;
    f.cuda.enumeration_complete = true;
    for (const auto& g : f.gpus) {
      NvmlGpu n;
      n.bus_id = g.bus_id;
      n.recovery_action = 0;
      n.remap_pending = false;
      n.retired_pages_pending = false;
      n.ecc_volatile_uncorrected = 0;
      n.persistence_mode = true;
      CudaDevice d;
      d.bus_id = g.bus_id;
      d.usable = true;
      if (g.bus_id == bus) {
        now(n, d);
      }
      f.nvml.gpus.push_back(n);
      f.cuda.devices.push_back(d);
    }
    return assess(f, test::kernel_log_rules(), {});
  };
  {
    const auto a = judge([](NvmlGpu&, CudaDevice&) {});
    const auto* f = finding(a, "xid.reset-required");
    REQUIRE(f);
    CHECK(f->severity == Severity::warn);
    CHECK(contains(f->message, "its state now is clean"));
    CHECK(contains(f->message, "was it reset?"));
    CHECK(any_evidence(*f, "DBE (0x1)"));
    CHECK(any_evidence(*f, "NVML 0000:2a:00.0: recovery action 0 (none)"));
    CHECK(any_evidence(*f, "CUDA 0000:2a:00.0: every step passed"));
    CHECK(gpu(a, bus).usable);
  }
  // any of these keeps today's judgement: the GPU is dropped
  const std::vector<std::function<void(NvmlGpu&, CudaDevice&)>> not_clean{
      [](NvmlGpu& n, CudaDevice&) { n.recovery_action = 1; },
      [](NvmlGpu& n, CudaDevice&) { n.remap_pending = true; },
      [](NvmlGpu& n, CudaDevice&) { n.retired_pages_pending = true; },
      [](NvmlGpu& n, CudaDevice&) { n.ecc_volatile_uncorrected = 2; },
      [](NvmlGpu& n, CudaDevice&) { n.persistence_mode = false; }, // volatile counts unreliable
      [](NvmlGpu& n, CudaDevice&) { n.recovery_action.reset(); },
      [](NvmlGpu&, CudaDevice& d) { d.usable = false; }};
  for (std::size_t i = 0; i < not_clean.size(); ++i) {
    INFO(i);
    const auto a = judge(not_clean[i]);
    CHECK(finding(a, "xid.reset-required")->severity == Severity::fail);
    CHECK_FALSE(gpu(a, bus).usable);
  }
  // without NVML and CUDA results the judgement stays as today
  const auto plain = judge_log(dmesg({x48}));
  CHECK(finding(plain.assessment, "xid.reset-required")->severity == Severity::fail);
  CHECK_FALSE(gpu(plain.assessment, bus).usable);
}
