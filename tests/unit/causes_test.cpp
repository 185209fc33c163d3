// Why a GPU did not come up, linked by its bus id through one table of causes (src/rules/
// causes.hpp), on fixtures from public reports; and IOMMU faults on a GPU that runs.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/kernel_log_signatures.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::Checked;
using gpf::test::finding;

namespace {

bool has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

bool any_evidence(const Finding& f, std::string_view part) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return has(e, part); });
}

} // namespace

TEST_CASE("power-state and link lines: kind, device and what went down") {
  struct Case {
    std::string_view line;
    LogEventKind kind;
    std::string bus;
    std::string detail;
  };
  const std::vector<Case> cases{
      {"nvidia 0000:01:00.0: Unable to change power state from D3cold to D0, device inaccessible",
       LogEventKind::power_state, "0000:01:00.0", "D3cold"},
      {"nvidia 0000:01:00.0: can't change power state from D3cold to D0 (config space "
       "inaccessible)",
       LogEventKind::power_state, "0000:01:00.0", "D3cold"},
      {"pcieport 0000:00:02.0:    [ 5] Surprise Down Error    (First)", LogEventKind::link_down,
       "0000:00:02.0", "Surprise Down"},
      {"pcieport 0000:00:03.0:    [ 5] SDES                  ", LogEventKind::link_down,
       "0000:00:03.0", "Surprise Down"},
      {"pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
       "Layer, id=0010(Receiver ID)",
       LogEventKind::link_down, "0000:00:02.0", "a fatal AER error"},
      {"pcieport 0000:00:03.1: pciehp: Slot(0): Link Down", LogEventKind::link_down, "0000:00:03.1",
       "Link Down"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    const std::vector<std::string_view> v{c.line};
    const auto r = match_signature(v);
    REQUIRE(r);
    CHECK(r->event.kind == c.kind);
    CHECK(r->event.bus_id == c.bus);
    CHECK(r->event.detail == c.detail);
  }
  // A D3cold line that says nothing is inaccessible, and a corrected AER error, are no events.
  for (std::string_view m : {"nvidia 0000:01:00.0: power state changed by ACPI to D3cold",
                             "pcieport 0000:00:02.0: AER: Corrected error received: id=0010"}) {
    INFO(m);
    const std::vector<std::string_view> v{m};
    CHECK_FALSE(match_signature(v));
  }
}

// https://github.com/bryansteiner/gpu-passthrough-tutorial/issues/39
TEST_CASE("fixture: RmInitAdapter after D3cold names the power state and its fix") {
  const auto r = check_fixture("cause-d3cold-rminit");
  const auto* f = finding(r.assessment, "rminit.adapter-failed");
  REQUIRE(f);
  CHECK(f->gpu == "0000:01:00.0");
  CHECK(any_evidence(*f, "RmInitAdapter failed! (0x22:0x56:667)"));
  CHECK(any_evidence(*f, "Unable to change power state from D3cold to D0, device inaccessible"));
  CHECK(has(f->message, "likely cause: the GPU could not be brought out of D3cold"));
  CHECK(has(f->remedy, "/sys/bus/pci/devices/0000:01:00.0/d3cold_allowed"));
  CHECK(has(f->remedy, "Power-cycle"));
}

// https://github.com/NVIDIA/gpu-operator/issues/1146: one GPU of eight stuck in RmInitAdapter;
// cuInit fails for all of them. The CUDA failure names that GPU and takes it out at the driver.
TEST_CASE("fixture: one GPU stuck in RmInitAdapter named as why cuInit fails for every GPU") {
  // with its cuda.json replayed (check_fixture leaves the CUDA stage out)
  const auto host = Host::snapshot(gpf::test::fixture("cause-one-gpu-breaks-cuinit"));
  REQUIRE(host.ok());
  const Checked r{collect_facts(*host, ProbeOptions{}), {}};
  const Assessment assessment = assess(r.facts, builtin_rules(), CheckOptions{});
  CHECK(assessment.verdict == Verdict::fail);
  const auto* f = finding(assessment, "cuda.init-failed");
  REQUIRE(f);
  CHECK(has(f->message, "because of GPU 0000:0a:00.0 that the driver could not initialise"));
  CHECK(has(f->message, "CUDA_VISIBLE_DEVICES does not help"));
  CHECK(any_evidence(*f, "CUDA_ERROR_INVALID_DEVICE"));
  CHECK(any_evidence(*f, "NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)"));
  CHECK(any_evidence(*f, "the driver lists 7 other GPUs"));
  CHECK(has(f->remedy, "echo 0000:0a:00.0 | sudo tee /sys/bus/pci/drivers/nvidia/unbind"));
  CHECK(has(f->remedy, "NVreg_ExcludedGpus"));
  CHECK(has(f->remedy, "the 7 other GPUs work"));

  // The same failure without a GPU stuck in the driver, or with that GPU the only one: the
  // generic text, no cause named
  auto facts = r.facts;
  auto stuck_events = facts.log.gpu_events;
  facts.log.gpu_events.clear();
  auto a = assess(facts, builtin_rules(), CheckOptions{});
  REQUIRE(finding(a, "cuda.init-failed"));
  CHECK(finding(a, "cuda.init-failed")->message == "CUDA failed to initialise: no GPU can be used");
  facts.log.gpu_events = stuck_events;
  facts.gpus.clear();
  a = assess(facts, builtin_rules(), CheckOptions{});
  REQUIRE(finding(a, "cuda.init-failed"));
  CHECK_FALSE(has(finding(a, "cuda.init-failed")->message, "0000:0a:00.0"));
}

// https://github.com/wilicc/gpu-burn/issues/1: the Surprise Down is on the root port above the
// GPU, found through the PCIe path.
TEST_CASE("fixture: a GPU off the bus after a Surprise Down on its port names the link") {
  const auto r = check_fixture("cause-surprise-down-fallen");
  const auto* f = finding(r.assessment, "gpu.fallen-off-bus");
  REQUIRE(f);
  CHECK(f->gpu == "0000:02:00.0");
  CHECK(any_evidence(*f, "Xid (PCI:0000:02:00): 79"));
  CHECK(any_evidence(*f, "pcieport 0000:00:02.0:    [ 5] Surprise Down Error    (First)"));
  CHECK(has(f->message, "likely cause: the PCIe link to the GPU went down (Surprise Down on "
                        "0000:00:02.0)"));
  CHECK(has(f->remedy, "Reseat the GPU"));
  // The port is not a GPU the driver is missing.
  CHECK_FALSE(finding(r.assessment, "log.gpu-missing-from-driver"));
}

TEST_CASE("a link event on a port above another GPU is not this GPU's cause") {
  Facts f;
  f.driver.loaded = true;
  for (const char* bus : {"0000:02:00.0", "0000:82:00.0"}) {
    GpuFacts g;
    g.bus_id = bus;
    f.gpus.push_back(g);
  }
  f.topology.pcie.ran = true;
  for (const auto& [gpu, port] :
       {std::pair{"0000:02:00.0", "0000:00:02.0"}, std::pair{"0000:82:00.0", "0000:80:02.0"}}) {
    GpuPciPath path;
    path.bus_id = gpu;
    path.bridges = {port};
    f.topology.pcie.gpus.push_back(path);
  }
  f.log = scan_kernel_log("[ 10.000000] pcieport 0000:80:02.0: pciehp: Slot(1): Link Down\n"
                          "[ 11.000000] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the "
                          "bus.\n");
  const auto a = assess(f, builtin_rules(), {});
  const auto* hit = finding(a, "gpu.fallen-off-bus");
  REQUIRE(hit);
  CHECK(hit->gpu == "0000:02:00.0");
  CHECK_FALSE(has(hit->message, "likely cause"));
  CHECK_FALSE(any_evidence(*hit, "Link Down"));
}

// https://github.com/NVIDIA/cuda-samples/issues/48: IOMMU page faults on a GPU that runs break
// its peer-to-peer copies; a finding of their own.
TEST_CASE("fixture: IOMMU faults on a running GPU are a warning of their own") {
  const auto r = check_fixture("cause-iommu-fault-p2p");
  const auto* f = finding(r.assessment, "iommu.gpu-dma-fault");
  REQUIRE(f);
  CHECK(f->gpu == "0000:07:00.0");
  CHECK(f->severity == Severity::warn);
  CHECK(any_evidence(*f, "nvidia 0000:07:00.0: AMD-Vi: Event logged [IO_PAGE_FAULT"));
  CHECK(any_evidence(*f, "/proc/cmdline: BOOT_IMAGE="));
  CHECK(has(f->remedy, "iommu=pt"));
  CHECK_FALSE(finding(r.assessment, "rminit.adapter-failed"));
  CHECK(r.assessment.verdict == Verdict::warn);
}

// The same faults beside an init failure are its cause, not a second finding.
TEST_CASE("fixture: IOMMU faults beside an RmInitAdapter failure stay its evidence") {
  const auto r = check_fixture("log-rminit-0x26-iommu");
  CHECK(finding(r.assessment, "rminit.adapter-failed"));
  CHECK_FALSE(finding(r.assessment, "iommu.gpu-dma-fault"));
}

// https://github.com/NixOS/nixos-hardware/issues/1880: the remedy names the legacy branch, and the
// driver not loaded names it as the cause.
TEST_CASE("fixture: a GPU the branch dropped: the legacy branch in the remedy") {
  const auto r = check_fixture("cause-legacy-branch");
  CHECK(r.assessment.verdict == Verdict::fail);
  const auto* f = finding(r.assessment, "gpu.not-supported");
  REQUIRE(f);
  CHECK(has(f->message, "NVIDIA GeForce GTX 1050 GPU is supported only by the NVIDIA 580.xx "
                        "legacy driver branch; driver 595.71.05 ignores it"));
  CHECK(any_evidence(*f, "supported through the NVIDIA 580.xx Legacy drivers"));
  CHECK(has(f->remedy, "NVIDIA 580.xx legacy driver branch"));
  CHECK(has(f->remedy, "nvidia-driver-580"));
  REQUIRE(r.assessment.primary_cause());
  CHECK(r.assessment.primary_cause()->id == "gpu.not-supported");
}

// https://github.com/Mellanox/nv_peer_memory/issues/8: the peer-memory module's symbol mismatch is
// quoted where GPUDirect RDMA is missing.
TEST_CASE("fixture: nv_peer_mem built against another driver is quoted with its fix") {
  const auto r = check_fixture("cause-peermem-symbols");
  const auto* f = finding(r.assessment, "rdma.peer-memory-missing");
  REQUIRE(f);
  CHECK(has(f->message, "the kernel log says why it did not load"));
  CHECK(any_evidence(*f, "nv_peer_mem: disagrees about version of symbol nvidia_p2p_get_pages"));
  CHECK(has(f->remedy, "nv_peer_mem was built against another NVIDIA driver than the running "
                       "535.161.07"));
}

TEST_CASE("the nvidia module's own symbol mismatch: built for another kernel") {
  Facts f;
  f.kernel.release = "6.8.0-45-generic";
  f.log =
      scan_kernel_log("[    5.100000] nvidia: disagrees about version of symbol module_layout\n");
  const auto a = assess(f, builtin_rules(), {});
  const auto* hit = finding(a, "driver.not-loaded");
  REQUIRE(hit);
  CHECK(has(hit->message, "does not fit the running kernel 6.8.0-45-generic"));
  CHECK(any_evidence(*hit, "nvidia: disagrees about version of symbol module_layout"));
  CHECK(has(hit->remedy, "-k 6.8.0-45-generic"));
}

TEST_CASE("legacy-branch and module-symbol lines: what they name") {
  const std::vector<std::string_view> legacy{
      "NVRM: The NVIDIA NVIDIA GeForce GTX 1050 GPU installed in this system is",
      "NVRM:  supported through the NVIDIA 580.xx Legacy drivers. Please",
      "NVRM:  visit http://www.nvidia.com/object/unix.html for more",
      "NVRM:  information.  The 595.71.05 NVIDIA driver will ignore",
      "NVRM:  this GPU.  Continuing probe...",
      "NVRM: No NVIDIA GPU found."};
  const auto r = match_signature(legacy);
  REQUIRE(r);
  CHECK(r->event.kind == LogEventKind::not_supported);
  CHECK(r->event.legacy_branch == "580.xx");
  CHECK(r->consumed == 5);
  CHECK_FALSE(r->event.bus_id);
  for (std::string_view line :
       {"nv_peer_mem: disagrees about version of symbol nvidia_p2p_get_pages",
        "nv_peer_mem: Unknown symbol nvidia_p2p_put_pages (err -22)",
        "nvidia: disagrees about version of symbol module_layout"}) {
    INFO(line);
    const std::vector<std::string_view> v{line};
    const auto m = match_signature(v);
    REQUIRE(m);
    CHECK(m->event.kind == LogEventKind::module_symbol);
    CHECK_FALSE(m->event.detail.empty());
  }
  // Another module's symbol error is not the NVIDIA driver's.
  const std::vector<std::string_view> other{"zfs: Unknown symbol spl_panic (err -2)"};
  CHECK_FALSE(match_signature(other));
}
