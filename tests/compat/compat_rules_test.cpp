// The compatibility rows on facts built in code: the cases the fixture snapshots do not cover.
#include "gpf/probes/parsers.hpp"
#include "gpf/rules/compat_view.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpf;

namespace {

Version v(const char* text) {
  return *Version::parse(text);
}

Facts host_with(const char* kernel, const char* driver, DriverFlavour flavour,
                std::vector<const char*> models) {
  Facts f;
  f.kernel = parse_kernel_release(kernel);
  f.driver.loaded = true;
  f.driver.version = v(driver);
  f.driver.version_text = driver;
  f.driver.version_source = "proc/driver/nvidia/version";
  f.driver.flavour = flavour;
  f.driver.version_line = std::string("NVRM version: NVIDIA UNIX ") +
                          (flavour == DriverFlavour::open ? "Open Kernel Module for x86_64  "
                                                          : "x86_64 Kernel Module  ") +
                          driver;
  int i = 0;
  for (const char* model : models) {
    GpuFacts g;
    g.bus_id = "0000:" + std::string(i < 10 ? "0" : "") + std::to_string(i) + ":00.0";
    g.model = model;
    f.gpus.push_back(g);
    ++i;
  }
  f.compat.ran = true;
  f.compat.snapshot = true;
  return f;
}

void expect(Facts& f, const char* cuda) {
  f.compat.expected_cuda = ExpectedCuda{v(cuda), cuda, "--expect-cuda"};
}

std::vector<Finding> findings(const Facts& f, const std::string& id) {
  const auto a = assess(f, test::compat_rules(), CheckOptions{});
  std::vector<Finding> out;
  std::copy_if(a.findings.begin(), a.findings.end(), std::back_inserter(out),
               [&](const Finding& x) { return x.id == id; });
  return out;
}

} // namespace

TEST_CASE("kernel below the driver branch's floor fails - gVisor and WSL2 are explained instead") {
  CHECK(findings(host_with("3.10.0-1160.el7.x86_64", "555.42.06", DriverFlavour::open, {}),
                 "kernel.below-driver-floor")
            .size() == 1);
  CHECK(findings(host_with("4.14.336-253.554.amzn2.x86_64", "570.124.06", DriverFlavour::open, {}),
                 "kernel.below-driver-floor")
            .size() == 1);
  CHECK(findings(host_with("4.15.0-213-generic", "555.42.06", DriverFlavour::open, {}),
                 "kernel.below-driver-floor")
            .empty());
  CHECK(findings(host_with("4.18.0-553.el8_10.x86_64", "595.45.04", DriverFlavour::open, {}),
                 "kernel.below-driver-floor")
            .empty());
  CHECK(findings(host_with("3.10.0-1160.el7.x86_64", "550.54.14", DriverFlavour::open, {}),
                 "kernel.below-driver-floor")
            .empty());
  CHECK(findings(host_with("3.10.0-1160.el7.x86_64", "470.82.01", DriverFlavour::proprietary, {}),
                 "kernel.below-driver-floor")
            .empty());
  const auto gvisor = host_with("4.4.0", "555.42.06", DriverFlavour::open, {});
  CHECK(findings(gvisor, "kernel.below-driver-floor").empty());
  CHECK(findings(gvisor, "kernel.release-not-judged").size() == 1);
  const auto wsl =
      host_with("5.15.153.1-microsoft-standard-WSL2", "555.42.06", DriverFlavour::open, {});
  REQUIRE(findings(wsl, "kernel.release-not-judged").size() == 1);
  CHECK(findings(wsl, "kernel.release-not-judged")[0].message.find("WSL2") != std::string::npos);
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

TEST_CASE("GPUs that need the open module are unusable on the proprietary one") {
  auto f = host_with("6.8.0-45-generic", "570.124.06", DriverFlavour::proprietary,
                     {"NVIDIA B200", "NVIDIA GH200 480GB", "NVIDIA H100 80GB HBM3"});
  const auto hits = findings(f, "gpu.needs-open-module");
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].gpu == "0000:00:00.0");
  CHECK(hits[1].gpu == "0000:01:00.0");
  CHECK(hits[0].effect == Effect::gpu_unusable);
  f.driver.flavour = DriverFlavour::open;
  CHECK(findings(f, "gpu.needs-open-module").empty());
  CHECK(findings(f, "gpu.open-module-unsupported").empty());
}

TEST_CASE("driver branch too old for a new architecture, too new for a legacy one") {
  auto f = host_with("6.8.0-45-generic", "535.183.01", DriverFlavour::open,
                     {"NVIDIA B200", "NVIDIA H100 PCIe", "Tesla K80"});
  auto hits = findings(f, "gpu.driver-branch-unsupported");
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].message.find("R535 predates support for it (R570 or newer needed)") !=
        std::string::npos);
  CHECK(hits[1].message.find("R535 no longer supports it (R470 was the last") != std::string::npos);
  // B300: the product row raises the architecture's R570 to R580.
  f = host_with("6.8.0-45-generic", "575.57.08", DriverFlavour::open, {"NVIDIA B300"});
  REQUIRE(findings(f, "gpu.driver-branch-unsupported").size() == 1);
  f = host_with("6.8.0-45-generic", "580.65.06", DriverFlavour::open, {"NVIDIA B300"});
  CHECK(findings(f, "gpu.driver-branch-unsupported").empty());
  // Volta: R580 is the last branch (at it: fine; one branch later: unusable).
  f = host_with("6.8.0-45-generic", "580.95.05", DriverFlavour::proprietary,
                {"Tesla V100-SXM2-32GB"});
  CHECK(findings(f, "gpu.driver-branch-unsupported").empty());
  f = host_with("6.8.0-45-generic", "590.44.01", DriverFlavour::proprietary,
                {"Tesla V100-SXM2-32GB"});
  CHECK(findings(f, "gpu.driver-branch-unsupported").size() == 1);
}

TEST_CASE("the CUDA probe's compute capability wins over the model name") {
  auto f = host_with("6.8.0-45-generic", "580.65.06", DriverFlavour::proprietary,
                     {"Tesla V100-SXM2-16GB", "NVIDIA Mystery GPU"});
  expect(f, "13.0");
  f.cuda.ran = true;
  CudaDevice d0;
  d0.index = 0;
  d0.bus_id = "00000000:00:00.0";
  d0.cc_major = 9;
  d0.cc_minor = 0;
  CudaDevice d1;
  d1.index = 1;
  d1.bus_id = "0000:01:00.0";
  d1.cc_major = 6;
  d1.cc_minor = 1;
  f.cuda.devices = {d0, d1};
  const auto hits = findings(f, "gpu.cuda-arch-unsupported");
  REQUIRE(hits.size() ==
          1); // the "V100" reports 9.0 through CUDA: targeted; the unknown model is a 6.1 Pascal
  CHECK(hits[0].gpu == "0000:01:00.0");
  CHECK(hits[0].evidence[1] == "CUDA device 1 (0000:01:00.0): compute capability 6.1");
  CHECK(findings(f, "gpu.model-not-in-matrix").empty());
}

TEST_CASE("a GPU of unknown architecture is reported, not silently passed") {
  auto f = host_with("6.8.0-45-generic", "580.65.06", DriverFlavour::open, {"NVIDIA Mystery GPU"});
  expect(f, "13.0");
  const auto hits = findings(f, "gpu.model-not-in-matrix");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::info);
  CHECK(hits[0].evidence[0] ==
        "/proc/driver/nvidia/gpus/0000:00:00.0/information: Model: NVIDIA Mystery GPU");
}

TEST_CASE(
    "WSL2: the job's CUDA is judged against cuDriverGetVersion when no driver version is known") {
  Facts f;
  f.kernel = parse_kernel_release("5.15.153.1-microsoft-standard-WSL2");
  f.compat.ran = true;
  f.cuda.ran = true;
  f.cuda.driver_version = 12020;
  expect(f, "12.4");
  CHECK(findings(f, "cuda.minor-version-compat").size() == 1);
  expect(f, "12.2");
  CHECK(findings(f, "cuda.minor-version-compat").empty());
  CHECK(findings(f, "cuda.driver-too-old").empty());
  expect(f, "13.0");
  REQUIRE(findings(f, "cuda.driver-too-old").size() == 1);
  CHECK(findings(f, "cuda.driver-too-old")[0].evidence[1] == "cuDriverGetVersion: 12020");
}

TEST_CASE(
    "forward compatibility on a GeForce GPU is unusable - a compat libcuda older than the driver fails") {
  auto f = host_with("6.8.0-45-generic", "535.104.05", DriverFlavour::open,
                     {"NVIDIA GeForce RTX 4090", "NVIDIA L40S"});
  f.compat.libcuda.soname = "libcuda.so.1";
  f.compat.libcuda.path = "/usr/local/cuda/compat/libcuda.so.1";
  f.compat.libcuda.resolved = "/usr/local/cuda/compat/libcuda.so.550.54.15";
  f.compat.libcuda.via = "LD_LIBRARY_PATH";
  f.compat.libcuda.version = v("550.54.15");
  f.compat.libcuda.version_text = "550.54.15";
  f.compat.libcuda.in_compat = true;
  auto hits = findings(f, "gpu.forward-compat-unsupported");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].gpu == "0000:00:00.0");
  CHECK(findings(f, "driver.library-version-mismatch").empty());
  CHECK(findings(f, "cuda.forward-compat").size() == 1);

  f.driver.version = v("560.35.03");
  f.driver.version_text = "560.35.03";
  CHECK(findings(f, "cuda.forward-compat").empty());
  hits = findings(f, "driver.library-version-mismatch");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.find("cuda-compat package on the library path is older") !=
        std::string::npos);
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

TEST_CASE("a CUDA version outside the table is said to be so") {
  auto f = host_with("6.8.0-45-generic", "560.35.03", DriverFlavour::open, {});
  expect(f, "12.7");
  REQUIRE(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find("floor (525.60.13) is met") !=
        std::string::npos);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::info);
  // newer than the data: said to be so, with the newest release it knows, a warning
  expect(f, "14.0");
  CHECK(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::warn);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find(
            "not judged: the job's CUDA 14.0 is newer than the data of 2026-11") !=
        std::string::npos);
  // a known release whose minimum driver the data lacks (13.5) is not "newer than the data"
  f.driver.version = v("595.45.04");
  expect(f, "13.5");
  REQUIRE(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::info);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find("newer than the data") ==
        std::string::npos);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find("(CUDA 9.0 to 13.4)") !=
        std::string::npos);
  // 13.9 of a known major: the floor is met, but it is newer than the data: a warning
  expect(f, "13.9");
  REQUIRE(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::warn);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find(
            "minor-version floor (580.65.06) is met") != std::string::npos);
  f.driver.version = v("560.35.03");
  expect(f, "99.9");
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::warn);
  CHECK(findings(f, "cuda.driver-too-old").empty());
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

TEST_CASE(
    "a Blackwell GeForce or workstation GPU on the proprietary module: install the open one") {
  auto f =
      host_with("6.8.0-45-generic", "580.95.05", DriverFlavour::proprietary,
                {"NVIDIA GeForce RTX 5090", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"});
  const auto hits = findings(f, "gpu.needs-open-module");
  REQUIRE(hits.size() == 2);
  for (const auto& h : hits) {
    CHECK(h.remedy.find("open kernel module flavour of driver 580.95.05") != std::string::npos);
    CHECK(h.remedy.find("nvidia-driver-580-open") != std::string::npos);
  }
  f.driver.flavour = DriverFlavour::open;
  CHECK(findings(f, "gpu.needs-open-module").empty());
}

TEST_CASE("a Pascal GPU on a 590 driver: R580 was its last branch") {
  auto f = host_with("6.8.0-45-generic", "590.48.01", DriverFlavour::proprietary,
                     {"Tesla P100-PCIE-16GB"});
  const auto hits = findings(f, "gpu.driver-branch-unsupported");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("R580 was the last branch that did") != std::string::npos);
}
