// The log.* rows (src/rules/log.cpp) on fixture snapshots and inline logs: a kernel log that
// cannot be read, earlier boots, a GPU the driver does not list.
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/log_rule_facts.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using namespace gpf::test::log_rule_facts;

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
