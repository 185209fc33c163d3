// The real pipeline (Host snapshot -> probes -> rules -> verdict) on the compatibility fixture
// snapshots under tests/fixtures/compat-*: verdict, finding ids, evidence and unusable GPUs.
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;

namespace {

std::multiset<std::string> ids(const Assessment& a) {
  std::multiset<std::string> out;
  for (const auto& f : a.findings) {
    out.insert(f.id);
  }
  return out;
}

bool has_evidence(const Finding& f, const std::string& needle) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return e.find(needle) != std::string::npos; });
}

} // namespace

TEST_CASE("fixture: CUDA 12.4 job on a 535 driver warns (minor-version compatibility)") {
  const auto r = check_fixture("compat-cuda124-driver535");
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(ids(r.assessment) ==
        std::multiset<std::string>{"cuda.minor-version-compat", "driver.end-of-life"});
  const Finding* f = finding(r.assessment, "cuda.minor-version-compat");
  REQUIRE(f);
  CHECK(f->severity == Severity::warn);
  CHECK(f->message.find("CUDA 12.4 Update 1 needs driver 550.54.15") != std::string::npos);
  CHECK(has_evidence(*f, "expected CUDA 12.4.1 (/usr/local/cuda/version.json)"));
  CHECK(has_evidence(*f, "535.104.05  Release Build"));
  const Finding* eol = finding(r.assessment, "driver.end-of-life");
  REQUIRE(eol);
  CHECK(eol->severity == Severity::info);
  CHECK(has_evidence(*eol, "today: 2026-11-30")); // the snapshot's date file, not the clock
  CHECK(r.assessment.recommendation.cuda_visible_devices == "0,1");
  // The libraries matched and were found through the default directories.
  REQUIRE(r.facts.compat.libcuda.path);
  CHECK(*r.facts.compat.libcuda.path == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  CHECK(r.facts.compat.libcuda.via == "default directory");
  CHECK(r.facts.compat.libcuda.version_text == "535.104.05");
}

TEST_CASE("fixture: --expect-cuda overrides the installed toolkit") {
  const auto r = check_fixture("compat-cuda124-driver535", {}, "12.2");
  CHECK(r.facts.compat.expected_cuda->source == "--expect-cuda");
  CHECK(ids(r.assessment) ==
        std::multiset<std::string>{"driver.end-of-life"}); // 12.2 GA needs 535.54.03
  CHECK(r.assessment.verdict == Verdict::pass);
}

TEST_CASE("fixture: CUDA 12.1 job on a 470 driver fails") {
  const auto r = check_fixture("compat-cuda121-driver470");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(ids(r.assessment) ==
        std::multiset<std::string>{"cuda.driver-too-old", "driver.end-of-life"});
  const Finding* f = finding(r.assessment, "cuda.driver-too-old");
  REQUIRE(f);
  CHECK(f->severity == Severity::fail);
  CHECK(f->message.find("525.60.13") != std::string::npos);
  CHECK(f->message.find("cudaErrorInsufficientDriver") != std::string::npos);
  CHECK(has_evidence(*f, "NVIDIA UNIX x86_64 Kernel Module  470.82.01"));
  CHECK(r.facts.driver.flavour == DriverFlavour::proprietary);
  const Finding* eol = finding(r.assessment, "driver.end-of-life");
  REQUIRE(eol);
  CHECK(eol->message.find("no longer maintained") != std::string::npos);
}

TEST_CASE("fixture: CUDA 13.0 job with a V100 makes that GPU unusable") {
  const auto r = check_fixture("compat-cuda130-v100");
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"gpu.cuda-arch-unsupported"});
  const Finding* f = finding(r.assessment, "gpu.cuda-arch-unsupported");
  REQUIRE(f);
  CHECK(f->gpu == "0000:3b:00.0");
  CHECK(f->message.find("no kernel image is available") != std::string::npos);
  CHECK(has_evidence(*f, "Model: Tesla V100-SXM2-16GB"));
  CHECK(has_evidence(
      *f, "CUDA_HOME=/opt/cuda-13.0: /opt/cuda-13.0/version.json")); // from the job's CUDA_HOME
  REQUIRE(r.assessment.gpus.size() == 2);
  CHECK_FALSE(r.assessment.gpus[0].usable);
  CHECK(r.assessment.gpus[1].usable); // the T4 (Turing) is still targeted by 13.0
  CHECK(r.assessment.recommendation.cuda_visible_devices == "1");
}

TEST_CASE("fixture: CUDA 12.4 on a B200 runs only through PTX JIT: a warning, the GPU kept") {
  const auto r = check_fixture("compat-cuda124-b200");
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"gpu.cuda-arch-unsupported"});
  const Finding* f = finding(r.assessment, "gpu.cuda-arch-unsupported");
  REQUIRE(f);
  CHECK(f->severity == Severity::warn);
  CHECK(f->gpu == "0000:18:00.0");
  CHECK(f->message.find("only through PTX JIT: CUDA 12.4.1 does not yet target compute "
                        "capability 10.0 (Blackwell") != std::string::npos);
  CHECK(f->message.find("first toolkit 12.8)") != std::string::npos);
  CHECK(f->remedy.find("CUDA 12.8 or newer") != std::string::npos);
  CHECK(f->remedy.find("--list-ptx") != std::string::npos);
  CHECK(has_evidence(*f, "Model: NVIDIA B200"));
  REQUIRE(r.assessment.gpus.size() == 2);
  CHECK(r.assessment.gpus[0].usable); // a build with PTX runs on it: not taken away
  CHECK(r.assessment.gpus[1].usable);
}

TEST_CASE("fixture: the open module with a pre-Turing GPU makes that GPU unusable") {
  const auto r = check_fixture("compat-open-pre-turing");
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(ids(r.assessment) ==
        std::multiset<std::string>{"gpu.open-module-unsupported", "cuda.no-expected-version"});
  const Finding* f = finding(r.assessment, "gpu.open-module-unsupported");
  REQUIRE(f);
  CHECK(f->gpu == "0000:17:00.0");
  CHECK(has_evidence(*f, "Open Kernel Module for x86_64  550.54.14"));
  CHECK(has_evidence(*f, "Model: Tesla P100-PCIE-16GB"));
  CHECK(r.assessment.recommendation.cuda_visible_devices == "1");
  const Finding* none = finding(r.assessment, "cuda.no-expected-version");
  REQUIRE(none);
  CHECK(none->message.find("up to CUDA 12.4 GA") != std::string::npos);
}

TEST_CASE("fixture: user-space libraries newer than the kernel module fail") {
  const auto r = check_fixture("compat-lib-mismatch");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"driver.library-version-mismatch",
                                                        "driver.library-version-mismatch"});
  const Finding* f = finding(r.assessment, "driver.library-version-mismatch");
  REQUIRE(f);
  CHECK(f->message.find("550.90.07") != std::string::npos);
  CHECK(has_evidence(
      *f,
      "libcuda.so.1: /usr/lib/x86_64-linux-gnu/libcuda.so.1 -> /usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07 "
      "(via /etc/ld.so.cache)"));
  CHECK(r.facts.compat.ld_cache == "new format, 2 entries");
}

TEST_CASE("fixture: the toolkit's stub libcuda first on LD_LIBRARY_PATH fails") {
  const auto r = check_fixture("compat-stub-first");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"driver.libcuda-stub-first"});
  const Finding* f = finding(r.assessment, "driver.libcuda-stub-first");
  REQUIRE(f);
  CHECK(has_evidence(
      *f,
      "/usr/local/cuda/lib64/stubs/libcuda.so.1 -> /usr/local/cuda/lib64/stubs/libcuda.so (via LD_LIBRARY_PATH)"));
  CHECK(has_evidence(*f, "LD_LIBRARY_PATH=/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64"));
  // The driver's own library was never reached, and libnvidia-ml is not shadowed.
  CHECK(r.facts.compat.libnvidia_ml.version_text == "550.54.14");
}

TEST_CASE("fixture: forward compatibility is recognised, not called a mismatch") {
  const auto r = check_fixture("compat-forward-compat");
  CHECK(r.assessment.verdict == Verdict::pass);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"cuda.forward-compat"});
  const Finding* fc = finding(r.assessment, "cuda.forward-compat");
  REQUIRE(fc);
  CHECK(has_evidence(*fc, "/usr/local/cuda/compat/libcuda.so.550.54.15"));
  // Without the compat library the same job would only warn: the judgement used the compat libcuda.
  CHECK(r.facts.compat.libcuda.in_compat);
}

TEST_CASE("fixture: gVisor's 4.4.0 is explained, and absent libraries are not a mismatch") {
  const auto r = check_fixture("compat-gvisor-no-libs");
  CHECK(r.assessment.verdict == Verdict::pass);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"kernel.release-not-judged",
                                                        "driver.libraries-not-checked",
                                                        "cuda.no-expected-version"});
  CHECK(r.facts.kernel.flavour == KernelFlavour::gvisor);
  CHECK(r.assessment.recommendation.cuda_visible_devices ==
        "0,1"); // no kernel-5.5 single-GPU fallback
}

TEST_CASE("fixture: a 690 driver, CUDA 13.9 and compute capability 14.0 are newer than the data") {
  const auto r = check_fixture("compat-newer-than-data");
  // Each is said to be newer than the data of 2026-11, with the newest the data knows: never
  // guessed at, never silence.
  const Finding* drv = finding(r.assessment, "driver.newer-than-data");
  REQUIRE(drv);
  CHECK(drv->severity == Severity::info);
  CHECK(drv->message.find("not judged: driver branch R690 is newer than the data of 2026-11") !=
        std::string::npos);
  CHECK(drv->message.find("knows up to R620") != std::string::npos);
  CHECK(drv->remedy.find("Update gpu-preflight") != std::string::npos);
  CHECK(has_evidence(*drv, "690.12.03"));
  const Finding* cuda = finding(r.assessment, "cuda.version-not-in-matrix");
  REQUIRE(cuda);
  CHECK(cuda->severity == Severity::warn);
  CHECK(cuda->message.find("not judged: the job's CUDA 13.9.0 is newer than the data of 2026-11") !=
        std::string::npos);
  CHECK(cuda->message.find("knows up to CUDA 13.5") != std::string::npos);
  CHECK(cuda->message.find("update gpu-preflight") != std::string::npos);
  // compute capability 14.0 comes from the fixture's cuda.json, which check_fixture does not
  // replay: gpu.newer-than-data is checked on facts (tests/rules/driver_test.cpp) and end to end
  // (the golden)
  // Nothing was guessed about them: no end of life, no architecture or CUDA-driver verdict.
  CHECK_FALSE(finding(r.assessment, "driver.end-of-life"));
  CHECK_FALSE(finding(r.assessment, "cuda.driver-too-old"));
  CHECK_FALSE(finding(r.assessment, "gpu.cuda-arch-unsupported"));
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(r.assessment.recommendation.cuda_visible_devices == "0"); // the GPU stays usable
}

TEST_CASE("fixture: CUDA 13.4 on a 580 driver runs only through minor-version compatibility") {
  const auto r = check_fixture("compat-cuda134-driver580");
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(ids(r.assessment) == std::multiset<std::string>{"cuda.minor-version-compat"});
  const Finding* f = finding(r.assessment, "cuda.minor-version-compat");
  REQUIRE(f);
  // the specific release and its driver, marked as the unverified row it is
  CHECK(f->message.find("The job's CUDA 13.4.1 runs on driver 580.95.05 only through "
                        "minor-version compatibility") != std::string::npos);
  CHECK(f->message.find("CUDA 13.4 GA needs driver 615.71.09 or newer (unverified") !=
        std::string::npos);
  CHECK(has_evidence(*f, "expected CUDA 13.4.1 (/usr/local/cuda/version.json)"));
  // R580 is an LTSB until 2028-06: no end-of-life finding on the snapshot's date
  CHECK_FALSE(finding(r.assessment, "driver.end-of-life"));
}

TEST_CASE(
    "fixture: no NVIDIA device on the PCI bus of a VM is its own finding, not 'load the driver'") {
  const auto r = check_fixture("nogpu-vm-no-passthrough");
  CHECK(r.assessment.verdict == Verdict::fail);
  const Finding* f = finding(r.assessment, "driver.no-nvidia-device");
  REQUIRE(f);
  CHECK(f->message.find("none of the 4 devices in /sys/bus/pci/devices has vendor 0x10de") !=
        std::string::npos);
  CHECK(f->message.find("virtual machine") != std::string::npos);
  CHECK(f->message.find("not passed through") != std::string::npos);
  CHECK(f->remedy.find("Attach the GPU to this virtual machine") != std::string::npos);
  CHECK(has_evidence(*f, "/proc/cpuinfo: flags include hypervisor"));
  CHECK_FALSE(finding(r.assessment, "driver.not-loaded")); // nothing to load
  REQUIRE(r.assessment.primary_cause());
  CHECK(r.assessment.primary_cause()->id == "driver.no-nvidia-device");
}

TEST_CASE("fixture: a bus with an unreadable vendor keeps today's judgement (driver.not-loaded)") {
  const auto r = check_fixture("nogpu-vendor-unreadable");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK_FALSE(finding(r.assessment, "driver.no-nvidia-device"));
  CHECK(finding(r.assessment, "driver.not-loaded"));
  CHECK(r.facts.topology.pcie.vendor_unreadable == std::vector<std::string>{"0000:00:03.0"});
}
