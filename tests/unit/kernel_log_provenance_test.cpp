// Kernel-log provenance (docs/kernel-log.md "Provenance"): a line counts as the driver's only in
// the exact shape the driver prints. Any user can make the kernel print a record that starts with a
// process name of their choosing (15 bytes, PR_SET_NAME) and, for a segfault, ends with a file name
// of their choosing (255 bytes of anything); a program can write to /dev/kmsg or syslog with a tag
// of "kernel". None of that may fail a node, and none of it may hide a real error.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/kernel_log_signatures.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/text.hpp"
#include "support/checked.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

using namespace gpf;
using gpf::test::finding;

namespace {

// One real line per signature row (the exact shape the driver or the kernel prints).
const std::vector<std::string> k_real_lines{
    "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "NVRM: Xid (PCI:0000:18:00): 48, pid=1234, name=python3, An uncorrectable double bit error",
    "NVRM: GPU 0000:18:00.0: RmInitAdapter failed! (0x26:0xffff:1481)",
    "NVRM: GPU 0000:18:00.0: rm_init_adapter failed, device minor number 0",
    "NVRM: API mismatch: the client has the version 550.67, but this kernel module has the version "
    "550.54.14.  Please make sure that this kernel module and all NVIDIA driver components have "
    "the same version.",
    "NVRM: The NVIDIA GPU 0000:18:00.0 (PCI ID: 10de:1b80) installed in this system is not "
    "supported by the NVIDIA 550.54.14 driver release.",
    "NVRM: The NVIDIA Tesla K80 GPU installed in this system is supported through the NVIDIA "
    "470.xx Legacy drivers. Continuing probe...",
    "NVRM: BAR1 is 0M @ 0x0 (PCI:0000:18:00.0)",
    "NVRM: The NVIDIA probe routine was not called for 1 device(s).",
    "NVRM: None of the NVIDIA devices were initialized.",
    "NVRM: No NVIDIA GPU found.",
    "NVRM: GPU 0000:18:00.0: GPU does not have the necessary power cables connected.",
    "NVRM: GPU 0000:18:00.0: GPU has fallen off the bus.",
    "NVRM: GPU 0000:18:00.0: RmInitAdapter: Cannot initialize GSP firmware RM",
    "NVRM: A GPU crash dump has been created. If possible, please run",
    "nvidia 0000:18:00.0: Direct firmware load for nvidia/550.54.14/gsp_ga10x.bin failed with "
    "error -2",
    "nvidia: probe of 0000:18:00.0 failed with error -1",
    "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 22003, Fatal, Link 12 Minion Halt",
    "nvidia: disagrees about version of symbol nvidia_p2p_get_pages",
    "nv_peer_mem: Unknown symbol nvidia_p2p_put_pages (err -22)",
    "Loading of unsigned module is rejected",
    "Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7",
    "nvidia 0000:18:00.0: Unable to change power state from D3cold to D0, device inaccessible",
    "pcieport 0000:00:02.0:    [ 5] Surprise Down Error    (First)",
    "pcieport 0000:00:02.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer",
    "pcieport 0000:00:03.1: pciehp: Slot(0): Link Down",
    "nouveau 0000:18:00.0: DRM: VRAM: 8192 MiB",
    "pci 0000:18:00.0: BAR 1: no space for [mem size 0x4000000000 64bit pref]",
    "DMAR: [DMA Read NO_PASID] Request device [18:00.0] fault addr 0xfffff000 [fault reason 0x06] "
    "PTE Read access is not set",
    "AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000d address=0xfffff000 flags=0x0020] "
    "device=18:00.0",
    "nvidia 0000:18:00.0: [drm] Cannot reserve BAR2: -16",
};

// Every event the scan kept, of any boot.
std::vector<LogEvent> all_events(const LogFacts& log) {
  std::vector<LogEvent> out = log.host_events;
  for (const auto& [bus, events] : log.gpu_events) {
    out.insert(out.end(), events.begin(), events.end());
  }
  out.insert(out.end(), log.earlier_boot_events.begin(), log.earlier_boot_events.end());
  return out;
}

std::size_t events_in(const std::string& log) {
  return all_events(scan_kernel_log(log)).size();
}

std::optional<Recognised> match_one(std::string_view message) {
  const std::array<std::string_view, 1> one{message};
  return match_signature(one);
}

// The records a user can make the kernel print around a driver line L.
std::vector<std::string> forgeries(const std::string& line) {
  const std::string ip = "ip 0000000000401000 sp 00007ffc3a1b2c40 error 4";
  const std::string head = line.substr(0, std::min<std::size_t>(15, line.size()));
  const std::string tail = line.size() > 15 ? line.substr(15) : "";
  return {
      // a segfault: the process named "NVRM: x" (or "x"), the line in its file name
      fmt::format("NVRM: x[4242]: segfault at 0 {} in {}[400000+1000]", ip, line),
      fmt::format("x[4242]: segfault at 0 {} in {}[400000+1000]", ip, line),
      // the process named after the line's first 15 bytes: "<comm>[pid]: segfault ..."
      fmt::format("{}[4242]: segfault at 0 {} in {}[400000+1000]", head, ip, tail),
      fmt::format("traps: {}[4242] general protection fault {} in {}[400000+1000]", head, ip, tail),
      // an allocation failure: the name first, a cpuset (cgroup) name later on the line
      fmt::format("{}: page allocation failure: order:0, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), "
                  "nodemask=(null),cpuset={},mems_allowed=0",
                  head, tail),
      fmt::format("{} (4242): drop_caches: 3 {}", head, tail),
  };
}

} // namespace

TEST_CASE("provenance: every real line is still recognised") {
  for (const auto& line : k_real_lines) {
    INFO(line);
    CHECK(match_one(line));
  }
}

TEST_CASE("provenance: a process's own record never matches a signature, whatever its name") {
  for (const auto& line : k_real_lines) {
    for (const auto& forged : forgeries(line)) {
      INFO(forged);
      CHECK(task_record(forged));
      CHECK_FALSE(match_one(forged));
      CHECK(events_in(fmt::format("[  100.000000] {}\n", forged)) == 0);
    }
  }
  // the driver's own lines are not process records
  for (const auto& line : k_real_lines) {
    INFO(line);
    CHECK_FALSE(task_record(line));
  }
}

TEST_CASE("provenance: a pattern found inside a message is not the driver's line") {
  // Each row's pattern, standing after text the driver never prints before it.
  for (const auto& line : k_real_lines) {
    for (const std::string& prefix :
         {std::string("NVRM: cuda app says "), std::string("usb 1-1: string descriptor: "),
          std::string("audit: type=1701 comm=\"x\" exe=\"/tmp/")}) {
      std::string forged = prefix;
      forged += starts_with(line, "NVRM: ") ? line.substr(6) : line;
      INFO(forged);
      CHECK_FALSE(match_one(forged));
    }
  }
}

TEST_CASE("provenance: a record's later lines are the driver's only when its head is") {
  const std::string xid79 =
      "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
  // /dev/kmsg keeps a record whole and escapes its newlines
  CHECK(events_in(fmt::format("6,1,100000000,-;x[4242]: segfault at 0 ip 0 sp 0 error 4 in "
                              "a\\x0a{}[400000+1000]\n",
                              xid79)) == 0);
  CHECK(events_in(fmt::format("6,1,100000000,-;process 'a' launched '/tmp/x\\x0a{}' with "
                              "NULL argv: empty string added\n",
                              xid79)) == 0);
  // rsyslog escapes them as #012
  CHECK(events_in(fmt::format("Dec  6 10:00:00 node kernel: process 'a' launched '/tmp/x#012{}"
                              "' with NULL argv: empty string added\n",
                              xid79)) == 0);
  // dmesg prints the later lines indented
  CHECK(events_in(fmt::format("[  100.000000] x[4242]: segfault at 0 ip 0 sp 0 error 4 in a\n"
                              "               {}[400000+1000]\n",
                              xid79)) == 0);
  // klogctl and /proc/kmsg prefix every line of a record, with the record's own timestamp
  CHECK(events_in(fmt::format("<6>[  100.000000] x[4242]: segfault at 0 ip 0 sp 0 error 4 in "
                              "a NVRM\n<6>[  100.000000] {}[400000+1000]\n",
                              xid79)) == 0);
  // even where the record's head holds nothing the prefilter looks for, over several lines
  CHECK(events_in(fmt::format("<6>[  100.000000] x[4242]: segfault at 0 ip 0 sp 0 error 4 in a\n"
                              "<6>[  100.000000] b\n<6>[  100.000000] {}[400000+1000]\n",
                              xid79)) == 0);
  // while the driver's own multi-line record keeps its lines, in every form
  const std::string mismatch_kmsg =
      "4,7,100000000,-;NVRM: API mismatch: the client has the version 550.67, but\\x0aNVRM: this "
      "kernel module has the version 550.54.14.  Please\\x0aNVRM: make sure that this kernel "
      "module and all NVIDIA driver\\x0aNVRM: components have the same version.\n";
  const std::string mismatch_dmesg =
      "[  100.000000] NVRM: API mismatch: the client has the version 550.67, but\n"
      "               NVRM: this kernel module has the version 550.54.14.  Please\n"
      "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
      "               NVRM: components have the same version.\n";
  for (const auto& log : {mismatch_kmsg, mismatch_dmesg}) {
    INFO(log);
    const auto events = all_events(scan_kernel_log(log));
    REQUIRE(events.size() == 1);
    CHECK(events.front().kind == LogEventKind::api_mismatch);
    CHECK(events.front().kernel_version == "550.54.14");
  }
  // and a real Xid right after a process's record, at another time, counts
  CHECK(events_in(fmt::format("<6>[  100.000000] x[4242]: segfault at 0 ip 0 sp 0 error 4 in "
                              "a NVRM\n<4>[  100.000100] {}\n",
                              xid79)) == 1);
}

TEST_CASE("provenance: only the kernel's facility is the kernel's") {
  const std::string xid =
      "NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
  // /dev/kmsg: a program's write gets LOG_USER (PRI 8-15) or its own facility
  CHECK(events_in(fmt::format("14,1,100000000,-;{}\n", xid)) == 0);
  CHECK(events_in(fmt::format("30,1,100000000,-;{}\n", xid)) == 0);
  CHECK(events_in(fmt::format("4,1,100000000,-;{}\n", xid)) == 1);
  // klogctl / dmesg -r
  CHECK(events_in(fmt::format("<14>[  100.000000] {}\n", xid)) == 0);
  CHECK(events_in(fmt::format("<4>[  100.000000] {}\n", xid)) == 1);
  // dmesg -x names the facility
  CHECK(events_in(fmt::format("user  :notice: [  100.000000] {}\n", xid)) == 0);
  CHECK(events_in(fmt::format("kern  :warn  : [  100.000000] {}\n", xid)) == 1);
  // RFC 5424: `logger -t kernel` is user.notice
  CHECK(events_in(fmt::format("<13>1 2026-12-06T10:00:00Z node kernel - - - {}\n", xid)) == 0);
  CHECK(events_in(fmt::format("<4>1 2026-12-06T10:00:00Z node kernel - - - {}\n", xid)) == 1);
}

namespace {

const std::string k_banner =
    "[    0.000000] Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc 12.3.0) "
    "#101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023\n";
const std::string k_loading =
    "[    6.200000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 "
    "01:44:30 UTC 2024\n";

// healthy-4gpu with this kernel log, through the real probes and the whole rule table.
gpf::test::Checked check_with_log(const std::string& log) {
  gpf::test::TempDir dir("gpf-provenance");
  std::filesystem::copy(gpf::test::fixture("healthy-4gpu"), dir.path,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  dir.write("dmesg.txt", log);
  const auto host = Host::snapshot(dir.path.string());
  REQUIRE(host.ok());
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  gpf::test::Checked c{collect_facts(*host, probe_options), {}};
  c.assessment = assess(c.facts, builtin_rules(), {});
  return c;
}

std::string at(double seconds, const std::string& message) {
  return fmt::format("[{:12.6f}] {}\n", seconds, message);
}

} // namespace

TEST_CASE("provenance: one forged record per node fails no node") {
  const auto clean = check_with_log(k_banner + k_loading);
  REQUIRE(clean.assessment.verdict == Verdict::pass);
  const std::vector<std::pair<std::string, std::string>> forged{
      {"gpu.fallen-off-bus",
       "NVRM: x[4242]: segfault at 0 ip 0000000000401000 sp 00007ffc3a1b2c40 error 4 in Xid "
       "(PCI:0000:18:00): 79, GPU has fallen off the bus.[400000+1000]"},
      {"xid.reset-required",
       "NVRM: x[4242]: segfault at 0 ip 0000000000401000 sp 00007ffc3a1b2c40 error 4 in Xid "
       "(PCI:0000:18:00): 48, An uncorrectable double bit error[400000+1000]"},
      {"driver.api-mismatch",
       "NVRM: x[4242]: segfault at 0 ip 0000000000401000 sp 00007ffc3a1b2c40 error 4 in API "
       "mismatch: the client has the version 550.67, but this kernel module has the version "
       "550.54.14.  Please make sure that this kernel module and all NVIDIA driver components "
       "have the same version.[400000+1000]"},
      {"nvswitch.sxid-fatal",
       "x[4242]: segfault at 0 ip 0000000000401000 sp 00007ffc3a1b2c40 error 4 in "
       "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 22003, Fatal, Link 12[400000+1000]"},
  };
  for (const auto& [id, line] : forged) {
    INFO(line);
    const auto r = check_with_log(k_banner + k_loading + at(500, line));
    CHECK(r.assessment.verdict == Verdict::pass);
    CHECK_FALSE(finding(r.assessment, id));
    CHECK(all_events(r.facts.log).empty());
  }
}

TEST_CASE("provenance: a real Xid 48 keeps its finding whatever forged line follows it") {
  const std::string xid48 = at(300, "NVRM: Xid (PCI:0000:18:00): 48, pid=1234, name=python3, An "
                                    "uncorrectable double bit error (DBE) has been detected on GPU "
                                    "in the framebuffer at partition 0, subpartition 0.");
  const auto real = check_with_log(k_banner + k_loading + xid48);
  // (a warning here: healthy-4gpu's NVML and CUDA replays find the GPU clean now)
  REQUIRE(real.assessment.verdict != Verdict::pass);
  const auto* real_finding = finding(real.assessment, "xid.reset-required");
  REQUIRE(real_finding);
  const std::vector<std::string> hiding{
      // "the recovery action went back to None"
      "NVRM: x[4242]: segfault at 0 ip 0 sp 0 error 4 in Xid (PCI:0000:18:00): 154, GPU recovery "
      "action changed from 0x1 (GPU Reset Required) to 0x0 (None)[400000+1000]",
      // "the driver was reloaded since"
      "NVRM: x[4242]: segfault at 0 ip 0 sp 0 error 4 in loading NVIDIA UNIX x86_64 Kernel Module "
      " 550.54.14  Thu Feb 22 01:44:30 UTC 2024[400000+1000]",
      "NVRM: loading[4242]: segfault at 0 ip 0 sp 0 error 4 in  NVIDIA UNIX x86_64 Kernel Module  "
      "550.54.14  Thu Feb 22 01:44:30 UTC 2024[400000+1000]",
      // "a new boot started"
      "Linux version 6[4242]: segfault at 0 ip 0 sp 0 error 4 in .1.0 (b@h) (gcc) #1 SMP[400000+1000]",
      "Linux version 6: page allocation failure: order:0, mode:0x40cc0(GFP_KERNEL), "
      "nodemask=(null),cpuset=.1.0 (b@h) (gcc) #1 SMP,mems_allowed=0",
  };
  for (const auto& line : hiding) {
    INFO(line);
    const auto r = check_with_log(k_banner + k_loading + xid48 + at(400, line));
    CHECK(r.assessment.verdict == real.assessment.verdict);
    const auto* f = finding(r.assessment, "xid.reset-required");
    REQUIRE(f);
    CHECK(f->gpu == "0000:18:00.0");
    CHECK(f->severity == real_finding->severity);
  }
  // A real reload does settle it (information: before the last reload), so the forged lines
  // above were refused, not ignored for another reason.
  REQUIRE(real_finding->severity != Severity::info);
  const auto reloaded =
      check_with_log(k_banner + k_loading + xid48 + at(400, k_loading.substr(15)));
  const auto* settled = finding(reloaded.assessment, "xid.reset-required");
  REQUIRE(settled);
  CHECK(settled->severity == Severity::info);
}
