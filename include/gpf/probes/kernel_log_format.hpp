#pragma once
// Line-format detection of the kernel-log scanner: one physical line in, its format, timestamp
// and kernel message out (docs/kernel-log.md "Formats"). Pure; never throws; views point into the
// input line.
#include "gpf/facts/log_facts.hpp"

#include <optional>
#include <string_view>

namespace gpf {

enum class LineMarker { none, journal_boot, journal_reboot, journal_other };

struct LogLine {
  std::optional<LogFormat> format; // nullopt: empty or continuation line
  LineMarker marker = LineMarker::none;
  bool continuation = false;       // indented continuation (dmesg) or a /dev/kmsg KEY=value line
  bool kernel = true;              // false: a syslog/journal line written by another program
  std::string_view time;           // the timestamp as printed; "" when the line has none
  std::optional<double> monotonic; // seconds since boot, when the line carries them
  std::string_view message;        // the kernel's message, prefixes removed
};

// Detects the format of one line (without its '\n'; a trailing '\r' is ignored).
LogLine parse_log_line(std::string_view line);

// "  123.456789" (the inside of a dmesg bracket) → seconds; nullopt when it is not that form.
std::optional<double> parse_monotonic_seconds(std::string_view text);

} // namespace gpf
