// The gpu.* rows (src/rules/gpu.cpp): a GPU fallen off the bus in fixtures' kernel logs; compute
// modes, the open module, driver branches, architectures and forward compatibility on facts built
// in code.
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/compat_rule_facts.hpp"
#include "support/log_rule_facts.hpp"
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using gpf::test::findings;
using namespace gpf::test::compat_rule_facts;
using namespace gpf::test::log_rule_facts;
using namespace gpf::test::topology_rule_facts;

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

TEST_CASE("compute modes from the CUDA probe: exclusive is info, prohibited drops the GPU") {
  auto f = two_gpus(std::nullopt);
  for (int mode : {0, 3, 2}) {
    CudaDevice d;
    d.index = static_cast<int>(f.cuda.devices.size());
    d.bus_id = "0000:0" + std::to_string(mode) + ":00.0";
    d.compute_mode = mode;
    f.cuda.devices.push_back(d);
  }
  f.cuda.devices.push_back(CudaDevice{}); // attribute unknown
  const auto exclusive = run_rule("gpu.compute-mode-exclusive", f);
  REQUIRE(exclusive.size() == 1);
  CHECK(exclusive[0].gpu == "0000:03:00.0");
  CHECK(exclusive[0].evidence.at(0) ==
        "CUDA 1 (0000:03:00.0): CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 3 (EXCLUSIVE_PROCESS)");
  const auto prohibited = run_rule("gpu.compute-mode-prohibited", f);
  REQUIRE(prohibited.size() == 1);
  CHECK(prohibited[0].gpu == "0000:02:00.0");
  CHECK(prohibited[0].effect == Effect::gpu_unusable);
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
