// Links above and beside the GPUs: the parsers of the sysfs link attributes and AER statistics on
// the text the kernel writes, and the pcie.link-* / pcie.aer-* rules end to end on the fixtures of
// tests/fixtures/generate_topology.py (link_fixtures).
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/rules/topology.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/tenths.hpp"
#include "support/checked.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>

using namespace gpf;
using gpf::test::check_fixture;
using gpf::test::finding;
using gpf::test::findings;

namespace {

std::vector<std::string> warn_ids(const Assessment& a) {
  std::vector<std::string> out;
  for (const auto& f : a.findings) {
    if (f.severity >= Severity::warn) {
      out.push_back(f.id);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool any_evidence_contains(const Finding& f, std::string_view text) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return e.find(text) != std::string::npos; });
}

// The AER statistics file of a 6.x kernel (drivers/pci/pcie/aer.c), with counts.
const char* const k_aer_correctable = "RxErr 1\nBadTLP 5\nBadDLLP 0\nRollover 0\nTimeout 0\n"
                                      "NonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR 6\n";
const char* const k_aer_nonfatal =
    "Undefined 0\nDLP 0\nSDES 0\nTLP 0\nFCP 0\nCmpltTO 2\nCmpltAbrt 0\nUnxCmplt 0\nRxOF 0\n"
    "MalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\nUncorrIntErr 0\nBlockedTLP 0\n"
    "AtomicOpBlocked 0\nTLPBlockedErr 0\nPoisonTLPBlocked 0\nTOTAL_ERR_NONFATAL 2\n";
// An older kernel's long names (4.19): only the TOTAL_ERR_* line is the same.
const char* const k_aer_fatal_old = "Undefined 0\nData Link Protocol 0\nSurprise Down Error 0\n"
                                    "Poisoned TLP 0\nFlow Control Protocol 0\n"
                                    "Completion Timeout 0\nTOTAL_ERR_FATAL 1\n";

} // namespace

TEST_CASE("link parsers: current_link_speed / max_link_speed as kernels print them") {
  CHECK(parse_link_speed("32.0 GT/s PCIe\n") == 320u);
  CHECK(parse_link_speed("16.0 GT/s PCIe\n") == 160u);
  CHECK(parse_link_speed("2.5 GT/s PCIe\n") == 25u);
  CHECK(parse_link_speed("8 GT/s\n") == 80u); // 4.x kernels
  CHECK(parse_link_speed("5 GT/s") == 50u);
  CHECK(parse_link_speed("2.5 GT/s\n") == 25u);
  CHECK_FALSE(parse_link_speed("Unknown\n"));
  CHECK_FALSE(parse_link_speed("Unknown speed\n"));
  CHECK_FALSE(parse_link_speed(""));
  CHECK_FALSE(parse_link_speed("x GT/s"));
  CHECK_FALSE(parse_link_speed("2.55 GT/s"));
  CHECK_FALSE(parse_link_speed("99999999999 GT/s"));
  CHECK(tenths_text(320) == "32");
  CHECK(tenths_text(25) == "2.5");
}

TEST_CASE("link parsers: current_link_width / max_link_width") {
  CHECK(parse_link_width("16\n") == 16u);
  CHECK(parse_link_width("8\n") == 8u);
  CHECK(parse_link_width("0\n") == 0u); // link down
  CHECK_FALSE(parse_link_width("255\n"));
  CHECK_FALSE(parse_link_width("x16\n"));
  CHECK_FALSE(parse_link_width(""));
  CHECK_FALSE(parse_link_width("-1"));
}

TEST_CASE("link parsers: the TOTAL_ERR_* line of aer_dev_* files, short and long names") {
  CHECK(parse_aer_total(k_aer_correctable, "TOTAL_ERR_COR") == 6u);
  CHECK(parse_aer_total(k_aer_nonfatal, "TOTAL_ERR_NONFATAL") == 2u);
  CHECK(parse_aer_total(k_aer_fatal_old, "TOTAL_ERR_FATAL") == 1u);
  CHECK_FALSE(parse_aer_total(k_aer_nonfatal, "TOTAL_ERR_FATAL"));
  CHECK_FALSE(parse_aer_total("TOTAL_ERR_COR lots\n", "TOTAL_ERR_COR"));
  CHECK_FALSE(parse_aer_total("", "TOTAL_ERR_COR"));
  CHECK(parse_aer_total("TOTAL_ERR_COR 18446744073709551615\n", "TOTAL_ERR_COR") ==
        18446744073709551615ull);
}

TEST_CASE("pcie links: each fixture's verdict and warnings; GPUs stay usable") {
  struct Case {
    const char* fixture;
    Verdict verdict;
    std::vector<std::string> warn_or_fail;
    int usable;
    const char* cvd;
  };
  const Case cases[] = {
      {"pcie-link-gpu-x8", Verdict::warn, {"pcie.link-downtrained"}, 2, "0,1"},
      {"pcie-link-uplink-x8", Verdict::warn, {"pcie.link-downtrained"}, 4, "0,1,2,3"},
      {"pcie-aer-bridge", Verdict::warn, {"pcie.aer-errors"}, 2, "0,1"},
      {"pcie-link-absent", Verdict::pass, {}, 2, "0,1"},
      {"healthy-4gpu", Verdict::pass, {}, 4, "0,1,2,3"},
  };
  for (const auto& c : cases) {
    INFO(c.fixture);
    const auto r = check_fixture(c.fixture);
    CHECK(r.assessment.verdict == c.verdict);
    CHECK(warn_ids(r.assessment) == c.warn_or_fail);
    CHECK(r.assessment.recommendation.devices == c.usable);
    CHECK(r.assessment.recommendation.cuda_visible_devices == c.cvd);
    const auto* p = r.facts.probe("pcie");
    REQUIRE(p);
    CHECK(p->state == ProbeState::ok);
  }
}

TEST_CASE("pcie links: a GPU at x8 behind an x16 port names the hop and both widths") {
  const auto r = check_fixture("pcie-link-gpu-x8");
  const auto hits = findings(r.assessment, "pcie.link-downtrained");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->message.find("0000:17:00.0 ↔ 0000:18:00.0 trained x8 of x16") !=
        std::string::npos);
  CHECK(hits[0]->gpu == "0000:18:00.0");
  CHECK(any_evidence_contains(*hits[0], "0000:18:00.0/current_link_width: 8"));
  CHECK(hits[0]->remedy.find("0000:18:00.0") != std::string::npos);
  CHECK_FALSE(finding(r.assessment, "pcie.link-slow"));
  // the facts keep each port's view
  const auto* gpu = find_gpu_path(r.facts.topology, "0000:18:00.0");
  REQUIRE(gpu);
  CHECK(gpu->link.width == 8u);
  CHECK(gpu->link.max_width == 16u);
  CHECK(gpu->link.speed == 320u);
  CHECK(gpu->link.speed_text == "32.0 GT/s PCIe");
  CHECK(gpu->aer.correctable == 0u);
}

TEST_CASE("pcie links: a downtrained switch uplink is one finding naming the four GPUs behind it") {
  const auto r = check_fixture("pcie-link-uplink-x8");
  const auto hits = findings(r.assessment, "pcie.link-downtrained");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->message.find("0000:15:01.0 ↔ 0000:16:00.0 trained x8 of x16") !=
        std::string::npos);
  for (const char* bus : {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"}) {
    CHECK(hits[0]->message.find(bus) != std::string::npos);
  }
  CHECK_FALSE(hits[0]->gpu);
  // the idle GPUs at 2.5 GT/s: information, not a warning
  const auto* slow = finding(r.assessment, "pcie.link-slow");
  REQUIRE(slow);
  CHECK(slow->severity == Severity::info);
  CHECK(slow->message.find("4 PCIe links run") != std::string::npos);
  CHECK(slow->message.find("at 2.5 GT/s of 32 GT/s") != std::string::npos);
}

TEST_CASE("pcie links: AER counts are attributed to the link, both ends; correctable is info") {
  const auto r = check_fixture("pcie-aer-bridge");
  const auto hits = findings(r.assessment, "pcie.aer-errors");
  REQUIRE(hits.size() == 2);
  const Finding* uplink = nullptr;
  const Finding* down = nullptr;
  for (const auto* h : hits) {
    (h->message.find("0000:15:01.0 ↔ 0000:16:00.0") != std::string::npos ? uplink : down) = h;
  }
  REQUIRE(uplink);
  REQUIRE(down);
  CHECK(uplink->severity == Severity::info);
  CHECK(uplink->message.find("0 fatal, 0 non-fatal and 6 correctable") != std::string::npos);
  CHECK(down->severity == Severity::warn);
  CHECK(down->message.find("0000:17:01.0 ↔ 0000:2a:00.0") != std::string::npos);
  CHECK(down->message.find("2 non-fatal") != std::string::npos);
  CHECK(down->gpu == "0000:2a:00.0");
  CHECK(any_evidence_contains(*down, "TOTAL_ERR_NONFATAL 2"));
}

TEST_CASE("pcie links: without root the hops are told by position") {
  // topo-acs-unreadable: config files of 64 bytes, so no port types; the path is root port,
  // upstream, downstream, GPU: links (root, up) and (down, GPU), not (up, down).
  const auto r = check_fixture("topo-acs-unreadable");
  const auto hops = pcie_hops(r.facts.topology, {"0000:18:00.0"});
  REQUIRE(hops.size() == 2);
  CHECK(hops[0].upper == "0000:15:01.0");
  CHECK(hops[0].lower == "0000:16:00.0");
  CHECK(hops[1].upper == "0000:17:00.0");
  CHECK(hops[1].lower == "0000:18:00.0");
}

TEST_CASE("ib parsers: state, phys_state and rate as sysfs-class-infiniband prints them") {
  auto s = parse_ib_state("4: ACTIVE\n");
  REQUIRE(s);
  CHECK(s->code == 4u);
  CHECK(s->name == "ACTIVE");
  s = parse_ib_state("5: LinkUp\n");
  REQUIRE(s);
  CHECK(s->code == 5u);
  CHECK(s->name == "LinkUp");
  s = parse_ib_state("4: PortConfigurationTraining\n");
  REQUIRE(s);
  CHECK(s->name == "PortConfigurationTraining");
  CHECK(parse_ib_state("1: DOWN")->code == 1u);
  CHECK_FALSE(parse_ib_state("ACTIVE"));
  CHECK_FALSE(parse_ib_state(": ACTIVE"));
  CHECK_FALSE(parse_ib_state("4:"));
  CHECK_FALSE(parse_ib_state("x: ACTIVE"));
  CHECK(parse_ib_rate("400 Gb/sec (4X NDR)\n") == 4000u);
  CHECK(parse_ib_rate("200 Gb/sec (4X HDR)\n") == 2000u);
  CHECK(parse_ib_rate("100 Gb/sec (4X EDR)\n") == 1000u);
  CHECK(parse_ib_rate("2.5 Gb/sec (1X SDR)\n") == 25u);
  CHECK(parse_ib_rate("25 Gb/sec (1X EDR)") == 250u);
  CHECK_FALSE(parse_ib_rate("fast"));
  CHECK_FALSE(parse_ib_rate("Gb/sec"));
}

TEST_CASE("rdma fixtures: verdicts, warnings and the GPUs the job gets") {
  struct Case {
    const char* fixture;
    Verdict verdict;
    std::vector<std::string> warn_or_fail;
    const char* cvd;
  };
  const Case cases[] = {
      {"ib-hgx-healthy", Verdict::pass, {}, "0,1,2,3,4,5,6,7"},
      {"ib-port-down", Verdict::warn, {"ib.port-not-active"}, "0,1,2,3,4,5,6,7"},
      {"ib-memlock-low", Verdict::warn, {"limits.memlock-low"}, "0,1,2,3,4,5,6,7"},
      {"ib-port-disabled", Verdict::warn, {"ib.port-disabled"}, "0,1,2,3,4,5,6,7"},
      {"rdma-no-peermem", Verdict::warn, {"rdma.peer-memory-missing"}, "0,1"},
      {"rdma-dmabuf", Verdict::pass, {}, "0,1"},
      {"rdma-peermem-mismatch", Verdict::fail, {"rdma.peermem-version"}, ""}, // host-level fail
      {"pcie-link-absent", Verdict::pass, {}, "0,1"},
  };
  for (const auto& c : cases) {
    INFO(c.fixture);
    const auto r = check_fixture(c.fixture);
    CHECK(r.assessment.verdict == c.verdict);
    CHECK(warn_ids(r.assessment) == c.warn_or_fail);
    CHECK(r.assessment.recommendation.cuda_visible_devices == c.cvd);
    for (const auto& f : r.assessment.findings) {
      INFO(f.id << ": " << f.message);
      CHECK_FALSE(f.evidence.empty());
      CHECK_FALSE(f.remedy.empty());
    }
    for (const auto* name : {"pcie", "rdma"}) {
      const auto* p = r.facts.probe(name);
      REQUIRE(p);
      INFO(p->name << ": " << p->message);
      CHECK(p->state != ProbeState::error);
    }
  }
}

TEST_CASE(
    "ib: a port DOWN with LinkUp says no subnet manager, names the port and its PCI address") {
  const auto r = check_fixture("ib-port-down");
  const auto hits = findings(r.assessment, "ib.port-not-active");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->message.find("mlx5_5 port 1 (0000:ac:00.0)") != std::string::npos);
  CHECK(hits[0]->message.find("no subnet manager") != std::string::npos);
  CHECK(any_evidence_contains(*hits[0],
                              "state 1: DOWN, phys_state 5: LinkUp, rate 400 Gb/sec (4X NDR)"));
  CHECK(hits[0]->remedy.find("ibstat mlx5_5") != std::string::npos);
}

TEST_CASE("ib: a port switched off while its siblings are up warns, names it and its GPU") {
  const auto r = check_fixture("ib-port-disabled");
  CHECK(findings(r.assessment, "ib.port-not-active").empty()); // one judgement per condition
  const auto hits = findings(r.assessment, "ib.port-disabled");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->severity == Severity::warn);
  CHECK_THAT(hits[0]->message, Catch::Contains("mlx5_3 port 1 (") &&
                                   Catch::Contains("while 7 other ports of this node are active") &&
                                   Catch::Contains("nearest NIC of GPU 3 ("));
  CHECK(any_evidence_contains(*hits[0], "phys_state 3: Disabled"));
  CHECK_THAT(hits[0]->remedy, Catch::Contains("--severity ib.port-disabled=info") &&
                                  Catch::Contains("ibstat mlx5_3"));

  // every port off: nothing is lost against a sibling, information only
  auto facts = r.facts;
  for (auto& d : facts.topology.rdma.devices) {
    for (auto& p : d.ports) {
      p.state_code = 1;
      p.phys_state_code = 3;
    }
  }
  const auto all_off = assess(facts, builtin_rules(), CheckOptions{});
  const auto off = findings(all_off, "ib.port-disabled");
  REQUIRE(off.size() == 8);
  CHECK(off[0]->severity == Severity::info);
  CHECK_THAT(off[0]->message, Catch::Contains("and no other port on this node is active"));
}

TEST_CASE("memlock: 64 KiB warns where InfiniBand ports are active, is information without") {
  const auto r = check_fixture("ib-memlock-low");
  const auto hits = findings(r.assessment, "limits.memlock-low");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->severity == Severity::warn);
  CHECK_THAT(hits[0]->message, Catch::Contains("The locked-memory limit is 64 KiB while 8 "
                                               "InfiniBand/RoCE ports are active") &&
                                   Catch::Contains("ibv_reg_mr"));
  CHECK(any_evidence_contains(*hits[0], "active ports: mlx5_0 port 1 (InfiniBand)"));
  CHECK_THAT(hits[0]->remedy, Catch::Contains("--ulimit memlock=-1"));
  // the same node with every port down: RDMA devices but nothing active, information
  auto facts = r.facts;
  for (auto& d : facts.topology.rdma.devices) {
    for (auto& p : d.ports) {
      p.state_code = 1;
    }
  }
  const auto down = assess(facts, builtin_rules(), CheckOptions{});
  const auto info = findings(down, "limits.memlock-low");
  REQUIRE(info.size() == 1);
  CHECK(info[0]->severity == Severity::info);
  CHECK_THAT(info[0]->message, Catch::Contains("no port of theirs is active now"));
  // topo-shm-small: RDMA devices without ports at all, information
  const auto shm = check_fixture("topo-shm-small");
  const auto small = findings(shm.assessment, "limits.memlock-low");
  REQUIRE(small.size() == 1);
  CHECK(small[0]->severity == Severity::info);
}

TEST_CASE("rdma: facts hold every port and the nearest NIC of each GPU") {
  const auto r = check_fixture("ib-hgx-healthy");
  const auto& rdma = r.facts.topology.rdma;
  REQUIRE(rdma.ran);
  REQUIRE(rdma.devices.size() == 8);
  CHECK(rdma.devices[0].name == "mlx5_0");
  CHECK(rdma.devices[0].bus_id == "0000:19:00.0");
  REQUIRE(rdma.devices[0].ports.size() == 1);
  CHECK(rdma.devices[0].ports[0].active());
  CHECK(rdma.devices[0].ports[0].rate == 4000u);
  CHECK(rdma.devices[0].ports[0].link_layer == "InfiniBand");
  REQUIRE(rdma.nearest.size() == 8);
  for (std::size_t i = 0; i < 8; ++i) {
    CHECK(rdma.nearest[i].nic == "mlx5_" + std::to_string(i));
    CHECK(rdma.nearest[i].distance == PciDistance::switch_shared);
  }
  CHECK(rdma.peermem_version == "550.54.14");
  CHECK_FALSE(finding(r.assessment, "rdma.nic-other-socket"));
  CHECK_FALSE(finding(r.assessment, "rdma.peer-memory-missing"));
}

TEST_CASE("rdma: DMA-BUF with the open module makes a missing peer-memory module information") {
  const auto r = check_fixture("rdma-dmabuf");
  const auto* f = finding(r.assessment, "rdma.peer-memory-missing");
  REQUIRE(f);
  CHECK(f->severity == Severity::info);
  const auto prop = check_fixture("rdma-no-peermem");
  const auto* w = finding(prop.assessment, "rdma.peer-memory-missing");
  REQUIRE(w);
  CHECK(w->severity == Severity::warn);
  CHECK(w->message.find("proprietary kernel module") != std::string::npos);
}

TEST_CASE("rdma: nvidia_peermem of another driver version fails and names both versions") {
  const auto r = check_fixture("rdma-peermem-mismatch");
  const auto* f = finding(r.assessment, "rdma.peermem-version");
  REQUIRE(f);
  CHECK(f->severity == Severity::fail);
  CHECK(f->message.find("nvidia_peermem 535.161.07") != std::string::npos);
  CHECK(f->message.find("550.54.14") != std::string::npos);
}

TEST_CASE("no link inputs: the rdma probe is skipped and no link finding appears") {
  const auto r = check_fixture("pcie-link-absent");
  const auto* p = r.facts.probe("rdma");
  REQUIRE(p);
  CHECK(p->state == ProbeState::skipped);
  for (const auto& f : r.assessment.findings) {
    INFO(f.id);
    CHECK(f.id.rfind("ib.", 0) != 0);
    CHECK(f.id.rfind("rdma.", 0) != 0);
    CHECK(f.id != "pcie.link-downtrained");
    CHECK(f.id != "pcie.link-slow");
    CHECK(f.id != "pcie.aer-errors");
  }
}

TEST_CASE("sxid: a three-line NVSwitch report is one event, decoded by the catalog") {
  const std::string head = "[ 9001.500000] nvidia-nvswitch3: SXid (PCI:0000:c3:00.0): 12028, ";
  const std::string report =
      head + "Non-fatal, Link 32 egress non-posted PRIV error (First)\n" + head +
      "Severity 0 Engine instance 32 Sub-engine instance 00\n" + head +
      "Data {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x00000000, "
      "0x00000000, 0x00000000}\n";
  auto log = scan_kernel_log(report + report);
  REQUIRE(log.host_events.size() == 1);
  const auto& e = log.host_events[0];
  CHECK(e.kind == LogEventKind::sxid);
  CHECK(e.sxid == 12028u);
  CHECK(e.detail == "0000:c3:00.0");
  CHECK(e.count == 2);
  CHECK_FALSE(e.bus_id);
  CHECK(e.meaning.find("stalls NVLink traffic until a reset") != std::string::npos);
  CHECK(e.meaning.find("nvidia-nvswitch3") != std::string::npos);
  // the catalog, not the line's word: 22013 says "Non-fatal" and is harmless; an unknown code
  // keeps the line's word only as a quote
  log = scan_kernel_log("nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 22013, Non-fatal, Link 00 "
                        "Minion Link DLREQ interrupt\n"
                        "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 99999, Fatal, something new\n");
  REQUIRE(log.host_events.size() == 2);
  CHECK(find_sxid(22013)->cls == SxidClass::harmless);
  CHECK(find_sxid(12030)->cls == SxidClass::fatal);
  CHECK(find_sxid(12028)->cls == SxidClass::stalled);
  CHECK_FALSE(find_sxid(99999));
  CHECK(log.host_events[1].meaning.find("not in NVIDIA's SXid catalog") != std::string::npos);
  // malformed heads are no event
  log = scan_kernel_log("nvidia-nvswitch0: SXid (PCI:zz): 12028, Non-fatal, x\n"
                        "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): , Non-fatal\n");
  CHECK(log.host_events.empty());
}

TEST_CASE("sxid fixtures: fatal on this boot fails, a stall warns, harmless and earlier-boot ones "
          "do not") {
  struct Case {
    const char* fixture;
    Verdict verdict;
    std::vector<std::string> warn_or_fail;
  };
  const Case cases[] = {
      {"log-sxid-fatal", Verdict::fail, {"nvswitch.sxid-fatal"}},
      {"log-sxid-stall", Verdict::warn, {"nvswitch.sxid-nonfatal"}},
      {"log-sxid-earlier-boot", Verdict::pass, {}},
  };
  for (const auto& c : cases) {
    INFO(c.fixture);
    const auto r = check_fixture(c.fixture);
    CHECK(r.assessment.verdict == c.verdict);
    CHECK(warn_ids(r.assessment) == c.warn_or_fail);
    // the four 22013s of link training: information, one per switch
    std::size_t harmless = 0;
    for (const auto* f : findings(r.assessment, "nvswitch.sxid-nonfatal")) {
      if (f->severity == Severity::info) {
        ++harmless;
        CHECK(f->message.find("22013") != std::string::npos);
      }
    }
    CHECK(harmless == 4);
  }
  const auto stall = check_fixture("log-sxid-stall");
  std::size_t warned = 0;
  for (const auto* f : findings(stall.assessment, "nvswitch.sxid-nonfatal")) {
    if (f->severity == Severity::warn) {
      ++warned;
      CHECK(f->message.find("12028") != std::string::npos);
      CHECK(f->message.find("2 times") != std::string::npos);
      CHECK(f->message.find("the NVLink fabric of GPU 0") != std::string::npos);
      CHECK(f->remedy.find("0000:00:08.0") != std::string::npos);
      CHECK(f->evidence.size() == 2); // the first line and the last occurrence
    }
  }
  CHECK(warned == 1);
  const auto earlier = check_fixture("log-sxid-earlier-boot");
  const auto* info = finding(earlier.assessment, "log.earlier-boot");
  REQUIRE(info);
  CHECK(info->message.find("SXid 12030") != std::string::npos);
}

TEST_CASE("hung tasks: a trace in the NVIDIA modules is one event; others are not events") {
  // 5.15: the trace follows a few lines later; the name may contain ':' (pid after the last one)
  auto log = scan_kernel_log(
      "[86400.100000] INFO: task nvc:[driver]:5403 blocked for more than 122 seconds.\n"
      "[86400.100000]       Tainted: P           OE     5.15.0-91-generic #101-Ubuntu\n"
      "[86400.100000] task:nvc:[driver]    state:D stack:    0 pid: 5403 ppid:     1 flags:0x00000000\n"
      "[86400.100000] Call Trace:\n"
      "[86400.100000]  <TASK>\n"
      "[86400.100000]  __schedule+0x24e/0x590\n"
      "[86400.100000]  os_acquire_mutex+0x45/0x60 [nvidia]\n"
      "[86400.100000]  _nv012345rm+0x1d/0x30 [nvidia]\n");
  REQUIRE(log.host_events.size() == 1);
  const auto& e = log.host_events[0];
  CHECK(e.kind == LogEventKind::hung_task);
  CHECK(e.detail == "nvc:[driver]:5403");
  CHECK(e.meaning.find("task nvc:[driver] (pid 5403)") != std::string::npos);
  CHECK(e.meaning.find("os_acquire_mutex in nvidia") != std::string::npos);
  REQUIRE(e.lines.size() == 2);
  CHECK(e.lines[0].find("INFO: task nvc:[driver]:5403") != std::string::npos);
  // 4.x: "[<address>] function+off/len [module]" trace lines
  log = scan_kernel_log(
      "[ 7200.500000] INFO: task python:9001 blocked for more than 120 seconds.\n"
      "[ 7200.500000]       Not tainted 4.18.0-553.el8_10.x86_64 #1\n"
      "[ 7200.500000] python          D    0  9001      1 0x00000080\n"
      "[ 7200.500000] Call Trace:\n"
      "[ 7200.500000]  [<ffffffff8b7a1c29>] schedule+0x29/0x70\n"
      "[ 7200.500000]  [<ffffffffc0a1b2c3>] uvm_spin_loop+0x9c/0x100 [nvidia_uvm]\n");
  REQUIRE(log.host_events.size() == 1);
  CHECK(log.host_events[0].meaning.find("uvm_spin_loop in nvidia_uvm") != std::string::npos);
  // a hung task elsewhere, and an NVIDIA line long after it: no event
  log = scan_kernel_log(
      "[   10.000000] INFO: task jbd2/sda1-8:612 blocked for more than 120 seconds.\n"
      "[   10.000000]  jbd2_journal_commit_transaction+0x2fd/0x1a30\n" +
      std::string(9000, 'x') +
      "\n[   99.000000]  nv_something+0x1/0x2 [nvidia]\n"
      "[   99.100000] INFO: task broken blocked for more than 120 seconds.\n"
      "[   99.200000]  os_acquire_mutex+0x45/0x60 [nvidia]\n");
  CHECK(log.host_events.empty());
}

TEST_CASE("hung tasks: the fixture's stuck nvidia_uvm task warns, the ext4 one is not named") {
  const auto r = check_fixture("log-hung-task-uvm");
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(warn_ids(r.assessment) == std::vector<std::string>{"hang.driver-stuck"});
  const auto hits = findings(r.assessment, "hang.driver-stuck");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->message.find("python3 (pid 48213)") != std::string::npos);
  CHECK(hits[0]->message.find("uvm_va_space_destroy in nvidia_uvm") != std::string::npos);
  CHECK(hits[0]->message.find("jbd2") == std::string::npos);
  CHECK(r.assessment.recommendation.cuda_visible_devices == "0,1");
}

TEST_CASE("gpu processes: a stray process on /dev/nvidia3 is matched by device number") {
  const auto r = check_fixture("proc-stray-gpu3");
  const auto& procs = r.facts.topology.gpu_processes;
  REQUIRE(procs.ran);
  REQUIRE(procs.holders.size() == 2); // nvidia-persistenced and python3
  const auto* info = finding(r.assessment, "process.holds-gpu");
  REQUIRE(info);
  CHECK(findings(r.assessment, "process.holds-gpu").size() == 1); // persistenced is no leftover
  CHECK(info->severity == Severity::info);
  CHECK(info->message.find("pid 4242 (python3) has GPU 3 (0000:5d:00.0") != std::string::npos);
  CHECK(info->gpu == "0000:5d:00.0");
  CHECK(any_evidence_contains(*info, "/proc/4242/fd/7 -> /dev/nvidia3 (195:3)"));
  CHECK(r.assessment.verdict == Verdict::pass);
  // the node is meant to be idle: a warning naming the process, and the recommendation is the
  // GPUs nobody else uses (the remedy says "choose other GPUs")
  CheckOptions idle;
  idle.expect_idle = true;
  const auto w = check_fixture("proc-stray-gpu3", idle);
  const auto* warn = finding(w.assessment, "process.holds-gpu");
  REQUIRE(warn);
  CHECK(warn->severity == Severity::warn);
  CHECK(warn->remedy.find("kill 4242") != std::string::npos);
  CHECK(warn->effect == Effect::gpu_unusable);
  CHECK(w.assessment.verdict == Verdict::warn);
  CHECK(w.assessment.recommendation.cuda_visible_devices == "0,1,2");
  // without --expect-idle the busy GPU is in use, not broken: it stays
  CHECK(r.assessment.recommendation.cuda_visible_devices == "0,1,2,3");
}

TEST_CASE("gpu processes: a daemon is known by its executable, not by the name it gives itself") {
  // proc-stray-gpu3's pid 1017 is "nvidia-persiste" by comm; a leftover job may call itself that
  // (prctl PR_SET_NAME): with its executable elsewhere it is a process on the GPU like any other
  namespace fs = std::filesystem;
  gpf::test::TempDir t;
  fs::copy(gpf::test::fixture("proc-stray-gpu3"), t.path,
           fs::copy_options::recursive | fs::copy_options::overwrite_existing |
               fs::copy_options::copy_symlinks);
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  CheckOptions idle;
  idle.expect_idle = true;
  const auto judge = [&] {
    const Facts facts = collect_facts(Host::snapshot(t.path).value(), probe_options);
    return std::pair{facts, assess(facts, builtin_rules(), idle)};
  };
  {
    const auto [facts, a] = judge(); // /usr/bin/nvidia-persistenced: the daemon, excused
    CHECK(findings(a, "process.holds-gpu").size() == 1);
  }
  for (const char* exe : {"/home/bob/bin/nvidia-persistenced", "/usr/bin/python3.11", ""}) {
    INFO(exe);
    fs::remove(t.path / "proc/1017/exe");
    if (*exe != '\0') {
      fs::create_symlink(exe, t.path / "proc/1017/exe");
    }
    const auto [facts, a] = judge();
    const auto held = findings(a, "process.holds-gpu");
    REQUIRE(held.size() >= 2);
    CHECK(std::any_of(held.begin(), held.end(), [](const Finding* f) {
      return f->message.find("pid 1017 (nvidia-persiste)") != std::string::npos;
    }));
  }
}

TEST_CASE("gpu processes: the device number decides, whatever the link's text says") {
  // GPU Operator path in the process's mount namespace, the process in D state
  const auto r = check_fixture("proc-d-state-nvidia");
  const auto& holders = r.facts.topology.gpu_processes.holders;
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].minors == std::vector<unsigned>{1});
  CHECK(holders[0].state == 'D');
  const auto* stuck = finding(r.assessment, "hang.process-in-d-state");
  REQUIRE(stuck);
  CHECK(stuck->message.find("pid 5151 (nvidia-smi)") != std::string::npos);
  CHECK(any_evidence_contains(*stuck, "/proc/5151/status: State: D"));
  CHECK(r.assessment.verdict == Verdict::warn);
  CHECK(warn_ids(r.assessment) == std::vector<std::string>{"hang.process-in-d-state"});
  // no process holds anything on a host without such fds: probe ran, no holders, no finding
  const auto clean = check_fixture("healthy-4gpu");
  CHECK(clean.facts.topology.gpu_processes.holders.empty());
  CHECK_FALSE(finding(clean.assessment, "process.holds-gpu"));
}

TEST_CASE("rdma: a GPU whose nearest NIC is on another NUMA node is information") {
  Facts f;
  GpuFacts g0;
  g0.bus_id = "0000:18:00.0";
  GpuFacts g1;
  g1.bus_id = "0000:9a:00.0";
  f.gpus = {g0, g1};
  f.topology.rdma.ran = true;
  f.topology.rdma.nearest = {
      {"0000:18:00.0", "mlx5_0", "0000:19:00.0", PciDistance::switch_shared, 0, 0},
      {"0000:9a:00.0", "mlx5_0", "0000:19:00.0", PciDistance::apart, 1, 0}};
  const auto a = assess(f, builtin_rules(), CheckOptions{});
  const auto hits = findings(a, "rdma.nic-other-socket");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0]->severity == Severity::info);
  CHECK(hits[0]->message.find("1 GPU has no RDMA NIC on its own NUMA node") != std::string::npos);
  CHECK(hits[0]->message.find("0000:9a:00.0") != std::string::npos);
  CHECK(hits[0]->message.find("0000:18:00.0") == std::string::npos);
  CHECK(any_evidence_contains(*hits[0], "GPU 0000:9a:00.0 numa_node 1; nearest NIC mlx5_0 "
                                        "(0000:19:00.0) numa_node 0"));
  // unknown NUMA nodes (-1 or absent) say nothing
  f.topology.rdma.nearest[1].gpu_numa_node = -1;
  CHECK(findings(assess(f, builtin_rules(), CheckOptions{}), "rdma.nic-other-socket").empty());
}

namespace {

// pcie-link-gpu-x8 (0000:18:00.0 at x8 of x16, 0000:2a:00.0 healthy) with what NVML would report:
// 0000:18:00.0 at x8 of x16 and persistence off; 0000:2a:00.0 in compute mode `nvml_mode`.
void add_nvml(Facts& f, std::optional<int> nvml_mode) {
  f.nvml.ran = true;
  f.nvml.init_code = 0;
  NvmlGpu a;
  a.bus_id = "0000:18:00.0";
  a.pcie_width = 8;
  a.pcie_width_max = 16;
  a.persistence_mode = false;
  NvmlGpu b;
  b.bus_id = "0000:2a:00.0";
  b.compute_mode = nvml_mode;
  f.nvml.gpus = {a, b};
}

void add_cuda_mode(Facts& f, int mode) {
  CudaDevice d;
  d.index = 1;
  d.bus_id = "0000:2a:00.0";
  d.compute_mode = mode;
  f.cuda.devices.push_back(d);
}

// The ids of the findings of these rows about this GPU, with their severity and effect.
std::vector<std::string> pair_findings(const Assessment& a, const std::string& gpu,
                                       std::initializer_list<std::string_view> ids) {
  std::vector<std::string> out;
  for (const auto& f : a.findings) {
    if (f.gpu == gpu && std::find(ids.begin(), ids.end(), f.id) != ids.end()) {
      out.push_back(fmt::format("{} {} {}", f.id, severity_name(f.severity),
                                f.effect == Effect::gpu_unusable ? "drops" : "keeps"));
    }
  }
  return out;
}

} // namespace

TEST_CASE("sibling rows: one condition, one verdict and effect, whichever probe read it") {
  const Facts sysfs_only = check_fixture("pcie-link-gpu-x8").facts;
  const auto run = [](const Facts& f) { return assess(f, builtin_rules(), {}); };

  SECTION("PCIe link x8 of x16: sysfs and NVML") {
    Facts with_nvml = sysfs_only;
    add_nvml(with_nvml, 0);
    Facts nvml_only = with_nvml; // sysfs did not read the GPU's link
    for (auto& g : nvml_only.topology.pcie.gpus) {
      g.link = {};
    }
    for (auto& [bus, b] : nvml_only.topology.pcie.bridges) {
      b.link = {};
    }
    const auto a = run(sysfs_only);
    const auto b = run(with_nvml);
    const auto c = run(nvml_only);
    const auto ids = {std::string_view("pcie.link-downtrained"),
                      std::string_view("nvml.pcie-width-degraded")};
    CHECK(pair_findings(a, "0000:18:00.0", ids) ==
          std::vector<std::string>{"pcie.link-downtrained warn keeps"});
    CHECK(pair_findings(b, "0000:18:00.0", ids) == pair_findings(a, "0000:18:00.0", ids));
    CHECK(pair_findings(c, "0000:18:00.0", ids) ==
          std::vector<std::string>{"nvml.pcie-width-degraded warn keeps"});
    for (const auto* x : {&b, &c}) {
      CHECK(x->verdict == a.verdict);
      CHECK(x->recommendation.cuda_visible_devices == a.recommendation.cuda_visible_devices);
    }
    CHECK(a.verdict == Verdict::warn);
    CHECK(a.recommendation.cuda_visible_devices == "0,1");
  }

  SECTION("compute mode Prohibited: the CUDA attribute and NVML") {
    Facts cuda_only = sysfs_only;
    add_cuda_mode(cuda_only, 2);
    Facts nvml_only = sysfs_only;
    add_nvml(nvml_only, 2);
    Facts both = nvml_only;
    add_cuda_mode(both, 2);
    const auto ids = {std::string_view("gpu.compute-mode-prohibited"),
                      std::string_view("nvml.compute-prohibited")};
    const auto a = run(cuda_only);
    const auto b = run(nvml_only);
    const auto c = run(both);
    CHECK(pair_findings(a, "0000:2a:00.0", ids) ==
          std::vector<std::string>{"gpu.compute-mode-prohibited fail drops"});
    CHECK(pair_findings(b, "0000:2a:00.0", ids) ==
          std::vector<std::string>{"nvml.compute-prohibited fail drops"});
    // Both probes saw it: one finding, the CUDA reading leading, NVML's in its evidence.
    CHECK(pair_findings(c, "0000:2a:00.0", ids) == pair_findings(a, "0000:2a:00.0", ids));
    const auto* lead = finding(c, "gpu.compute-mode-prohibited");
    REQUIRE(lead);
    CHECK(lead->evidence.size() == 2);
    CHECK(lead->remedy == "Set Default mode as root: `nvidia-smi -i 0000:2a:00.0 -c DEFAULT`");
    for (const auto* x : {&a, &b, &c}) {
      CHECK(x->verdict == Verdict::warn);
      CHECK(x->recommendation.cuda_visible_devices == "0");
    }
  }

  SECTION("persistence off: NVML names the process-table row as its cause") {
    const Rule* off = find_rule("nvml.persistence-off");
    REQUIRE(off);
    CHECK(off->caused_by == "persistence.not-running");
    CHECK(off->severity == find_rule("persistence.not-running")->severity);
    Facts with_nvml = sysfs_only;
    add_nvml(with_nvml, 0);
    CHECK(run(with_nvml).verdict == run(sysfs_only).verdict);
  }
}
