// Line formats of kernel logs (docs/kernel-log.md): dmesg (plain, -r, -x, -d, -T, -e/-H,
// --time-format iso/delta),
// /dev/kmsg records, journalctl -k (short, short-precise, short-iso, short-monotonic and its
// markers), syslog files (RFC 3164, RFC 5424, rsyslog's ISO form) and bare pasted lines.
#include "gpf/probes/kernel_log_format.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/util/text.hpp"

#include <array>

namespace gpf {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}

std::string_view skip_spaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') {
    s.remove_prefix(1);
  }
  return s;
}

// Length of the run of digits at the start of s.
std::size_t digits(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && is_digit(s[n])) {
    ++n;
  }
  return n;
}

bool is_month(std::string_view s) {
  static constexpr std::array<std::string_view, 12> k_months{
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (auto m : k_months) {
    if (s.substr(0, 3) == m) {
      return true;
    }
  }
  return false;
}

bool is_weekday(std::string_view s) {
  static constexpr std::array<std::string_view, 7> k_days{"Mon", "Tue", "Wed", "Thu",
                                                          "Fri", "Sat", "Sun"};
  for (auto d : k_days) {
    if (s.substr(0, 3) == d) {
      return true;
    }
  }
  return false;
}

// "HH:MM:SS" at the start of s.
bool is_clock(std::string_view s) {
  return s.size() >= 8 && is_digit(s[0]) && is_digit(s[1]) && s[2] == ':' && is_digit(s[3]) &&
         is_digit(s[4]) && s[5] == ':' && is_digit(s[6]) && is_digit(s[7]);
}

// Length of an ISO 8601 timestamp at the start of s
// ("2026-11-30T02:00:00[.,frac][Z|±HH:MM|±HHMM]"), 0 when there is none. frac_sep receives '.' or
// ',' (0 without a fraction).
std::size_t iso_length(std::string_view s, char& frac_sep) {
  frac_sep = 0;
  if (s.size() < 19 || digits(s) != 4 || s[4] != '-' || !is_digit(s[5]) || !is_digit(s[6]) ||
      s[7] != '-' || !is_digit(s[8]) || !is_digit(s[9]) || (s[10] != 'T' && s[10] != ' ') ||
      !is_clock(s.substr(11))) {
    return 0;
  }
  std::size_t n = 19;
  if (n < s.size() && (s[n] == '.' || s[n] == ',')) {
    frac_sep = s[n];
    const std::size_t d = digits(s.substr(n + 1));
    if (d == 0) {
      return 0;
    }
    n += 1 + d;
  }
  if (n < s.size() && s[n] == 'Z') {
    ++n;
  } else if (n < s.size() && (s[n] == '+' || s[n] == '-')) {
    const std::size_t d = digits(s.substr(n + 1));
    if (d == 2 && n + 3 < s.size() && s[n + 3] == ':' && digits(s.substr(n + 4)) == 2) {
      n += 6;
    } else if (d == 4) {
      n += 5;
    } else {
      return 0;
    }
  }
  return n;
}

// "Nov 30 02:00:00[.ffffff]" (day may be space-padded) at the start of s; its length or 0.
std::size_t syslog_time_length(std::string_view s) {
  if (s.size() < 15 || !is_month(s) || s[3] != ' ') {
    return 0;
  }
  std::size_t n = 4;
  if (s[n] == ' ') {
    ++n;
  }
  const std::size_t day = digits(s.substr(n));
  if (day == 0 || day > 2) {
    return 0;
  }
  n += day;
  if (n >= s.size() || s[n] != ' ' || !is_clock(s.substr(n + 1))) {
    return 0;
  }
  n += 9;
  if (n < s.size() && s[n] == '.' && digits(s.substr(n + 1)) > 0) {
    n += 1 + digits(s.substr(n + 1));
  }
  return n;
}

// "host tag: message" after a syslog timestamp. kernel = the tag is the kernel's.
// Returns false when the text does not have that shape.
bool split_host_tag(std::string_view rest, bool& kernel, std::string_view& message) {
  rest = skip_spaces(rest);
  const auto host_end = rest.find(' ');
  if (host_end == std::string_view::npos || host_end == 0) {
    return false;
  }
  std::string_view after = rest.substr(host_end + 1);
  const auto colon = after.find(": ");
  const auto space = after.find(' ');
  if (after.empty() || colon == std::string_view::npos ||
      (space != std::string_view::npos && space < colon)) {
    // A tag without its message ("host kernel:") still counts.
    if (!after.empty() && after.back() == ':' && after.find(' ') == std::string_view::npos) {
      kernel = after == "kernel:" || starts_with(after, "kernel[");
      message = {};
      return true;
    }
    return false;
  }
  const std::string_view tag = after.substr(0, colon);
  kernel = tag == "kernel" || starts_with(tag, "kernel[");
  message = after.substr(colon + 2);
  return true;
}

// "[  123.456789] " inside a kernel message (kern.log written by rsyslog keeps the kernel's own
// timestamp): strip it and return the seconds.
std::optional<double> strip_inner_timestamp(std::string_view& message) {
  if (message.size() < 3 || message.front() != '[') {
    return std::nullopt;
  }
  const auto close = message.find(']');
  if (close == std::string_view::npos || close > 24) {
    return std::nullopt;
  }
  auto seconds = parse_monotonic_seconds(message.substr(1, close - 1));
  if (seconds) {
    message.remove_prefix(close + 1);
    message = skip_spaces(message);
  }
  return seconds;
}

// "kern  :info  : " (dmesg -x); its length or 0.
std::size_t decode_prefix_length(std::string_view s) {
  std::size_t n = 0;
  for (int field = 0; field < 2; ++field) {
    const std::size_t start = n;
    while (n < s.size() && (is_lower(s[n]) || is_digit(s[n]))) {
      ++n;
    }
    if (n == start) {
      return 0;
    }
    while (n < s.size() && s[n] == ' ') {
      ++n;
    }
    if (n >= s.size() || s[n] != ':') {
      return 0;
    }
    ++n;
  }
  return n < s.size() && s[n] == ' ' ? n + 1 : 0;
}

// "6,1234,5678901,-;msg" (/dev/kmsg): fills out and returns true when line has that shape.
bool parse_kmsg(std::string_view line, LogLine& out) {
  std::size_t n = 0;
  std::string_view usec;
  for (int field = 0; field < 3; ++field) {
    const std::size_t d = digits(line.substr(n));
    if (d == 0 || n + d >= line.size() || line[n + d] != ',') {
      return false;
    }
    if (field == 2) {
      usec = line.substr(n, d);
    }
    n += d + 1;
  }
  const auto semi = line.find(';', n);
  if (semi == std::string_view::npos || semi - n > 16) {
    return false;
  }
  // "PRI,..." : the facility (PRI / 8) is 0 only for the kernel's own records; a program that
  // writes to /dev/kmsg gets LOG_USER or its own.
  if (const auto pri = parse_uint(line.substr(0, digits(line))); !pri || (*pri >> 3) != 0) {
    out.kernel = false;
  }
  if (const auto v = parse_uint(usec); v) {
    out.monotonic = static_cast<double>(*v) / 1e6;
  }
  out.format = LogFormat::kmsg;
  out.time = usec;
  out.message = line.substr(semi + 1);
  return true;
}

// After a syslog-style prefix: drop non-kernel lines' views and pick up the inner timestamp.
void finish_syslog(LogLine& out) {
  if (out.kernel) {
    out.monotonic = strip_inner_timestamp(out.message);
  }
}

// "<4>1 2026-11-30T02:00:00Z host kernel - - - msg" after the PRI.
bool parse_rfc5424(std::string_view s, LogLine& out) {
  if (s.size() < 3 || s[0] != '1' || s[1] != ' ') {
    return false;
  }
  s.remove_prefix(2);
  std::array<std::string_view, 5> fields; // timestamp, host, app, procid, msgid
  for (auto& f : fields) {
    const auto sp = s.find(' ');
    if (sp == std::string_view::npos || sp == 0) {
      return false;
    }
    f = s.substr(0, sp);
    s.remove_prefix(sp + 1);
  }
  // Structured data: "-" or one or more "[...]" elements (values may hold escaped ']').
  if (!s.empty() && s.front() == '-') {
    s.remove_prefix(1);
  } else {
    while (!s.empty() && s.front() == '[') {
      std::size_t i = 1;
      bool quoted = false;
      for (; i < s.size(); ++i) {
        if (s[i] == '\\') {
          ++i;
        } else if (s[i] == '"') {
          quoted = !quoted;
        } else if (s[i] == ']' && !quoted) {
          break;
        }
      }
      if (i >= s.size()) {
        return false;
      }
      s.remove_prefix(i + 1);
    }
  }
  if (!s.empty() && s.front() == ' ') {
    s.remove_prefix(1);
  }
  if (starts_with(s, "\xEF\xBB\xBF")) { // BOM allowed before MSG
    s.remove_prefix(3);
  }
  out.format = LogFormat::rfc5424;
  out.time = fields[0];
  out.kernel = fields[2] == "kernel";
  out.message = s;
  finish_syslog(out);
  return true;
}

// "+0.000421", "+2.5s" (dmesg -e / -H: the time since the message before); true when text is
// that form.
bool is_relative_delta(std::string_view text) {
  text = skip_spaces(text);
  if (text.empty() || text.front() != '+') {
    return false;
  }
  text.remove_prefix(1);
  if (!text.empty() && text.back() == 's') {
    text.remove_suffix(1);
  }
  return parse_monotonic_seconds(text).has_value();
}

// "<    0.000421>" (dmesg --time-format delta, and the second half of dmesg -d): true when text is
// that form.
bool is_angle_delta(std::string_view text) {
  return text.size() >= 3 && text.front() == '<' && text.back() == '>' &&
         parse_monotonic_seconds(text.substr(1, text.size() - 2)).has_value();
}

// "Dec 1 10:00" / "Dec  1 10:00:07" (the minute header of dmesg -e / -H); true when text is that
// form.
bool is_reltime_header(std::string_view text) {
  if (text.size() < 10 || !is_month(text) || text[3] != ' ') {
    return false;
  }
  text = skip_spaces(text.substr(4));
  const std::size_t day = digits(text);
  if (day == 0 || day > 2 || day >= text.size() || text[day] != ' ') {
    return false;
  }
  text.remove_prefix(day + 1);
  const bool minute = text.size() == 5 && is_digit(text[0]) && is_digit(text[1]) &&
                      text[2] == ':' && is_digit(text[3]) && is_digit(text[4]);
  return minute || (text.size() == 8 && is_clock(text));
}

// Lines beginning with '[': dmesg's monotonic, ctime, relative or delta stamp.
bool parse_bracket(std::string_view line, LogLine& out) {
  const auto close = line.find(']');
  if (close == std::string_view::npos || close > 40) {
    return false;
  }
  std::string_view inside = line.substr(1, close - 1);
  std::string_view rest = line.substr(close + 1);
  if (!rest.empty() && rest.front() == ' ') {
    rest.remove_prefix(1);
  }
  const auto angle = inside.find('<');
  if (auto seconds = parse_monotonic_seconds(inside)) {
    out.format = LogFormat::dmesg;
    out.monotonic = seconds;
  } else if (angle != std::string_view::npos && angle > 0 && inside[angle - 1] == ' ' &&
             is_angle_delta(trim(inside.substr(angle))) &&
             parse_monotonic_seconds(inside.substr(0, angle - 1))) {
    // dmesg -d: "[  123.456789 <    0.000421>]" keeps the time since boot before the delta.
    out.format = LogFormat::dmesg;
    out.monotonic = parse_monotonic_seconds(inside.substr(0, angle - 1));
    inside = inside.substr(0, angle - 1);
  } else if (is_weekday(inside) && inside.size() >= 24) {
    out.format = LogFormat::dmesg_ctime;
  } else if (is_relative_delta(inside) || is_angle_delta(trim(inside)) ||
             is_reltime_header(inside)) {
    // Relative stamps carry no time since boot: the boot rule has only the banner for them.
    out.format = LogFormat::dmesg_reltime;
  } else {
    return false;
  }
  out.time = trim(inside);
  out.message = rest;
  // journalctl -o short-monotonic: "[  123.456789] host kernel: msg".
  bool kernel = true;
  std::string_view message;
  if (out.format == LogFormat::dmesg && split_host_tag(rest, kernel, message) && kernel) {
    out.message = message;
  }
  return true;
}

} // namespace

std::optional<double> parse_monotonic_seconds(std::string_view text) {
  text = skip_spaces(text);
  const std::size_t whole = digits(text);
  if (whole == 0 || whole > 10 || whole >= text.size() || text[whole] != '.') {
    return std::nullopt;
  }
  const std::size_t frac = digits(text.substr(whole + 1));
  if (frac == 0 || frac > 9 || whole + 1 + frac != text.size()) {
    return std::nullopt;
  }
  const auto w = parse_uint(text.substr(0, whole));
  const auto f = parse_uint(text.substr(whole + 1, frac));
  if (!w || !f) {
    return std::nullopt;
  }
  double scale = 1;
  for (std::size_t i = 0; i < frac; ++i) {
    scale *= 10;
  }
  return static_cast<double>(*w) + static_cast<double>(*f) / scale;
}

LogLine parse_log_line(std::string_view line) {
  LogLine out;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) {
    line.remove_suffix(1);
  }
  if (line.empty()) {
    return out;
  }
  if (line.front() == ' ' || line.front() == '\t') {
    out.continuation = true;
    out.message = trim(line);
    return out;
  }
  if (starts_with(line, "-- ")) {
    out.format = LogFormat::journal;
    out.marker = starts_with(line, "-- Boot ")       ? LineMarker::journal_boot
                 : starts_with(line, "-- Reboot --") ? LineMarker::journal_reboot
                                                     : LineMarker::journal_other;
    out.message = line;
    return out;
  }

  std::string_view s = line;
  bool has_pri = false;
  unsigned pri = 0;
  if (s.front() == '<') {
    const std::size_t d = digits(s.substr(1));
    if (d > 0 && d <= 3 && d + 1 < s.size() && s[d + 1] == '>') {
      has_pri = true;
      pri = static_cast<unsigned>(parse_uint(s.substr(1, d)).value_or(0));
      s.remove_prefix(d + 2);
    }
  }
  // A record's facility (PRI / 8) is the kernel's (0) only for what the kernel printed: a program
  // writing to /dev/kmsg or syslog gets its own (user, daemon, ...), whatever tag it chose.
  const auto facility_says_kernel = [&](LogLine& parsed) {
    if (has_pri && (pri >> 3) != 0) {
      parsed.kernel = false;
    }
    return true;
  };
  if (has_pri && parse_rfc5424(s, out) && facility_says_kernel(out)) {
    return out;
  }
  bool decoded_user = false; // dmesg -x names the facility: only "kern" is the kernel's
  if (const std::size_t n = decode_prefix_length(s); n > 0 && n < s.size() && s[n] == '[') {
    decoded_user = !starts_with(s, "kern ") && !starts_with(s, "kern:");
    s.remove_prefix(n);
  }
  if (!s.empty() && s.front() == '[' && parse_bracket(s, out) && facility_says_kernel(out)) {
    if (decoded_user) {
      out.kernel = false;
    }
    return out;
  }
  if (!has_pri && !s.empty() && is_digit(s.front()) && parse_kmsg(s, out)) {
    return out;
  }
  char frac_sep = 0;
  if (const std::size_t n = iso_length(s, frac_sep); n > 0 && n < s.size() && s[n] == ' ') {
    out.time = s.substr(0, n);
    const std::string_view rest = s.substr(n + 1);
    if (frac_sep == ',' || !split_host_tag(rest, out.kernel, out.message)) {
      out.format = LogFormat::dmesg_iso; // dmesg --time-format iso writes a ',' before the fraction
      out.kernel = true;
      out.message = rest;
      return out;
    }
    out.format = LogFormat::syslog_iso;
    finish_syslog(out);
    return out;
  }
  if (const std::size_t n = syslog_time_length(s); n > 0) {
    if (split_host_tag(s.substr(n), out.kernel, out.message)) {
      out.format = LogFormat::syslog;
      out.time = s.substr(0, n);
      finish_syslog(out);
      return out;
    }
  }
  out.format = LogFormat::bare;
  out.message = s;
  if (starts_with(out.message, "kernel: ")) {
    out.message.remove_prefix(8);
    out.monotonic = strip_inner_timestamp(out.message);
  }
  return out;
}

} // namespace gpf
