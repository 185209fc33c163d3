// The kernel.* rows (src/rules/kernel.cpp) on facts built in code: a kernel below 5.5 with
// several GPUs, below the driver branch's floor, and releases that are not judged.
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/compat_rule_facts.hpp"
#include "support/cuda_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using gpf::test::finding;
using namespace gpf::test::compat_rule_facts;
using namespace gpf::test::cuda_rule_facts;

TEST_CASE("cuda rules: kernel below 5.5 drops to info when the multi-GPU test passed") {
  Facts f = host(2, "5.4.0-150-generic");
  cuda_ok(f, {0, 1});
  multi_ok(f);
  auto a = judge(f);
  const Finding* k = finding(a, "kernel.below-5.5-multi-gpu");
  REQUIRE(k);
  CHECK(k->severity == Severity::info);
  CHECK(a.recommendation.cuda_visible_devices == "0,1");
  CHECK(a.verdict == Verdict::pass);

  // CUDA ran but the multi-GPU test did not: the heuristic still keeps one GPU.
  f.cuda.multi_gpu_ran = false;
  f.cuda.multi_gpu_ok.reset();
  a = judge(f);
  REQUIRE(finding(a, "kernel.below-5.5-multi-gpu"));
  CHECK(finding(a, "kernel.below-5.5-multi-gpu")->severity == Severity::warn);
  CHECK(a.recommendation.cuda_visible_devices == "0");
}

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
