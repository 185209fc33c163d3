// The topology checks end to end on the topo-* fixture snapshots
// (tests/fixtures/generate_topology.py): the real probes and rule table, each check's positive case
// and the negatives beside it.
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;

namespace {

std::vector<std::string> ids(const Assessment& a, Severity at_least) {
  std::vector<std::string> out;
  for (const auto& f : a.findings) {
    if (f.severity >= at_least) {
      out.push_back(f.id);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace

TEST_CASE("topology fixtures: verdicts, warn/fail findings and the info findings each one is for") {
  struct Case {
    const char* fixture;
    Verdict verdict;
    std::vector<std::string> warn_or_fail; // exactly these, sorted
    std::vector<std::string> info;         // at least these
  };
  const Case cases[] = {
      {"healthy-4gpu", Verdict::pass, {}, {"pcie.gpu-pairs-share-switch"}},
      {"topo-acs-off", Verdict::pass, {}, {"pcie.gpu-pairs-share-switch"}},
      {"topo-acs-redirect", Verdict::warn, {"pcie.acs-redirect"}, {"pcie.gpu-pairs-share-switch"}},
      {"topo-acs-unreadable", Verdict::pass, {}, {"pcie.acs-not-checked"}},
      {"topo-config-garbage", Verdict::pass, {}, {"pcie.acs-not-checked"}},
      {"topo-iommu-translated", Verdict::warn, {"iommu.not-passthrough"}, {}},
      {"topo-iommu-vm", Verdict::pass, {}, {"iommu.not-passthrough"}},
      {"topo-shm-small", Verdict::warn, {"shm.too-small"}, {"limits.memlock-low"}},
      {"topo-nvswitch-no-fm", Verdict::fail, {"nvswitch.fabric-manager-missing"}, {}},
      {"topo-nvswitch-fm-mismatch", Verdict::fail, {"nvswitch.fabric-manager-version"}, {}},
      {"topo-nvswitch-container", Verdict::pass, {}, {"nvswitch.fabric-manager-unchecked"}},
      {"topo-gsp-missing", Verdict::fail, {"gsp.firmware-files-missing"}, {}},
      {"topo-env-hazards",
       Verdict::warn,
       {"env.cuda-injection", "env.cuda-visible-devices-duplicate", "env.device-order-ambiguous",
        "env.launch-blocking"},
       {"env.nccl-p2p-disabled", "env.nccl-shm-disabled"}},
      {"topo-mig-unknown", Verdict::warn, {"env.cuda-visible-devices-mig-unknown"}, {}},
  };
  for (const auto& c : cases) {
    INFO(c.fixture);
    const auto r = check_fixture(c.fixture);
    CHECK(r.assessment.verdict == c.verdict);
    CHECK(ids(r.assessment, Severity::warn) == c.warn_or_fail);
    for (const auto& id : c.info) {
      INFO(id);
      CHECK(finding(r.assessment, id) != nullptr);
    }
    for (const auto& f : r.assessment.findings) {
      CHECK_FALSE(f.evidence.empty());
      CHECK_FALSE(f.remedy.empty());
    }
    for (const auto* name : {"pcie", "iommu", "shm", "services", "firmware", "mig"}) {
      const auto* p = r.facts.probe(name);
      REQUIRE(p);
      INFO(p->name << ": " << p->message);
      CHECK(p->state == ProbeState::ok);
    }
  }
}

TEST_CASE("the healthy fixture's topology: paths, bridges with ACS off, groups in passthrough") {
  const auto r = check_fixture("healthy-4gpu");
  const auto& t = r.facts.topology;
  REQUIRE(t.pcie.gpus.size() == 4);
  const auto& g = t.pcie.gpus[0];
  CHECK(g.bus_id == "0000:18:00.0");
  CHECK(g.path == "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
  CHECK(g.root == "pci0000:15");
  CHECK(g.bridges == std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0"});
  CHECK(g.device_id == 0x2330);
  CHECK(g.iommu_group == std::optional<std::string>("20"));
  const auto& down = t.pcie.bridges.at("0000:17:00.0");
  CHECK(down.config.port_type == 6);
  REQUIRE(down.config.acs);
  CHECK(down.config.acs->control == 0);
  CHECK(t.pcie.bridges.at("0000:16:00.0").config.acs_state == AcsState::absent);
  CHECK(t.pcie.devices_seen == 17); // 4 x (root port, up, down, GPU) + a host bridge
  CHECK(t.iommu.group_type.at("20") == "identity");
  CHECK(t.iommu.cmdline_passthrough);
  CHECK(t.iommu.hypervisor == false);
  CHECK(t.shm.size_bytes == 32ull << 30);
  CHECK(t.shm.memlock_unlimited);
  CHECK(t.services.host_process_table());
  REQUIRE(t.services.persistenced.size() == 1);
  CHECK(t.services.persistenced[0].comm == "nvidia-persiste");
  CHECK(t.firmware.files == std::vector<std::string>{"gsp_ga10x.bin", "gsp_tu10x.bin"});
  CHECK(t.firmware.found_in == "lib/firmware/nvidia/550.54.14");
}

TEST_CASE("the NVSwitch fixture finds switches by device node and on the PCI bus") {
  const auto r = check_fixture("topo-nvswitch-no-fm");
  CHECK(r.facts.topology.services.nvswitch_nodes ==
        std::vector<std::string>{"dev/nvidia-nvswitch0", "dev/nvidia-nvswitch1"});
  CHECK(r.facts.topology.pcie.nvswitches == std::vector<std::string>{"0000:00:05.0"});
  CHECK(r.assessment.recommendation.cuda_visible_devices
            .empty()); // a host-level failure leaves no GPU usable
}

TEST_CASE("snapshots without the topology files skip those probes and report nothing about them") {
  const auto r = check_fixture(
      "old-kernel-4gpu"); // a foundation fixture without sys/, cmdline or statvfs.json
  for (const auto& name : {"pcie", "shm"}) {
    const auto* p = r.facts.probe(name);
    REQUIRE(p);
    CHECK(p->state == ProbeState::skipped);
  }
  for (const auto& f : r.assessment.findings) {
    CHECK(f.id.rfind("pcie.", 0) != 0);
    CHECK(f.id.rfind("iommu.", 0) != 0);
    CHECK(f.id.rfind("shm.", 0) != 0);
  }
}

TEST_CASE(
    "topo-acs-p2p-hang: the replayed multi-GPU hang names the ACS bridges found on the same host") {
  const auto host = Host::snapshot(std::string(GPF_FIXTURES_DIR) + "/topo-acs-p2p-hang");
  REQUIRE(host.ok());
  const Facts facts = collect_facts(*host, ProbeOptions{}); // cuda.json is replayed, nothing runs
  const Assessment a = assess(facts, builtin_rules(), CheckOptions{});
  const auto hung = std::find_if(a.findings.begin(), a.findings.end(),
                                 [](const Finding& f) { return f.id == "cuda.multi-gpu-hung"; });
  REQUIRE(hung != a.findings.end());
  CHECK_THAT(hung->message,
             Catch::Contains(
                 "likely cause: ACS redirect is enabled on switch downstream port 0000:17:00.0 "
                 "between GPUs 0000:18:00.0 and 0000:2a:00.0"));
  CHECK(a.recommendation.cuda_visible_devices == "0");

  // The same host without the CUDA replay: ACS is still reported, no hang is claimed.
  ProbeOptions no_cuda;
  no_cuda.no_cuda = true;
  const Assessment plain = assess(collect_facts(*host, no_cuda), builtin_rules(), CheckOptions{});
  CHECK(finding(plain, "pcie.acs-redirect") != nullptr);
  CHECK(finding(plain, "cuda.multi-gpu-hung") == nullptr);
}
