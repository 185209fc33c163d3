// The foundation's rows: driver loaded, conflicting modules, device nodes, per-GPU usability,
// GSP firmware switch, the kernel-5.5 heuristic, the job environment, probe failures and the GPU
// count. Facts and their sources: ../shared/reference/nvidia-facts.md (section numbers below).
#include "gpf/rules/rule.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {

constexpr std::string_view k_src_nodes = "nvidia-facts.md §7 (nv-chardev-numbers.h, uvm.c; nvidia-modprobe(1))";
constexpr std::string_view k_src_proc = "nvidia-facts.md §6 (kernel-open/nvidia/nv-procfs.c)";

std::string mode_text(const NodeInfo& info) {
  return info.mode ? fmt::format("mode {:04o}", *info.mode) : std::string("mode unknown");
}

std::string node_evidence(const DeviceNodeFact& node) {
  std::string type = node.info.stand_in ? "stand-in file" : node.info.type == NodeType::char_device ? "char" : "not a char device";
  std::string numbers = node.info.major && node.info.minor ? fmt::format(" {}:{}", *node.info.major, *node.info.minor) : "";
  return fmt::format("/{}: {}{}, {}", node.path, type, numbers, mode_text(node.info));
}

bool driver_expected(const Facts& f) { return !f.is_wsl2(); }

std::vector<Hit> driver_not_loaded(const RuleContext& c) {
  if (c.facts.driver.loaded || !driver_expected(c.facts)) {
    return {};
  }
  return {{"The NVIDIA kernel driver is not loaded: /proc/driver/nvidia does not exist",
           {"/proc/driver/nvidia: No such file or directory"}}};
}

std::vector<Hit> nouveau_loaded(const RuleContext& c) {
  if (!c.facts.modules.has("nouveau")) {
    return {};
  }
  return {{"The nouveau driver is loaded; it takes NVIDIA GPUs away from the NVIDIA driver",
           {"/proc/modules: nouveau"}}};
}

// A required host node missing: only judged where the NVIDIA driver should provide it.
std::vector<Hit> node_missing(const RuleContext& c, std::string_view path, std::string_view why) {
  if (!driver_expected(c.facts) || !c.facts.driver.loaded) {
    return {};
  }
  const auto* node = c.facts.device(path);
  if (node && node->info.exists()) {
    return {};
  }
  return {{fmt::format("/{} is missing: {}", path, why), {fmt::format("/{}: No such file or directory", path)}}};
}

std::vector<Hit> nvidiactl_missing(const RuleContext& c) {
  return node_missing(c, "dev/nvidiactl", "every CUDA and NVML client opens it first, so CUDA cannot start");
}

std::vector<Hit> uvm_missing(const RuleContext& c) {
  return node_missing(c, "dev/nvidia-uvm", "CUDA cannot initialise without it (cuInit fails, often with CUDA_ERROR_UNKNOWN)");
}

bool is_required_node(std::string_view path) {
  return path == "dev/nvidiactl" || path == "dev/nvidia-uvm";
}

std::vector<Hit> node_not_accessible(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& node : c.facts.devices) {
    if (!is_required_node(node.path) || !node.info.exists()) {
      continue;
    }
    if (node.info.rw_access == false) {
      hits.push_back({fmt::format("/{} exists but this user cannot open it read-write", node.path), {node_evidence(node)}});
    } else if (!node.info.stand_in && node.info.type != NodeType::char_device) {
      hits.push_back({fmt::format("/{} is not a character device", node.path), {node_evidence(node)}});
    }
  }
  return hits;
}

std::vector<Hit> gpu_node_unusable(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& gpu : c.facts.gpus) {
    if (!gpu.device_minor) {
      continue;
    }
    const std::string path = "dev/nvidia" + std::to_string(*gpu.device_minor);
    const auto* node = c.facts.device(path);
    Hit hit;
    hit.gpu = gpu.bus_id;
    hit.effect = Effect::gpu_unusable;
    if (!node || !node->info.exists()) {
      hit.message = fmt::format("GPU {} has no device node /{} (its Device Minor is {})", gpu.bus_id, path, *gpu.device_minor);
      hit.evidence = {fmt::format("/{}: No such file or directory", path),
                      fmt::format("/proc/driver/nvidia/gpus/{}/information: Device Minor: {}", gpu.bus_id, *gpu.device_minor)};
    } else if (node->info.rw_access == false) {
      hit.message = fmt::format("GPU {}: this user cannot open /{} read-write", gpu.bus_id, path);
      hit.evidence = {node_evidence(*node)};
    } else {
      continue;
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

std::vector<Hit> gpu_excluded(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& gpu : c.facts.gpus) {
    if (gpu.excluded == true) {
      hits.push_back({fmt::format("GPU {} is excluded by the driver (NVreg_ExcludedGpus)", gpu.bus_id),
                      {fmt::format("/proc/driver/nvidia/gpus/{}/information: GPU Excluded: Yes", gpu.bus_id)},
                      gpu.bus_id,
                      Effect::gpu_unusable});
    }
  }
  return hits;
}

std::vector<Hit> gpu_information_unreadable(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& gpu : c.facts.gpus) {
    if (!gpu.error.empty()) {
      hits.push_back({fmt::format("GPU {} cannot be confirmed: its information file is unreadable", gpu.bus_id),
                      {gpu.error},
                      gpu.bus_id,
                      Effect::gpu_unusable});
    }
  }
  return hits;
}

// EnableGpuFirmware: low nibble 0 = GSP firmware disabled (nv-firmware-registry.h).
bool gsp_disabled(const Facts& f) { return f.driver.enable_gpu_firmware && (*f.driver.enable_gpu_firmware & 0xF) == 0; }

std::string gsp_evidence(const Facts& f) {
  return fmt::format("/proc/driver/nvidia/params: EnableGpuFirmware: {}", f.driver.params.at("EnableGpuFirmware"));
}

std::vector<Hit> gsp_disabled_open(const RuleContext& c) {
  if (!gsp_disabled(c.facts) || c.facts.driver.flavour != DriverFlavour::open) {
    return {};
  }
  return {{"GSP firmware is disabled (EnableGpuFirmware=0) but the open kernel module requires it",
           {gsp_evidence(c.facts), "/proc/driver/nvidia/version: " + c.facts.driver.version_line}}};
}

std::vector<Hit> gsp_disabled_proprietary(const RuleContext& c) {
  if (!gsp_disabled(c.facts) || c.facts.driver.flavour == DriverFlavour::open) {
    return {};
  }
  return {{"GSP firmware is disabled (EnableGpuFirmware=0); the proprietary module runs without it", {gsp_evidence(c.facts)}}};
}

std::vector<Hit> registry_keys(const RuleContext& c) {
  const auto& reg = c.facts.driver.registry;
  if (!reg || (reg->parsed && reg->binary_keys.empty())) {
    return {};
  }
  if (!reg->parsed) {
    return {{"The driver registry file is not in the expected `Binary: \"...\"` form", {"/proc/driver/nvidia/registry: " + reg->raw}}};
  }
  return {{fmt::format("Binary registry keys were written at run time: {}", fmt::join(reg->binary_keys, ", ")),
           {"/proc/driver/nvidia/registry: " + reg->raw}}};
}

std::vector<Hit> kernel_old_multi_gpu(const RuleContext& c) {
  const auto& k = c.facts.kernel;
  if (!k.version || *k.version >= Version({5, 5, 0}) || c.usable_gpus.size() < 2 ||
      k.flavour == KernelFlavour::gvisor || k.flavour == KernelFlavour::wsl2) {
    return {};
  }
  Hit hit{fmt::format("Kernel {} is below 5.5 and {} GPUs pass their own checks: multi-GPU start-up may hang. This is a version "
                      "heuristic (accelerate's check) that ignores distribution backports; PCIe peer-to-peer problems "
                      "(ACS/IOMMU) are a common real cause",
                      k.version->str(), c.usable_gpus.size()),
          {"uname -r: " + k.release}};
  if (c.facts.cuda.multi_gpu_ok == true) {
    // Measured, not guessed: the multi-GPU test passed on this kernel, so every usable GPU stays.
    hit.message = fmt::format("Kernel {} is below 5.5, but the multi-GPU test passed on {} GPUs: the kernel-version "
                              "heuristic does not apply here",
                              k.version->str(), c.facts.cuda.multi_gpu_devices.size());
    hit.evidence.push_back(fmt::format("CUDA multi-GPU test: peer copies passed between CUDA devices {}",
                                       fmt::join(c.facts.cuda.multi_gpu_devices, ", ")));
    hit.severity = Severity::info;
    hit.remedy = "Nothing to do now; if multi-GPU jobs still hang, try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU, or "
                 "upgrade the kernel";
    return {hit};
  }
  hit.effect = Effect::single_gpu_only;
  return {hit};
}

std::vector<Hit> visible_devices_unknown(const RuleContext& c) {
  const auto vd = parse_visible_devices(c.facts.env.get("CUDA_VISIBLE_DEVICES"), gpu_index_space(c.facts));
  if (vd.ignored.empty()) {
    return {};
  }
  return {{fmt::format("CUDA_VISIBLE_DEVICES names no GPU at \"{}\"; CUDA ignores that entry and every one after it",
                       vd.ignored.front()),
           {"CUDA_VISIBLE_DEVICES=" + vd.raw}}};
}

std::vector<Hit> visible_devices_empty(const RuleContext& c) {
  auto value = c.facts.env.get("CUDA_VISIBLE_DEVICES");
  if (!value || !trim(*value).empty()) {
    return {};
  }
  return {{"CUDA_VISIBLE_DEVICES is set but empty: the job will see no GPU", {"CUDA_VISIBLE_DEVICES=" + *value}}};
}

std::vector<Hit> probe_failed(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& p : c.facts.probes) {
    // the kernel log has its own finding (log.not-readable) with the remedies that fit it
    if (p.state == ProbeState::error && p.name != "kernel-log") {
      hits.push_back({fmt::format("Probe \"{}\" could not read its input, so its checks are incomplete", p.name), {p.message}});
    }
  }
  return hits;
}

std::vector<Hit> too_few_gpus(const RuleContext& c) {
  const auto n = static_cast<int>(c.recommended.size());
  // With a host-level failure its own finding explains why no GPU is usable.
  if (n >= c.options.min_gpus || c.host_failed) {
    return {};
  }
  std::vector<std::string> evidence;
  evidence.push_back(fmt::format("GPUs listed by the driver: {}", c.facts.gpus.size()));
  evidence.push_back(fmt::format("usable: {}, recommended: {}, required (--min-gpus): {}", c.usable_gpus.size(), n, c.options.min_gpus));
  if (c.facts.is_wsl2() && !c.facts.cuda.ran) {
    evidence.push_back("WSL2: GPUs can only be confirmed by the CUDA probe");
  }
  return {{fmt::format("{} usable GPU(s), {} required", n, c.options.min_gpus), std::move(evidence)}};
}

const Rule k_rules[] = {
    {"driver.not-loaded", Severity::fail, Stage::host, "The NVIDIA kernel driver is loaded (/proc/driver/nvidia exists)",
     "Load the driver (`modprobe nvidia`) or install it for this kernel (DKMS may have failed to build it after a kernel "
     "update: check `dkms status`); in a container, start it with the NVIDIA runtime (--gpus all)",
     k_src_proc, driver_not_loaded},
    {"module.nouveau-loaded", Severity::fail, Stage::host, "The nouveau driver is not loaded alongside NVIDIA GPUs",
     "Blacklist nouveau (`blacklist nouveau` and `options nouveau modeset=0` in /etc/modprobe.d/), rebuild the initramfs "
     "and reboot",
     "nvidia-facts.md §5, §11 (nv.c: probe routine not called)", nouveau_loaded},
    {"devnode.nvidiactl-missing", Severity::fail, Stage::host, "/dev/nvidiactl exists",
     "Create the nodes: `nvidia-modprobe -c=0` (or `nvidia-smi` as root, which runs it); check that nvidia-modprobe is "
     "installed setuid root and that udev rules for NVIDIA ran",
     k_src_nodes, nvidiactl_missing},
    {"devnode.nvidia-uvm-missing", Severity::fail, Stage::host, "/dev/nvidia-uvm exists",
     "Load the UVM module and create its nodes: `nvidia-modprobe -u -c=0` (or `modprobe nvidia_uvm` as root)", k_src_nodes,
     uvm_missing},
    {"devnode.not-accessible", Severity::fail, Stage::host, "/dev/nvidiactl and /dev/nvidia-uvm can be opened read-write",
     "Give this user access: add it to the group owning the nodes (often `video`), or set NVreg_DeviceFileMode/"
     "DeviceFileGID for the driver; in a container, pass the devices through",
     k_src_nodes, node_not_accessible},
    {"gpu.devnode-unusable", Severity::fail, Stage::gpu, "Each GPU's /dev/nvidiaN (N = its Device Minor) exists and opens",
     "Create the node with `nvidia-modprobe -c=N` for the GPU's Device Minor N, or fix its permissions; in a container, "
     "pass the device through",
     k_src_nodes, gpu_node_unusable},
    {"gpu.excluded", Severity::fail, Stage::gpu, "No GPU is excluded by the driver",
     "Remove the GPU from NVreg_ExcludedGpus (modprobe options) and reload the driver if it should be used",
     "nvidia-facts.md §6b–6d (ExcludedGpus, GPU Excluded)", gpu_excluded},
    {"gpu.information-unreadable", Severity::fail, Stage::gpu, "Each GPU's /proc/driver/nvidia/gpus/*/information reads",
     "Run as a user that can read /proc/driver/nvidia, or capture a complete snapshot", k_src_proc,
     gpu_information_unreadable},
    {"driver.gsp-disabled-open-module", Severity::fail, Stage::host,
     "GSP firmware is not disabled while the open kernel module is loaded",
     "Remove NVreg_EnableGpuFirmware=0 from the module options (the open module requires GSP), or install the "
     "proprietary flavour for GPUs that must run without GSP",
     "nvidia-facts.md §6b (nv-firmware-registry.h), §2b", gsp_disabled_open},
    {"driver.gsp-disabled", Severity::info, Stage::host, "Whether GSP firmware is disabled with the proprietary module",
     "Nothing to do unless GSP is wanted: remove NVreg_EnableGpuFirmware=0 from the module options",
     "nvidia-facts.md §6b (nv-firmware-registry.h)", gsp_disabled_proprietary},
    {"driver.registry-keys", Severity::info, Stage::host, "What the driver's registry file holds (normally Binary: \"\")",
     "Nothing to do unless the keys are unexpected; the GSP switch is EnableGpuFirmware in params, not a registry key "
     "(RMEdgeTrigger and RmEnableNvGpuFirmwareLoad exist in no driver)",
     "nvidia-facts.md §6c (nv-procfs.c)", registry_keys},
    {"kernel.below-5.5-multi-gpu", Severity::warn, Stage::host, "Kernel 5.5 or newer when several GPUs are used",
     "Until a multi-GPU test passes, start the job on one GPU (the recommendation keeps the first usable one); for "
     "several GPUs try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU settings, or upgrade the kernel",
     "nvidia-facts.md §8: huggingface/accelerate src/accelerate/utils/other.py check_os_kernel() (PR #2077, "
     "https://github.com/huggingface/accelerate/pull/2077; issue #1929, "
     "https://github.com/huggingface/accelerate/issues/1929); NCCL troubleshooting, PCI ACS "
     "(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)",
     kernel_old_multi_gpu,
     "This is Hugging Face accelerate's heuristic, not an NVIDIA requirement: since PR #2077 (2023) accelerate warns on "
     "Linux kernels below 5.5.0 because multi-GPU runs were reported to hang on a 5.4 kernel (issue #1929, two otherwise "
     "identical 2x A6000 machines); no root cause was established and the maintainers only warn. The check compares the "
     "version number alone, so it ignores distribution backports: RHEL 8 (4.18), Amazon Linux 2 (4.14/5.4) and Ubuntu "
     "20.04 GA (5.4) all trip it. Users who hit such hangs usually fixed them with NCCL_P2P_DISABLE=1, which points at "
     "PCIe peer-to-peer problems - ACS enabled on PCIe switches or the IOMMU redirecting P2P traffic - rather than at the "
     "kernel version. gVisor's fixed 4.4.0 and WSL2 kernels are not judged (kernel.release-not-judged).",
     "uname -r (the first X.Y.Z of the release) and the number of usable GPUs."},
    {"env.cuda-visible-devices-unknown-entry", Severity::warn, Stage::host,
     "Every CUDA_VISIBLE_DEVICES entry names a GPU of this host",
     "Fix CUDA_VISIBLE_DEVICES: use indices below the GPU count or full GPU UUIDs (`nvidia-smi -L`)",
     "nvidia-facts.md §10c (CUDA Programming Guide, environment variables)", visible_devices_unknown},
    {"env.cuda-visible-devices-empty", Severity::warn, Stage::host, "CUDA_VISIBLE_DEVICES is not set to the empty string",
     "Unset CUDA_VISIBLE_DEVICES or set it to the GPUs the job should use", "nvidia-facts.md §10c", visible_devices_empty},
    {"probe.failed", Severity::warn, Stage::host, "Every probe could read its input",
     "Run as root or fix the unreadable path named in the evidence; a check that could not read is not a pass",
     "gpu-preflight design: unreadable input is never reported as healthy", probe_failed},
    {"gpu.too-few-usable", Severity::fail, Stage::summary, "At least --min-gpus GPUs are usable and recommended",
     "Fix the findings that made GPUs unusable, or lower --min-gpus if the job needs fewer",
     "gpu-preflight design (--min-gpus)", too_few_gpus},
};

} // namespace

std::span<const Rule> foundation_rules() { return k_rules; }

} // namespace gpf
