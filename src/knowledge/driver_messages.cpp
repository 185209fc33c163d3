// The driver's own log messages (include/gpf/knowledge/driver_messages.hpp). The rows, one per
// message, are in driver_messages.inc, written by scripts/extract-driver-messages.py from the tag
// k_driver_messages_url names: each row's source is the blob of its file at that tag
// (https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/<file>). A refresh keeps
// each known message's family and gives a new one MessageFamily::unjudged. The families below
// carry the meaning (our words) and the judgement.
#include "gpf/knowledge/driver_messages.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

namespace gpf {
namespace {

using F = MessageFamily;
using J = MessageJudgement;
using L = PrintLevel;

constexpr MessageFamilyInfo k_families[] = {
    {F::unjudged, J::unjudged, "", "new in a refresh; not yet read"},
    {F::rm_init_failed, J::evidence, "rm-init-failed",
     "the resource manager could not set up the GPU; the codes name the failing step and status"},
    {F::rm_init_minor, J::evidence, "rm-init-minor",
     "setting up the GPU failed when a process first opened its device file"},
    {F::api_mismatch, J::evidence, "api-mismatch",
     "a user-space driver component has another version than the loaded kernel module"},
    {F::fallen_off_bus, J::evidence, "fallen-off-bus",
     "the GPU stopped answering on the PCIe bus (reads return all ones)"},
    {F::bar_invalid, J::evidence, "bar-invalid",
     "a PCI memory window (BAR) of the GPU is unassigned or unusable"},
    {F::probe_not_called, J::evidence, "probe-not-called",
     "the kernel never handed the GPU to nvidia.ko: another driver holds it"},
    {F::probe_failed, J::evidence, "probe-failed", "nvidia.ko refused or failed to take a GPU"},
    {F::no_gpu_initialized, J::evidence, "no-gpu-initialized",
     "nvidia.ko loaded but set up no GPU, so it unloads again"},
    {F::not_supported, J::evidence, "not-supported",
     "the GPU is too old or too new for this driver branch or module flavour"},
    {F::not_supported_open, J::evidence, "not-supported-open-module",
     "the GPU has no GSP, which the open kernel module requires"},
    {F::power_cables, J::evidence, "power-cables",
     "the board's auxiliary power connectors are not powered"},
    {F::gsp_firmware, J::evidence, "gsp-firmware",
     "the GSP firmware image is missing or the GSP did not boot it"},
    {F::crash_dump, J::evidence, "crash-dump",
     "the driver saved a GPU crash dump after a failure it could not recover from"},
    {F::driver_load, J::evidence, "driver-load", "the driver's load banner with its version"},
    {F::rm_init_step, J::failure, "",
     "a step of RmInitAdapter failed; the RmInitAdapter failed line that follows carries its code"},
    {F::module_init, J::failure, "",
     "the module could not register itself or its devices while loading; it does not load"},
    {F::pci_resources, J::failure, "",
     "the GPU's PCI set-up failed: enabling the device, claiming or resizing its BARs"},
    {F::interrupts, J::failure, "",
     "the GPU's interrupt (MSI, MSI-X or legacy line) could not be set up"},
    {F::driver_conflict, J::failure, "",
     "another driver holds the GPU, its memory region or its interrupt"},
    {F::dma_mapping, J::failure, "",
     "memory could not be mapped for the GPU's DMA (IOMMU, address range, resources)"},
    {F::memory, J::failure, "",
     "the kernel could not give the driver memory, a lock or a page it asked for"},
    {F::gpu_memory_numa, J::failure, "",
     "the GPU's memory could not be onlined or offlined as a NUMA node (coherent systems)"},
    {F::gpu_reset, J::failure, "", "a function-level reset of the GPU failed or is unsupported"},
    {F::module_mismatch, J::failure, "",
     "the companion modules come from different driver installations"},
    {F::gpu_not_supported, J::failure, "",
     "the GPU cannot run under this module flavour in this set-up (a vGPU with the open module)"},
    {F::driver_internal, J::failure, "",
     "an internal step of the driver failed; the message names which"},
    {F::notice, J::benign, "", "a notice of normal operation"},
    {F::module_option, J::benign, "",
     "a module option is malformed, out of range or a test switch; the module ignores or clamps it"},
    {F::client_request, J::benign, "",
     "a process's request to the driver (open, ioctl, mmap, dma-buf, P2P) was refused or failed; "
     "that process is told, the GPU is not at fault"},
    {F::leak_report, J::benign, "", "the module's own allocation accounting at unload"},
    {F::debug_hidden, J::benign, "",
     "debug output, printed only with a raised NVreg_ResmanDebugLevel"},
    {F::uvm_debug, J::benign, "", "debug output, printed only with uvm_debug_prints=1"},
    {F::display, J::outside, "", "the display (DRM/KMS, modeset) path, not a compute job's"},
    {F::soc, J::outside, "",
     "Tegra SoC display, clock, device-tree and firmware paths, not a PCIe GPU's"},
    {F::acpi, J::outside, "", "ACPI methods of notebook power and display control"},
    {F::power_management, J::outside, "", "system suspend and resume handling"},
};

// clang-format off
constexpr DriverMessage k_rows[] = {
#include "driver_messages.inc"
};
// clang-format on

void escape_into(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    default:
      out += c;
    }
  }
}

} // namespace

std::span<const DriverMessage> driver_message_table() {
  return k_rows;
}
std::span<const MessageFamilyInfo> message_family_table() {
  return k_families;
}

const MessageFamilyInfo& message_family(MessageFamily family) {
  // The families are listed in enum order (a test checks).
  return k_families[static_cast<std::size_t>(family)];
}

std::string_view print_level_name(PrintLevel level) {
  constexpr std::string_view k_names[] = {"error", "warning", "info", "debug"};
  return k_names[static_cast<std::size_t>(level)];
}

std::string_view message_judgement_name(MessageJudgement judgement) {
  constexpr std::string_view k_names[] = {"benign", "outside", "failure", "evidence", "unjudged"};
  return k_names[static_cast<std::size_t>(judgement)];
}

std::string driver_message_line(const DriverMessage& row) {
  std::string out;
  out.append(row.module).append("\t").append(print_level_name(row.level)).append("\t");
  out.append(row.logged ? "yes" : "no").append("\t").append(row.file).append("\t");
  escape_into(out, row.format);
  return out;
}

namespace {

// A failure row's format as literal pieces between its conversions.
struct FormatShape {
  const DriverMessage* row = nullptr;
  std::vector<std::string> literals;
  bool leading_conversion = false;
  bool trailing_conversion = false;
};

// A payload shorter than this in literal text would match too much ("%s: %s").
constexpr std::size_t k_min_literal = 12;

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// The end of the conversion that starts at format[at] ('%'): flags, width, precision, length,
// then the conversion character.
std::size_t conversion_end(std::string_view format, std::size_t at) {
  std::size_t i = at + 1;
  while (i < format.size() &&
         std::string_view("-+ #0123456789.*hlLqjzt").find(format[i]) != std::string_view::npos) {
    ++i;
  }
  return std::min(i + 1, format.size());
}

std::optional<FormatShape> shape_of(const DriverMessage& row) {
  std::string_view format = row.format;
  format = format.substr(0, format.find('\n'));
  constexpr std::string_view k_prefix = "NVRM:";
  if (!format.starts_with(k_prefix)) {
    return std::nullopt; // another module's prefix: the scanner reads NVRM payloads only
  }
  format = trim_blanks(format.substr(k_prefix.size()));
  FormatShape shape;
  shape.row = &row;
  std::string literal;
  std::size_t literal_chars = 0;
  for (std::size_t i = 0; i < format.size();) {
    if (format[i] == '%' && i + 1 < format.size() && format[i + 1] == '%') {
      literal += '%';
      i += 2;
      continue;
    }
    if (format[i] != '%') {
      literal += format[i++];
      continue;
    }
    if (literal.empty() && shape.literals.empty()) {
      shape.leading_conversion = true;
    }
    if (!literal.empty()) {
      literal_chars += literal.size();
      shape.literals.push_back(std::move(literal));
      literal.clear();
    }
    i = conversion_end(format, i);
    shape.trailing_conversion = i >= format.size();
  }
  if (!literal.empty()) {
    literal_chars += literal.size();
    shape.literals.push_back(std::move(literal));
    shape.trailing_conversion = false;
  }
  if (literal_chars < k_min_literal) {
    return std::nullopt;
  }
  return shape;
}

bool has_shape(std::string_view payload, const FormatShape& shape) {
  const auto& lit = shape.literals;
  std::size_t first = 0;
  std::size_t pos = 0;
  if (!shape.leading_conversion) {
    if (!payload.starts_with(lit.front())) {
      return false;
    }
    pos = lit.front().size();
    first = 1;
  }
  const std::size_t middle_end = shape.trailing_conversion ? lit.size() : lit.size() - 1;
  for (std::size_t i = first; i < middle_end; ++i) {
    const auto at = payload.find(lit[i], pos);
    if (at == std::string_view::npos) {
      return false;
    }
    pos = at + lit[i].size();
  }
  if (shape.trailing_conversion) {
    return true;
  }
  if (first > middle_end) { // one literal, no conversion: the whole payload
    return payload.size() == pos;
  }
  return payload.ends_with(lit.back()) && payload.size() - lit.back().size() >= pos;
}

} // namespace

const DriverMessage* match_failure_message(std::string_view payload) {
  static const std::vector<FormatShape> shapes = [] {
    // a text the driver also prints where it is no failure (another file, another family) does
    // not tell a failure
    std::set<std::string_view> elsewhere;
    for (const DriverMessage& row : k_rows) {
      if (message_family(row.family).judgement != J::failure) {
        elsewhere.insert(row.format);
      }
    }
    std::vector<FormatShape> out;
    for (const DriverMessage& row : k_rows) {
      if (row.logged && message_family(row.family).judgement == J::failure &&
          !elsewhere.contains(row.format)) {
        if (auto shape = shape_of(row)) {
          out.push_back(std::move(*shape));
        }
      }
    }
    return out;
  }();
  payload = trim_blanks(payload);
  for (const auto& shape : shapes) {
    if (has_shape(payload, shape)) {
      return shape.row;
    }
  }
  return nullptr;
}

std::string_view failure_remedy_for_format(std::string_view format) {
  const auto row = std::find_if(std::begin(k_rows), std::end(k_rows),
                                [format](const DriverMessage& r) { return r.format == format; });
  return row != std::end(k_rows) ? failure_remedy(row->family) : std::string_view();
}

std::string_view failure_remedy(MessageFamily family) {
  switch (family) {
  case F::rm_init_step:
    return "Read the RmInitAdapter failed line that follows it (its rminit finding names the "
           "step); reset the GPU (`nvidia-smi -r`) or reboot, and drain the node if it returns";
  case F::module_init:
  case F::module_mismatch:
    return "Reinstall the driver so that every nvidia module comes from one installation "
           "(`modinfo -F version nvidia nvidia-uvm nvidia-modeset`), then reload it or reboot";
  case F::pci_resources:
    return "Check the GPU's PCI resources (`lspci -vv -d 10de:`: BARs assigned, Above 4G "
           "decoding and Resizable BAR in the firmware set-up, or `pci=realloc`), then reboot";
  case F::interrupts:
    return "Check that MSI/MSI-X works for the GPU (`lspci -vv` MSI-X: Enable+) or load the "
           "driver with NVreg_EnableMSI=0; then reload the driver";
  case F::driver_conflict:
    return "Unload the driver that holds the GPU or its memory region (nouveau, vfio-pci, a "
           "framebuffer driver: `lspci -nnk -d 10de:`), then reload the NVIDIA driver";
  case F::dma_mapping:
    return "Check the IOMMU set-up (`dmesg | grep -i -e DMAR -e AMD-Vi`; iommu=pt for bare "
           "metal) and the GPU's DMA mask; reboot if it repeats";
  case F::memory:
    return "The kernel was short of memory when the driver asked: check `free -m` and the "
           "kernel log around the line, then reload the driver or reboot";
  case F::gpu_memory_numa:
    return "Check the GPU memory NUMA set-up of this coherent system (`numactl -H`, "
           "CoherentGPUMemoryMode) and the driver's NUMA onlining; reboot if it repeats";
  case F::gpu_reset:
    return "The GPU could not be reset: reboot the node (a cold power cycle if it repeats) "
           "and drain it if the GPU stays unreset";
  case F::gpu_not_supported:
    return "Install the driver flavour that supports this set-up (the proprietary module for "
           "vGPU guests), or use a supported configuration";
  case F::driver_internal:
    return "Reload the driver or reboot; if it repeats, collect `nvidia-bug-report.sh` for "
           "NVIDIA support";
  default:
    return "Read the kernel log around the line (`dmesg | grep NVRM`) for the GPU and step it "
           "names";
  }
}

MessageListDiff compare_driver_messages(std::string_view list_text) {
  std::set<std::string, std::less<>> table;
  for (const DriverMessage& row : k_rows) {
    table.insert(driver_message_line(row));
  }
  std::set<std::string, std::less<>> list;
  MessageListDiff diff;
  while (!list_text.empty()) {
    const std::size_t eol = list_text.find('\n');
    std::string_view line = list_text.substr(0, eol);
    list_text = eol == std::string_view::npos ? std::string_view{} : list_text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() == '#') {
      continue;
    }
    list.emplace(line);
    if (!table.contains(line)) {
      diff.not_in_table.emplace_back(line);
    }
  }
  std::ranges::copy_if(table, std::back_inserter(diff.not_in_list),
                       [&](const std::string& l) { return !list.contains(l); });
  return diff;
}

} // namespace gpf
