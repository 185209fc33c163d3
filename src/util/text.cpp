#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gpf {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
  };
  while (!s.empty() && is_space(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_space(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  while (!s.empty()) {
    const auto nl = s.find('\n');
    auto line = s.substr(0, nl);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    lines.push_back(line);
    if (nl == std::string_view::npos) {
      break;
    }
    s.remove_prefix(nl + 1);
  }
  return lines;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) {
      return parts;
    }
    s.remove_prefix(pos + 1);
  }
}

std::optional<unsigned long> parse_uint(std::string_view s, int base) {
  s = trim(s);
  if (base == 16 && (starts_with(s, "0x") || starts_with(s, "0X"))) {
    s.remove_prefix(2);
  }
  if (s.empty()) {
    return std::nullopt;
  }
  unsigned long value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

std::string to_valid_utf8(std::string_view s) {
  static constexpr std::string_view k_replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c == 0) {
      out += k_replacement;
      ++i;
      continue;
    }
    if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    }
    bool valid = len != 0 && i + len <= s.size();
    for (std::size_t k = 1; valid && k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      valid = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Reject overlong forms, surrogates and code points past U+10FFFF.
    if (valid && ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
                  (cp >= 0xD800 && cp <= 0xDFFF))) {
      valid = false;
    }
    if (valid) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += k_replacement;
      ++i;
    }
  }
  return out;
}

std::string quote_evidence(std::string_view s, std::size_t max_bytes) {
  std::string out = to_valid_utf8(s);
  if (out.size() <= max_bytes) {
    return out;
  }
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  out.resize(cut);
  out += "\xE2\x80\xA6";
  return out;
}

std::string printable(std::string_view s) {
  const std::string valid = to_valid_utf8(s);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < valid.size() &&
               static_cast<unsigned char>(valid[i + 1]) <= 0x9f) {
      // U+0080..U+009F in UTF-8 is C2 80..C2 9F (the continuation byte is always >= 0x80 here)
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(valid[++i]));
    } else {
      out += valid[i];
    }
  }
  return out;
}

std::optional<std::string> normalize_bus_id(std::string_view s) {
  s = trim(s);
  if (starts_with(s, "PCI:") || starts_with(s, "pci:")) {
    s.remove_prefix(4);
  }
  // Split "domain:bus:device[.function]" or "bus:device[.function]".
  std::string_view function = "0";
  if (const auto dot = s.rfind('.'); dot != std::string_view::npos) {
    function = s.substr(dot + 1);
    s = s.substr(0, dot);
  }
  const auto fields = split(s, ':');
  if (fields.size() < 2 || fields.size() > 3) {
    return std::nullopt;
  }
  const std::string_view domain = fields.size() == 3 ? fields[0] : std::string_view("0");
  const std::string_view bus = fields[fields.size() - 2];
  const std::string_view device = fields.back();
  const auto all_hex = [](std::string_view f, std::size_t max_len) {
    return !f.empty() && f.size() <= max_len && std::all_of(f.begin(), f.end(), [](char c) {
      return std::isxdigit(static_cast<unsigned char>(c));
    });
  };
  if (!all_hex(domain, 8) || !all_hex(bus, 2) || !all_hex(device, 2) || !all_hex(function, 1)) {
    return std::nullopt;
  }
  const auto d = parse_uint(domain, 16);
  const auto b = parse_uint(bus, 16);
  const auto dev = parse_uint(device, 16);
  const auto fn = parse_uint(function, 16);
  if (!d || !b || !dev || !fn || *d > 0xFFFF || *dev > 0x1F || *fn > 7) {
    return std::nullopt;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lx:%02lx:%02lx.%lx", *d, *b, *dev, *fn);
  return std::string(buf);
}

} // namespace gpf
