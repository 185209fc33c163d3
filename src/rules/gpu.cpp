// Rules whose id starts with "gpu.": one GPU each: its device node, exclusion, information file,
// what the kernel log says about it, its architecture against the job's CUDA and the driver, its
// compute mode, and whether enough GPUs are left.
#include "causes.hpp"
#include "common.hpp"
#include "gpf/knowledge/data_age.hpp"
#include "gpu_state.hpp"

namespace gpf {
namespace {

// The GPU's PCI path when its device id is above every id in data/gpu_pci_ids.json, else nullptr.
const GpuPciPath* newer_pci_id(const RuleContext& c, const GpuArch& g) {
  const GpuPciPath* path = find_gpu_path(c.facts.topology, g.bus_id);
  return path && path->device_id && pci_id_newer_than_data(*path->device_id) ? path : nullptr;
}

// The Model line of the GPU's information file, as read (or that there is none).
std::string model_evidence(const GpuArch& g) {
  return g.model.empty()
             ? fmt::format("/proc/driver/nvidia/gpus/{}/information: no Model line", g.bus_id)
             : fmt::format("/proc/driver/nvidia/gpus/{}/information: Model: {}", g.bus_id, g.model);
}

// The GPU's label with what the architecture rules judged: "GPU 0 (0000:3b:00.0, Tesla
// V100-SXM2-16GB) with compute capability 7.0 (volta)".
std::string gpu_arch_label(const RuleContext& c, const GpuArch& g) {
  if (!g.cc) {
    return c.job.label(g.bus_id);
  }
  return fmt::format("{} with compute capability {}{}", c.job.label(g.bus_id), g.cc->str(),
                     g.arch.empty() ? "" : " (" + g.arch + ")");
}

// Exclusive modes, from the CUDA attribute (Prohibited is compute_prohibited_hits).
std::vector<Hit> exclusive_mode_hits(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& d : c.facts.cuda.devices) {
    if (!d.compute_mode || *d.compute_mode == 0 || *d.compute_mode == 2) {
      continue;
    }
    const std::string evidence =
        fmt::format("CUDA {} ({}): CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = {} ({})", d.index, d.bus_id,
                    *d.compute_mode, compute_mode_name(*d.compute_mode));
    hits.push_back(
        {fmt::format(
             "{} is in an exclusive compute mode: only one process at a time can use it (a second one gets CUDA_ERROR_DEVICE_UNAVAILABLE, 46)",
             c.job.label(d.bus_id)),
         {evidence},
         d.bus_id});
  }
  return hits;
}

} // namespace

std::span<const Rule> gpu_rules() {
  static const Rule rows[] = {
      {.id = "gpu.devnode-unusable",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Each GPU's /dev/nvidiaN (N = its Device Minor) exists and opens",
       .remedy =
           "Create the node with `nvidia-modprobe -c=N` for the GPU's Device Minor N, or fix its permissions; "
           "in a container, pass the device through",
       .source = "docs/sources.md#device-nodes",
       .explanation =
           "Each GPU has its own node /dev/nvidiaN, N being the \"Device Minor\" in "
           "/proc/driver/nvidia/gpus/BUS/information. A GPU whose node is missing or cannot be "
           "opened cannot be used by CUDA, though the driver lists it; in containers this is "
           "what passing some GPUs through and not others looks like. Confirm by hand: `grep "
           "Minor /proc/driver/nvidia/gpus/*/information` and `ls -l /dev/nvidia[0-9]*`. The "
           "GPU is left out of the recommendation (the verdict is at least warn); the check "
           "fails when fewer than --min-gpus GPUs remain.",
       .evidence =
           "Each GPU's Device Minor N (proc/driver/nvidia/gpus/*/information) and dev/nvidiaN: "
           "whether it exists (stat) and whether this user may open it read-write (faccessat "
           "R_OK|W_OK with the effective ids).",
       .reads = {ProbeId::devices},
       .cases = {fires("missing-gpu-node", "0000:3a:00.0"), silent("missing-nvidiactl")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
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
             hit.message = fmt::format("{} has no device node /{} (its Device Minor is {})",
                                       c.job.label(gpu.bus_id), path, *gpu.device_minor);
             hit.evidence = {
                 fmt::format("/{}: No such file or directory", path),
                 fmt::format("/proc/driver/nvidia/gpus/{}/information: Device Minor: {}",
                             gpu.bus_id, *gpu.device_minor)};
           } else if (node->info.rw_access == false) {
             hit.message = fmt::format("{}: this user cannot open /{} read-write",
                                       c.job.label(gpu.bus_id), path);
             hit.evidence = {node_evidence(*node)};
           } else {
             continue;
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "gpu.excluded",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No GPU is excluded by the driver",
       .remedy =
           "Remove the GPU from NVreg_ExcludedGpus (modprobe options) and reload the driver if it should be used",
       .source = "docs/sources.md#driver-files-under-proc-and-sys",
       .explanation =
           "The driver was told to leave this GPU alone through NVreg_ExcludedGpus, a module "
           "option an administrator sets to take a failing GPU out of service (or sets by "
           "mistake). The driver lists it but CUDA cannot use it. Confirm by hand: `grep "
           "ExcludedGpus /proc/driver/nvidia/params` and `grep -r ExcludedGpus "
           "/etc/modprobe.d/`. The GPU is left out of the recommendation (the verdict is at "
           "least warn); the check fails when fewer than --min-gpus GPUs remain.",
       .evidence = "The `GPU Excluded:` line of each GPU's proc/driver/nvidia/gpus/*/information.",
       .cases = {fires("excluded-gpu", "0000:3a:00.0"), silent("healthy-4gpu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& gpu : c.facts.gpus) {
           if (gpu.excluded == true) {
             hits.push_back(
                 {fmt::format("{} is excluded by the driver (NVreg_ExcludedGpus)",
                              c.job.label(gpu.bus_id)),
                  {fmt::format("/proc/driver/nvidia/gpus/{}/information: GPU Excluded: Yes",
                               gpu.bus_id)},
                  gpu.bus_id,
                  Effect::gpu_unusable});
           }
         }
         return hits;
       }},
      {.id = "gpu.information-unreadable",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from = "warn when the file exists and the OS refused to read it (permissions, "
                        "an error the snapshot recorded): the GPU was not checked, which says "
                        "nothing about it",
       .title = "Each GPU's /proc/driver/nvidia/gpus/*/information reads",
       .remedy = "Run as a user that can read /proc/driver/nvidia, or capture a complete snapshot",
       .source =
           "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-procfs.c",
       .explanation =
           "Each GPU's /proc/driver/nvidia/gpus/BUS/information gives its model and Device "
           "Minor, which pair it with its /dev/nvidiaN node and its CUDA device. A file the "
           "driver wrote without a Model or Device Minor line means the driver could not "
           "describe the GPU: it fails and the GPU is left out of the recommendation. A file "
           "that exists but that the OS would not let gpu-preflight read (permissions, a "
           "damaged snapshot) is the checker's blind spot, not the GPU's fault: a warning that "
           "the GPU was not checked (--strict makes it not ready), and the GPU stays in the "
           "recommendation for the probes that could see it. Confirm by hand: `cat "
           "/proc/driver/nvidia/gpus/*/information`.",
       .evidence =
           "Each GPU directory's proc/driver/nvidia/gpus/<bus>/information: whether it can be "
           "read (the OS error when not), and whether it has a Model or Device Minor line.",
       .cases = {fires("garbage-files", "0000:2a:00.0"), silent("healthy-4gpu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& gpu : c.facts.gpus) {
           if (gpu.error.empty()) {
             continue;
           }
           if (gpu.unreadable) {
             Hit hit{fmt::format("{} not checked: its information file could not be read",
                                 c.job.label(gpu.bus_id)),
                     {gpu.error},
                     gpu.bus_id};
             hit.severity = Severity::warn;
             hits.push_back(std::move(hit));
           } else {
             hits.push_back({fmt::format("{} cannot be confirmed: the driver's information file "
                                         "has no Model or Device Minor line",
                                         c.job.label(gpu.bus_id)),
                             {gpu.error},
                             gpu.bus_id,
                             Effect::gpu_unusable});
           }
         }
         return hits;
       }},
      {.id = "gpu.too-few-usable",
       .stage = Stage::summary,
       .severity = Severity::fail,
       .title = "At least --min-gpus GPUs are usable and recommended",
       .remedy =
           "Fix the findings that made GPUs unusable, or lower --min-gpus if the job needs fewer",
       .source = "docs/sources.md#design-decisions-of-the-checker",
       .explanation =
           "After the GPU rules have left out every GPU that cannot run a job, fewer GPUs are "
           "usable and recommended than --min-gpus asks for (the job's CUDA_VISIBLE_DEVICES or "
           "MIG instances count as they are written). A job launched with a fixed world size, "
           "such as `torchrun --nproc-per-node=8`, would fail at start-up or wait for ranks "
           "that never come. The findings of the lost GPUs say why each was left out and are "
           "named first. Confirm by hand: `nvidia-smi -L` for the count. The verdict is fail "
           "(exit 1); `--min-gpus all` asks for every GPU the driver lists.",
       .evidence =
           "The GPUs the driver lists (proc/driver/nvidia/gpus/), those the GPU rules left "
           "usable, the GPUs or MIG instances recommended for the job's CUDA_VISIBLE_DEVICES, "
           "and --min-gpus.",
       .caused_by = "gpu-effects env.cuda-visible-devices-empty "
                    "env.cuda-visible-devices-unknown-entry env.cuda-visible-devices-mig-unknown",
       .cases = {fires("cuda-wsl2"), silent("cuda-no-driver")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto n = static_cast<int>(c.recommended_devices);
         // With a host-level failure its own finding explains why no GPU is usable.
         if (n >= c.options.min_gpus || c.host_failed) {
           return {};
         }
         std::vector<std::string> evidence;
         evidence.push_back(fmt::format("GPUs listed by the driver: {}", c.facts.gpus.size()));
         evidence.push_back(fmt::format("usable: {}, recommended: {}, required (--min-gpus): {}",
                                        c.usable_gpus.size(), n, c.options.min_gpus));
         if (c.facts.is_wsl2() && !c.facts.cuda.ran) {
           evidence.push_back("WSL2: GPUs can only be confirmed by the CUDA probe");
         }
         const bool mig = c.job.visible.mig;
         Hit hit{fmt::format("{} recommended for the job ({}), {} required (--min-gpus)",
                             counted(static_cast<std::size_t>(n), mig ? "MIG instance" : "GPU"),
                             mig ? fmt::format("on {}", counted(c.usable_gpus.size(), "usable GPU"))
                                 : fmt::format("{} usable", c.usable_gpus.size()),
                             c.options.min_gpus),
                 std::move(evidence)};
         // No GPU was left out and none narrowed: the node simply has fewer GPUs than asked for,
         // and there is no finding to fix.
         const auto listed = c.facts.gpus.size();
         if (!mig && listed > 0 && c.usable_gpus.size() == listed &&
             static_cast<std::size_t>(n) == listed) {
           hit.remedy = fmt::format(
               "This node has {} (`nvidia-smi -L` lists them): run the job on a node with at "
               "least {}, or lower --min-gpus to {}",
               counted(listed, "GPU"), c.options.min_gpus, listed);
         }
         return {hit};
       }},
      {.id = "gpu.fallen-off-bus",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No GPU has fallen off the bus (Xid 79 and its companions)",
       .remedy = "Drain the node and reboot it (a GPU off the bus does not come back without one); "
                 "check its power and seating if it recurs and contact the vendor",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .explanation =
           "\"GPU has fallen off the bus\" (Xid 79, or the same NVRM message without an Xid) "
           "means the GPU stopped answering on PCIe: its reads return all ones. Every process "
           "on it has failed, new ones cannot start on it, and the node is often unstable "
           "(nvidia-smi hangs or prints ERR!). Causes: power (supply, cables), heat, a PCIe "
           "link, riser or slot fault, or a failing GPU. Confirm by hand: `dmesg | grep -i -e "
           "'fallen off' -e xid` and `lspci -d 10de:` (a GPU off the bus shows \"rev ff\"). The "
           "GPU is left out of the recommendation; only a reboot brings it back, and a repeat "
           "calls for the vendor.",
       .evidence =
           "The current boot's kernel-log lines on a GPU the driver lists: Xid 79 (`NVRM: Xid "
           "(PCI:<bus>): 79, ...`), `NVRM: GPU <bus>: GPU has fallen off the bus` and `NVRM: "
           "The NVIDIA GPU <bus> ... has fallen off the bus and is not responding to "
           "commands`. The PCIe link-down, D3cold and BAR lines naming the GPU or a port above "
           "it (its path under sys/bus/pci/devices) and the cpuinfo hypervisor flag give the "
           "likely cause.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::fallen_off_bus}, {LogEventKind::fallen_off_bus}),
       .cases = {fires("log-only-gpu-fallen-off", "0000:18:00.0"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto hits = gpu_events_rule(c, {});
         for (auto& hit : hits) {
           if (hit.gpu && hit.effect == Effect::gpu_unusable) {
             link_causes(c.facts, hit, *hit.gpu); // the link or power event that explains it
           }
         }
         return hits;
       }},
      {.id = "gpu.bar-invalid",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Every GPU's PCI I/O regions (BARs) are assigned",
       .remedy =
           "Enable \"Above 4G decoding\" (and Resizable BAR where used) in the BIOS, or boot with pci=realloc; "
           "in a VM give the guest enough MMIO space for the GPU's BARs",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "The GPU's PCI memory windows (BARs) were not assigned by the firmware or the "
           "kernel, typically because \"Above 4G decoding\" is off in the BIOS for GPUs with "
           "large BARs, or because a VM has too little MMIO space. The driver logs that the I/O "
           "region assigned to the device is invalid and cannot initialise the GPU, so CUDA "
           "does not see it. Confirm by hand: `lspci -vv -d 10de: | grep -e Region -e 'Memory "
           "at'` (unassigned or disabled regions) and `dmesg | grep -i bar`. The GPU is left "
           "out of the recommendation.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: This PCI I/O region assigned to your "
           "NVIDIA device is invalid: BARn is 0M @ 0x... (PCI:<bus>)`, or a lone `BARn is 0M @ "
           "...` line, on a GPU the driver lists.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::bar_invalid}),
       .cases = {fires("log-rminit-0x26-vm-bar", "0000:18:00.0"), silent("log-rminit-0x26-iommu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return gpu_events_rule(c, {}); }},
      {.id = "gpu.not-supported",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Every GPU is supported by the installed driver release",
       .remedy =
           "Install a driver branch that supports this GPU (newer GPUs need newer branches, old GPUs a legacy branch)",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "The installed driver branch does not support this GPU: the kernel log says it \"is "
           "not supported by the NVIDIA ... driver release\". New GPUs need a recent branch and "
           "old ones move to legacy branches. The GPU is not initialised and CUDA does not see "
           "it. Confirm by hand: `dmesg | grep 'is not supported by'` and the GPU's PCI ID in "
           "`lspci -nn -d 10de:` against the supported-GPU list of the driver's README. The GPU "
           "is left out of the recommendation.",
       .evidence =
           "The current boot's kernel-log messages `NVRM: The NVIDIA GPU <bus> (PCI ID: "
           "10de:<id>) installed in this system is not supported by the NVIDIA <release> "
           "driver release` on a GPU the driver lists, and `NVRM: The NVIDIA <board> GPU "
           "installed in this system is supported through the NVIDIA <branch> Legacy drivers`, "
           "which names the board, not its address.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::not_supported}),
       .cases = {fires("cause-legacy-branch"), silent("cause-iommu-fault-p2p")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto hits = gpu_events_rule(c, {});
         // "... supported through the NVIDIA 580.xx Legacy drivers" names the board, not its
         // address: one hit per message, with that branch in the remedy.
         for (const auto& e : c.facts.log.host_events) {
           if (e.kind != LogEventKind::not_supported || e.legacy_branch.empty()) {
             continue;
           }
           const EventPtrs one{&e};
           Hit hit{fmt::format("A GPU is not supported by this driver: {}", describe(one)),
                   evidence_of(one)};
           const std::string branch = e.legacy_branch.substr(0, e.legacy_branch.find('.'));
           hit.remedy = fmt::format(
               "Install the NVIDIA {0} legacy driver branch, the last that supports this GPU "
               "(Ubuntu: `sudo apt install nvidia-driver-{1}`; elsewhere the {0} driver from "
               "https://www.nvidia.com/object/unix.html), and remove the newer driver; or replace "
               "the GPU",
               e.legacy_branch, branch);
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "gpu.not-supported-open-module",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No pre-Turing GPU is driven by the open kernel module",
       .remedy =
           "Install the proprietary kernel module flavour (R580 or older for Maxwell/Pascal/Volta): the open module needs GSP",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "The open kernel module drives only GPUs with a GSP processor (Turing and newer); "
           "Maxwell, Pascal and Volta GPUs need the proprietary flavour of the module. With the "
           "open module loaded such a GPU is not initialised and CUDA does not see it. Confirm "
           "by hand: `cat /proc/driver/nvidia/version` (\"Open Kernel Module\") and the model "
           "in `lspci -d 10de:`. The GPU is left out of the recommendation; on a host of only "
           "such GPUs nothing can be recommended.",
       .evidence =
           "The current boot's kernel-log messages `NVRM: The NVIDIA GPU <bus> (PCI ID: "
           "10de:<id>) installed in this system is not supported by open nvidia.ko because it "
           "does not include the required GPU System Processor (GSP)` on a GPU the driver "
           "lists.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::not_supported_open}),
       .cases = {fires("log-gpu-bring-up", "0000:3a:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return gpu_events_rule(c, {}); }},
      {.id = "gpu.power-cables",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Every GPU has its power cables connected (incl. Xid 54)",
       .remedy =
           "Power the node down and connect the GPU's auxiliary power cables; check the PSU and cabling",
       .source = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
       .explanation =
           "The driver found the GPU's auxiliary power not connected (Xid 54, or the message "
           "that the GPU does not have the necessary power cables connected). The GPU does not "
           "initialise, or runs throttled and can fall off the bus under load; a training job "
           "at full power is the worst case. Confirm by hand: `dmesg | grep -i -e 'power cable' "
           "-e 'Xid.*: 54'` and `nvidia-smi -q -d POWER`. The GPU is left out of the "
           "recommendation; it needs hands on the machine.",
       .evidence =
           "The current boot's kernel-log lines on a GPU the driver lists: Xid 54 (`NVRM: Xid "
           "(PCI:<bus>): 54, ...`) and `NVRM: GPU <bus>: GPU does not have the necessary power "
           "cables connected`.",
       .reads = {ProbeId::kernel_log},
       .events = xid_events({XidClass::power}, {LogEventKind::power_cables}),
       .cases = {fires("log-gpu-bring-up", "0000:18:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return gpu_events_rule(c, {}); }},
      {.id = "gpu.crash-dump",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for a dump logged before the last driver reload",
       .title = "No GPU crash dump was created since the driver loaded",
       .remedy =
           "A fatal GPU event happened: run `nvidia-bug-report.sh` as root before unloading the driver and check the Xid findings",
       .source = "docs/sources.md#other-kernel-log-messages",
       .explanation =
           "The driver saved a GPU crash dump: a fatal GPU event happened since it was loaded, "
           "and its state is kept for NVIDIA's debugging until the driver is unloaded "
           "(`nvidia-bug-report.sh` collects it). The event itself usually also appears as an "
           "Xid, which decides what happens to the GPU. Confirm by hand: `dmesg | grep -i -e "
           "'crash dump' -e xid`. Warn (info for a dump from before the last driver reload); "
           "the GPUs stay in the recommendation unless an Xid finding leaves one out.",
       .evidence =
           "The current boot's kernel-log lines `NVRM: A GPU crash dump has been created.`, "
           "and the last `NVRM: loading` line, which tells a dump logged before the driver was "
           "reloaded.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::crash_dump}),
       .cases = {fires("log-only-gpu-fallen-off"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return host_events_rule(c, true); }},
      {.id = "gpu.cuda-arch-unsupported",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "warn for a toolkit older than the GPU's architecture: a build that ships PTX runs through the driver's JIT",
       .title = "The job's CUDA toolkit targets each GPU's architecture",
       .remedy =
           "Use a build of the framework made with a toolkit that targets this GPU (CUDA 12.x for Maxwell, Pascal and Volta; "
           "CUDA 11.8 or newer for Hopper and Ada; "
           "12.8 or newer for Blackwell), or leave the GPU out (CUDA_VISIBLE_DEVICES)",
       .source = "docs/sources.md#gpu-architectures-toolkits-and-drivers",
       .explanation =
           "A toolkit compiles kernels only for the architectures it knows: CUDA 13.0 dropped Maxwell, Pascal and Volta; "
           "12.0 dropped Kepler 3.5/3.7; "
           "new architectures arrive with new toolkits (Hopper 11.8, Blackwell 12.8). "
           "A toolkit that dropped an architecture cannot emit code for it in any form: the job has no kernel image for the GPU (fail). "
           "A toolkit older than the architecture emits no machine code for it, but PTX it ships for an older virtual architecture is compiled for the GPU by the driver at load (PTX JIT): "
           "such a build runs (its first launch is slower), one that ships machine code only does not, and many framework wheels ship no PTX (warn: which one the job has decides).",
       .evidence =
           "The job's CUDA version and each GPU's compute capability: from the CUDA probe when it ran, else from the GPU's model name (/proc/driver/nvidia/gpus/*/information) through data/gpu_models.json.",
       .cases = {fires("compat-cuda130-v100", "0000:3b:00.0"), silent("compat-cuda134-driver580")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& expected = c.facts.compat.expected_cuda;
         if (!expected) {
           return {};
         }
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           if (!g.cc) {
             continue;
           }
           const auto j = c.job.matrix->judge_cuda_targets(expected->version, *g.cc);
           const std::vector<std::string> evidence{expected_evidence(*expected), g.cc_evidence};
           if (j.status == CudaTargetStatus::dropped) {
             hits.push_back(
                 {fmt::format(
                      "{} is unusable for this job: CUDA {} no longer targets compute capability {} ({}; last toolkit {}). "
                      "Kernels fail with \"no kernel image is available for execution on the device\" (CUDA_ERROR_NO_BINARY_FOR_GPU, 209)",
                      gpu_arch_label(c, g), expected->text, g.cc->str(), j.row->arch,
                      j.row->last_cuda->str()),
                  evidence, g.bus_id, Effect::gpu_unusable});
           } else if (j.status == CudaTargetStatus::not_yet) {
             Hit hit{
                 fmt::format(
                     "{} runs this job only through PTX JIT: CUDA {} does not yet target compute capability {} ({}; first toolkit {}), "
                     "so a build that ships only machine code fails with \"no kernel image is available for execution on the device\" (CUDA_ERROR_NO_BINARY_FOR_GPU, 209); "
                     "one that ships PTX is compiled for the GPU by the driver at first launch",
                     gpu_arch_label(c, g), expected->text, g.cc->str(), j.row->arch,
                     j.row->first_cuda->str()),
                 evidence, g.bus_id};
             hit.severity = Severity::warn;
             hit.remedy = fmt::format(
                 "Prefer a build made with CUDA {} or newer, which has machine code for {}; to keep this build, check that it ships PTX "
                 "(`cuobjdump --list-ptx` on its libraries, or torch.cuda.get_arch_list() listing a compute_XX entry) — "
                 "framework wheels without PTX fail on this GPU",
                 j.row->first_cuda->str(), j.row->arch);
             hits.push_back(std::move(hit));
           }
         }
         return hits;
       }},
      {.id = "gpu.open-module-unsupported",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "The open kernel module is not driving a pre-Turing GPU",
       .remedy =
           "Install the proprietary driver flavour (R580 is the last branch for Maxwell, Pascal and Volta; "
           "R470 for Kepler), or move the job to a Turing or newer GPU",
       .source = "docs/sources.md#gpu-architectures-toolkits-and-drivers",
       .explanation =
           "The open kernel modules depend on the GPU System Processor (GSP), which first appeared in Turing; "
           "they cannot drive Maxwell, Pascal or Volta GPUs (the kernel log says the GPU \"is not supported by open nvidia.ko\").",
       .evidence =
           "The module flavour from /proc/driver/nvidia/version (\"Open Kernel Module\") and each GPU's architecture.",
       .cases = {fires("compat-open-pre-turing", "0000:17:00.0"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (c.facts.driver.flavour != DriverFlavour::open) {
           return {};
         }
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           if (!g.driver_row || g.driver_row->open_module) {
             continue;
           }
           hits.push_back(
               {fmt::format(
                    "{} cannot be driven by the open kernel module, which supports Turing and later only (it needs the GPU System Processor)",
                    gpu_arch_label(c, g)),
                {"/proc/driver/nvidia/version: " + c.facts.driver.version_line, g.cc_evidence},
                g.bus_id,
                Effect::gpu_unusable});
         }
         return hits;
       }},
      {.id = "gpu.needs-open-module",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "GPUs that need the open kernel module are not on the proprietary one",
       .remedy =
           "Install the open kernel module flavour of the driver (e.g. the nvidia-open / -open packages, or the .run installer's --kernel-module-type=open)",
       .source = "docs/sources.md#gpu-architectures-toolkits-and-drivers",
       .explanation =
           "Grace Hopper and Blackwell GPUs (data-center, workstation and GeForce alike) are supported by the open kernel modules only (NVIDIA's Driver Installation Guide 610, \"Kernel Modules\"); "
           "the proprietary module refuses them at load and logs that the GPU requires the NVIDIA open kernel modules.",
       .evidence =
           "The module flavour from /proc/driver/nvidia/version and each GPU's architecture and model.",
       .cases = {fires("compat-b200-proprietary", "0000:3b:00.0"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         if (c.facts.driver.flavour != DriverFlavour::proprietary) {
           return {};
         }
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           const bool needs = (g.driver_row && g.driver_row->needs_open_module) ||
                              (g.model_row && g.model_row->needs_open_module);
           if (!needs) {
             continue;
           }
           Hit hit{
               fmt::format(
                   "{} needs the open kernel module (Grace Hopper and Blackwell GPUs are not supported by the proprietary flavour), but the proprietary module is loaded",
                   gpu_arch_label(c, g)),
               {"/proc/driver/nvidia/version: " + c.facts.driver.version_line, g.cc_evidence},
               g.bus_id,
               Effect::gpu_unusable};
           if (const DriverView& d = c.job.driver; d.kernel_module) {
             // the same driver version, the other flavour: nothing else has to change
             hit.remedy = fmt::format(
                 "Install the open kernel module flavour of driver {0} (the same version): the distribution's open package of branch {1} (e.g. nvidia-driver-{1}-open, nvidia-open), or the .run installer with --kernel-module-type=open; then reload the modules or reboot",
                 d.kernel_module_text, d.kernel_module->major());
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "gpu.driver-branch-unsupported",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "The driver branch supports each GPU's architecture",
       .remedy =
           "Install a driver branch that supports the GPU: new enough for new architectures (Hopper/Ada R520, Blackwell R570, B300 R580), not newer than the last branch for old ones (Kepler R470; "
           "Maxwell, Pascal, Volta R580)",
       .source = "docs/sources.md#gpu-architectures-toolkits-and-drivers",
       .explanation =
           "Each architecture arrives in some driver branch and legacy architectures leave after their last branch.",
       .evidence =
           "The driver's branch (the first component of its version) and each GPU's architecture and model.",
       .cases = {fires("compat-h100-driver470", "0000:00:1e.0"),
                 silent("compat-cuda121-driver470")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.kernel_module) {
           return {};
         }
         const auto branch = d.kernel_module->major();
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           // 0 = no bound (plain numbers: GCC's maybe-uninitialized misfires on optionals here)
           unsigned long min_branch =
               g.driver_row && g.driver_row->min_branch ? *g.driver_row->min_branch : 0;
           if (g.model_row && g.model_row->min_branch && *g.model_row->min_branch > min_branch) {
             min_branch = *g.model_row->min_branch;
           }
           const unsigned long last_branch =
               g.driver_row && g.driver_row->last_branch ? *g.driver_row->last_branch : 0;
           std::string why;
           if (min_branch != 0 && branch < min_branch) {
             why = fmt::format("driver branch R{} predates support for it (R{} or newer needed)",
                               branch, min_branch);
           } else if (last_branch != 0 && branch > last_branch) {
             why = fmt::format(
                 "driver branch R{} no longer supports it (R{} was the last branch that did)",
                 branch, last_branch);
           } else {
             continue;
           }
           hits.push_back({fmt::format("{}: {}", gpu_arch_label(c, g), why),
                           {d.kernel_module_evidence, g.cc_evidence},
                           g.bus_id,
                           Effect::gpu_unusable});
         }
         return hits;
       }},
      {.id = "gpu.forward-compat-unsupported",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "Forward compatibility is not used on GeForce GPUs",
       .remedy =
           "Remove the cuda-compat directory from the library path and upgrade the driver to one that supports the job's CUDA",
       .source = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
       .explanation =
           "Forward compatibility works on data-center GPUs, select NGC-ready RTX parts and Jetson only; "
           "on other GPUs cuInit returns CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).",
       .evidence =
           "Whether the loader's libcuda is a cuda-compat one newer than the kernel module, and each GPU's model segment.",
       .reads = {ProbeId::compat, ProbeId::driver},
       .cases = {fires("compat-forward-compat-geforce", "0000:07:00.0"),
                 silent("compat-forward-compat")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const DriverView& d = c.job.driver;
         if (!d.forward_compat) {
           return {};
         }
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           if (!g.model_row || g.model_row->segment != "geforce") {
             continue;
           }
           hits.push_back(
               {fmt::format(
                    "{} is a GeForce GPU: forward compatibility (the cuda-compat libcuda {}) is not supported on it; "
                    "cuInit fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)",
                    gpu_arch_label(c, g), c.facts.compat.libcuda.version_text),
                {library_evidence(c.facts.compat.libcuda), g.cc_evidence},
                g.bus_id,
                Effect::gpu_unusable});
         }
         return hits;
       }},
      {.id = "gpu.model-not-in-matrix",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Each GPU's architecture is known",
       .remedy =
           "Run with the CUDA probe (it reports the compute capability), or add the model to data/gpu_models.json",
       .source = "docs/sources.md#gpu-architectures-toolkits-and-drivers",
       .explanation =
           "Without a compute capability the per-architecture checks (CUDA targets, driver flavour, driver branch) cannot be applied; "
           "this says so rather than passing silently.",
       .evidence =
           "The CUDA probe's compute capability, else the model name against data/gpu_models.json.",
       .cases = {fires("garbage-files", "0000:2a:00.0"), silent("healthy-4gpu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           if (g.cc || newer_pci_id(c, g)) { // newer than the data: gpu.pci-id-newer-than-data
             continue;
           }
           hits.push_back(
               {fmt::format(
                    "{}: its architecture is unknown (model \"{}\" is not in the model table and the CUDA probe gave no compute capability), so the CUDA-architecture and driver-flavour checks were not applied to it",
                    c.job.label(g.bus_id), g.model.empty() ? "unknown" : g.model),
                {model_evidence(g)},
                g.bus_id});
         }
         return hits;
       }},
      {.id = "gpu.newer-than-data",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "Each GPU's compute capability is one gpu-preflight's data knows",
       .remedy =
           "Update gpu-preflight (its data knows compute capabilities up to the one named in the finding); "
           "until then check by hand that the job's build targets this GPU (its architecture list) and that the driver branch and module flavour support it",
       .source = "https://developer.nvidia.com/cuda-gpus",
       .explanation =
           "The per-architecture checks (the CUDA toolkits that target a GPU, the driver branches and the module flavour it needs) come from data/cuda_architectures.json and data/driver_architectures.json, which end at the newest architecture published when the data was last updated. "
           "A compute capability beyond them is neither guessed at nor passed in silence: those checks were not applied to the GPU, and this says so. "
           "The GPU stays in the recommendation.",
       .evidence =
           "The CUDA probe's compute capability (or the model table's) against the newest compute capability in data/.",
       .cases = {fires("compat-newer-than-data", "0000:18:00.0"), silent("compat-cuda130-v100")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& g : c.job.archs) {
           if (!g.cc || !compute_capability_newer_than_data(*g.cc)) {
             continue;
           }
           hits.push_back(
               {fmt::format(
                    "{}: {}; whether the job's CUDA targets it and whether this driver supports it were not checked",
                    c.job.label(g.bus_id),
                    newer_than_data(fmt::format("compute capability {}", g.cc->str()),
                                    fmt::format("compute capability {}",
                                                data_age().newest_compute_capability.str()))),
                {g.cc_evidence,
                 fmt::format(
                     "newest compute capability in data/cuda_architectures.json: {} (data of {})",
                     data_age().newest_compute_capability.str(), data_age().as_of)},
                g.bus_id});
         }
         return hits;
       }},
      {.id = "gpu.pci-id-newer-than-data",
       .stage = Stage::gpu,
       .severity = Severity::warn,
       .title = "Each GPU's PCI device id is one gpu-preflight's data knows",
       .remedy =
           "Update gpu-preflight (its PCI device table is named in the finding); until then check by hand, in the release notes of the installed driver, that this driver branch and its module flavour support the GPU",
       .source = "docs/sources.md#gpu-pci-device-ids",
       .explanation =
           "data/gpu_pci_ids.json is the table of PCI device ids in one driver release's open kernel modules README (every Turing and later GPU that release supports). "
           "NVIDIA numbers new products upwards, so a device id above the table's highest belongs to a GPU newer than the data: the product's own facts (the driver branch and module flavour it needs) are not known, and when the model name is unknown too, neither is its architecture. "
           "That is said, never guessed. A GPU whose model is in data/gpu_models.json, or whose compute capability is already newer than the data (gpu.newer-than-data), is not judged here. "
           "The GPU stays in the recommendation.",
       .evidence =
           "Each GPU's PCI device id (sysfs `device`) against the highest id in data/gpu_pci_ids.json.",
       .reads = {ProbeId::pcie},
       .cases = {fires("gpu-pci-id-newer-than-data", "0000:18:00.0"), silent("healthy-4gpu")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         const DataAge& age = data_age();
         for (const auto& g : c.job.archs) {
           const GpuPciPath* path = newer_pci_id(c, g);
           if (!path || g.model_row || (g.cc && compute_capability_newer_than_data(*g.cc))) {
             continue;
           }
           const unsigned id = *path->device_id;
           const std::string not_checked =
               g.cc ? "the driver branch and module flavour it needs were not checked"
                    : "its architecture is unknown too, so the CUDA-architecture, driver-branch "
                      "and module-flavour checks were not applied to it";
           hits.push_back(
               {fmt::format(
                    "{}: not judged: PCI device id 0x{:04X} is newer than the data (driver {}'s list of GPUs, of {}, up to 0x{:04X}, {}) \u2014 update gpu-preflight; {}",
                    c.job.label(g.bus_id), id, age.pci_release, age.pci_released, age.newest_pci_id,
                    age.newest_pci_name, not_checked),
                {fmt::format("{}/device: 0x{:04x}", path->path, id),
                 fmt::format("data/gpu_pci_ids.json: the open kernel modules README of driver {} "
                             "({}), highest PCI device id 0x{:04X}",
                             age.pci_release, age.pci_released, age.newest_pci_id),
                 model_evidence(g) + " (not in data/gpu_models.json)"},
                g.bus_id});
         }
         return hits;
       }},
      {.id = "gpu.compute-mode-exclusive",
       .stage = Stage::gpu,
       .severity = Severity::info,
       .title = "Whether a GPU is in an exclusive compute mode",
       .remedy =
           "Nothing to do for one process per GPU (gpu-preflight releases its contexts before the job starts); "
           "for several processes per GPU set Default mode: `nvidia-smi -i <bus id> -c DEFAULT`",
       .source = "docs/sources.md#compute-mode",
       .explanation =
           "In Exclusive-Process mode one process at a time may hold a context on the GPU; a second gets CUDA_ERROR_DEVICE_UNAVAILABLE (46). Fine for one process per GPU; the CUDA probe releases its contexts before the job starts, so it does not hold the GPU.",
       .evidence = "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE of each CUDA device (CUDA probe).",
       .reads = {ProbeId::cuda},
       .cases = {fires("cuda-compute-modes", "0000:01:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return exclusive_mode_hits(c); }},
      // One judgement with nvml.compute-prohibited (compute_prohibited_hits): this row reports
      // the GPUs whose compute mode CUDA read.
      {.id = "gpu.compute-mode-prohibited",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .title = "No GPU is in compute mode Prohibited",
       .remedy = "Set Default mode as root: `nvidia-smi -i <bus id> -c DEFAULT`",
       .source = k_compute_modes_source,
       .explanation =
           "In Prohibited mode no process may create a context on the GPU: the job cannot use it, "
           "so it is left out of the recommendation. NVML's reading (nvml.compute-prohibited) is "
           "the same setting; a GPU is reported once, here when the CUDA probe read it.",
       .evidence =
           "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE of each CUDA device (CUDA probe), and NVML's compute mode where it read one.",
       .reads = {ProbeId::cuda},
       .cases = {fires("cuda-compute-modes", "0000:02:00.0"), silent("cuda-4gpu-passed")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         return compute_prohibited_hits(c, "cuda");
       }},
  };
  return rows;
}

} // namespace gpf
