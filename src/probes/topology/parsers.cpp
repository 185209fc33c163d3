// Pure parsers of the topology probes. PCI config layout: PCI Local Bus / PCI Express Base
// specification (capability pointer at 0x34, extended capabilities from 0x100, ACS = 0x000D with
// its capability register at +4 and control register at +6). Other formats: proc(5).
#include "gpf/probes/topology_parsers.hpp"

#include "gpf/util/tenths.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace gpf {
namespace {

constexpr std::size_t k_conventional_size = 0x100; // standard config space
constexpr std::size_t k_header_size = 0x40;        // the type 0/1 header every reader gets
constexpr std::uint16_t k_acs_id = 0x000D;
constexpr std::uint8_t k_pcie_cap_id = 0x10;

std::uint16_t le16(std::string_view b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) |
                                    (static_cast<unsigned char>(b[at + 1]) << 8));
}

std::uint32_t le32(std::string_view b, std::size_t at) {
  return static_cast<std::uint32_t>(le16(b, at)) |
         (static_cast<std::uint32_t>(le16(b, at + 2)) << 16);
}

// Walks the conventional list; fills port_type. Returns whether the device is PCI Express, or
// nullopt when the list could not be walked to its end.
std::optional<bool> walk_capabilities(std::string_view b, PciConfig& out) {
  const std::uint16_t status = le16(b, 0x06);
  if ((status & 0x10) == 0) {
    return false; // no capability list at all
  }
  const std::size_t limit = std::min(b.size(), k_conventional_size);
  std::set<std::size_t> seen;
  std::size_t ptr = static_cast<unsigned char>(b[0x34]) & 0xFC;
  bool pcie = false;
  while (ptr != 0) {
    if (ptr < k_header_size) {
      out.note = fmt::format("capability pointer 0x{:02x} points into the header", ptr);
      return std::nullopt;
    }
    if (ptr + 2 > limit) {
      out.note = fmt::format("capability list continues at 0x{:02x}, beyond the {} bytes read", ptr,
                             b.size());
      return std::nullopt;
    }
    if (!seen.insert(ptr).second) {
      out.note = fmt::format("capability list loops at 0x{:02x}", ptr);
      return std::nullopt;
    }
    const auto id = static_cast<unsigned char>(b[ptr]);
    if (id == k_pcie_cap_id) {
      pcie = true;
      if (ptr + 4 <= limit) {
        out.port_type = static_cast<std::uint8_t>((le16(b, ptr + 2) >> 4) & 0xF);
      }
    }
    ptr = static_cast<unsigned char>(b[ptr + 1]) & 0xFC;
  }
  return pcie;
}

void walk_extended(std::string_view b, PciConfig& out) {
  std::set<std::size_t> seen;
  std::size_t off = k_conventional_size;
  for (;;) {
    if (off + 4 > b.size()) {
      out.note =
          fmt::format("extended capability list continues at 0x{:03x}, beyond the {} bytes read",
                      off, b.size());
      return;
    }
    if (!seen.insert(off).second) {
      out.note = fmt::format("extended capability list loops at 0x{:03x}", off);
      return;
    }
    const std::uint32_t header = le32(b, off);
    if (header == 0xFFFFFFFF) {
      out.note = "extended configuration space reads as all ones (device not responding)";
      return;
    }
    if (header == 0) {
      out.acs_state = AcsState::absent; // an empty list (only valid at 0x100) or its end
      return;
    }
    if ((header & 0xFFFF) == k_acs_id) {
      if (off + 8 > b.size()) {
        out.note = fmt::format("ACS capability at 0x{:03x} is cut off at {} bytes", off, b.size());
        return;
      }
      AcsControl acs;
      acs.offset = static_cast<std::uint16_t>(off);
      acs.capability = le16(b, off + 4);
      acs.control = le16(b, off + 6);
      out.acs = acs;
      out.acs_state = AcsState::present;
      return;
    }
    const std::size_t next = (header >> 20) & 0xFFC;
    if (next == 0) {
      out.acs_state = AcsState::absent;
      return;
    }
    if (next < k_conventional_size) {
      out.note = fmt::format(
          "extended capability at 0x{:03x} points back into the standard space (0x{:03x})", off,
          next);
      return;
    }
    off = next;
  }
}

bool is_hex_digits(std::string_view s, std::size_t n) {
  if (s.size() != n) {
    return false;
  }
  for (char c : s) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return true;
}

// proc/mounts escapes space, tab, newline and backslash as \ooo.
std::string decode_mount_field(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const auto code = parse_uint(s.substr(i + 1, 3), 8);
      if (code && *code < 256 &&
          s.substr(i + 1, 3).find_first_not_of("01234567") == std::string_view::npos) {
        out += static_cast<char>(*code);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) {
      ++i;
    }
    const std::size_t start = i;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) == 0) {
      ++i;
    }
    if (i > start) {
      out.push_back(s.substr(start, i - start));
    }
  }
  return out;
}

} // namespace

PciConfig parse_pci_config(std::string_view bytes) {
  PciConfig out;
  out.size = bytes.size();
  if (bytes.size() < k_header_size) {
    out.note =
        fmt::format("config space is {} bytes, shorter than the 64-byte header", bytes.size());
    if (bytes.size() >= 2) {
      out.vendor = le16(bytes, 0);
    }
    return out;
  }
  out.vendor = le16(bytes, 0);
  if (*out.vendor == 0xFFFF) {
    out.note = "config space reads as all ones (device not responding)";
    return out;
  }
  out.header_type = static_cast<std::uint8_t>(static_cast<unsigned char>(bytes[0x0E]) & 0x7F);
  if (bytes.size() == k_header_size) {
    out.note = "only the 64-byte header is readable (reading the rest of config space needs root)";
    return out;
  }
  const auto pcie = walk_capabilities(bytes, out);
  if (bytes.size() <= k_conventional_size) {
    if (pcie == false && bytes.size() == k_conventional_size) {
      out.acs_state = AcsState::absent; // conventional PCI: ACS is a PCI Express capability
      out.note = "not a PCI Express device";
    } else if (out.note.empty()) {
      out.note = fmt::format("only {} bytes of config space are readable (no extended space)",
                             bytes.size());
    }
    return out;
  }
  if (pcie == false) {
    out.acs_state = AcsState::absent;
    out.note = "not a PCI Express device";
    return out;
  }
  std::string conventional_note = out.note;
  out.note.clear();
  walk_extended(bytes, out);
  if (out.note.empty() && !conventional_note.empty()) {
    out.note = conventional_note;
  }
  return out;
}

bool is_pci_address(std::string_view s) {
  return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.' &&
         is_hex_digits(s.substr(0, 4), 4) && is_hex_digits(s.substr(5, 2), 2) &&
         is_hex_digits(s.substr(8, 2), 2) && s[11] >= '0' && s[11] <= '7';
}

std::string sysfs_prefix_through(std::string_view path, std::string_view bus_id) {
  std::string needle(1, '/'); // not "/" + std::string: GCC 12's -Wrestrict false positive
  needle += bus_id;
  const auto at = path.find(needle);
  return at == std::string_view::npos ? std::string()
                                      : std::string(path.substr(0, at + 1 + bus_id.size()));
}

SysfsPciPath parse_sysfs_pci_path(std::string_view path) {
  SysfsPciPath out;
  std::string_view last_other;
  for (auto part : split(path, '/')) {
    if (is_pci_address(part)) {
      if (out.devices.empty()) {
        out.root = std::string(last_other);
      }
      out.devices.emplace_back(to_lower(part));
    } else if (out.devices.empty()) {
      last_other = part;
    } else {
      break; // a non-device component below the devices (e.g. a function's subdirectory)
    }
  }
  return out;
}

std::optional<std::uint32_t> parse_sysfs_hex(std::string_view text) {
  auto t = trim(text);
  if (starts_with(t, "0x") || starts_with(t, "0X")) {
    t.remove_prefix(2);
  }
  if (t.empty() || t.size() > 8) {
    return std::nullopt;
  }
  auto v = parse_uint(t, 16);
  if (!v) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(*v);
}

std::optional<unsigned> parse_link_speed(std::string_view text) {
  const auto t = trim(text);
  const auto unit = t.find(" GT/s");
  if (unit == std::string_view::npos) {
    return std::nullopt;
  }
  return parse_tenths(t.substr(0, unit));
}

std::optional<unsigned> parse_link_width(std::string_view text) {
  const auto t = trim(text);
  if (t.empty() || t.size() > 3) {
    return std::nullopt;
  }
  const auto v = parse_uint(t);
  if (!v || *v > 32) {
    return std::nullopt;
  }
  return static_cast<unsigned>(*v);
}

std::optional<std::uint64_t> parse_aer_total(std::string_view text, std::string_view total) {
  for (auto line : split_lines(text)) {
    const auto w = words(line);
    if (w.size() == 2 && w[0] == total && w[1].size() <= 20) {
      if (auto v = parse_uint(w[1])) {
        return static_cast<std::uint64_t>(*v);
      }
    }
  }
  return std::nullopt;
}

std::optional<IbPortState> parse_ib_state(std::string_view text) {
  const auto t = trim(text);
  const auto colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 3) {
    return std::nullopt;
  }
  const auto code = parse_uint(t.substr(0, colon));
  const auto name = trim(t.substr(colon + 1));
  if (!code || name.empty() || name.size() > 64) {
    return std::nullopt;
  }
  return IbPortState{static_cast<unsigned>(*code), std::string(name)};
}

std::optional<unsigned> parse_ib_rate(std::string_view text) {
  const auto t = trim(text);
  const auto unit = t.find(" Gb/sec");
  if (unit == std::string_view::npos) {
    return std::nullopt;
  }
  return parse_tenths(t.substr(0, unit));
}

IommuCmdline parse_iommu_cmdline(std::string_view cmdline) {
  IommuCmdline out;
  for (auto word : words(cmdline)) {
    const auto eq = word.find('=');
    const std::string key = to_lower(word.substr(0, eq));
    const std::string value = eq == std::string_view::npos ? "" : to_lower(word.substr(eq + 1));
    if (key != "iommu" && key != "intel_iommu" && key != "amd_iommu" &&
        key != "iommu.passthrough") {
      continue;
    }
    out.options.emplace_back(word);
    for (auto v : split(value, ',')) {
      if (key == "iommu" && (v == "pt" || v == "soft")) {
        out.passthrough = out.passthrough || v == "pt";
      } else if (key == "iommu.passthrough" && (v == "1" || v == "on" || v == "y")) {
        out.passthrough = true;
      } else if (key != "iommu.passthrough" && v == "off") {
        out.off = true;
      }
    }
  }
  return out;
}

std::optional<bool> cpuinfo_hypervisor(std::string_view cpuinfo) {
  for (auto line : split_lines(cpuinfo)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const auto key = trim(line.substr(0, colon));
    if (key != "flags" && key != "Features") {
      continue;
    }
    for (auto w : words(line.substr(colon + 1))) {
      if (w == "hypervisor") {
        return true;
      }
    }
    return false;
  }
  return std::nullopt;
}

std::optional<std::string> find_mount_line(std::string_view mounts, std::string_view mount_point) {
  std::optional<std::string> found;
  for (auto line : split_lines(mounts)) {
    const auto fields = words(line);
    if (fields.size() >= 2 && decode_mount_field(fields[1]) == mount_point) {
      found = std::string(line);
    }
  }
  return found;
}

std::optional<MemlockLimit> parse_memlock_limit(std::string_view limits) {
  constexpr std::string_view k_label = "Max locked memory";
  for (auto line : split_lines(limits)) {
    if (!starts_with(line, k_label)) {
      continue;
    }
    MemlockLimit out;
    out.line = std::string(trim(line));
    const auto fields = words(line.substr(k_label.size()));
    if (fields.empty()) {
      return out;
    }
    if (fields[0] == "unlimited") {
      out.unlimited = true;
    } else if (auto v = parse_uint(fields[0])) {
      out.soft = *v;
    }
    return out;
  }
  return std::nullopt;
}

std::optional<PackageVersion> dpkg_fabric_manager(std::string_view status) {
  std::string package;
  std::string version;
  bool installed = false;
  std::optional<PackageVersion> found;
  const auto finish = [&] {
    // nvidia-fabricmanager-550 (Ubuntu/NVIDIA repos) or nvidia-fabricmanager; not -dev packages
    if (installed && !version.empty() && starts_with(package, "nvidia-fabricmanager") &&
        package.find("-dev") == std::string::npos) {
      std::string upstream = version.substr(0, version.find('-'));
      if (const auto colon = upstream.find(':'); colon != std::string::npos) {
        upstream = upstream.substr(colon + 1); // epoch
      }
      found = PackageVersion{upstream, fmt::format("Package: {}, Version: {}", package, version)};
    }
    package.clear();
    version.clear();
    installed = false;
  };
  // Line by line in place: the database is read up to 32 MiB, and a vector of its lines cost
  // about as much again (bench/bounds.sh).
  for (std::string_view rest = status; !rest.empty();) {
    const auto nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (trim(line).empty()) {
      finish();
      continue;
    }
    if (starts_with(line, "Package:")) {
      package = std::string(trim(line.substr(8)));
    } else if (starts_with(line, "Version:")) {
      version = std::string(trim(line.substr(8)));
    } else if (starts_with(line, "Status:")) {
      installed = trim(line.substr(7)) == "install ok installed";
    }
  }
  finish();
  return found;
}

} // namespace gpf
