// The signature table of the kernel-log scanner: exact texts from the driver source and public
// logs (docs/sources.md: #xid-errors for the Xid formats, #rminitadapter-failures,
// #other-kernel-log-messages, #driver-files-under-proc-and-sys for the module id) and one decoder
// per kind. Decoders take the text after "NVRM: "
// (joined with spaces across the lines of a multi-line message) or the whole kernel message.
#include "gpf/probes/kernel_log_signatures.hpp"

#include "gpf/knowledge/driver_messages.hpp"
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/probes/parsers.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <array>
#include <cctype>

namespace gpf {
namespace {

constexpr std::string_view k_nvrm = "NVRM:";
constexpr std::size_t k_detail_cap = 240;

bool is_pci_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' ||
         c == '.';
}

std::string_view after(std::string_view text, std::string_view marker) {
  const auto pos = text.find(marker);
  return pos == std::string_view::npos ? std::string_view{} : text.substr(pos + marker.size());
}

// Decimal number at the start of s.
std::optional<unsigned> leading_uint(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && n < 9 && s[n] >= '0' && s[n] <= '9') {
    ++n;
  }
  if (n == 0) {
    return std::nullopt;
  }
  return static_cast<unsigned>(*parse_uint(s.substr(0, n)));
}

// "0x26" or "26" (hex) at the start of s; stops at the first non-hex character.
std::optional<unsigned> leading_hex(std::string_view s, std::size_t& used) {
  used = 0;
  if (starts_with(s, "0x") || starts_with(s, "0X")) {
    used = 2;
  }
  std::size_t n = used;
  while (n < s.size() && n - used < 8 && std::isxdigit(static_cast<unsigned char>(s[n]))) {
    ++n;
  }
  if (n == used) {
    return std::nullopt;
  }
  const auto v = parse_uint(s.substr(used, n - used), 16);
  used = n;
  return static_cast<unsigned>(*v);
}

// A version token ("550.54.14") at the start of s, without a trailing '.'.
std::string version_token(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && ((s[n] >= '0' && s[n] <= '9') || s[n] == '.')) {
    ++n;
  }
  auto token = s.substr(0, n);
  while (!token.empty() && token.back() == '.') {
    token.remove_suffix(1);
  }
  return std::string(token);
}

// "GPU dddd:bb:dd.f: ..." (NV_DEV_PRINTF) or "GPU at [PCI:]dddd:bb:dd[.f]..." at the start of text.
std::optional<std::string> leading_gpu_bus(std::string_view text) {
  if (!starts_with(text, "GPU ")) {
    return std::nullopt;
  }
  text.remove_prefix(4);
  if (starts_with(text, "at ")) {
    text.remove_prefix(3);
  }
  return pci_after(text, "");
}

// "<driver> dddd:bb:dd.f: ..." (the kernel's dev_printk prefix) at the start of a message.
std::optional<std::string> device_prefix_bus(std::string_view message, std::string_view driver) {
  if (!starts_with(message, driver) || message.size() <= driver.size() ||
      message[driver.size()] != ' ') {
    return std::nullopt;
  }
  return pci_after(message.substr(driver.size() + 1), "");
}

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// The text after the kernel's device prefix "<driver> <bus>[:<service>]: " (dev_printk), or ""
// when the message does not start with one. The address is strict: a process name (15 bytes)
// cannot hold a driver name, a full address and the ": " after it.
std::string_view after_device_prefix(std::string_view message) {
  std::size_t n = 0;
  while (n < message.size() && n < 32 && is_name_char(message[n])) {
    ++n;
  }
  if (n == 0 || n >= message.size() || message[n] != ' ') {
    return {};
  }
  std::string_view rest = message.substr(n + 1);
  std::size_t a = 0;
  while (a < rest.size() && a < 24 && is_pci_char(rest[a])) {
    ++a;
  }
  std::string_view token = rest.substr(0, a);
  rest.remove_prefix(a);
  if (!token.empty() && token.back() == ':' && !rest.empty() && rest.front() != ' ') {
    // a port service's suffix: "0000:00:1c.0:pcie004: "
    std::size_t m = 0;
    while (m < rest.size() && m < 16 && is_name_char(rest[m])) {
      ++m;
    }
    token.remove_suffix(1);
    rest.remove_prefix(m);
    if (!starts_with(rest, ": ")) {
      return {};
    }
    return normalize_bus_id(token) ? rest.substr(2) : std::string_view{};
  }
  if (token.empty() || token.back() != ':' || !starts_with(rest, " ")) {
    return {};
  }
  token.remove_suffix(1);
  return normalize_bus_id(token) ? rest.substr(1) : std::string_view{};
}

// Raw bytes, a little past the cap so the scanner can mark the cut when it makes them valid UTF-8.
std::string capped(std::string_view s) {
  return std::string(trim(s).substr(0, k_detail_cap + 4));
}

std::string code_text(const CodeInfo* info, unsigned value, std::string_view what) {
  return info ? fmt::format("{} (0x{:x})", info->name, value)
              : fmt::format("unknown {} 0x{:x}", what, value);
}

// The line's own severity word among its first words ("NETIR Fatal XC0 ...", "Fatal, Link 12"):
// true for Fatal, false for Non-fatal / Nonfatal, nullopt when it has none.
std::optional<bool> fatal_word(std::string_view text) {
  for (int i = 0; i < 3 && !text.empty(); ++i) {
    text = trim(text);
    const auto end = text.find_first_of(" ,");
    std::string word(text.substr(0, end));
    for (auto& ch : word) {
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    if (word == "fatal") {
      return true;
    }
    if (word == "non-fatal" || word == "nonfatal") {
      return false;
    }
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
  }
  return std::nullopt;
}

// --- decoders -------------------------------------------------------------------------------

// "Xid (PCI:0000:3b:00[ GPU-I:05[ GPU-CI:01]]): 79, [pid=..., [name=..., ]]text" (facts §3a).
bool decode_xid(std::string_view text, Recognised& out) {
  std::string_view rest = after(text, "Xid (");
  const auto close = rest.find(')');
  if (close == std::string_view::npos) {
    return false;
  }
  const std::string_view inside = rest.substr(0, close);
  LogEvent& e = out.event;
  e.kind = LogEventKind::xid;
  e.bus_id = pci_after(inside, "");
  if (!e.bus_id) {
    return false; // the driver always names the GPU first
  }
  if (auto gi = after(inside, "GPU-I:"); !gi.empty()) {
    e.gpu_instance = leading_uint(gi);
  }
  if (auto ci = after(inside, "GPU-CI:"); !ci.empty()) {
    e.compute_instance = leading_uint(ci);
  }
  rest = rest.substr(close + 1);
  if (starts_with(rest, ":")) {
    rest.remove_prefix(1);
  }
  rest = trim(rest);
  e.xid = leading_uint(rest);
  if (!e.xid) {
    return false;
  }
  rest = rest.substr(std::min(rest.size(), rest.find_first_not_of("0123456789")));
  if (starts_with(rest, ",")) {
    rest.remove_prefix(1);
  }
  rest = trim(rest);
  // pid=N, / pid='<unknown>', then name=..., (515–565 always, 570+ only with a process).
  for (std::string_view key : {"pid=", "name="}) {
    if (starts_with(rest, key)) {
      const auto comma = rest.find(", ");
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
    }
  }
  e.detail = capped(rest);
  if (auto cause = after(rest, "caused by previous Xid "); !cause.empty()) {
    e.caused_by_xid = leading_uint(cause);
  }
  e.line_fatal = fatal_word(rest);
  const XidInfo* info = find_xid(*e.xid);
  e.meaning = info ? fmt::format("Xid {} ({}): {}", *e.xid, info->mnemonic, info->meaning)
                   : fmt::format("Xid {}, which the Xid catalog does not list", *e.xid);
  if (e.line_fatal) {
    e.meaning += *e.line_fatal ? "; the line says Fatal" : "; the line says Nonfatal";
  }
  if (*e.xid == 154) {
    // "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)".
    if (auto to = after(rest, " to 0x"); !to.empty()) {
      const auto open = to.find('(');
      const auto shut = to.find(')', open == std::string_view::npos ? 0 : open);
      if (open != std::string_view::npos && shut != std::string_view::npos) {
        e.recovery_action = std::string(to.substr(open + 1, shut - open - 1));
        e.meaning += fmt::format("; recovery action: {}", *e.recovery_action);
      }
    }
  }
  if (e.caused_by_xid) {
    e.meaning += fmt::format(" (caused by Xid {})", *e.caused_by_xid);
  }
  return true;
}

// "GPU 0000:0a:00.0: RmInitAdapter failed! (0x26:0x56:1234)" (facts §4a).
bool decode_rm_init(std::string_view text, Recognised& out) {
  std::string_view codes = after(text, "RmInitAdapter failed! (");
  std::size_t used = 0;
  const auto init = leading_hex(codes, used);
  if (!init) {
    return false;
  }
  codes.remove_prefix(used);
  std::optional<unsigned> status;
  if (starts_with(codes, ":")) {
    codes.remove_prefix(1);
    status = leading_hex(codes, used);
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::rm_init_failed;
  e.bus_id = leading_gpu_bus(text);
  e.init_status = init;
  e.rm_status = status;
  const CodeInfo* stage = find_rm_init(*init);
  e.meaning = "failed to initialise: " + code_text(stage, *init, "RM_INIT stage");
  if (status) {
    e.meaning += ", " + code_text(find_nv_status(*status), *status, "NV_STATUS");
  }
  if (stage) {
    e.meaning += fmt::format(" — {}", stage->meaning);
  }
  return true;
}

// "GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 0" and older
// "rm_init_adapter failed for device bearing minor number 0" / "rm_init_adapter(0) failed".
bool decode_rm_init_minor(std::string_view text, Recognised& out) {
  if (!contains(text, "failed")) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::rm_init_minor;
  e.bus_id = leading_gpu_bus(text);
  if (auto minor = after(text, "minor number "); !minor.empty()) {
    e.device_minor = leading_uint(minor);
  }
  e.meaning = e.device_minor ? fmt::format("the GPU with device minor {} failed to initialise",
                                           *e.device_minor)
                             : std::string("a GPU failed to initialise");
  return true;
}

// ≤570: "API mismatch: the client has the version X, but this kernel module has the version Y. ..."
// ≥575: "API mismatch: the client 'name' (pid N) has the version X, but this kernel module has the
// version Y. ..." (facts §5, both joined from several NVRM lines).
bool decode_api_mismatch(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::api_mismatch;
  e.client_version = version_token(after(text, "has the version "));
  e.kernel_version = version_token(after(text, "kernel module has the version "));
  if (auto client = after(text, "the client '"); !client.empty()) {
    const auto pid_end = client.find(')');
    e.detail =
        capped("client '" +
               std::string(client.substr(0, pid_end == std::string_view::npos ? 0 : pid_end + 1)));
  }
  e.meaning = fmt::format(
      "the NVIDIA user-space driver components have version {} but the loaded kernel module has "
      "version {}",
      e.client_version.empty() ? "?" : e.client_version,
      e.kernel_version.empty() ? "?" : e.kernel_version);
  return true;
}

// "The NVIDIA GPU dddd:bb:dd.f (PCI ID: 10de:xxxx) installed in this system ..." — not supported by
// this driver release, not supported by the open module (no GSP), or fallen off the bus at probe.
bool decode_the_nvidia_gpu(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.bus_id = pci_after(text, "The NVIDIA GPU ");
  if (auto id = after(text, "PCI ID: "); !id.empty()) {
    e.detail = "PCI ID " + std::string(id.substr(0, std::min<std::size_t>(id.find(')'), 9)));
  }
  if (contains(text, "not supported by open")) {
    e.kind = LogEventKind::not_supported_open;
    e.meaning = "the GPU is not supported by the open kernel module (it has no GSP: pre-Turing)";
  } else if (contains(text, "is not supported by the")) {
    e.kind = LogEventKind::not_supported;
    const std::string release = version_token(after(text, "not supported by the NVIDIA "));
    e.meaning = fmt::format("the GPU is not supported by the installed driver release{}",
                            release.empty() ? "" : " " + release);
  } else if (contains(text, "fallen off the bus")) {
    e.kind = LogEventKind::fallen_off_bus;
    e.meaning =
        "the GPU has fallen off the bus and does not respond (seen when the driver probed it)";
  } else {
    return false;
  }
  return true;
}

// "This PCI I/O region assigned to your NVIDIA device is invalid: BAR1 is 0M @ 0x0
// (PCI:0000:01:00.0)" or a lone "BARn is 0M @ 0x... (PCI:...)" line (nv-pci.c).
bool decode_bar(std::string_view text, Recognised& out) {
  // "BARn is SM @ 0xA" where the line starts, or on the second line of the two-line form. The
  // driver prints it for a BAR without a size or without an address (nv-pci.c
  // nv_pci_validate_bars, NV_PCI_RESOURCE_VALID): S or A is 0, e.g. "0M @ 0x0", "16384M @ 0x0".
  const auto bar = starts_with(text, "BAR") ? 0 : text.find(" BAR");
  const std::string_view from =
      bar == std::string_view::npos ? std::string_view{} : trim(text.substr(bar));
  const auto digits = [&](std::size_t at, bool hex) {
    std::size_t n = at;
    while (n < from.size() && (std::isdigit(static_cast<unsigned char>(from[n])) != 0 ||
                               (hex && std::isxdigit(static_cast<unsigned char>(from[n])) != 0))) {
      ++n;
    }
    return n;
  };
  const auto zero = [&](std::size_t begin, std::size_t end) {
    return end > begin &&
           from.substr(begin, end - begin).find_first_not_of('0') == std::string_view::npos;
  };
  const std::size_t index_end = digits(3, false);
  if (index_end == 3 || !starts_with(from.substr(index_end), " is ")) {
    return false;
  }
  const std::size_t size_begin = index_end + 4;
  const std::size_t size_end = digits(size_begin, false);
  if (size_end == size_begin || !starts_with(from.substr(size_end), "M @ 0x")) {
    return false;
  }
  const std::size_t address_begin = size_end + 6;
  const std::size_t address_end = digits(address_begin, true);
  if (address_end == address_begin ||
      !(zero(size_begin, size_end) || zero(address_begin, address_end))) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::bar_invalid;
  e.bus_id = pci_after(from, "(PCI:");
  e.detail = capped(from.substr(0, from.find(" (PCI:")));
  e.meaning =
      e.detail.empty()
          ? "a PCI I/O region (BAR) assigned to the GPU is invalid"
          : fmt::format("a PCI I/O region (BAR) assigned to the GPU is invalid: {}", e.detail);
  return true;
}

// The first PCI address in text: "0000:01:00.0", "[01:00.0]", "device=01:00.0".
std::optional<std::string> first_bus_id(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto start = text.find_first_not_of(" []=(),", i);
    if (start == std::string_view::npos) {
      break;
    }
    auto stop = text.find_first_of(" []=(),", start);
    std::string_view token =
        text.substr(start, stop == std::string_view::npos ? std::string_view::npos : stop - start);
    while (!token.empty() && token.back() == ':') {
      token.remove_suffix(1);
    }
    if (token.find('.') != std::string_view::npos && token.size() <= 16) {
      if (auto bus = normalize_bus_id(token)) {
        return bus;
      }
    }
    if (stop == std::string_view::npos) {
      break;
    }
    i = stop + 1;
  }
  return std::nullopt;
}

// Why a device's DMA/BAR set-up failed, from the PCI core, the DRM layer, the IOMMU drivers and
// vfio: "pci 0000:01:00.0: BAR 1: no space for [mem size 0x800000000 64bit pref]",
// "[drm] Cannot reserve BAR2: -16", "DMAR: [DMA Read NO_PASID] Request device [01:00.0] fault
// addr 0x…", "AMD-Vi: Event logged [IO_PAGE_FAULT domain=0x000d address=0x… flags=0x0020]
// device=01:00.0" (or with the device's prefix), "vfio-pci 0000:01:00.0: BAR 1: can't reserve".
bool decode_dma_setup(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::dma_setup;
  const bool bar_failed = contains(text, "no space for") || contains(text, "failed to assign") ||
                          contains(text, "can't reserve") || contains(text, "can't claim") ||
                          contains(text, "can't assign") || contains(text, "Cannot reserve BAR");
  if (starts_with(text, "vfio-pci ") && (bar_failed || contains(text, "fault"))) {
    e.detail = "vfio";
    e.meaning = "vfio-pci could not set up the device's BAR or DMA";
  } else if (starts_with(text, "DMAR: [DMA ")) {
    // "DMAR: [DMA Read NO_PASID] Request device [18:00.0] fault addr ...": the bracket closes
    // before any other opens, and the device follows it at once.
    const auto close = text.find(']');
    if (close == std::string_view::npos || close > 11 + 32 ||
        !starts_with(text.substr(close), "] Request device [")) {
      return false;
    }
    for (const char ch : text.substr(11, close - 11)) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != ' ' && ch != '_') {
        return false; // "Read NO_PASID", "Write PASID 0x1": nothing else stands there
      }
    }
    e.detail = "iommu";
    e.bus_id = first_bus_id(text.substr(close + 17, 20));
    e.meaning = "the Intel IOMMU (DMAR) blocked a DMA of the device";
  } else if (starts_with(text, "AMD-Vi: Event logged [IO_PAGE_FAULT") ||
             starts_with(after_device_prefix(text), "AMD-Vi: Event logged [IO_PAGE_FAULT")) {
    e.detail = "iommu";
    if (auto dev = after(text, "device="); !dev.empty()) {
      e.bus_id = first_bus_id(dev);
    }
    e.meaning = "the AMD IOMMU (AMD-Vi) blocked a DMA of the device";
  } else if (bar_failed) {
    e.detail = "bar";
    e.meaning = "the kernel could not reserve or assign a PCI BAR of the device";
  } else {
    return false;
  }
  if (!e.bus_id) {
    e.bus_id = first_bus_id(text);
  }
  return e.bus_id.has_value();
}

std::string device_count(std::string_view text, std::string_view marker) {
  const auto n = leading_uint(after(text, marker));
  return n ? std::to_string(*n) : std::string("?");
}

bool decode_probe_not_called(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::probe_not_called;
  e.detail = device_count(text, "not called for ");
  e.meaning =
      fmt::format("the NVIDIA probe routine was not called for {} device{}: another driver owns {}",
                  e.detail, e.detail == "1" ? "" : "s", e.detail == "1" ? "it" : "them");
  return true;
}

bool decode_probe_failed(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::probe_failed;
  e.detail = device_count(text, "failed for ");
  e.meaning = fmt::format("the NVIDIA probe routine failed for {} device{}", e.detail,
                          e.detail == "1" ? "" : "s");
  return true;
}

// "nvidia: probe of 0000:01:00.0 failed with error -1" (kernel PCI core).
bool decode_probe_of(std::string_view text, Recognised& out) {
  if (!starts_with(text, "nvidia: probe of ") || !contains(text, "failed")) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::probe_failed;
  e.bus_id = pci_after(text, "probe of ");
  e.detail = capped(after(text, "failed with "));
  e.meaning = e.detail.empty()
                  ? "the NVIDIA driver failed to probe the GPU"
                  : fmt::format("the NVIDIA driver failed to probe the GPU ({})", e.detail);
  return true;
}

bool decode_no_gpu(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::no_gpu_initialized;
  e.detail = capped(text);
  e.meaning = contains(text, "No NVIDIA GPU found")
                  ? "the driver loaded but found no NVIDIA GPU"
                  : "the driver initialised none of the NVIDIA GPUs";
  return true;
}

bool decode_power(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::power_cables;
  e.bus_id = leading_gpu_bus(text);
  e.meaning = "the GPU does not have the necessary power cables connected";
  return true;
}

// "GPU 0000:01:00.0: GPU has fallen off the bus." / "GPU at 0000:01:00.0 has fallen off the bus." /
// "GPU at PCI:0000:01:00: GPU has fallen off the bus." (osinit.c and older drivers).
bool decode_fallen(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::fallen_off_bus;
  e.bus_id = leading_gpu_bus(text);
  e.meaning = "the GPU has fallen off the bus (unreachable over PCIe)";
  return true;
}

// GSP firmware: "RmInitAdapter: Cannot initialize GSP firmware RM", "GSP-RM proxy boot command
// failed.", "RmFetchGspRmImages: No firmware image found".
bool decode_gsp_nvrm(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::gsp_firmware;
  e.bus_id = leading_gpu_bus(text);
  if (contains(text, "No firmware image found")) {
    e.detail = "No firmware image found";
    e.meaning = "the GSP firmware image was not found";
  } else if (contains(text, "proxy boot")) {
    e.detail = "GSP-RM proxy boot command failed";
    e.meaning = "the GSP firmware failed to boot (proxy boot command failed)";
  } else {
    e.detail = "Cannot initialize GSP firmware RM";
    e.meaning = "the GSP firmware could not be initialised";
  }
  return true;
}

// "nvidia 0000:3b:00.0: Direct firmware load for nvidia/550.54.14/gsp_ga10x.bin failed with error
// -2" and "... loading /lib/firmware/nvidia/<ver>/gsp_*.bin failed with error -N" (kernel loader).
bool decode_gsp_file(std::string_view text, Recognised& out) {
  if (!contains(text, "failed")) {
    return false;
  }
  std::string_view file = after(text, "Direct firmware load for ");
  if (file.empty()) {
    auto pos = text.find("lib/firmware/nvidia/");
    if (pos == std::string_view::npos) {
      return false;
    }
    file = text.substr(pos > 0 && text[pos - 1] == '/' ? pos - 1 : pos);
  }
  file = file.substr(0, file.find(' '));
  if (!contains(file, "gsp") || contains(file, "gsp_log")) {
    return false; // gsp_log_*.bin is optional (non-fatal, facts §5)
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::gsp_firmware;
  e.bus_id = device_prefix_bus(text, "nvidia");
  e.detail = capped(file);
  e.meaning = fmt::format("the GSP firmware file {} could not be loaded ({})", e.detail,
                          capped(after(text, "failed with ")));
  return true;
}

// "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV
// error (First)". Each report is three lines with the same head: the message, then
// "..., Severity 0 Engine instance 32 Sub-engine instance 00" and "..., Data {0x..., ...}"; the
// last two are not events, so a report counts once.
bool decode_sxid(std::string_view text, Recognised& out) {
  // "nvidia-nvswitch<N>: SXid (PCI:" where the message starts, nothing before it.
  constexpr std::string_view k_switch = "nvidia-nvswitch";
  std::size_t digits = 0;
  while (k_switch.size() + digits < text.size() && text[k_switch.size() + digits] >= '0' &&
         text[k_switch.size() + digits] <= '9') {
    ++digits;
  }
  const std::size_t marker = k_switch.size() + digits;
  if (!starts_with(text, k_switch) || digits == 0 ||
      !starts_with(text.substr(marker), ": SXid (PCI:")) {
    return false;
  }
  const auto sw = text.substr(0, marker);
  const auto bus = pci_after(text.substr(marker), "SXid (");
  auto rest = after(text.substr(marker), "): ");
  const auto code = leading_uint(rest);
  if (!bus || !code) {
    return false;
  }
  rest = after(rest, ", ");
  if (starts_with(rest, "Severity ") || starts_with(rest, "Data ")) {
    return false; // the report's second and third lines
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::sxid;
  e.sxid = *code;
  e.detail = *bus;
  e.line_fatal = fatal_word(rest);
  const SxidInfo* info = find_sxid(*code);
  const std::string switch_name =
      sw.empty() ? std::string("an NVSwitch") : std::string(sw.substr(0, k_detail_cap));
  e.meaning =
      info ? fmt::format("SXid {} ({}; {}) on {} ({})", *code, info->name,
                         sxid_class_word(info->cls), switch_name, *bus)
           : fmt::format("SXid {} (not in NVIDIA's SXid catalog; the line says \"{}\") on "
                         "{} ({})",
                         *code, trim(rest.substr(0, std::min<std::size_t>(rest.find(','), 40))),
                         switch_name, *bus);
  return true;
}

bool decode_crash_dump(std::string_view, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::crash_dump;
  e.meaning =
      "a GPU crash dump was created: a fatal GPU event happened since the driver was loaded";
  return true;
}

// "nouveau 0000:01:00.0: ..." — nouveau has bound that GPU.
bool decode_nouveau(std::string_view text, Recognised& out) {
  auto bus = device_prefix_bus(text, "nouveau");
  if (!bus) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::nouveau;
  e.bus_id = std::move(bus);
  e.meaning = "the nouveau driver has bound this GPU, so the NVIDIA driver cannot use it";
  return true;
}

// "GPU at PCI:0000:3b:00: GPU-<uuid>" (kernel_rc.c, before a GPU's first Xid): bus → UUID.
bool decode_uuid(std::string_view text, Recognised& out) {
  auto bus = leading_gpu_bus(text);
  // the UUID right after the address: "GPU at PCI:dddd:bb:dd: GPU-<uuid>"
  const auto colon = text.find(": GPU-");
  const auto first_space = text.find(' ', 7); // after "GPU at "
  if (!bus || colon == std::string_view::npos || colon > first_space) {
    return false;
  }
  const auto uuid = text.substr(colon + 6);
  out.what = Recognised::What::gpu_uuid;
  out.event.bus_id = std::move(bus);
  out.uuid = "GPU-" + std::string(uuid.substr(0, uuid.find_first_of(" \t,")));
  return true;
}

// "loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build ..." (nv.c; module
// id as in /proc/driver/nvidia/version, facts §6a).
bool decode_loading(std::string_view text, Recognised& out) {
  DriverFacts parsed;
  if (!parse_driver_version_file("NVRM version: " + std::string(after(text, "loading ")), parsed)) {
    return false;
  }
  out.what = Recognised::What::driver_load;
  out.load.version = parsed.version_text;
  out.load.flavour = parsed.flavour == DriverFlavour::open          ? "open"
                     : parsed.flavour == DriverFlavour::proprietary ? "proprietary"
                                                                    : "";
  return true;
}

// The kernel refused a module: "Loading of unsigned module is rejected", "Loading of module with
// unavailable key is rejected" (module signing, kernel/module/signing.c), "Lockdown: modprobe:
// unsigned module loading is restricted; see man kernel_lockdown.7" (security/lockdown), and
// modprobe's "could not insert 'nvidia': Key was rejected by service" where a log holds it. The
// benign "module verification failed: signature and/or required key missing - tainting kernel"
// (a module loaded unsigned where signatures are not enforced) matches no row.
bool decode_module_refused(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::module_refused;
  if (starts_with(text, "modprobe: ERROR: could not insert '")) {
    const std::string_view insert = text.substr(35);
    const std::string_view module = insert.substr(0, insert.find('\''));
    if (!starts_with(module, "nvidia")) {
      return false; // another module's refusal says nothing about the NVIDIA driver
    }
    e.detail = "rejected";
    e.meaning = fmt::format("modprobe could not insert {}: the kernel rejected its signing key",
                            capped(module));
    return true;
  }
  if (starts_with(text, "Lockdown: ")) {
    // "Lockdown: <comm>: <what> is restricted; see man kernel_lockdown.7": the process name
    // comes first, so only the kernel's own ending decides what was refused.
    const std::string_view body = trim(text);
    if (!body.ends_with(": unsigned module loading is restricted; see man kernel_lockdown.7") &&
        !body.ends_with(": unsigned module loading is restricted")) {
      return false;
    }
    e.detail = "lockdown";
    e.meaning = "kernel lockdown restricted the loading of an unsigned module";
    return true;
  }
  // "Loading of <reason> is rejected", the whole message (kernel/module/signing.c).
  const std::string_view body = trim(text);
  if (!starts_with(body, "Loading of ") || !body.ends_with(" is rejected")) {
    return false;
  }
  const std::string_view reason = body.substr(11, body.size() - 11 - 12);
  for (const char ch : reason) {
    if (!std::isalpha(static_cast<unsigned char>(ch)) && ch != ' ') {
      return false;
    }
  }
  e.detail = reason == "unsigned module"                  ? "unsigned"
             : reason == "module with unavailable key"    ? "unavailable key"
             : reason == "module with unsupported crypto" ? "unsupported crypto"
                                                          : "rejected";
  e.meaning = e.detail == "unavailable key"
                  ? std::string("module signature enforcement rejected a module signed with a key "
                                "the kernel does not trust")
                  : fmt::format("module signature enforcement rejected a {}", capped(reason));
  return true;
}

// "nvidia 0000:01:00.0: Unable to change power state from D3cold to D0, device inaccessible"
// (drivers/pci/pci.c; older kernels: "can't change power state from D3cold to D0 (config space
// inaccessible)"): the device did not power up.
bool decode_power_state(std::string_view text, Recognised& out) {
  if (!contains(text, "inaccessible")) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::power_state;
  e.bus_id = first_bus_id(text);
  e.detail = "D3cold";
  e.meaning = "the PCI core could not bring the device out of D3cold: it is inaccessible";
  return e.bus_id.has_value();
}

// The PCIe link of a port or device went down: the AER driver's "pcieport 0000:00:02.0:    [ 5]
// Surprise Down Error    (First)" (SDES in newer kernels) and "PCIe Bus Error:
// severity=Uncorrected (Fatal), ...", pciehp's "Slot(0): Link Down" (drivers/pci/pcie/aer.c,
// drivers/pci/hotplug/pciehp_ctrl.c). bus_id: the device the line is about (usually the port).
bool decode_link_down(std::string_view text, Recognised& out) {
  LogEvent& e = out.event;
  e.kind = LogEventKind::link_down;
  std::string_view rest = after_device_prefix(text);
  if (rest.empty()) {
    return false;
  }
  // AER's status bit: "   [ 5] Surprise Down Error    (First)" / "[ 5] SDES"
  rest = trim(rest);
  if (starts_with(rest, "[")) {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close > 4) {
      return false;
    }
    rest = trim(rest.substr(close + 1));
  }
  if (starts_with(rest, "pciehp: ")) {
    rest.remove_prefix(8);
  }
  if (starts_with(rest, "Slot(")) {
    const auto close = rest.find("): ");
    rest =
        close == std::string_view::npos || close > 12 ? std::string_view{} : rest.substr(close + 3);
  }
  if (starts_with(rest, "Surprise Down") || starts_with(rest, "SDES")) {
    e.detail = "Surprise Down";
  } else if (starts_with(rest, "Link Down")) {
    e.detail = "Link Down";
  } else if (starts_with(rest, "PCIe Bus Error: severity=Uncorrected (Fatal)")) {
    e.detail = "a fatal AER error";
  } else {
    return false;
  }
  e.bus_id = first_bus_id(text.substr(0, text.find(": ")));
  e.meaning = fmt::format("the PCIe link reported {}", e.detail);
  return e.bus_id.has_value();
}

// "The NVIDIA <name> GPU installed in this system is supported through the NVIDIA 580.xx Legacy
// drivers. ... The 595.71.05 NVIDIA driver will ignore this GPU.  Continuing probe..." (nv.c; the
// message names the board, not its address).
bool decode_legacy(std::string_view text, Recognised& out) {
  if (!contains(text, " GPU installed in this system is supported through the NVIDIA ")) {
    return false;
  }
  const std::string_view through = after(text, "supported through the NVIDIA ");
  const auto legacy = through.find(" Legacy");
  if (legacy == std::string_view::npos || legacy == 0) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::not_supported;
  e.legacy_branch = capped(through.substr(0, legacy));
  const std::string_view board = after(text, "The NVIDIA ");
  const auto board_end = board.find(" installed in this system");
  if (board_end != std::string_view::npos) {
    e.detail = capped(board.substr(0, board_end));
  }
  const std::string ignored = version_token(after(text, "  The "));
  e.meaning =
      fmt::format("{} is supported only by the NVIDIA {} legacy driver branch{}",
                  e.detail.empty() ? std::string("a GPU") : "the " + e.detail, e.legacy_branch,
                  ignored.empty() ? "" : fmt::format("; driver {} ignores it", ignored));
  return true;
}

// "nv_peer_mem: disagrees about version of symbol nvidia_p2p_get_pages", "nv_peer_mem: Unknown
// symbol nvidia_p2p_put_pages (err -22)" (the module loader, kernel/module): a module built
// against another kernel or another NVIDIA driver. Only the NVIDIA and peer-memory modules count.
bool decode_module_symbol(std::string_view text, Recognised& out) {
  const auto colon = text.find(": ");
  if (colon == std::string_view::npos) {
    return false;
  }
  const std::string_view module = text.substr(0, colon);
  if (!starts_with(module, "nvidia") && module != "nv_peer_mem") {
    return false;
  }
  const std::string_view rest = text.substr(colon + 2);
  const bool mismatch = starts_with(rest, "disagrees about version of symbol ");
  if (!mismatch && !starts_with(rest, "Unknown symbol ")) {
    return false;
  }
  std::string_view symbol = rest.substr(mismatch ? 34 : 15);
  symbol = symbol.substr(0, symbol.find_first_of(" \t("));
  if (symbol.empty()) {
    return false;
  }
  LogEvent& e = out.event;
  e.kind = LogEventKind::module_symbol;
  e.detail = capped(module);
  e.meaning =
      fmt::format("the {} module {} symbol {}: it was built against another {}", e.detail,
                  mismatch ? "disagrees about the version of" : "has an unknown", capped(symbol),
                  starts_with(symbol, "nvidia_") ? "NVIDIA driver" : "kernel");
  return true;
}

constexpr std::string_view k_src_xid =
    "facts §3a (kernel_rc.c, per driver tag; pre-515 forms observed)";
constexpr std::string_view k_src_osinit = "facts §4a (osinit.c, nv.c)";
constexpr std::string_view k_src_osapi = "facts §5 (osapi.c)";
constexpr std::string_view k_src_nv = "facts §5 (nv.c)";
constexpr std::string_view k_src_observed = "facts §5 (kernel messages, observed in public logs)";

// Order matters: the first row whose pattern stands at its anchor and whose decoder accepts the
// message wins (an Xid 79 line also says "fallen off the bus"; it is an Xid first).
constexpr Signature k_signatures[] = {
    {"xid", "Xid (", true, Anchor::start, 1, "", decode_xid, k_src_xid},
    {"rm-init-adapter", "RmInitAdapter failed! (", true, Anchor::gpu, 1, "", decode_rm_init,
     k_src_osinit},
    {"rm-init-minor", "rm_init_adapter", true, Anchor::gpu, 1, "", decode_rm_init_minor,
     k_src_osinit},
    {"api-mismatch", "API mismatch", true, Anchor::start, 5, "same version.", decode_api_mismatch,
     k_src_osapi},
    {"the-nvidia-gpu", "The NVIDIA GPU ", true, Anchor::start, 4,
     "driver release.|(GSP).|responding to commands.", decode_the_nvidia_gpu, k_src_osapi},
    {"legacy-branch", "The NVIDIA ", true, Anchor::start, 5, "Continuing probe", decode_legacy,
     "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv.c"},
    {"bar-invalid", "This PCI I/O region assigned to your NVIDIA device is invalid", true,
     Anchor::start, 2, "(PCI:", decode_bar, "facts §5 (nv-pci.c)"},
    {"bar-zero", "BAR", true, Anchor::start, 1, "", decode_bar, "facts §5 (nv-pci.c)"},
    {"probe-not-called", "The NVIDIA probe routine was not called", true, Anchor::start, 1, "",
     decode_probe_not_called, k_src_nv},
    {"probe-failed", "The NVIDIA probe routine failed", true, Anchor::start, 1, "",
     decode_probe_failed, k_src_nv},
    {"none-initialized", "None of the NVIDIA devices were initialized", true, Anchor::start, 1, "",
     decode_no_gpu, k_src_nv},
    {"none-initialized-old", "None of the NVIDIA graphics adapters were initialized", true,
     Anchor::start, 1, "", decode_no_gpu, k_src_nv},
    {"no-gpu-found", "No NVIDIA GPU found", true, Anchor::start, 1, "", decode_no_gpu, k_src_nv},
    {"power-cables", "GPU does not have the necessary power cables connected", true, Anchor::gpu, 1,
     "", decode_power, "facts §5 (osinit.c)"},
    {"fallen-off-bus", "GPU has fallen off the bus|has fallen off the bus", true, Anchor::gpu, 1,
     "", decode_fallen, "facts §5 (osinit.c; older forms observed)"},
    {"gsp-cannot-init", "Cannot initialize GSP firmware RM", true, Anchor::gpu, 1, "",
     decode_gsp_nvrm, "facts §4a, §5 (osinit.c)"},
    {"gsp-proxy-boot", "GSP-RM proxy boot command failed", true, Anchor::gpu, 1, "",
     decode_gsp_nvrm, "facts §5 (osinit.c)"},
    {"gsp-no-image", "No firmware image found", true, Anchor::gpu, 1, "", decode_gsp_nvrm,
     "facts §5 (osinit.c)"},
    {"crash-dump", "A GPU crash dump has been created", true, Anchor::start, 1, "",
     decode_crash_dump, k_src_osapi},
    {"gpu-uuid", "GPU at PCI:", true, Anchor::start, 1, "", decode_uuid,
     "facts §3a (kernel_rc.c companion line)"},
    {"loading", "loading NVIDIA UNIX ", true, Anchor::start, 1, "", decode_loading,
     "facts §5, §6a (nv.c, utils.mk)"},
    {"firmware-load", "Direct firmware load for nvidia/", false, Anchor::device, 1, "",
     decode_gsp_file, "facts §5, §11 (kernel firmware loader; file names from nv-firmware.h)"},
    {"firmware-path", "firmware: ", false, Anchor::device, 1, "", decode_gsp_file,
     "facts §5 (kernel firmware loader)"},
    {"probe-of", "nvidia: probe of ", false, Anchor::start, 1, "", decode_probe_of, k_src_observed},
    {"sxid", "SXid (PCI:", false, Anchor::module, 1, "", decode_sxid,
     "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html"},
    {"symbol-version", "disagrees about version of symbol ", false, Anchor::module, 1, "",
     decode_module_symbol, "https://github.com/torvalds/linux/blob/master/kernel/module/version.c"},
    {"symbol-unknown", "Unknown symbol ", false, Anchor::module, 1, "", decode_module_symbol,
     "https://github.com/torvalds/linux/blob/master/kernel/module/main.c"},
    {"module-sig-rejected", "Loading of ", false, Anchor::start, 1, "", decode_module_refused,
     "https://github.com/torvalds/linux/blob/master/kernel/module/signing.c"},
    {"lockdown-module", "Lockdown: ", false, Anchor::start, 1, "", decode_module_refused,
     "https://github.com/torvalds/linux/blob/master/security/lockdown/lockdown.c"},
    {"modprobe-key-rejected", "modprobe: ERROR: could not insert '", false, Anchor::start, 1, "",
     decode_module_refused,
     "https://github.com/kmod-project/kmod/blob/master/tools/modprobe.c (strerror(EKEYREJECTED), "
     "strerror(ENOKEY))"},
    {"power-state",
     "Unable to change power state from D3cold to D0|"
     "can't change power state from D3cold to D0",
     false, Anchor::device, 1, "", decode_power_state,
     "https://github.com/torvalds/linux/blob/master/drivers/pci/pci.c"},
    {"aer-link", "[|Surprise Down|SDES|PCIe Bus Error: severity=Uncorrected (Fatal)", false,
     Anchor::device, 1, "", decode_link_down,
     "https://github.com/torvalds/linux/blob/master/drivers/pci/pcie/aer.c"},
    {"link-down", "pciehp: Slot(|Slot(", false, Anchor::device, 1, "", decode_link_down,
     "https://github.com/torvalds/linux/blob/master/drivers/pci/hotplug/pciehp_ctrl.c"},
    {"nouveau", "nouveau ", false, Anchor::start, 1, "", decode_nouveau, k_src_observed},
    {"pci-bar", "BAR ", false, Anchor::device, 1, "", decode_dma_setup,
     "https://github.com/torvalds/linux/blob/master/drivers/vfio/pci/vfio_pci_core.c"},
    {"dmar-fault", "DMAR: [DMA ", false, Anchor::start, 1, "", decode_dma_setup,
     "https://github.com/torvalds/linux/blob/master/drivers/iommu/intel/dmar.c"},
    {"amd-vi-fault", "AMD-Vi: Event logged [IO_PAGE_FAULT", false, Anchor::module, 1, "",
     decode_dma_setup, "https://github.com/torvalds/linux/blob/master/drivers/iommu/amd/iommu.c"},
    {"drm-bar", "[drm] Cannot reserve BAR", false, Anchor::device, 1, "", decode_dma_setup,
     "kernel DRM message as users report it beside RmInitAdapter failures"},
};

// A multi-line message is complete once its text holds one of the row's '|'-separated end markers.
bool message_complete(std::string_view joined, std::string_view ends) {
  if (ends.empty()) {
    return false;
  }
  for (auto end : split(ends, '|')) {
    if (contains(joined, end)) {
      return true;
    }
  }
  return false;
}

// The text after "NVRM:" and its spaces.
std::string_view nvrm_payload(std::string_view message) {
  message.remove_prefix(k_nvrm.size());
  while (!message.empty() && message.front() == ' ') {
    message.remove_prefix(1);
  }
  return message;
}

// "GPU dddd:bb:dd.f: ", "GPU at [PCI:]dddd:bb:dd[.f][:] " or "GPU<n> " at the start of an NVRM
// payload: its length, 0 when there is none.
std::size_t gpu_prefix_length(std::string_view text) {
  if (!starts_with(text, "GPU")) {
    return 0;
  }
  std::size_t n = 3;
  if (n < text.size() && text[n] >= '0' && text[n] <= '9') {
    while (n < text.size() && text[n] >= '0' && text[n] <= '9') {
      ++n;
    }
    return n < text.size() && text[n] == ' ' ? n + 1 : 0;
  }
  if (!starts_with(text.substr(n), " ")) {
    return 0;
  }
  ++n;
  if (starts_with(text.substr(n), "at ")) {
    n += 3;
  }
  if (starts_with(text.substr(n), "PCI:")) {
    n += 4;
  }
  std::size_t a = 0;
  while (n + a < text.size() && a < 24 && is_pci_char(text[n + a])) {
    ++a;
  }
  std::string_view token = text.substr(n, a);
  n += a;
  while (!token.empty() && (token.back() == ':' || token.back() == '.')) {
    token.remove_suffix(1);
  }
  if (!normalize_bus_id(token) || n >= text.size() || text[n] != ' ') {
    return 0;
  }
  return n + 1;
}

// "<Function>: " (an identifier, as the RM prints its function names) at the start of text.
std::size_t function_prefix_length(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && n < 64 &&
         (std::isalnum(static_cast<unsigned char>(text[n])) || text[n] == '_')) {
    ++n;
  }
  return n > 0 && starts_with(text.substr(n), ": ") ? n + 2 : 0;
}

// "<name>: " (a module, subsystem or switch name) at the start of text.
std::size_t name_prefix_length(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && n < 32 && is_name_char(text[n])) {
    ++n;
  }
  return n > 0 && starts_with(text.substr(n), ": ") ? n + 2 : 0;
}

// The positions of one message where each kind of anchor lets a pattern start.
class Anchors {
public:
  explicit Anchors(std::string_view text) : m_text(text) {
    const std::size_t gpu = gpu_prefix_length(text);
    add(m_gpu, 0);
    if (gpu > 0) {
      add(m_gpu, gpu);
      if (const std::size_t f = function_prefix_length(text.substr(gpu)); f > 0) {
        add(m_gpu, gpu + f);
      }
    }
    if (const std::size_t f = function_prefix_length(text); f > 0) {
      add(m_gpu, f);
    }
    const std::string_view rest = after_device_prefix(text);
    if (!rest.empty()) {
      std::size_t d = text.size() - rest.size();
      while (d < text.size() && text[d] == ' ') {
        ++d;
      }
      add(m_device, d);
    }
    add(m_module, 0);
    if (const std::size_t w = name_prefix_length(text); w > 0) {
      add(m_module, w);
    }
    for (std::size_t i = 0; i < m_device.count; ++i) {
      add(m_module, m_device.at[i]);
    }
  }

  // Does one of pattern's '|'-separated alternatives start at an anchor of that kind?
  bool holds(Anchor kind, std::string_view pattern) const {
    static constexpr Positions k_start{{0, 0, 0, 0}, 1};
    const Positions& at = kind == Anchor::start    ? k_start
                          : kind == Anchor::gpu    ? m_gpu
                          : kind == Anchor::device ? m_device
                                                   : m_module;
    for (std::size_t i = 0; i < at.count; ++i) {
      const std::string_view from = m_text.substr(std::min(at.at[i], m_text.size()));
      for (std::string_view rest = pattern; !rest.empty();) {
        const auto bar = rest.find('|');
        const std::string_view alt = rest.substr(0, bar);
        if (!alt.empty() && starts_with(from, alt)) {
          return true;
        }
        rest = bar == std::string_view::npos ? std::string_view{} : rest.substr(bar + 1);
      }
    }
    return false;
  }

private:
  struct Positions {
    std::array<std::size_t, 4> at{};
    std::size_t count = 0;
  };
  static void add(Positions& p, std::size_t pos) {
    if (p.count < p.at.size()) {
      p.at[p.count++] = pos;
    }
  }
  std::string_view m_text;
  Positions m_gpu, m_device, m_module;
};

// "[<digits>]" followed by ':' or ' ' at p: the pid bracket of a process's record.
bool pid_bracket_at(std::string_view s, std::size_t p) {
  std::size_t n = p + 1;
  while (n < s.size() && n - p <= 10 && s[n] >= '0' && s[n] <= '9') {
    ++n;
  }
  return n > p + 1 && n + 1 < s.size() && s[n] == ']' && (s[n + 1] == ':' || s[n + 1] == ' ');
}

} // namespace

bool task_record(std::string_view message) {
  // "<comm>[<pid>]: " / "traps: <comm>[<pid>] ": the bracket within a process name's reach of the
  // start (TASK_COMM_LEN is 16, "traps: " 7 more).
  const std::string_view head = message.substr(0, 7 + 16 + 1);
  for (std::size_t p = head.find('['); p != std::string_view::npos; p = head.find('[', p + 1)) {
    if (pid_bracket_at(message, p)) {
      return true;
    }
  }
  // "<comm>: page allocation failure: " (warn_alloc), "<comm> invoked oom-killer: ".
  for (std::string_view shape : {": page allocation failure: ", " invoked oom-killer: "}) {
    // only where a process name can end: never a search of the whole (up to 64 KiB) line
    if (message.substr(0, 16 + shape.size()).find(shape) != std::string_view::npos) {
      return true;
    }
  }
  // "<comm> (<pid>): " (drop_caches and others).
  for (std::size_t p = head.find(" ("); p != std::string_view::npos; p = head.find(" (", p + 1)) {
    std::size_t n = p + 2;
    while (n < message.size() && n - p <= 12 && message[n] >= '0' && message[n] <= '9') {
      ++n;
    }
    if (n > p + 2 && starts_with(message.substr(n), "): ")) {
      return true;
    }
  }
  return false;
}

std::span<const Signature> signature_table() {
  return k_signatures;
}

std::optional<std::string> pci_after(std::string_view text, std::string_view marker) {
  if (!marker.empty()) {
    const auto pos = text.find(marker);
    if (pos == std::string_view::npos) {
      return std::nullopt;
    }
    text.remove_prefix(pos + marker.size());
  }
  if (starts_with(text, "PCI:")) {
    text.remove_prefix(4);
  }
  std::size_t n = 0;
  while (n < text.size() && n < 24 && is_pci_char(text[n])) {
    ++n;
  }
  std::string_view token = text.substr(0, n);
  while (!token.empty() && (token.back() == ':' || token.back() == '.')) {
    token.remove_suffix(1);
  }
  return normalize_bus_id(token);
}

namespace {

// An NVRM payload no signature took that is one of the driver's own failure messages: an event
// that says which family of failure and where the driver prints it, so that no failure the
// driver can print passes in silence.
std::optional<Recognised> failure_message(std::string_view payload) {
  const DriverMessage* row = match_failure_message(payload);
  if (row == nullptr) {
    return std::nullopt;
  }
  Recognised out;
  LogEvent& e = out.event;
  e.kind = LogEventKind::driver_failure;
  e.detail = capped(row->format); // the row's key: the rules find its family by it
  const auto bus = first_bus_id(payload);
  e.meaning = fmt::format("the driver logged a failure{}: {} ({})",
                          bus ? " for GPU " + *bus : std::string(),
                          message_family(row->family).meaning, row->file);
  return out;
}

} // namespace

std::optional<Recognised> match_signature(std::span<const std::string_view> messages) {
  if (messages.empty() || task_record(messages.front())) {
    return std::nullopt;
  }
  const std::string_view first = messages.front();
  const bool is_nvrm = starts_with(first, k_nvrm);
  const std::string_view first_text = is_nvrm ? nvrm_payload(first) : first;
  const Anchors anchors(first_text);
  for (const Signature& row : k_signatures) {
    if (row.nvrm != is_nvrm || !anchors.holds(row.anchor, row.pattern)) {
      continue;
    }
    Recognised out;
    if (row.max_lines == 1) {
      if (row.decode(first_text, out)) {
        return out;
      }
      continue;
    }
    // Join the message's lines: up to max_lines consecutive NVRM lines, ending at `end`.
    std::string joined(first_text);
    std::size_t used = 1;
    while (used < row.max_lines && used < messages.size() && !message_complete(joined, row.end) &&
           starts_with(messages[used], k_nvrm) && !task_record(messages[used])) {
      joined += ' ';
      joined += nvrm_payload(messages[used]);
      ++used;
    }
    if (row.decode(joined, out)) {
      out.consumed = used;
      return out;
    }
  }
  if (is_nvrm) {
    return failure_message(first_text);
  }
  return std::nullopt;
}

} // namespace gpf
