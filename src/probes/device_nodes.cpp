// Probe "devices": the /dev/nvidia* nodes (and /dev/dxg for WSL2): presence, type, major/minor,
// mode and whether this user can open them read-write; the IMEX channels
// (/dev/nvidia-caps-imex-channels/channelN) likewise, for the imex rules. Runs after "driver" so
// that every GPU's /dev/nvidiaN (N = its Device Minor) is looked at even when the node is missing.
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>
#include <array>
#include <set>

namespace gpf {
namespace {
constexpr std::array<std::string_view, 5> k_fixed_nodes{
    "dev/nvidiactl", "dev/nvidia-uvm", "dev/nvidia-uvm-tools", "dev/nvidia-modeset", "dev/dxg"};

bool is_gpu_node_name(std::string_view name) {
  return starts_with(name, "nvidia") && name.size() > 6 &&
         name.find_first_not_of("0123456789", 6) == std::string_view::npos;
}
} // namespace

ProbeStatus probe_devices(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  if (!host.manifest_error().empty()) {
    status.fail(host.manifest_error());
  }
  std::set<std::string> paths(k_fixed_nodes.begin(), k_fixed_nodes.end());
  if (auto names = host.list_dir("dev")) {
    for (const auto& name : *names) {
      if (is_gpu_node_name(name)) {
        paths.insert("dev/" + name);
      }
    }
  }
  for (const auto& gpu : facts.gpus) {
    if (gpu.device_minor) {
      paths.insert("dev/nvidia" + std::to_string(*gpu.device_minor));
    }
  }
  if (auto caps = host.list_dir("dev/nvidia-caps")) {
    for (const auto& name : *caps) {
      paths.insert("dev/nvidia-caps/" + name);
    }
  }
  // A channel this user cannot open is why a fabric allocation is refused where one exists.
  if (auto channels = host.list_dir("dev/nvidia-caps-imex-channels")) {
    for (const auto& name : *channels) {
      if (starts_with(name, "channel")) {
        paths.insert("dev/nvidia-caps-imex-channels/" + name);
      }
    }
  }
  for (const auto& path : paths) {
    facts.devices.push_back({path, host.stat_node(path)});
    if (!facts.devices.back().info.error.empty()) {
      status.fail_also(path + ": " + facts.devices.back().info.error);
    }
  }
  if (status.state == ProbeState::ok && facts.is_wsl2()) {
    status.skip(
        "WSL2: /dev/nvidia* nodes do not exist by design; GPUs are reached through /dev/dxg");
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"devices", "device nodes", 400, probe_devices}};
} // namespace

} // namespace gpf
