#pragma once
// Helpers shared by the rule files of several id prefixes (src/rules/<prefix>.cpp): label formats
// and bounded lists. The kernel-log event helpers are in log_events.hpp (evidence.hpp,
// code_rules.hpp). Internal to src/rules.
#include "gpf/facts/visible_devices.hpp"
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/knowledge/matrix.hpp"
#include "gpf/rules/compat_view.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/topology.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/util/plural.hpp"
#include "gpf/util/text.hpp"

#include "code_rules.hpp"
#include "evidence.hpp"
#include "log_events.hpp"
#include "log_rows.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <set>

namespace gpf {

// A row's cases (`.cases`): this fixture fires it (naming that GPU when a bus id is given), or it
// stays silent there.
constexpr RuleCase fires(std::string_view fixture, std::string_view gpu = {}) {
  return {fixture, gpu, true};
}
constexpr RuleCase silent(std::string_view fixture) {
  return {fixture, {}, false};
}
// Fires on this fixture checked with these command-line options.
constexpr RuleCase fires_with(std::string_view options, std::string_view fixture,
                              std::string_view gpu = {}) {
  return {fixture, gpu, true, options};
}

inline std::string mode_text(const NodeInfo& info) {
  return info.mode ? fmt::format("mode {:04o}", *info.mode) : std::string("mode unknown");
}

inline std::string node_evidence(const DeviceNodeFact& node) {
  std::string type = node.info.stand_in                        ? "stand-in file"
                     : node.info.type == NodeType::char_device ? "char"
                                                               : "not a char device";
  std::string numbers = node.info.major && node.info.minor
                            ? fmt::format(" {}:{}", *node.info.major, *node.info.minor)
                            : "";
  return fmt::format("/{}: {}{}, {}", node.path, type, numbers, mode_text(node.info));
}

inline bool driver_expected(const Facts& f) {
  return !f.is_wsl2();
}

inline std::string expected_evidence(const ExpectedCuda& e) {
  return fmt::format("expected CUDA {} ({})", e.text, e.source);
}

constexpr std::size_t k_max_lines = 8;

inline std::string bytes_text(std::uint64_t bytes) {
  constexpr std::pair<std::uint64_t, std::string_view> units[] = {
      {1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [size, name] : units) {
    if (bytes >= size) {
      const double v = static_cast<double>(bytes) / static_cast<double>(size);
      return bytes % size == 0 ? fmt::format("{} {}", bytes / size, name)
                               : fmt::format("{:.1f} {}", v, name);
    }
  }
  return fmt::format("{} bytes", bytes);
}

inline std::string join(const std::vector<std::string>& items) {
  return fmt::format("{}", fmt::join(items, ", "));
}

// A list of GPUs or bridges in one line: the first 16, then how many more (2000 GPUs would make
// one finding's text 30 KB).
inline std::string join_some(const std::vector<std::string>& items) {
  constexpr std::size_t k_shown = 16;
  if (items.size() <= k_shown) {
    return join(items);
  }
  return fmt::format("{} and {} more", fmt::join(items.begin(), items.begin() + k_shown, ", "),
                     items.size() - k_shown);
}

// At most k_max_lines lines, the rest counted.
inline void add_capped(std::vector<std::string>& evidence, std::string line, std::size_t& dropped) {
  if (evidence.size() < k_max_lines) {
    evidence.push_back(std::move(line));
  } else {
    ++dropped;
  }
}

inline bool sees_host_processes(const ServiceFacts& s) {
  return s.process_table && s.host_process_table();
}

// A GB200/GB300 NVL compute tray: a Grace-Blackwell GPU on a PCI bus that was read and lists no
// NVSwitch. Its NVLink fabric is managed on the switch trays, and the host-side piece is IMEX, not
// the host Fabric Manager (https://github.com/Azure/AgentBaker/pull/8839). The evidence line that
// says so, or nullopt when this is not one (or the bus was not read).
inline std::optional<std::string> nvl_compute_tray(const Facts& f) {
  const auto& pcie = f.topology.pcie;
  if (!pcie.ran || pcie.devices_seen == 0 || !pcie.nvswitches.empty() ||
      !f.topology.services.nvswitch_nodes.empty()) {
    return std::nullopt;
  }
  for (const auto& g : f.gpus) {
    const std::string model = g.model.value_or("");
    if (model.find("GB200") != std::string::npos || model.find("GB300") != std::string::npos) {
      return fmt::format(
          "/sys/bus/pci/devices: {} devices, no NVSwitch (NVIDIA class 0x0680), GPU model {}: a "
          "GB200/GB300 NVL compute tray, whose NVLink fabric is managed outside it",
          pcie.devices_seen, model);
    }
  }
  return std::nullopt;
}

inline std::string library_evidence(const CudaFacts& c) {
  return fmt::format("libcuda: {}", c.library_path.empty() ? c.library : c.library_path);
}

} // namespace gpf
