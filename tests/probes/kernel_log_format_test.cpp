// Line-format detection: every format the kernel-log scanner reads, one inline line each.
#include "gpf/facts/log_names.hpp"
#include "gpf/probes/kernel_log_format.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace gpf;

namespace {
struct FormatCase {
  std::string line;
  std::optional<LogFormat> format;
  std::string time;
  std::optional<double> monotonic;
  std::string message;
  bool kernel = true;
};

// Each line parses to its row: format, timestamp, time since boot, message, kernel or not.
void check_cases(const std::vector<FormatCase>& cases) {
  for (const auto& c : cases) {
    INFO(c.line);
    const LogLine l = parse_log_line(c.line);
    CHECK(l.format == c.format);
    CHECK(std::string(l.time) == c.time);
    CHECK(l.monotonic.has_value() == c.monotonic.has_value());
    if (l.monotonic && c.monotonic) {
      CHECK(*l.monotonic == Approx(*c.monotonic).margin(1e-7));
    }
    CHECK(std::string(l.message) == c.message);
    CHECK(l.kernel == c.kernel);
    CHECK_FALSE(l.continuation);
    CHECK(l.marker == LineMarker::none);
  }
}
} // namespace

TEST_CASE("every line format: format, timestamp and kernel message") {
  const std::string msg = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  const std::vector<FormatCase> cases{
      {"[  123.456789] " + msg, LogFormat::dmesg, "123.456789", 123.456789, msg},
      {"[    0.000000] " + msg, LogFormat::dmesg, "0.000000", 0.0, msg},
      {"[1234567.000001] " + msg, LogFormat::dmesg, "1234567.000001", 1234567.000001, msg},
      {"<6>[  123.456789] " + msg, LogFormat::dmesg, "123.456789", 123.456789,
       msg}, // klogctl / dmesg -r
      {"kern  :info  : [  123.456789] " + msg, LogFormat::dmesg, "123.456789", 123.456789,
       msg}, // dmesg -x
      {"[  123.456789] gpu-node-7 kernel: " + msg, LogFormat::dmesg, "123.456789", 123.456789,
       msg}, // short-monotonic
      {"[Mon Nov 30 02:00:00 2026] " + msg, LogFormat::dmesg_ctime, "Mon Nov 30 02:00:00 2026",
       std::nullopt, msg},
      {"[Tue Dec  1 09:08:07 2026] " + msg, LogFormat::dmesg_ctime, "Tue Dec  1 09:08:07 2026",
       std::nullopt, msg},
      {"2026-11-30T02:00:00,123456+00:00 " + msg, LogFormat::dmesg_iso,
       "2026-11-30T02:00:00,123456+00:00", std::nullopt, msg},
      {"6,1234,5678901,-;" + msg, LogFormat::kmsg, "5678901", 5.678901, msg},
      {"4,99,12000000,c,caller=T812;" + msg, LogFormat::kmsg, "12000000", 12.0, msg},
      {"Nov 30 02:00:00 gpu-node-7 kernel: " + msg, LogFormat::syslog, "Nov 30 02:00:00",
       std::nullopt, msg},
      {"Nov  3 02:00:00 gpu-node-7 kernel: [  123.456789] " + msg, LogFormat::syslog,
       "Nov  3 02:00:00", 123.456789, msg},
      {"Nov 30 02:00:00.123456 gpu-node-7 kernel: " + msg, LogFormat::syslog,
       "Nov 30 02:00:00.123456", std::nullopt, msg},
      {"<4>Nov 30 02:00:00 gpu-node-7 kernel: " + msg, LogFormat::syslog, "Nov 30 02:00:00",
       std::nullopt, msg},
      {"2026-11-30T02:00:00+0000 gpu-node-7 kernel: " + msg, LogFormat::syslog_iso,
       "2026-11-30T02:00:00+0000", std::nullopt, msg},
      {"2026-11-30T02:00:00.123456+00:00 gpu-node-7 kernel: [ 5.000001] " + msg,
       LogFormat::syslog_iso, "2026-11-30T02:00:00.123456+00:00", 5.000001, msg},
      {"2026-11-30T02:00:00Z gpu-node-7 kernel: " + msg, LogFormat::syslog_iso,
       "2026-11-30T02:00:00Z", std::nullopt, msg},
      {"<4>1 2026-11-30T02:00:00.000Z gpu-node-7 kernel - - - " + msg, LogFormat::rfc5424,
       "2026-11-30T02:00:00.000Z", std::nullopt, msg},
      {"<4>1 2026-11-30T02:00:00Z gpu-node-7 kernel - - [meta sequenceId=\"1\" x=\"a]b\"] " + msg,
       LogFormat::rfc5424, "2026-11-30T02:00:00Z", std::nullopt, msg},
      {"Nov 30 02:00:00 gpu-node-7 dockerd[812]: " + msg, LogFormat::syslog, "Nov 30 02:00:00",
       std::nullopt, msg, false},
      {"<30>1 2026-11-30T02:00:00Z gpu-node-7 monitor 77 - - " + msg, LogFormat::rfc5424,
       "2026-11-30T02:00:00Z", std::nullopt, msg, false},
      {msg, LogFormat::bare, "", std::nullopt, msg},
      {"kernel: " + msg, LogFormat::bare, "", std::nullopt, msg},
      {"[  123.456789] " + msg + "\r", LogFormat::dmesg, "123.456789", 123.456789, msg}, // CRLF
      {"[ 12", LogFormat::bare, "", std::nullopt, "[ 12"}, // unterminated stamp
      {"[abc] text", LogFormat::bare, "", std::nullopt, "[abc] text"},
      {"12,34;no usec", LogFormat::bare, "", std::nullopt, "12,34;no usec"},
  };
  check_cases(cases);
}

// dmesg -e / -H / --time-format delta / -d, as users paste them (util-linux dmesg(1)).
TEST_CASE("relative and delta dmesg stamps: one row per form") {
  const std::string probe = "nvidia: probe of 0000:01:00.0 failed with error -1";
  const std::string xid = "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.";
  const std::vector<FormatCase> cases{
      // dmesg -H / --reltime: the first message of a minute carries the minute, the rest a delta
      {"[Dec 1 10:00] " + xid, LogFormat::dmesg_reltime, "Dec 1 10:00", std::nullopt, xid},
      {"[Dec  1 10:00] " + xid, LogFormat::dmesg_reltime, "Dec  1 10:00", std::nullopt, xid},
      {"[Nov 30 23:59] " + xid, LogFormat::dmesg_reltime, "Nov 30 23:59", std::nullopt, xid},
      {"[Dec 1 10:00:07] " + xid, LogFormat::dmesg_reltime, "Dec 1 10:00:07", std::nullopt, xid},
      {"[  +0.000421] " + probe, LogFormat::dmesg_reltime, "+0.000421", std::nullopt, probe},
      {"[ +12.500000] " + probe, LogFormat::dmesg_reltime, "+12.500000", std::nullopt, probe},
      {"[  +2.5s] " + probe, LogFormat::dmesg_reltime, "+2.5s", std::nullopt, probe},
      // dmesg -H -x: decoded facility and level before the stamp
      {"kern  :warn  : [  +0.000421] " + probe, LogFormat::dmesg_reltime, "+0.000421", std::nullopt,
       probe},
      // dmesg --time-format delta
      {"[<    0.000421>] " + probe, LogFormat::dmesg_reltime, "<    0.000421>", std::nullopt,
       probe},
      // dmesg -d: the time since boot stays, so the boot rule can use it
      {"[  123.456789 <    0.000421>] " + xid, LogFormat::dmesg, "123.456789", 123.456789, xid},
      {"[    0.000000 <    0.000000>] " + xid, LogFormat::dmesg, "0.000000", 0.0, xid},
      // near misses stay bare
      {"[Dec 1] " + xid, LogFormat::bare, "", std::nullopt, "[Dec 1] " + xid},
      {"[+] " + xid, LogFormat::bare, "", std::nullopt, "[+] " + xid},
      {"[  +0.5x] " + xid, LogFormat::bare, "", std::nullopt, "[  +0.5x] " + xid},
      {"[Foo 1 10:00] " + xid, LogFormat::bare, "", std::nullopt, "[Foo 1 10:00] " + xid},
      {"[  123.4 <x>] " + xid, LogFormat::bare, "", std::nullopt, "[  123.4 <x>] " + xid},
  };
  check_cases(cases);
}

TEST_CASE("journal markers and continuation lines") {
  const std::pair<std::string, LineMarker> markers[] = {
      {"-- Boot 3b0e8f2c9a1d4e5f8a7b6c5d4e3f2a1b --", LineMarker::journal_boot},
      {"-- Reboot --", LineMarker::journal_reboot},
      {"-- Logs begin at Mon 2026-11-23 00:00:01 UTC, end at Mon 2026-11-30 02:00:00 UTC. --",
       LineMarker::journal_other},
      {"-- No entries --", LineMarker::journal_other},
  };
  for (const auto& [line, marker] : markers) {
    INFO(line);
    const LogLine l = parse_log_line(line);
    CHECK(l.format == LogFormat::journal);
    CHECK(l.marker == marker);
  }
  for (const std::string line :
       {"               NVRM: this kernel module has the version 535.104.05.  Please",
        " SUBSYSTEM=pci", "\tNVRM: continued"}) {
    INFO(line);
    const LogLine l = parse_log_line(line);
    CHECK(l.continuation);
    CHECK_FALSE(l.format);
    CHECK(l.message == std::string_view(line).substr(line.find_first_not_of(" \t")));
  }
  CHECK_FALSE(parse_log_line("").format);
  CHECK_FALSE(parse_log_line("\r").format);
}

TEST_CASE("garbage lines never crash and stay bare") {
  const std::string garbage[] = {std::string("\xff\xfe[\x00\x01", 5),
                                 std::string(1, '\0'),
                                 "<",
                                 "<999999>",
                                 "<1>",
                                 "[",
                                 "]",
                                 "-- ",
                                 "6,",
                                 "6,1,2,",
                                 "Nov 30",
                                 "2026-11-30T02:00:00",
                                 "2026-11-30T02:00:00+",
                                 "<4>1 ",
                                 "<4>1 2026-11-30T02:00:00Z host kernel - - [unterminated"};
  for (const auto& g : garbage) {
    INFO(g);
    const LogLine l = parse_log_line(g);
    if (l.format) {
      CHECK((l.format == LogFormat::bare || l.format == LogFormat::journal));
    }
  }
}

TEST_CASE("monotonic seconds parse only the dmesg stamp form") {
  CHECK(parse_monotonic_seconds("  123.456789") == Approx(123.456789));
  CHECK(parse_monotonic_seconds("0.5") == Approx(0.5));
  for (const char* bad : {"", " ", "123", ".5", "1.", "1.2.3", "12a.5", "1.5 ", "12345678901.0"}) {
    INFO(bad);
    CHECK_FALSE(parse_monotonic_seconds(bad));
  }
}

TEST_CASE("every format has a name") {
  for (auto f : {LogFormat::dmesg, LogFormat::dmesg_ctime, LogFormat::dmesg_iso,
                 LogFormat::dmesg_reltime, LogFormat::kmsg, LogFormat::syslog,
                 LogFormat::syslog_iso, LogFormat::rfc5424, LogFormat::journal, LogFormat::bare}) {
    CHECK_FALSE(log_format_name(f).empty());
  }
  CHECK(log_format_name(LogFormat::dmesg_ctime) == "dmesg-ctime");
  CHECK(log_format_name(LogFormat::dmesg_reltime) == "dmesg-reltime");
}
