// Probe and rule tests over the fixture snapshots in tests/fixtures/: the real pipeline
// (collect_facts + assess) on each, asserting verdict, findings, dropped GPUs and recommendation.
#include "gpf/probes/pipeline.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;

namespace {

std::vector<std::string> ids_at_or_above(const Assessment& a, Severity s) {
  std::vector<std::string> ids;
  for (const auto& f : a.findings) {
    if (f.severity >= s) {
      ids.push_back(f.id);
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

} // namespace

TEST_CASE("fixture verdicts, findings and recommendations") {
  struct Case {
    const char* fixture;
    Verdict verdict;
    std::vector<std::string> warn_or_fail_ids; // exactly these, sorted
    const char* cuda_visible_devices;
  };
  const Case cases[] = {
      {"healthy-4gpu", Verdict::pass, {}, "0,1,2,3"},
      {"no-driver", Verdict::fail, {"driver.not-loaded"}, ""},
      {"nouveau", Verdict::fail, {"driver.not-loaded", "module.nouveau-loaded"}, ""},
      {"missing-nvidiactl", Verdict::fail, {"devnode.nvidiactl-missing"}, ""},
      {"missing-uvm", Verdict::fail, {"devnode.nvidia-uvm-missing"}, ""},
      {"missing-gpu-node", Verdict::warn, {"gpu.devnode-unusable"}, "0,1,3"},
      {"excluded-gpu", Verdict::warn, {"gpu.excluded"}, "0,1,3"},
      {"old-kernel-4gpu", Verdict::warn, {"kernel.below-5.5-multi-gpu"}, "0"},
      {"rhel8-kernel", Verdict::warn, {"kernel.below-5.5-multi-gpu"}, "0"},
      {"wsl2", Verdict::fail, {"gpu.too-few-usable"}, ""},
      {"environ-restricted", Verdict::pass, {}, "1,3"},
      {"environ-unknown-entry", Verdict::warn, {"env.cuda-visible-devices-unknown-entry"}, "0"},
      {"gsp-disabled-open", Verdict::fail, {"driver.gsp-disabled-open-module"}, ""},
      {"gsp-disabled-proprietary", Verdict::pass, {}, "0,1"},
      {"registry-keys", Verdict::pass, {}, "0,1"},
      {"node-not-accessible",
       Verdict::fail,
       {"devnode.not-accessible", "gpu.devnode-unusable"},
       ""},
      {"garbage-files", Verdict::warn, {"gpu.information-unreadable", "probe.failed"}, "0"},
      // Absent inputs are not unreadable ones: no probe.failed for what such a host lacks.
      {"proc-only", Verdict::fail, {"driver.not-loaded"}, ""},
      {"no-modules-registry", Verdict::pass, {}, "0,1,2,3"},
      {"topo-mig-unknown",
       Verdict::warn,
       {"env.cuda-visible-devices-mig-unknown"},
       "MIG-GPU-00000000-1111-2222-3333-444455550000/1/0"},
      // its only MIG instance does not exist: CUDA would see no device
      {"topo-mig-none",
       Verdict::fail,
       {"env.cuda-visible-devices-mig-unknown", "gpu.too-few-usable"},
       ""},
      {"topo-mig-uuid", Verdict::pass, {}, "MIG-4f5c2a0e-8d41-5b6a-9e3c-1d2b3c4d5e6f"},
  };
  for (const auto& c : cases) {
    INFO(c.fixture);
    const auto r = check_fixture(c.fixture);
    CHECK(r.assessment.verdict == c.verdict);
    CHECK(ids_at_or_above(r.assessment, Severity::warn) == c.warn_or_fail_ids);
    CHECK(r.assessment.recommendation.cuda_visible_devices == c.cuda_visible_devices);
    for (const auto& f : r.assessment.findings) {
      CHECK_FALSE(f.evidence.empty());
      CHECK_FALSE(f.remedy.empty());
    }
  }
}

TEST_CASE("the pipeline's rows: each probe registers one, and they run in their order") {
  std::vector<std::string> names;
  std::vector<int> order;
  std::set<int> orders;
  for (const auto& row : probe_rows()) {
    INFO(row.name);
    CHECK((row.run != nullptr || (row.start != nullptr && row.finish != nullptr)));
    CHECK_FALSE(row.what.empty());
    CHECK(orders.insert(row.order).second); // no two rows share a place
    names.emplace_back(row.name);
    order.push_back(row.order);
  }
  CHECK(std::is_sorted(order.begin(), order.end()));
  // the order reports and snapshots show; later probes read earlier facts (probes.hpp)
  const std::vector<std::string> expected{
      "kernel", "modules", "module-load",   "driver", "devices",  "kernel-log",
      "compat", "pcie",    "iommu",         "shm",    "services", "firmware",
      "mig",    "rdma",    "gpu-processes", "cuda",   "nvml",     "nccl"};
  CHECK(names == expected);
  // the facts of one check list every row once, in that order
  const auto r = check_fixture("healthy-4gpu");
  std::vector<std::string> ran;
  for (const auto& p : r.facts.probes) {
    ran.push_back(p.name);
  }
  CHECK(ran == expected);
}

TEST_CASE("healthy host: driver facts parsed from the snapshot") {
  const auto r = check_fixture("healthy-4gpu");
  CHECK(r.facts.driver.loaded);
  CHECK(r.facts.driver.version_text == "550.54.14");
  CHECK(r.facts.driver.flavour == DriverFlavour::open);
  CHECK(r.facts.driver.enable_gpu_firmware == 18u);
  REQUIRE(r.facts.driver.registry);
  CHECK(r.facts.driver.registry->binary_keys.empty());
  REQUIRE(r.facts.gpus.size() == 4);
  CHECK(r.facts.gpus[2].bus_id == "0000:3a:00.0");
  CHECK(r.facts.gpus[2].device_minor == 2u);
  CHECK(r.assessment.recommendation.cuda_device_order == "PCI_BUS_ID");
  for (const auto& p : r.facts.probes) {
    INFO(p.name << ": " << p.message);
    // the snapshot has no dmesg.txt: the kernel-log probe is skipped, not failed; check_fixture
    // passes --no-cuda: the cuda probe is skipped; no nvml.json: the nvml probe is skipped; no
    // sys/class/infiniband: the rdma probe is skipped; no --nccl: the nccl probe is skipped
    CHECK((p.state == ProbeState::ok || (p.name == "nccl" && p.state == ProbeState::skipped) ||
           (p.name == "kernel-log" && p.state == ProbeState::skipped) ||
           (p.name == "rdma" && p.state == ProbeState::skipped) ||
           (p.name == "cuda" && p.state == ProbeState::skipped) ||
           (p.name == "nvml" && p.state == ProbeState::skipped)));
  }
}

TEST_CASE("a missing per-GPU node drops that GPU and names the node") {
  const auto r = check_fixture("missing-gpu-node");
  const auto* f = finding(r.assessment, "gpu.devnode-unusable");
  REQUIRE(f);
  CHECK(f->gpu == "0000:3a:00.0");
  CHECK(f->evidence[0] == "/dev/nvidia2: No such file or directory");
  CHECK_FALSE(r.assessment.gpus[2].usable);
  CHECK(r.assessment.gpus[2].reasons == std::vector<std::string>{"gpu.devnode-unusable"});
}

TEST_CASE("a host-level failure leaves no GPU usable and names why") {
  const auto r = check_fixture("missing-uvm");
  CHECK(r.assessment.usable_count() == 0);
  CHECK(r.assessment.recommendation.cuda_visible_devices.empty());
  CHECK(r.assessment.gpus[0].reasons == std::vector<std::string>{"devnode.nvidia-uvm-missing"});
  CHECK_FALSE(finding(r.assessment, "gpu.too-few-usable")); // the uvm finding already explains it
}

TEST_CASE("a node this user cannot open shows its mode") {
  const auto r = check_fixture("node-not-accessible");
  const auto* f = finding(r.assessment, "devnode.not-accessible");
  REQUIRE(f);
  CHECK(f->evidence[0] == "/dev/nvidiactl: char 195:255, mode 0600");
}

TEST_CASE("min-gpus decides fail when too few GPUs are left") {
  CHECK(check_fixture("excluded-gpu", {3, false}).assessment.verdict == Verdict::warn);
  const auto r = check_fixture("excluded-gpu", {4, false});
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(finding(r.assessment, "gpu.too-few-usable"));
  // the old-kernel heuristic keeps one GPU, so a job that needs two cannot start
  CHECK(check_fixture("old-kernel-4gpu", {2, false}).assessment.verdict == Verdict::fail);
  // GPUs were left out: fix what left them out
  CHECK_THAT(finding(r.assessment, "gpu.too-few-usable")->remedy,
             Catch::Contains("Fix the findings"));
  // None was: the node has fewer GPUs than asked for, and there is nothing to fix
  const auto small = check_fixture("healthy-4gpu", {8, false});
  const auto* f = finding(small.assessment, "gpu.too-few-usable");
  REQUIRE(f);
  CHECK(f->message == "4 GPUs recommended for the job (4 usable), 8 required (--min-gpus)");
  CHECK(f->remedy == "This node has 4 GPUs (`nvidia-smi -L` lists them): run the job on a node "
                     "with at least 8, or lower --min-gpus to 4");
}

TEST_CASE("the kernel heuristic needs two usable GPUs") {
  const auto r = check_fixture("rhel8-kernel");
  const auto* f = finding(r.assessment, "kernel.below-5.5-multi-gpu");
  REQUIRE(f);
  CHECK(f->evidence[0] == "uname -r: 4.18.0-553.el8_10.x86_64");
  CHECK(r.facts.kernel.flavour == KernelFlavour::rhel);
  CHECK(r.assessment.recommendation.single_gpu_only());
}

TEST_CASE("the kernel heuristic narrows nothing on a node that fails: information, not a warning") {
  const auto r = check_fixture("old-kernel-4gpu-no-uvm");
  CHECK(r.assessment.verdict == Verdict::fail);
  CHECK(finding(r.assessment, "devnode.nvidia-uvm-missing"));
  const auto* f = finding(r.assessment, "kernel.below-5.5-multi-gpu");
  REQUIRE(f); // the condition is real: explain-log --check confirms it
  CHECK(f->severity == Severity::info);
  CHECK(f->effect == Effect::none);
  CHECK_THAT(f->message, Catch::Contains("no GPU is usable until the node's failure is fixed"));
  CHECK_FALSE(r.assessment.recommendation.single_gpu_only());
  CHECK(r.assessment.usable_count() == 0);
}

TEST_CASE("WSL2: driver and device probes are not applicable, GPUs unconfirmed") {
  const auto r = check_fixture("wsl2");
  CHECK(r.facts.is_wsl2());
  CHECK(r.facts.probe("driver")->state == ProbeState::skipped);
  CHECK(r.facts.probe("devices")->state == ProbeState::skipped);
  CHECK_FALSE(finding(r.assessment, "driver.not-loaded"));
  CHECK_FALSE(finding(r.assessment, "devnode.nvidiactl-missing"));
  const auto* f = finding(r.assessment, "gpu.too-few-usable");
  REQUIRE(f);
  CHECK(f->evidence.back() == "WSL2: GPUs can only be confirmed by the CUDA probe");
}

TEST_CASE("GSP disabled: fail with the open module, info with the proprietary one") {
  const auto open = check_fixture("gsp-disabled-open");
  REQUIRE(finding(open.assessment, "driver.gsp-disabled-open-module"));
  CHECK(finding(open.assessment, "driver.gsp-disabled-open-module")->evidence[0] ==
        "/proc/driver/nvidia/params: EnableGpuFirmware: 0");
  const auto prop = check_fixture("gsp-disabled-proprietary");
  REQUIRE(finding(prop.assessment, "driver.gsp-disabled"));
  CHECK(finding(prop.assessment, "driver.gsp-disabled")->severity == Severity::info);
  CHECK_FALSE(finding(prop.assessment, "driver.gsp-disabled-open-module"));
}

TEST_CASE("registry content is reported") {
  const auto r = check_fixture("registry-keys");
  const auto* f = finding(r.assessment, "driver.registry-keys");
  REQUIRE(f);
  CHECK(f->evidence[0] == "/proc/driver/nvidia/registry: Binary: \"RmSomeKey, RmOtherKey\"");
}

TEST_CASE("garbage files: probe errors, never a crash, output valid") {
  const auto r = check_fixture("garbage-files");
  CHECK(r.facts.probe("kernel")->state == ProbeState::error);
  CHECK(r.facts.probe("driver")->state == ProbeState::error);
  CHECK(r.facts.probe("devices")->state == ProbeState::error); // devices.json unparseable
  // the version file is junk, so the version comes from the fallback
  CHECK(r.facts.driver.version_source == "sys/module/nvidia/version");
  CHECK(r.facts.driver.version_text == "550.54.14");
}

TEST_CASE("the primary cause is the root cause, and the recommendation counts what the job gets") {
  struct Case {
    const char* fixture;
    int min_gpus;
    const char* primary; // nullptr: PASS
    const char* gpu;     // the primary cause's GPU, nullptr when host-level
    int devices;         // recommendation.devices
  };
  const Case cases[] = {
      {"healthy-4gpu", 1, nullptr, nullptr, 4},
      // the module that keeps the driver away, not "driver not loaded"
      {"nouveau", 1, "module.nouveau-loaded", nullptr, 0},
      // the GPU that is left out, by bus id
      {"log-xid79-one-of-8", 1, "gpu.fallen-off-bus", "0000:5d:00.0", 7},
      // too few GPUs: what dropped them, not the count
      {"log-xid79-one-of-8", 8, "gpu.fallen-off-bus", "0000:5d:00.0", 7},
      {"old-kernel-4gpu", 1, "kernel.below-5.5-multi-gpu", nullptr, 1},
      {"old-kernel-4gpu", 4, "kernel.below-5.5-multi-gpu", nullptr, 1},
      // with no cause of its own, the consequence stays the cause
      {"healthy-4gpu", 8, "gpu.too-few-usable", nullptr, 4},
      {"environ-restricted", 1, nullptr, nullptr, 2},
      {"topo-mig-none", 1, "env.cuda-visible-devices-mig-unknown", "0000:18:00.0", 0},
  };
  for (const auto& c : cases) {
    INFO(c.fixture << " --min-gpus " << c.min_gpus);
    CheckOptions options;
    options.min_gpus = c.min_gpus;
    const auto r = check_fixture(c.fixture, options);
    const Assessment& a = r.assessment;
    CHECK(a.recommendation.devices == c.devices);
    const Finding* primary = a.primary_cause();
    if (c.primary == nullptr) {
      CHECK(primary == nullptr);
      continue;
    }
    REQUIRE(primary != nullptr);
    CHECK(primary->id == c.primary);
    CHECK(primary->gpu == (c.gpu ? std::optional<std::string>(c.gpu) : std::nullopt));
    const int recommended = static_cast<int>(std::count_if(
        a.gpus.begin(), a.gpus.end(), [](const GpuAssessment& g) { return g.recommended; }));
    CHECK(recommended == c.devices);
  }
}

TEST_CASE("the job's CUDA_VISIBLE_DEVICES: recorded when it chose, MIG instances stay MIG") {
  const auto restricted = check_fixture("environ-restricted").assessment;
  CHECK(restricted.recommendation.chosen_by == "1,3");
  CHECK_FALSE(restricted.recommendation.mig);
  CHECK_FALSE(check_fixture("healthy-4gpu").assessment.recommendation.chosen_by);

  // MIG-GPU-<uuid>/1/0 exists, /2/0 does not: CUDA stops there; the job keeps its instance, never
  // the parent GPU's index (that would hand it every instance of a shared GPU).
  const auto mig = check_fixture("topo-mig-unknown").assessment;
  CHECK(mig.recommendation.mig);
  CHECK(mig.recommendation.devices == 1);
  CHECK(mig.recommendation.cuda_visible_devices ==
        "MIG-GPU-00000000-1111-2222-3333-444455550000/1/0");
  CHECK_FALSE(mig.recommendation.cuda_device_order);
}
