// The log rules: the real pipeline (collect_facts + assess) on the log-* fixture snapshots, and
// each rule row on facts built from inline logs.
#include "gpf/knowledge/xid_catalog.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::Checked;
using gpf::test::finding;
using gpf::test::findings;

namespace {

bool has_warn_or_fail(const Assessment& a) {
  return std::any_of(a.findings.begin(), a.findings.end(),
                     [](const Finding& f) { return f.severity != Severity::info; });
}

bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

bool any_evidence(const Finding& f, std::string_view part) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return contains(e, part); });
}

const GpuAssessment& gpu(const Assessment& a, std::string_view bus) {
  const auto it = std::find_if(a.gpus.begin(), a.gpus.end(),
                               [&](const GpuAssessment& g) { return g.bus_id == bus; });
  REQUIRE(it != a.gpus.end());
  return *it;
}

const char* const k_buses[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"};

// Facts of a host with n GPUs whose kernel log is `log`; only the log rules judge them.
Checked judge_log(const std::string& log, int n_gpus = 2) {
  Facts f;
  f.driver.loaded = true;
  f.driver.version_text = "550.54.14";
  for (int i = 0; i < n_gpus; ++i) {
    GpuFacts g;
    g.bus_id = k_buses[i];
    g.uuid = fmt::format("GPU-{:08x}-1111", i);
    g.device_minor = static_cast<unsigned>(i);
    f.gpus.push_back(g);
  }
  f.log = scan_kernel_log(log);
  f.log.source = "test.log";
  Checked c{f, {}};
  c.assessment = assess(c.facts, test::kernel_log_rules(), {});
  return c;
}

std::string dmesg(std::initializer_list<std::string> messages) {
  std::string out;
  double t = 100;
  for (const auto& m : messages) {
    out += fmt::format("[{:12.6f}] {}\n", t, m);
    t += 1.5;
  }
  return out;
}

const std::string k_loading =
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (b@h)  2024";

} // namespace

TEST_CASE("fixture: Xid 79 on one of 8 GPUs drops that GPU only (warn)") {
  const auto r = check_fixture("log-xid79-one-of-8");
  CHECK(r.assessment.verdict == Verdict::warn);
  const auto* f = finding(r.assessment, "gpu.fallen-off-bus");
  REQUIRE(f);
  CHECK(f->gpu == "0000:5d:00.0");
  CHECK(f->severity == Severity::fail);
  CHECK(contains(f->message, "GPU 3 (0000:5d:00.0, NVIDIA H100 80GB HBM3)"));
  CHECK(contains(f->message, "Xid 79"));
  CHECK(any_evidence(
      *f,
      "NVRM: Xid (PCI:0000:5d:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."));
  CHECK(any_evidence(*f, "NVRM: GPU 0000:5d:00.0: GPU has fallen off the bus."));
  CHECK(contains(f->remedy, "reboot"));
  CHECK_FALSE(gpu(r.assessment, "0000:5d:00.0").usable);
  CHECK(gpu(r.assessment, "0000:5d:00.0").reasons ==
        std::vector<std::string>{"gpu.fallen-off-bus"});
  CHECK(r.assessment.usable_count() == 7);
  CHECK(r.assessment.recommendation.cuda_visible_devices == "0,1,2,4,5,6,7");
  CHECK(findings(r.assessment, "xid.reset-required").empty()); // the Xid 79 is not reported twice
  CHECK(r.facts.log.boundary->kind == BootBoundaryKind::linux_version);
}

TEST_CASE("fixture: the only GPU fell off the bus (fail)") {
  const auto r = check_fixture("log-only-gpu-fallen-off");
  CHECK(r.assessment.verdict == Verdict::fail);
  const auto* f = finding(r.assessment, "gpu.fallen-off-bus");
  REQUIRE(f);
  CHECK(f->gpu == "0000:18:00.0");
  CHECK(any_evidence(*f, "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."));
  CHECK(finding(r.assessment, "gpu.too-few-usable"));
  CHECK(finding(r.assessment, "gpu.crash-dump")->severity == Severity::warn);
  CHECK(r.assessment.recommendation.cuda_visible_devices.empty());
}

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

TEST_CASE("fixture: API mismatch fails the host with both versions in the evidence") {
  const auto r = check_fixture("log-api-mismatch");
  CHECK(r.assessment.verdict == Verdict::fail);
  const auto* f = finding(r.assessment, "driver.api-mismatch");
  REQUIRE(f);
  CHECK(f->severity == Severity::fail);
  CHECK_FALSE(f->gpu);
  CHECK(contains(f->message, "version 550.67 but the loaded kernel module has version 550.54.14"));
  CHECK(contains(f->message, "2 times"));
  CHECK(any_evidence(*f, "NVRM: API mismatch: the client has the version 550.67, but"));
  CHECK(any_evidence(*f, "NVRM: this kernel module has the version 550.54.14.  Please"));
  CHECK(any_evidence(*f, "/proc/driver/nvidia/version: NVRM version:"));
}

TEST_CASE("fixture: an earlier boot's Xid 48 does not count against a clean current boot") {
  const auto r = check_fixture("log-earlier-boot-xid48");
  CHECK(r.assessment.verdict == Verdict::pass);
  CHECK_FALSE(has_warn_or_fail(r.assessment));
  const auto* f = finding(r.assessment, "log.earlier-boot");
  REQUIRE(f);
  CHECK(f->severity == Severity::info);
  CHECK(contains(f->message, "Xid 48 on 0000:2a:00.0"));
  CHECK(any_evidence(*f, "NVRM: Xid (PCI:0000:2a:00): 48"));
  CHECK(r.assessment.usable_count() == 4);
  CHECK(r.facts.log.boots_seen == 2);
  CHECK(r.facts.log.gpu_events.empty());
}

TEST_CASE("fixture: a kernel log that cannot be read warns, never passes") {
  const auto r = check_fixture("log-not-readable");
  CHECK(r.assessment.verdict == Verdict::warn);
  const auto* f = finding(r.assessment, "log.not-readable");
  REQUIRE(f);
  CHECK(f->severity == Severity::warn);
  CHECK(any_evidence(*f, "Permission denied"));
  // Every source tried is named: the ring buffer's error and the absent journal and syslog files.
  CHECK(any_evidence(*f, "dmesg.txt: Permission denied"));
  CHECK(any_evidence(*f, "systemd journal (var/log/journal, run/log/journal): not present"));
  CHECK(any_evidence(*f, "var/log/kern.log: not present"));
  CHECK(any_evidence(*f, "var/log/syslog: not present"));
  // The remedy is a group to join or a rule to disable, never a host-wide sysctl.
  CHECK(contains(f->remedy, "systemd-journal"));
  CHECK(contains(f->remedy, "--disable log.not-readable"));
  CHECK_FALSE(contains(f->remedy, "sysctl"));
  const auto* probe = r.facts.probe("kernel-log");
  REQUIRE(probe);
  CHECK(probe->state == ProbeState::error);
  CHECK(contains(probe->message, "Permission denied"));
}

// Info only when NVML answered for every GPU, or CUDA passed every one; warn when any went unseen.
TEST_CASE("log.not-readable is info when NVML answered or CUDA passed every GPU, warn otherwise") {
  Facts f;
  f.driver.loaded = true;
  for (int i = 0; i < 2; ++i) {
    GpuFacts g;
    g.bus_id = k_buses[i];
    f.gpus.push_back(g);
  }
  f.log.read_error = "/dev/kmsg: Operation not permitted; klogctl: Operation not permitted";
  f.log.sources = {{"/dev/kmsg, klogctl", "error", f.log.read_error},
                   {"systemd journal", "error",
                    "systemd journal: Permission denied (no system journal file is readable by "
                    "this user)"},
                   {"/var/log/kern.log", "error", "/var/log/kern.log: Permission denied"}};
  const auto severity = [](const Facts& facts) {
    const auto a = assess(facts, test::kernel_log_rules(), {});
    const auto* hit = finding(a, "log.not-readable");
    REQUIRE(hit);
    CHECK(any_evidence(*hit, "systemd journal: Permission denied"));
    CHECK(any_evidence(*hit, "/var/log/kern.log: Permission denied"));
    return hit->severity;
  };
  CHECK(severity(f) == Severity::warn); // CUDA never ran
  // the remedy names the user who ran the check, where the environment says
  CHECK_THAT(finding(assess(f, test::kernel_log_rules(), {}), "log.not-readable")->remedy,
             Catch::Contains("`usermod -aG systemd-journal USER`"));
  f.env = Environment(std::map<std::string, std::string>{{"USER", "alice"}});
  CHECK_THAT(finding(assess(f, test::kernel_log_rules(), {}), "log.not-readable")->remedy,
             Catch::Contains("`usermod -aG systemd-journal alice`"));

  f.cuda.ran = true;
  f.cuda.enumeration_complete = true;
  for (int i = 0; i < 2; ++i) {
    CudaDevice d;
    d.index = i;
    d.bus_id = k_buses[i];
    d.usable = true;
    f.cuda.devices.push_back(d);
  }
  CHECK(severity(f) == Severity::info);

  f.cuda.devices[1].usable = false; // one GPU failed its CUDA start-up
  CHECK(severity(f) == Severity::warn);
  f.cuda.devices[1].usable = true;

  f.cuda.devices.pop_back(); // one GPU CUDA did not see
  CHECK(severity(f) == Severity::warn);
  CudaDevice back;
  back.index = 1;
  back.bus_id = k_buses[1];
  back.usable = true;
  f.cuda.devices.push_back(back);

  f.nvml.ran = true; // NVML ran but could not start
  f.nvml.init_code = 999;
  CHECK(severity(f) == Severity::warn);

  // NVML answering for every GPU judges their health on its own: an ordinary user's --no-cuda
  // check (kernel.dmesg_restrict=1) is not blocked by --strict.
  f.cuda = {};
  f.nvml.init_code = 0;
  for (int i = 0; i < 2; ++i) {
    NvmlGpu n;
    n.bus_id = k_buses[i];
    f.nvml.gpus.push_back(n);
  }
  CHECK(severity(f) == Severity::info);
  f.nvml.gpus[1].child_error = "killed"; // one GPU NVML could not answer for
  CHECK(severity(f) == Severity::warn);
}

TEST_CASE("fixture: a GPU the driver does not list is a warning with the log's evidence") {
  const auto r = check_fixture("log-gpu-missing-from-driver");
  CHECK(r.assessment.verdict == Verdict::warn);
  const auto* f = finding(r.assessment, "log.gpu-missing-from-driver");
  REQUIRE(f);
  CHECK(f->gpu == "0000:9a:00.0");
  CHECK(contains(f->message, "not supported by the installed driver release 550.54.14"));
  CHECK(any_evidence(*f, "NVRM: The NVIDIA GPU 0000:9a:00.0 (PCI ID: 10de:1db6)"));
  CHECK(any_evidence(*f, "nvidia: probe of 0000:9a:00.0 failed with error -1"));
  CHECK(f->remedy == find_rule("gpu.not-supported")->remedy);
  CHECK(r.assessment.usable_count() == 2);
}

TEST_CASE("fixtures without a dmesg.txt skip the kernel-log probe") {
  const auto r = check_fixture("healthy-4gpu");
  const auto* probe = r.facts.probe("kernel-log");
  REQUIRE(probe);
  CHECK(probe->state == ProbeState::skipped);
  CHECK_FALSE(r.facts.log.ran);
  CHECK_FALSE(finding(r.assessment, "log.not-readable"));
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

TEST_CASE("earlier-boot events never warn, fail or drop a GPU, whatever they are") {
  const auto r =
      judge_log(dmesg({"NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.",
                       "NVRM: GPU 0000:2a:00.0: RmInitAdapter failed! (0x26:0xffff:1481)",
                       "NVRM: API mismatch: the client has the version 550.67, but",
                       "Linux version 5.15.0 (b@h) #1 SMP"}));
  CHECK_FALSE(has_warn_or_fail(r.assessment));
  CHECK(r.assessment.usable_count() == 2);
  CHECK(finding(r.assessment, "log.earlier-boot"));
}

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
