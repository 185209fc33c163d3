// The driver.* rows (src/rules/driver.cpp): an API mismatch in a fixture's kernel log; kernel
// modules and libraries of another version, end of life and a driver newer than the data on facts
// built in code.
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/compat_rule_facts.hpp"
#include "support/log_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using namespace gpf::test::compat_rule_facts;
using namespace gpf::test::log_rule_facts;

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

TEST_CASE("a kernel module of another version than the driver fails") {
  auto f = host_with("5.15.0-91-generic", "550.54.14", DriverFlavour::open, {});
  f.compat.modules.push_back(
      {"nvidia", "/sys/module/nvidia/version", v("550.54.14"), "550.54.14", {}});
  f.compat.modules.push_back(
      {"nvidia_uvm", "/sys/module/nvidia_uvm/version", v("550.90.07"), "550.90.07", {}});
  f.compat.modules.push_back(
      {"nvidia_modeset", "/sys/module/nvidia_modeset/version", std::nullopt, "", "unreadable"});
  const auto hits = findings(f, "driver.module-version-mismatch");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("nvidia_uvm is version 550.90.07") != std::string::npos);
  CHECK(hits[0].evidence[0] == "/sys/module/nvidia_uvm/version: 550.90.07");
}

TEST_CASE("driver end of life: judged against the recorded date only") {
  using namespace std::chrono;
  auto f = host_with("6.8.0-45-generic", "535.104.05", DriverFlavour::open, {});
  CHECK(findings(f, "driver.end-of-life").empty()); // no date: not judged
  f.compat.today = year(2026) / June / 30;
  CHECK(findings(f, "driver.end-of-life").empty());
  f.compat.today = year(2026) / July / 1;
  CHECK(findings(f, "driver.end-of-life").size() == 1);
  f = host_with("6.8.0-45-generic", "550.54.14", DriverFlavour::open,
                {}); // not in the lifecycle table
  f.compat.today = year(2030) / January / 1;
  CHECK(findings(f, "driver.end-of-life").empty());
}

TEST_CASE("library checks: unversioned names are not checked - a missing libcuda fails only live") {
  auto f = host_with("6.8.0-45-generic", "550.54.14", DriverFlavour::open, {});
  f.compat.libcuda.soname = "libcuda.so.1";
  f.compat.libcuda.path = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  f.compat.libcuda.via = "default directory";
  CHECK(findings(f, "driver.libraries-not-checked").size() == 1);
  CHECK(findings(f, "driver.library-version-mismatch").empty());

  auto live = host_with("6.8.0-45-generic", "550.54.14", DriverFlavour::open, {});
  live.compat.snapshot = false;
  live.compat.libcuda.soname = "libcuda.so.1";
  live.compat.libcuda.searched.push_back(
      {"/usr/lib/x86_64-linux-gnu", "default directory", "not present"});
  REQUIRE(findings(live, "driver.libcuda-not-found").size() == 1);
  CHECK(findings(live, "driver.libcuda-not-found")[0].evidence[0] ==
        "/usr/lib/x86_64-linux-gnu (default directory): not present");
  live.compat.snapshot = true;
  CHECK(findings(live, "driver.libcuda-not-found").empty());
}

TEST_CASE(
    "newer than the data: a driver branch, a compute capability - and the edges just inside") {
  auto f = host_with("6.8.0-45-generic", "690.12.03", DriverFlavour::open, {"NVIDIA Future GPU"});
  REQUIRE(findings(f, "driver.newer-than-data").size() == 1);
  CHECK(findings(f, "driver.newer-than-data")[0].message.find(
            "not judged: driver branch R690 is newer than the data of 2026-11 (which knows up to "
            "R620)") != std::string::npos);
  f.driver.version = v("620.10.02"); // the newest branch the data knows
  CHECK(findings(f, "driver.newer-than-data").empty());
  f.driver.version = v("615.71.09"); // a New Feature Branch: known, no end-of-life date
  CHECK(findings(f, "driver.newer-than-data").empty());
  f.compat.today = std::chrono::year(2035) / std::chrono::January / 1;
  CHECK(findings(f, "driver.end-of-life").empty());

  f.cuda.ran = true;
  CudaDevice d;
  d.index = 0;
  d.bus_id = "0000:00:00.0";
  d.cc_major = 14;
  d.cc_minor = 0;
  f.cuda.devices = {d};
  expect(f, "13.4");
  auto hits = findings(f, "gpu.newer-than-data");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].gpu == "0000:00:00.0");
  CHECK(hits[0].message.find("not judged: compute capability 14.0 is newer than the data of "
                             "2026-11 (which knows up to compute capability 12.1)") !=
        std::string::npos);
  CHECK(findings(f, "gpu.cuda-arch-unsupported").empty()); // not guessed
  // Rubin (10.7) is known: CUDA 13.4 targets it, 13.2 does not yet
  f.cuda.devices[0].cc_major = 10;
  f.cuda.devices[0].cc_minor = 7;
  CHECK(findings(f, "gpu.newer-than-data").empty());
  CHECK(findings(f, "gpu.cuda-arch-unsupported").empty());
  expect(f, "13.2");
  hits = findings(f, "gpu.cuda-arch-unsupported");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("does not yet target compute capability 10.7 (Rubin; first toolkit "
                             "13.4)") != std::string::npos);
  CHECK(hits[0].severity == Severity::warn); // PTX JIT may still run it
  CHECK(hits[0].effect == Effect::none);
  // a toolkit that dropped the architecture cannot hold code for it in any form
  f.cuda.devices[0].cc_major = 7;
  f.cuda.devices[0].cc_minor = 0;
  expect(f, "13.0");
  hits = findings(f, "gpu.cuda-arch-unsupported");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::fail);
  CHECK(hits[0].effect == Effect::gpu_unusable);
}
