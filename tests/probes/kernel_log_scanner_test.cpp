// The streaming scanner on inline logs: boot boundaries of every kind, multi-line messages in
// every way tools split them, repeats, huge lines, garbage bytes, any chunking, bounded events.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/util/text.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <random>

using namespace gpf;

namespace {

const std::string k_banner =
    "Linux version 5.15.0-91-generic (buildd@lcy02) (gcc 12.3.0) #101-Ubuntu SMP";

std::string dmesg(std::initializer_list<std::pair<double, std::string>> lines) {
  std::string out;
  for (const auto& [t, m] : lines) {
    out += fmt::format("[{:12.6f}] {}\n", t, m);
  }
  return out;
}

std::string xid(const std::string& bus, unsigned n) {
  return fmt::format("NVRM: Xid (PCI:{}): {}, pid=1234, name=python3, details", bus, n);
}

std::vector<unsigned> xids_of(const std::vector<LogEvent>& events) {
  std::vector<unsigned> out;
  for (const auto& e : events) {
    if (e.xid) {
      out.push_back(*e.xid);
    }
  }
  return out;
}

const std::vector<LogEvent>& gpu(const LogFacts& f, const std::string& bus) {
  static const std::vector<LogEvent> none;
  const auto it = f.gpu_events.find(bus);
  return it == f.gpu_events.end() ? none : it->second;
}

} // namespace

TEST_CASE("boot boundary: the last Linux version line starts the current boot") {
  const auto f = scan_kernel_log(dmesg({{0, k_banner},
                                        {500.1, xid("0000:3b:00", 48)},
                                        {900.0, "reboot: Restarting system"},
                                        {0, k_banner},
                                        {20.0, xid("0000:3b:00", 13)}}));
  REQUIRE(f.boundary);
  CHECK(f.boundary->kind == BootBoundaryKind::linux_version);
  CHECK(f.boundary->line.find("Linux version") != std::string::npos);
  CHECK(f.boots_seen == 2);
  CHECK(xids_of(gpu(f, "0000:3b:00.0")) == std::vector<unsigned>{13});
  CHECK(xids_of(f.earlier_boot_events) == std::vector<unsigned>{48});
}

TEST_CASE("boot boundary: journal -- Boot and -- Reboot markers") {
  for (const std::string marker : {"-- Boot 3b0e8f2c9a1d4e5f8a7b6c5d4e3f2a1b --", "-- Reboot --"}) {
    INFO(marker);
    const std::string log =
        "-- Logs begin at Mon 2026-11-23 00:00:01 UTC, end at Mon 2026-11-30 02:00:00 UTC. --\n"
        "Nov 23 00:00:01 node kernel: " +
        k_banner +
        "\n"
        "Nov 29 10:00:00 node kernel: " +
        xid("0000:3b:00", 79) + "\n" + marker +
        "\n"
        "Nov 30 01:00:00 node kernel: " +
        xid("0000:3b:00", 31) + "\n";
    const auto f = scan_kernel_log(log);
    REQUIRE(f.boundary);
    CHECK(f.boundary->kind ==
          (marker[3] == 'B' ? BootBoundaryKind::journal_boot : BootBoundaryKind::journal_reboot));
    CHECK(f.boundary->line == marker);
    CHECK(f.boots_seen == 2);
    CHECK(xids_of(gpu(f, "0000:3b:00.0")) == std::vector<unsigned>{31});
    CHECK(xids_of(f.earlier_boot_events) == std::vector<unsigned>{79});
    CHECK(f.formats == std::vector<LogFormat>{LogFormat::journal, LogFormat::syslog});
  }
  // a marker followed by the kernel banner: one boot, the banner is where it starts
  const auto g =
      scan_kernel_log("-- Boot abc --\n" + dmesg({{0, k_banner}, {9, xid("0000:3b:00", 13)}}));
  CHECK(g.boots_seen == 1);
  CHECK(g.boundary->kind == BootBoundaryKind::linux_version);
  CHECK(g.earlier_boot_events.empty());
}

TEST_CASE(
    "boot boundary: the monotonic timestamp going back is a new boot, placed at its first line") {
  std::string log = dmesg({{7000.5, "chatter"}, {7001.0, xid("0000:3b:00", 48)}});
  for (int i = 0; i < 2000;
       ++i) { // enough lines that the reset is between prefilter hits and samples
    log += fmt::format("[{:12.6f}] eth0: link up {}\n", 7001.5 + i * 0.001, i);
  }
  log += dmesg({{0.5, "first line kept of the new boot"}, {1.5, "more"}});
  for (int i = 0; i < 2000; ++i) {
    log += fmt::format("[{:12.6f}] eth0: link up {}\n", 2.0 + i * 0.001, i);
  }
  log += dmesg({{30.0, xid("0000:3b:00", 13)}});
  const auto f = scan_kernel_log(log);
  REQUIRE(f.boundary);
  CHECK(f.boundary->kind == BootBoundaryKind::timestamp_reset);
  CHECK(f.boundary->line.find("first line kept of the new boot") != std::string::npos);
  CHECK(log.compare(f.boundary->offset, 14, "[    0.500000]") == 0);
  CHECK(xids_of(gpu(f, "0000:3b:00.0")) == std::vector<unsigned>{13});
  CHECK(xids_of(f.earlier_boot_events) == std::vector<unsigned>{48});

  // kmsg records reset the same way
  const auto k =
      scan_kernel_log("6,1,9000000000,-;" + xid("0000:3b:00", 48) +
                      "\n6,1,1000,-;hello\n6,2,3000000,-;" + xid("0000:3b:00", 13) + "\n");
  REQUIRE(k.boundary);
  CHECK(k.boundary->kind == BootBoundaryKind::timestamp_reset);
  CHECK(k.boundary->line == "6,1,1000,-;hello");
  CHECK(xids_of(k.earlier_boot_events) == std::vector<unsigned>{48});

  // jitter of less than a second between CPUs is not a reboot
  const auto j =
      scan_kernel_log(dmesg({{100.9, xid("0000:3b:00", 48)}, {100.2, xid("0000:3b:00", 13)}}));
  CHECK_FALSE(j.boundary);
  CHECK(j.earlier_boot_events.empty());
}

TEST_CASE("multi-line messages are joined however the tool split them") {
  const std::vector<std::pair<std::string, std::string>> logs{
      {"dmesg", dmesg({{5, "NVRM: API mismatch: the client has the version 550.67, but"},
                       {5, "NVRM: this kernel module has the version 550.54.14.  Please"},
                       {5, "NVRM: make sure that this kernel module and all NVIDIA driver"},
                       {5, "NVRM: components have the same version."}})},
      {"indented", "[    5.000000] NVRM: API mismatch: the client has the version 550.67, but\n"
                   "               NVRM: this kernel module has the version 550.54.14.  Please\n"
                   "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
                   "               NVRM: components have the same version.\n"},
      {"rsyslog",
       "Nov 30 02:00:00 node kernel: NVRM: API mismatch: the client has the version 550.67, but#012NVRM: this "
       "kernel module has the version 550.54.14.  Please#012NVRM: make sure that this kernel module and all "
       "NVIDIA driver#012NVRM: components have the same version.\n"},
      {"kmsg",
       "4,100,5000000,-;NVRM: API mismatch: the client has the version 550.67, but\n SUBSYSTEM=pci\n"
       "4,101,5000001,c;NVRM: this kernel module has the version 550.54.14.  Please\n"
       "4,102,5000002,c;NVRM: make sure that this kernel module and all NVIDIA driver\\x0aNVRM: components have "
       "the same version.\n"},
      {"crlf", "[    5.000000] NVRM: API mismatch: the client has the version 550.67, but\r\n"
               "[    5.000000] NVRM: this kernel module has the version 550.54.14.  Please\r\n"},
  };
  for (const auto& [name, log] : logs) {
    INFO(name);
    const auto f = scan_kernel_log(log);
    REQUIRE(f.host_events.size() == 1);
    const auto& e = f.host_events.front();
    CHECK(e.kind == LogEventKind::api_mismatch);
    CHECK(e.client_version == "550.67");
    CHECK(e.kernel_version == "550.54.14");
    CHECK(e.lines.front().find("API mismatch") != std::string::npos);
  }
  // a line in between breaks the message: the second half is not taken for it
  const auto broken =
      scan_kernel_log(dmesg({{5, "NVRM: API mismatch: the client has the version 550.67, but"},
                             {5, "usb 1-1: new device"},
                             {5, "NVRM: this kernel module has the version 550.54.14.  Please"}}));
  REQUIRE(broken.host_events.size() == 1);
  CHECK(broken.host_events.front().kernel_version.empty());
}

TEST_CASE("repeated lines are one event with a count and first/last timestamps") {
  const auto f = scan_kernel_log(
      dmesg({{10.5, xid("0000:3b:00", 13)},
             {20.25, "NVRM: Xid (PCI:0000:3b:00): 13, pid=999, name=other, different text"},
             {30.125, xid("0000:3b:00", 13)},
             {31.0, xid("0000:3b:00", 31)}}));
  const auto& events = gpu(f, "0000:3b:00.0");
  REQUIRE(events.size() == 2);
  CHECK(events[0].xid == 13u);
  CHECK(events[0].count == 3);
  CHECK(events[0].first_time == "10.500000");
  CHECK(events[0].last_time == "30.125000");
  CHECK(events[0].lines.size() == 1);
  CHECK(events[0].last_line.find("[   30.125000]") == 0);
  CHECK(events[0].first_seq < events[1].first_seq);
  CHECK(events[1].count == 1);
}

TEST_CASE("a driver reload separates events before it from the same events after it") {
  const std::string loading =
      "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  "
      "(dvs-builder@U16)  Thu Feb 22 01:25:25 UTC 2024";
  const auto f = scan_kernel_log(dmesg({{6, loading},
                                        {100, xid("0000:3b:00", 48)},
                                        {200, loading},
                                        {300, xid("0000:3b:00", 48)},
                                        {301, "NVRM: GPU at PCI:0000:3b:00: GPU-abc"}}));
  const auto& events = gpu(f, "0000:3b:00.0");
  REQUIRE(events.size() == 2);
  CHECK(events[0].before_driver_load);
  CHECK_FALSE(events[1].before_driver_load);
  REQUIRE(f.driver_load);
  CHECK(f.driver_load->count == 2);
  CHECK(f.driver_load->version == "550.54.14");
  CHECK(f.driver_load->flavour == "open");
  CHECK(f.driver_load->line.find("NVRM: loading") != std::string::npos);
  CHECK(f.gpu_uuids.at("0000:3b:00.0") == "GPU-abc");
}

TEST_CASE("huge lines are cut at 64 KiB, counted, and never stop the scan") {
  const std::string head = "[    1.000000] NVRM: GPU 0000:01:00.0: GPU has fallen off the bus. ";
  std::string log = head + std::string(200 * 1024, 'x') +
                    " NVRM: Xid (PCI:0000:02:00): 48, hidden past the cap\n";
  log += std::string(3 * 1024 * 1024, 'y') +
         "NVRM: Xid (PCI:0000:03:00): 48, beyond the read buffer\n"; // skipping mode
  log += dmesg({{2, xid("0000:04:00", 79)}});
  const auto f = scan_kernel_log(log);
  CHECK(f.lines_cut == 2);
  CHECK(gpu(f, "0000:01:00.0").size() == 1); // found in the first 64 KiB
  CHECK(gpu(f, "0000:02:00.0").empty());     // past the cap: not examined
  CHECK(gpu(f, "0000:03:00.0").empty());
  CHECK(xids_of(gpu(f, "0000:04:00.0")) == std::vector<unsigned>{79});
  CHECK(gpu(f, "0000:01:00.0").front().lines.front().size() <= 1024 + 3);
  CHECK(f.bytes == log.size());
}

TEST_CASE("garbage bytes, NULs and invalid UTF-8 never crash and stay valid text in the facts") {
  std::mt19937 rng(42);
  std::string junk(256 * 1024, '\0');
  for (auto& c : junk) {
    c = static_cast<char>(rng() & 0xFF);
  }
  const std::string log =
      junk + "\n[    3.000000] NVRM: Xid (PCI:0000:3b:00): 79, \xff\xfe bad \xc3\x28 bytes\n" +
      junk;
  const auto f = scan_kernel_log(log);
  CHECK(f.nul_bytes);
  const auto& events = gpu(f, "0000:3b:00.0");
  REQUIRE_FALSE(events.empty());
  const auto& e = events.back();
  CHECK(e.xid == 79u);
  CHECK(to_valid_utf8(e.lines.front()) == e.lines.front());
  CHECK(to_valid_utf8(e.detail) == e.detail);
  for (const auto& [bus, list] : f.gpu_events) {
    for (const auto& ev : list) {
      CHECK(to_valid_utf8(ev.meaning) == ev.meaning);
    }
  }
}

TEST_CASE("any chunking gives the same facts as one piece") {
  std::string log =
      dmesg({{0, k_banner},
             {6, "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat Feb 17 2024"},
             {50, xid("0000:3b:00", 48)},
             {60, "NVRM: API mismatch: the client has the version 550.67, but"},
             {60, "NVRM: this kernel module has the version 535.161.07.  Please"}});
  log += "-- Reboot --\n" +
         dmesg({{1, "hello"}, {2, xid("0000:3b:00", 13)}, {3, xid("0000:3b:00", 13)}});
  const auto whole = scan_kernel_log(log);
  std::mt19937 rng(7);
  for (int round = 0; round < 20; ++round) {
    KernelLogScanner scanner;
    std::size_t pos = 0;
    while (pos < log.size()) {
      const std::size_t n =
          std::min<std::size_t>(log.size() - pos, 1 + rng() % (round < 10 ? 3 : 200));
      scanner.feed(std::string_view(log).substr(pos, n));
      pos += n;
    }
    const auto f = scanner.finish();
    CHECK(f.boots_seen == whole.boots_seen);
    CHECK(f.boundary->offset == whole.boundary->offset);
    CHECK(xids_of(gpu(f, "0000:3b:00.0")) == xids_of(gpu(whole, "0000:3b:00.0")));
    CHECK(gpu(f, "0000:3b:00.0").front().count == 2);
    REQUIRE(f.earlier_boot_events.size() == whole.earlier_boot_events.size());
    CHECK(f.earlier_boot_events.back().kernel_version == "535.161.07");
    CHECK(f.formats == whole.formats);
  }
}

TEST_CASE("dictionary lines between two halves of a message: joined whatever the reads") {
  // The KEY=value lines may end one read and the message's second half start the next: the
  // gap was discarded with the first read, and must still be known to hold only them.
  const std::string log =
      "4,100,5000000,-;NVRM: API mismatch: the client has the version 550.67, but\n"
      " SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n"
      "4,101,5000001,c;NVRM: this kernel module has the version 550.54.14.  Please\n";
  const auto broken_at = log.find("DEVICE=");
  for (std::size_t cut = 1; cut < log.size(); ++cut) {
    INFO("split at " << cut);
    KernelLogScanner scanner;
    scanner.feed(std::string_view(log).substr(0, cut));
    scanner.feed(std::string_view(log).substr(cut));
    const auto f = scanner.finish();
    REQUIRE(f.host_events.size() == 1);
    CHECK(f.host_events.front().kernel_version == "550.54.14");
  }
  // a line that is not a dictionary line in the gap still breaks it, on either side of a read
  std::string other = log;
  other.insert(broken_at - 1, "usb 1-1: new device\n");
  for (std::size_t cut = 1; cut < other.size(); ++cut) {
    INFO("split at " << cut);
    KernelLogScanner scanner;
    scanner.feed(std::string_view(other).substr(0, cut));
    scanner.feed(std::string_view(other).substr(cut));
    const auto f = scanner.finish();
    REQUIRE(f.host_events.size() == 1);
    CHECK(f.host_events.front().kernel_version.empty());
  }
}

TEST_CASE("distinct events are capped; the rest are counted, not kept") {
  std::string log;
  for (unsigned i = 0; i < k_log_max_events + 88; ++i) {
    log += fmt::format("[{:12.6f}] NVRM: Xid (PCI:0000:{:02x}:{:02x}): 13, x\n", 1.0 + i, i / 32,
                       i % 32);
  }
  const auto f = scan_kernel_log(log);
  std::size_t kept = 0;
  for (const auto& [bus, events] : f.gpu_events) {
    kept += events.size();
  }
  CHECK(kept == k_log_max_events);
  CHECK(f.events_dropped == 88);
}

TEST_CASE("an empty log and a log without anything of interest") {
  const auto empty = scan_kernel_log("");
  CHECK(empty.ran);
  CHECK(empty.boots_seen == 0);
  CHECK(empty.bytes == 0);
  CHECK_FALSE(empty.boundary);
  const auto quiet = scan_kernel_log(
      dmesg({{1, "usb 1-1: new device"}, {2, "environment variable nvme invalid"}}));
  CHECK(quiet.boots_seen == 1);
  CHECK(quiet.gpu_events.empty());
  CHECK(quiet.host_events.empty());
  CHECK(quiet.formats == std::vector<LogFormat>{LogFormat::dmesg});
  // a last line without '\n' still counts
  CHECK(scan_kernel_log(xid("0000:3b:00", 79)).gpu_events.count("0000:3b:00.0") == 1);
}

TEST_CASE("formats of a mixed file are all reported, in the order seen") {
  const auto f = scan_kernel_log("6,1,100,-;NVRM: Xid (PCI:0000:3b:00): 13, a\n"
                                 "Nov 30 02:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 13, b\n"
                                 "NVRM: Xid (PCI:0000:3b:00): 13, c\n"
                                 "[Mon Nov 30 02:00:00 2026] NVRM: Xid (PCI:0000:3b:00): 13, d\n");
  CHECK(f.formats == std::vector<LogFormat>{LogFormat::kmsg, LogFormat::syslog, LogFormat::bare,
                                            LogFormat::dmesg_ctime});
  CHECK(gpu(f, "0000:3b:00.0").front().count == 4);
}

TEST_CASE("syslog lines of other programs are not the kernel's") {
  const auto f = scan_kernel_log(
      "Nov 30 02:00:00 node gpud[77]: NVRM: Xid (PCI:0000:3b:00): 79, replayed by a monitor\n");
  CHECK(f.gpu_events.empty());
}

TEST_CASE("an Xid storm is counted exactly; Xid 154 keeps its last recovery action") {
  std::string log;
  for (int i = 0; i < 10000; ++i) {
    log += fmt::format(
        "[{:12.6f}] NVRM: Xid (PCI:0000:{}:00): 13, pid={}, name=python3, Graphics Exception\n",
        10.0 + i * 0.01, i % 2 ? "3b" : "5d", 1000 + i);
    if (i == 5000) {
      log +=
          "[   60.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat Feb 17 2024\n";
    }
  }
  log += dmesg(
      {{200,
        "NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"},
       {201,
        "NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)"}});
  const auto f = scan_kernel_log(log);
  const auto& b3 = gpu(f, "0000:3b:00.0");
  REQUIRE(b3.size() == 3); // Xid 13 before the reload, after it, and the Xid 154
  CHECK(b3[0].count == 2500);
  CHECK(b3[0].before_driver_load);
  CHECK(b3[1].count == 2500);
  CHECK_FALSE(b3[1].before_driver_load);
  CHECK(b3[1].last_time == "109.990000");
  CHECK(b3[1].last_line.find("pid=10999,") != std::string::npos);
  CHECK(b3[2].count == 2);
  CHECK(b3[2].recovery_action == "None");
  CHECK(gpu(f, "0000:5d:00.0")[0].count + gpu(f, "0000:5d:00.0")[1].count == 5000);
}

TEST_CASE("a repeated Xid head with its own severity word is decoded, not only counted") {
  // An Xid the catalog does not list says Nonfatal, then Fatal: the second must not vanish into
  // the first's count.
  const auto f = scan_kernel_log(dmesg({{10, "NVRM: Xid (PCI:0000:3b:00): 201, Nonfatal, x"},
                                        {11, "NVRM: Xid (PCI:0000:3b:00): 201, Fatal, x"},
                                        {12, "NVRM: Xid (PCI:0000:3b:00): 201, Fatal, y"}}));
  const auto& events = gpu(f, "0000:3b:00.0");
  REQUIRE(events.size() == 2);
  CHECK(events[0].line_fatal == false);
  CHECK(events[0].count == 1);
  CHECK(events[1].line_fatal == true);
  CHECK(events[1].count == 2);
}

TEST_CASE("random splices of real log fragments never crash and keep the facts valid") {
  const std::vector<std::string> pieces{
      "[  12.345678] ",
      "<4>",
      "6,12,3456,-;",
      "Nov 30 02:00:00 node kernel: ",
      "-- Boot x --",
      "-- Reboot --",
      "\n",
      "\r\n",
      "NVRM: ",
      "Xid (PCI:0000:3b:00",
      " GPU-I:05",
      "): ",
      "79",
      "154",
      ", pid='<unknown>'",
      ", name=a, ",
      "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
      "RmInitAdapter failed! (0x26:0xffff:",
      "GPU 0000:0a:00.0: ",
      "API mismatch: the client has the version ",
      "550.67",
      ", but",
      "this kernel module has the version ",
      "The NVIDIA GPU ",
      "(PCI ID: 10de:",
      "installed in this system is not supported by ",
      "BAR1 is 0M @ 0x0 (PCI:",
      "nvidia 0000:3b:00.0: Direct firmware load for nvidia/",
      "gsp_ga10x.bin failed with error -2",
      "nouveau ",
      "Linux version ",
      "#012",
      "\\x0a",
      " KEY=value",
      std::string("\0\xff\xc3", 3),
      "               ",
      "[Mon Nov 30 02:00:00 2026] ",
      "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build",
      "GPU at PCI:0000:3b:00: GPU-"};
  std::mt19937 rng(2026);
  for (int round = 0; round < 40; ++round) {
    std::string log;
    for (int i = 0; i < 600; ++i) {
      log += pieces[rng() % pieces.size()];
    }
    KernelLogScanner scanner;
    for (std::size_t pos = 0; pos < log.size();) {
      const std::size_t n = std::min<std::size_t>(log.size() - pos, 1 + rng() % 97);
      scanner.feed(std::string_view(log).substr(pos, n));
      pos += n;
    }
    const auto f = scanner.finish();
    CHECK(f.bytes == log.size());
    const auto valid = [](const std::vector<LogEvent>& events) {
      for (const auto& e : events) {
        for (const auto& l : e.lines) {
          CHECK(to_valid_utf8(l) == l);
        }
        CHECK(to_valid_utf8(e.meaning) == e.meaning);
        CHECK(to_valid_utf8(e.detail) == e.detail);
        CHECK(e.count >= 1);
      }
    };
    for (const auto& [bus, events] : f.gpu_events) {
      valid(events);
    }
    valid(f.host_events);
    valid(f.earlier_boot_events);
    if (f.boundary) {
      CHECK(to_valid_utf8(f.boundary->line) == f.boundary->line);
    }
  }
}

// A `dmesg -H` paste: relative stamps carry no time since boot, so the kernel banner is what
// separates the boots; the unsupported-GPU message spread over several lines is still joined.
TEST_CASE("dmesg -H output: events are decoded and the banner starts the current boot") {
  const std::string log = "[Nov 30 22:10] " + k_banner + "\n" + "[  +0.000001] " +
                          xid("0000:01:00", 48) + "\n" + "[Dec 1 10:00] " + k_banner + "\n" +
                          "[  +6.240011] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1db6)\n"
                          "[  +0.000001] NVRM: installed in this system is not supported by the\n"
                          "[  +0.000001] NVRM: NVIDIA 550.54.14 driver release.\n"
                          "[  +0.000421] nvidia: probe of 0000:01:00.0 failed with error -1\n";
  const auto f = scan_kernel_log(log);
  REQUIRE(f.boundary);
  CHECK(f.boundary->kind == BootBoundaryKind::linux_version);
  CHECK(f.boots_seen == 2);
  CHECK(xids_of(f.earlier_boot_events) == std::vector<unsigned>{48});
  const auto& events = gpu(f, "0000:01:00.0");
  REQUIRE(events.size() == 2);
  CHECK(events[0].kind == LogEventKind::not_supported);
  CHECK(events[0].meaning.find("550.54.14") != std::string::npos);
  CHECK(events[1].kind == LogEventKind::probe_failed);
  CHECK(f.formats == std::vector<LogFormat>{LogFormat::dmesg_reltime});
}

// dmesg -d keeps the time since boot before the delta: a reset of it is a new boot.
TEST_CASE("dmesg -d output: the time since boot drives the reset rule") {
  const std::string log = "[  900.000000 <    0.000000>] " + xid("0000:3b:00", 48) + "\n" +
                          "[    5.000000 <    0.000000>] " + xid("0000:3b:00", 13) + "\n";
  const auto f = scan_kernel_log(log);
  REQUIRE(f.boundary);
  CHECK(f.boundary->kind == BootBoundaryKind::timestamp_reset);
  CHECK(xids_of(gpu(f, "0000:3b:00.0")) == std::vector<unsigned>{13});
  CHECK(xids_of(f.earlier_boot_events) == std::vector<unsigned>{48});
}
