// Rules whose id starts with "devnode.": the host-wide device nodes every CUDA and NVML client
// opens (/dev/nvidiactl, /dev/nvidia-uvm).
#include "common.hpp"

namespace gpf {
namespace {

// A required host node missing: only judged where the NVIDIA driver should provide it.
std::vector<Hit> node_missing(const RuleContext& c, std::string_view path, std::string_view why) {
  if (!driver_expected(c.facts) || !c.facts.driver.loaded) {
    return {};
  }
  const auto* node = c.facts.device(path);
  if (node && node->info.exists()) {
    return {};
  }
  return {{fmt::format("/{} is missing: {}", path, why),
           {fmt::format("/{}: No such file or directory", path)}}};
}

bool is_required_node(std::string_view path) {
  return path == "dev/nvidiactl" || path == "dev/nvidia-uvm";
}

} // namespace

std::span<const Rule> devnode_rules() {
  static const Rule rows[] = {
      {.id = "devnode.nvidiactl-missing",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "/dev/nvidiactl exists",
       .remedy =
           "Create the nodes: `nvidia-modprobe -c=0` (or `nvidia-smi` as root, which runs it); "
           "check that nvidia-modprobe is installed setuid root and that udev rules for NVIDIA ran",
       .source = "docs/sources.md#device-nodes",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return node_missing(c, "dev/nvidiactl",
                             "every CUDA and NVML client opens it first, so CUDA cannot start");
       }},
      {.id = "devnode.nvidia-uvm-missing",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "/dev/nvidia-uvm exists",
       .remedy =
           "Load the UVM module and create its nodes: `nvidia-modprobe -u -c=0` (or `modprobe nvidia_uvm` as root)",
       .source = "docs/sources.md#device-nodes",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return node_missing(
             c, "dev/nvidia-uvm",
             "CUDA cannot initialise without it (cuInit fails, often with CUDA_ERROR_UNKNOWN)");
       }},
      {.id = "devnode.not-accessible",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "/dev/nvidiactl and /dev/nvidia-uvm can be opened read-write",
       .remedy =
           "Give this user access: add it to the group owning the nodes (often `video`), or set NVreg_DeviceFileMode/DeviceFileGID for the driver; "
           "in a container, pass the devices through",
       .source = "docs/sources.md#device-nodes",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& node : c.facts.devices) {
           if (!is_required_node(node.path) || !node.info.exists()) {
             continue;
           }
           if (node.info.rw_access == false) {
             hits.push_back(
                 {fmt::format("/{} exists but this user cannot open it read-write", node.path),
                  {node_evidence(node)}});
           } else if (!node.info.stand_in && node.info.type != NodeType::char_device) {
             hits.push_back(
                 {fmt::format("/{} is not a character device", node.path), {node_evidence(node)}});
           }
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
