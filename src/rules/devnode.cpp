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
       .explanation =
           "/dev/nvidiactl is the control node every CUDA and NVML client opens first; without "
           "it cuInit fails even when the module is loaded and the per-GPU nodes exist. The "
           "nodes are made by nvidia-modprobe (setuid root, run by the driver libraries on "
           "first use), by udev rules or by nvidia-persistenced; a container must be given "
           "them. Confirm by hand: `ls -l /dev/nvidiactl` should show a character device, major "
           "195, minor 255. A host-level failure: the verdict is fail and no GPU is "
           "recommended.",
       .evidence =
           "Whether dev/nvidiactl exists (stat), judged only when proc/driver/nvidia exists "
           "and the host is not WSL2 (a wsl2 kernel with /dev/dxg).",
       .reads = {ProbeId::devices},
       .cases = {fires("missing-nvidiactl"), silent("missing-gpu-node")},
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
       .explanation =
           "/dev/nvidia-uvm belongs to the nvidia_uvm module, CUDA's unified-memory manager, "
           "and every CUDA context needs it. Without it cuInit fails with CUDA_ERROR_UNKNOWN "
           "(999) and PyTorch reports a \"CUDA unknown error\", while nvidia-smi, which does "
           "not use UVM, looks healthy. It is typically missing after a boot where nothing "
           "loaded nvidia_uvm, or in a container started without it. Confirm by hand: `ls -l "
           "/dev/nvidia-uvm /dev/nvidia-uvm-tools` and `lsmod | grep nvidia_uvm`. A host-level "
           "failure: the verdict is fail and no GPU is recommended until the node exists.",
       .evidence =
           "Whether dev/nvidia-uvm exists (stat), judged only when proc/driver/nvidia exists "
           "and the host is not WSL2 (a wsl2 kernel with /dev/dxg).",
       .reads = {ProbeId::devices},
       .cases = {fires("missing-uvm"), silent("missing-gpu-node")},
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
       .explanation =
           "The control nodes exist but this user cannot open them read-write (their mode or "
           "group, a security module, a container's device rules). CUDA then cannot create a "
           "context for this user; an administrator's shell may work while the job's user "
           "(Slurm, a service account) does not. Confirm as the job's user: `ls -l "
           "/dev/nvidia*`, `id`, and `test -r /dev/nvidiactl -a -w /dev/nvidiactl && echo ok`. "
           "A host-level failure: the verdict is fail and no GPU is recommended.",
       .evidence = "dev/nvidiactl and dev/nvidia-uvm where they exist: their file type (stat: a "
                   "character device) and whether this user may open them read-write (faccessat "
                   "R_OK|W_OK with the effective ids).",
       .reads = {ProbeId::devices},
       .cases = {fires("node-not-accessible"), silent("healthy-4gpu")},
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
