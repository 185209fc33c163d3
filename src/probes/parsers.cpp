// Pure parsers of the foundation probes. Formats (version, params, registry, gpus/*/information):
// the driver's kernel-open/nvidia/nv-procfs.c, docs/sources.md#driver-files-under-proc-and-sys,
// and docs/snapshot-format.md.
#include "gpf/probes/parsers.hpp"

#include "gpf/util/text.hpp"

#include <algorithm>
#include <array>

namespace gpf {
namespace {

struct FlavourPattern {
  std::string_view needle;
  KernelFlavour flavour;
};

// Ubuntu kernel flavours as they end a release ("5.15.0-1051-aws").
constexpr std::array k_ubuntu_suffixes{"-generic", "-lowlatency", "-aws", "-azure",  "-gcp",
                                       "-gke",     "-oracle",     "-kvm", "-nvidia", "-ibm",
                                       "-raspi",   "-intel-iotg", "-hwe"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The first ".<tag><digits>" in a release, with "_<digits>" after it when minor is set: "el8_9",
// "amzn2". A hand scan: a std::regex here cost more than the rest of the kernel probe.
std::optional<std::string> dotted_tag(std::string_view release, std::string_view tag, bool minor) {
  const auto digits_at = [&](std::size_t i) {
    std::size_t n = 0;
    while (i + n < release.size() && release[i + n] >= '0' && release[i + n] <= '9') {
      ++n;
    }
    return n;
  };
  for (std::size_t dot = release.find('.'); dot != std::string_view::npos;
       dot = release.find('.', dot + 1)) {
    if (release.substr(dot + 1, tag.size()) != tag) {
      continue;
    }
    std::size_t end = dot + 1 + tag.size();
    const std::size_t major = digits_at(end);
    if (major == 0) {
      continue;
    }
    end += major;
    if (minor && end < release.size() && release[end] == '_') {
      if (const std::size_t n = digits_at(end + 1); n > 0) {
        end += 1 + n;
      }
    }
    return std::string(release.substr(dot + 1, end - dot - 1));
  }
  return std::nullopt;
}

} // namespace

KernelFacts parse_kernel_release(std::string_view text) {
  KernelFacts k;
  k.release = quote_evidence(trim(text), 256);
  const std::string_view r = trim(text);
  k.version = Version::parse(r);
  if (k.version && k.version->parts().size() < 2) {
    k.version.reset(); // "5" alone is not a kernel release
  }
  k.release_candidate = contains(r, "-rc");
  if (!k.version) {
    k.flavour = KernelFlavour::unknown;
    return k;
  }
  const std::string lower = to_lower(r);
  if (contains(lower, "microsoft-standard-wsl2") ||
      (contains(lower, "microsoft") && contains(lower, "wsl"))) {
    k.flavour = KernelFlavour::wsl2;
    k.flavour_detail = "microsoft-standard-WSL2";
    return k;
  }
  if (r == "4.4.0") {
    // gVisor reports a fixed, fake "4.4.0" with no distro suffix.
    k.flavour = KernelFlavour::gvisor;
    k.flavour_detail = "gVisor (fixed 4.4.0)";
    return k;
  }
  if (auto el = dotted_tag(lower, "el", true)) { // "….el8_9.x86_64" → "el8_9"
    k.flavour = KernelFlavour::rhel;
    k.flavour_detail = *el;
    return k;
  }
  if (auto amzn = dotted_tag(lower, "amzn", false)) { // "….amzn2.x86_64" → "amzn2"
    k.flavour = KernelFlavour::amazon;
    k.flavour_detail = *amzn;
    return k;
  }
  for (std::string_view suffix : k_ubuntu_suffixes) {
    if (ends_with(lower, suffix)) {
      k.flavour = KernelFlavour::ubuntu;
      k.flavour_detail = std::string(suffix.substr(1));
      return k;
    }
  }
  if (contains(lower, "+deb") || ends_with(lower, "-amd64") || ends_with(lower, "-arm64")) {
    k.flavour = KernelFlavour::debian;
    k.flavour_detail = std::string(r.substr(r.rfind('-') + 1));
    return k;
  }
  if (ends_with(lower, "-default") || ends_with(lower, "-azure") || contains(lower, "-150")) {
    k.flavour = KernelFlavour::suse;
    k.flavour_detail = "default";
    return k;
  }
  k.flavour = KernelFlavour::generic;
  return k;
}

bool parse_driver_version_file(std::string_view text, DriverFacts& out) {
  for (auto line : split_lines(text)) {
    if (!starts_with(line, "NVRM version:")) {
      continue;
    }
    out.version_line = quote_evidence(trim(line), 512);
    const auto id = line.substr(std::string_view("NVRM version:").size());
    // Open: "NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build ...".
    // Proprietary: "NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu ...".
    out.flavour = contains(id, "Open Kernel Module") ? DriverFlavour::open
                  : contains(id, "Kernel Module")    ? DriverFlavour::proprietary
                                                     : DriverFlavour::unknown;
    auto after = id.find("Kernel Module");
    auto rest = after == std::string_view::npos ? id : id.substr(after);
    if (out.flavour == DriverFlavour::open) {
      // skip "for <arch>" so an arch like "aarch64" is not read as a version
      if (auto f = rest.find(" for "); f != std::string_view::npos) {
        rest = rest.substr(f + 5);
        rest = rest.substr(std::min(rest.size(), rest.find(' ')));
      }
    }
    const auto pos = rest.find_first_of("0123456789");
    if (pos == std::string_view::npos) {
      return false;
    }
    auto token = rest.substr(pos, rest.find_first_not_of("0123456789.", pos) - pos);
    while (!token.empty() && token.back() == '.') {
      token.remove_suffix(1);
    }
    auto v = Version::parse(token);
    if (!v || v->parts().size() < 2) {
      return false;
    }
    out.version = v;
    out.version_text = std::string(token);
    return true;
  }
  return false;
}

bool parse_module_version_file(std::string_view text, DriverFacts& out) {
  const auto t = trim(text);
  auto v = Version::parse(t);
  if (!v || v->parts().size() < 2 || t.find_first_not_of("0123456789.") != std::string_view::npos) {
    return false;
  }
  out.version = v;
  out.version_text = std::string(t);
  return true;
}

std::map<std::string, std::string> parse_params(std::string_view text) {
  std::map<std::string, std::string> params;
  for (auto line : split_lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      continue;
    }
    auto key = trim(line.substr(0, colon));
    auto value = trim(line.substr(colon + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    if (!key.empty() && key.find(' ') == std::string_view::npos) {
      params[to_valid_utf8(key)] = to_valid_utf8(value);
    }
  }
  return params;
}

RegistryFacts parse_registry(std::string_view text) {
  RegistryFacts r;
  r.raw = quote_evidence(trim(text), 1024);
  for (auto line : split_lines(text)) {
    line = trim(line);
    if (!starts_with(line, "Binary:")) {
      continue;
    }
    auto value = trim(line.substr(7));
    if (value.size() < 2 || value.front() != '"' || value.back() != '"') {
      return r;
    }
    r.parsed = true;
    value = value.substr(1, value.size() - 2);
    for (auto key : split(value, ',')) {
      if (!trim(key).empty()) {
        r.binary_keys.push_back(to_valid_utf8(trim(key)));
      }
    }
    return r;
  }
  return r;
}

void parse_gpu_information(std::string_view text, GpuFacts& out) {
  for (auto line : split_lines(text)) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const auto label = trim(line.substr(0, colon));
    const auto value = trim(line.substr(colon + 1));
    auto str = [&] { return quote_evidence(value, 256); };
    if (label == "Model") {
      out.model = str();
    } else if (label == "GPU UUID") {
      out.uuid = str();
    } else if (label == "Video BIOS") {
      out.vbios = str();
    } else if (label == "GPU Firmware") {
      out.firmware = str();
    } else if (label == "Bus Location") {
      out.bus_location = str();
    } else if (label == "Device Minor") {
      if (auto n = parse_uint(value); n && *n < 1u << 20) {
        out.device_minor = static_cast<unsigned>(*n);
      }
    } else if (label == "GPU Excluded") {
      if (value == "Yes") {
        out.excluded = true;
      } else if (value == "No") {
        out.excluded = false;
      }
    }
  }
}

ModuleFacts parse_modules(std::string_view text) {
  ModuleFacts m;
  for (auto line : split_lines(text)) {
    const auto name = line.substr(0, line.find(' '));
    if (!name.empty()) {
      m.loaded.insert(to_valid_utf8(name));
    }
  }
  return m;
}

std::optional<std::string> parse_lockdown(std::string_view text) {
  const auto open = text.find('[');
  const auto close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos || close == open + 1) {
    return std::nullopt;
  }
  return to_valid_utf8(text.substr(open + 1, close - open - 1));
}

std::optional<bool> parse_secure_boot_variable(std::string_view bytes) {
  if (bytes.size() < 5) {
    return std::nullopt;
  }
  switch (static_cast<unsigned char>(bytes[4])) {
  case 0:
    return false;
  case 1:
    return true;
  default:
    return std::nullopt;
  }
}

std::optional<std::string> nvidia_module_name(std::string_view file_name) {
  // The modules an NVIDIA driver installs (kernel-open/Kbuild), by file name; modprobe treats '_'
  // and '-' alike.
  static constexpr std::string_view k_modules[] = {"nvidia", "nvidia-uvm", "nvidia-drm",
                                                   "nvidia-modeset", "nvidia-peermem"};
  static constexpr std::string_view k_suffixes[] = {".ko", ".ko.xz", ".ko.zst", ".ko.gz"};
  for (const auto suffix : k_suffixes) {
    if (file_name.size() <= suffix.size() ||
        file_name.substr(file_name.size() - suffix.size()) != suffix) {
      continue;
    }
    std::string stem(file_name.substr(0, file_name.size() - suffix.size()));
    std::replace(stem.begin(), stem.end(), '_', '-');
    for (const auto module : k_modules) {
      if (stem == module) {
        return stem;
      }
    }
  }
  return std::nullopt;
}

std::vector<std::string> build_log_tail(std::string_view text, std::size_t count) {
  std::vector<std::string_view> lines;
  for (auto line : split_lines(text)) {
    if (!trim(line).empty()) {
      lines.push_back(line);
    }
  }
  // A compiler's first errors ("file.c:1:2: error: ...") say why the build failed; the tail says
  // where it stopped.
  std::vector<std::string> out;
  std::vector<std::size_t> taken;
  for (std::size_t i = 0; i < lines.size() && out.size() < std::min<std::size_t>(3, count); ++i) {
    if (contains(lines[i], "error:")) {
      out.push_back(to_valid_utf8(trim(lines[i]).substr(0, 400)));
      taken.push_back(i);
    }
  }
  const std::size_t rest = count - out.size();
  for (std::size_t i = lines.size() > rest ? lines.size() - rest : 0; i < lines.size(); ++i) {
    if (std::find(taken.begin(), taken.end(), i) == taken.end()) {
      out.push_back(to_valid_utf8(trim(lines[i]).substr(0, 400)));
    }
  }
  return out;
}

} // namespace gpf
