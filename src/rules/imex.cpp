// Rules whose id starts with "imex.": the host-side pieces a GB200/GB300 NVL compute tray needs
// for memory shared over the multi-node NVLink fabric: an IMEX channel and the IMEX daemon.
// Facts: NVreg_ImexChannelCount and NVreg_CreateImexChannel0 in
// https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/kernel-open/nvidia/nv-reg.h
// (the driver never creates the channel nodes; without one the fabric-handle APIs fail with
// insufficient permission); the IMEX guide for the daemon and its node list. The live proof is
// the CUDA child's fabric allocation probe (docs/cuda-probe.md#fabric-allocation): one cuMemCreate
// requesting CU_MEM_HANDLE_TYPE_FABRIC on each GPU whose
// CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is 1
// (https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__VA.html).
#include "common.hpp"

#include "gpf/knowledge/cuda_errors.hpp"

namespace gpf {
namespace {

constexpr std::string_view k_nv_reg =
    "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/kernel-open/nvidia/nv-reg.h";
constexpr std::string_view k_imex_guide =
    "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/";

// The proc/devices evidence of the channel device, as read.
std::string imex_device_evidence(const ServiceFacts& s) {
  if (s.imex_devices_line) {
    return fmt::format("/proc/devices: {}", quote_evidence(*s.imex_devices_line, 80));
  }
  return s.proc_devices_read
             ? std::string("/proc/devices: no nvidia-caps-imex-channels line (the driver "
                           "registered no IMEX channel device)")
             : std::string("/proc/devices: not read");
}

constexpr std::string_view k_imex_channels_doc =
    "https://docs.nvidia.com/multi-node-nvlink-systems/imex-guide/imexchannels.html";
constexpr std::string_view k_channel_dir = "dev/nvidia-caps-imex-channels/";
constexpr int k_out_of_memory = 2; // CUDA_ERROR_OUT_OF_MEMORY

// The compute tray imex.channel-missing speaks about (its evidence line), or nullopt.
std::optional<std::string> channel_missing_tray(const Facts& f) {
  const auto& s = f.topology.services;
  auto tray = nvl_compute_tray(f);
  if (!tray || !f.driver.loaded || !s.ran || !s.imex_channels.empty()) {
    return std::nullopt;
  }
  return tray;
}

// The compute tray imex.service-not-running speaks about (its evidence line), or nullopt.
std::optional<std::string> service_missing_tray(const Facts& f) {
  const auto& s = f.topology.services;
  auto tray = nvl_compute_tray(f);
  if (!tray || !f.driver.loaded || !sees_host_processes(s) || !s.imex.empty()) {
    return std::nullopt;
  }
  return tray;
}

// The GPUs whose device attribute says fabric handles are supported and whose one fabric
// allocation the driver refused. CUDA_ERROR_OUT_OF_MEMORY is left out: memory another process
// holds says nothing about the fabric (the cuda rows judge a busy GPU).
std::vector<const CudaDevice*> fabric_refusals(const Facts& f) {
  std::vector<const CudaDevice*> out;
  for (const auto& d : f.cuda.devices) {
    if (d.fabric.attribute == 1 && d.fabric.refused() && d.fabric.error_code != k_out_of_memory) {
      out.push_back(&d);
    }
  }
  return out;
}

// "GPU 0 (…): CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 1, but cuMemCreate of one 2 MiB
// granule with a fabric handle (CU_MEM_HANDLE_TYPE_FABRIC) was refused: CUDA_ERROR_NOT_PERMITTED
// (800) (CUDA: the operation is not permitted)": the CUresult by CUDA's name where the driver gave
// none, always with the catalog's meaning.
std::string fabric_evidence(const RuleContext& c, const CudaDevice& d) {
  const auto& f = d.fabric;
  const CudaError* known = f.error_code ? find_cuda_error(*f.error_code) : nullptr;
  const bool unnamed = f.error_name.empty() || starts_with(f.error_name, "CUresult ");
  std::string name = known && unnamed && !known->driver.empty() ? std::string(known->driver)
                     : f.error_name.empty()                     ? std::string("an error")
                                                                : f.error_name;
  if (f.error_code) {
    name += fmt::format(" ({})", *f.error_code);
  }
  const std::string size =
      f.granularity > 0 ? fmt::format(" of one {} granule", bytes_text(f.granularity)) : "";
  return fmt::format("{}: CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = {}, but {}{} "
                     "requesting a fabric handle (CU_MEM_HANDLE_TYPE_FABRIC) was refused: {}{}",
                     c.job.label(d.bus_id), f.attribute.value_or(0), f.call, size, name,
                     known ? fmt::format(" (CUDA: {})", known->meaning) : std::string());
}

// The refusals as evidence lines, at most k_max_lines of them, the rest counted.
void add_refusals(const RuleContext& c, const std::vector<const CudaDevice*>& refusals,
                  std::vector<std::string>& evidence) {
  std::size_t dropped = 0;
  std::vector<std::string> lines;
  for (const CudaDevice* d : refusals) {
    add_capped(lines, fabric_evidence(c, *d), dropped);
  }
  if (dropped > 0) {
    lines.push_back(fmt::format("and {} more GPUs refused likewise", dropped));
  }
  evidence.insert(evidence.end(), lines.begin(), lines.end());
}

// The IMEX channels this user cannot open read-write (the devices probe's stat), by path.
std::vector<const DeviceNodeFact*> channels_denied(const Facts& f) {
  std::vector<const DeviceNodeFact*> out;
  for (const auto& node : f.devices) {
    if (starts_with(node.path, k_channel_dir) && node.info.exists() &&
        node.info.rw_access == false) {
      out.push_back(&node);
    }
  }
  return out;
}

// What the host facts blame for a refused fabric allocation, in the order an administrator fixes
// them: the channel first (without one nothing else matters), then this user's access to it, the
// host Fabric Manager on an NVSwitch host, the IMEX daemon.
enum class FabricCause {
  no_channel,     // dev/nvidia-caps-imex-channels has no channelN
  channel_denied, // every channel exists but this user cannot open it read-write
  fabric_manager, // NVSwitches on this host and no nv-fabricmanager in its process table
  no_daemon,      // the host's process table has no nvidia-imex
  daemon_unseen,  // a container's process table: the host's daemon cannot be seen
  unknown,        // the host facts show nothing wrong
};

FabricCause fabric_cause(const Facts& f) {
  const auto& s = f.topology.services;
  if (s.ran && s.imex_channels.empty()) {
    return FabricCause::no_channel;
  }
  if (const auto denied = channels_denied(f);
      !denied.empty() && denied.size() == s.imex_channels.size()) {
    return FabricCause::channel_denied;
  }
  const bool nvswitch = !s.nvswitch_nodes.empty() || !f.topology.pcie.nvswitches.empty();
  if (nvswitch && sees_host_processes(s) && s.fabric_manager.empty()) {
    return FabricCause::fabric_manager;
  }
  if (sees_host_processes(s) && s.imex.empty()) {
    return FabricCause::no_daemon;
  }
  if (s.ran && !sees_host_processes(s)) {
    return FabricCause::daemon_unseen;
  }
  return FabricCause::unknown;
}

} // namespace

std::span<const Rule> imex_rules() {
  static const Rule rows[] = {
      {.id = "imex.channel-missing",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "A GB200/GB300 compute tray has an IMEX channel",
       .remedy = "Create IMEX channel 0 as root: `mkdir -p /dev/nvidia-caps-imex-channels && mknod "
                 "/dev/nvidia-caps-imex-channels/channel0 c <major> 0`, the major being the "
                 "nvidia-caps-imex-channels line of /proc/devices; channels do not survive a "
                 "reboot, so create it at boot (or load the open module with "
                 "NVreg_CreateImexChannel0=1 where every job may share one channel)",
       .source = k_nv_reg,
       .explanation =
           "Memory shared across the trays of a multi-node NVLink domain (cuMemCreate with a "
           "fabric handle, which NCCL's multi-node NVLink transport uses) needs an IMEX channel: "
           "a character device /dev/nvidia-caps-imex-channels/channelN the administrator "
           "creates, the driver never does. Without one those calls fail with "
           "CUDA_ERROR_NOT_PERMITTED, even where the device attribute says fabric handles are "
           "supported. Where /proc/devices has no nvidia-caps-imex-channels line at all, the "
           "driver was loaded with IMEX channels disabled (NVreg_ImexChannelCount=0). Single-"
           "tray work is unaffected, hence a warning. Confirm by hand: `ls -l "
           "/dev/nvidia-caps-imex-channels/` and `grep imex /proc/devices`.",
       .evidence = "The GPU models (GB200/GB300) and the PCI bus without an NVSwitch; the "
                   "nvidia-caps-imex-channels line of proc/devices; the entries of "
                   "dev/nvidia-caps-imex-channels/; the GPUs whose fabric allocation the CUDA "
                   "child saw refused, when it ran (the live proof).",
       .reads = {ProbeId::driver, ProbeId::pcie, ProbeId::services},
       .cases = {fires("imex-gb200-no-channel"), silent("imex-gb200-ready")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& s = c.facts.topology.services;
         const auto tray = channel_missing_tray(c.facts);
         if (!tray) {
           return {};
         }
         Hit hit{
             "GB200/GB300 compute tray without an IMEX channel: memory shared over the "
             "multi-node NVLink fabric (cuMemCreate with a fabric handle) fails with "
             "CUDA_ERROR_NOT_PERMITTED; work within this tray is unaffected",
             {*tray, imex_device_evidence(s), "/dev/nvidia-caps-imex-channels: no channelN entry"}};
         // The live proof, where the CUDA child has it: this row, not
         // imex.fabric-allocation-refused, reports the refusals whose cause is the missing channel.
         add_refusals(c, fabric_refusals(c.facts), hit.evidence);
         if (s.imex_major) {
           hit.remedy = fmt::format(
               "Create IMEX channel 0 as root: `mkdir -p /dev/nvidia-caps-imex-channels && "
               "mknod /dev/nvidia-caps-imex-channels/channel0 c {} 0` (major {} from "
               "/proc/devices); channels do not survive a reboot, so create it at boot (or "
               "load the open module with NVreg_CreateImexChannel0=1 where every job may share "
               "one channel)",
               *s.imex_major, *s.imex_major);
         } else if (s.proc_devices_read) {
           hit.remedy =
               "The driver registered no IMEX channel device: remove NVreg_ImexChannelCount=0 "
               "from the nvidia module options (`grep -r ImexChannelCount /etc/modprobe.d/`), "
               "reload the driver, then create /dev/nvidia-caps-imex-channels/channel0 with "
               "the major that /proc/devices lists for nvidia-caps-imex-channels";
         }
         return {std::move(hit)};
       }},
      {.id = "imex.service-not-running",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "The IMEX daemon runs on a GB200/GB300 compute tray",
       .remedy = "Start the IMEX daemon of the driver's branch: `systemctl enable --now "
                 "nvidia-imex`, with /etc/nvidia-imex/nodes_config.cfg listing the address of "
                 "every node of the NVLink domain; then re-run",
       .source = k_imex_guide,
       .explanation =
           "On a GB200/GB300 NVL compute tray the host Fabric Manager does not run; the "
           "host-side piece of the multi-node NVLink fabric is the IMEX daemon (nvidia-imex), "
           "which exchanges the memory exported over the fabric between the trays of the "
           "domain. Without it, importing another tray's memory fails, so multi-node NVLink "
           "jobs fail while work within this tray runs, hence a warning. Inside a container "
           "whose process table is not the host's, the daemon cannot be seen and nothing is "
           "said. Confirm by hand: `systemctl status nvidia-imex` and `nvidia-imex-ctl -N`.",
       .evidence = "The GPU models (GB200/GB300) and the PCI bus without an NVSwitch; the process "
                   "table (/proc/<pid>/comm nvidia-imex) when it is the host's; the GPUs whose "
                   "fabric allocation the CUDA child saw refused while a channel this user may "
                   "open exists.",
       .reads = {ProbeId::driver, ProbeId::pcie, ProbeId::services},
       .cases = {fires("imex-gb200-no-service"), silent("imex-gb200-ready")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto tray = service_missing_tray(c.facts);
         if (!tray) {
           return {};
         }
         Hit hit{"GB200/GB300 compute tray without the IMEX daemon (nvidia-imex): memory "
                 "exported over the multi-node NVLink fabric cannot be imported by another "
                 "tray; work within this tray is unaffected",
                 {*tray, "/proc/*/comm: no nvidia-imex process"}};
         // Refusals the host blames on the daemon (the channel is there and may be opened) are
         // this row's evidence, not a second finding (imex.fabric-allocation-refused).
         if (fabric_cause(c.facts) == FabricCause::no_daemon) {
           add_refusals(c, fabric_refusals(c.facts), hit.evidence);
         }
         return {std::move(hit)};
       }},
      {.id = "imex.fabric-allocation-refused",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "A GPU that supports fabric handles can allocate fabric-shareable memory",
       .remedy = "Act on what the host lacks: create an IMEX channel "
                 "(/dev/nvidia-caps-imex-channels/channel0, major from the "
                 "nvidia-caps-imex-channels line of /proc/devices), let the job's user open it, "
                 "start nvidia-fabricmanager on an NVSwitch host, start the IMEX daemon "
                 "(`systemctl enable --now nvidia-imex`) with the domain's node list; then re-run",
       .source = k_imex_channels_doc,
       .explanation =
           "The CUDA child asks each GPU for CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED and, "
           "where it is 1, allocates one granule with cuMemCreate requesting a fabric handle "
           "(CU_MEM_HANDLE_TYPE_FABRIC), as NCCL's multi-node NVLink transport does, and "
           "releases it at once. The attribute says what the GPU and driver can do; the "
           "allocation also needs an IMEX channel the process can open "
           "(/dev/nvidia-caps-imex-channels/channelN, else CUDA_ERROR_NOT_PERMITTED) and, on a "
           "multi-node NVLink domain, the IMEX daemon. A refusal means multi-node NVLink jobs "
           "fail while work within the node runs, hence a warning. The remedy names what the "
           "host facts show missing. One finding per cause: on a GB200/GB300 compute tray "
           "without a channel, or without the daemon, imex.channel-missing or "
           "imex.service-not-running reports the refusal in its evidence and this row stays "
           "silent. CUDA_ERROR_OUT_OF_MEMORY is not judged (memory another process holds). "
           "Confirm by hand: `ls -l /dev/nvidia-caps-imex-channels/`, `systemctl status "
           "nvidia-imex`, and the job's NCCL log with NCCL_DEBUG=INFO.",
       .evidence = "The CUDA child's fabric allocation probe per GPU (the attribute, the call "
                   "refused and its CUresult with CUDA's meaning); the IMEX channels and whether "
                   "this user may open them (stat, faccessat R_OK|W_OK); the nvidia-imex and "
                   "nv-fabricmanager processes; NVSwitches on the PCI bus.",
       .reads = {ProbeId::cuda, ProbeId::services, ProbeId::devices},
       .cases = {fires("imex-gb200-channel-denied"), silent("imex-gb200-fabric-ok")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto refusals = fabric_refusals(c.facts);
         if (refusals.empty()) {
           return {};
         }
         const auto& s = c.facts.topology.services;
         const FabricCause cause = fabric_cause(c.facts);
         // One finding per cause: where imex.channel-missing or imex.service-not-running fires
         // for the cause the host shows, that row carries the refusals as its evidence (the live
         // proof of its judgement) and this one stays silent. This row speaks where no host-side
         // row explains the refusal: a channel this user cannot open, a host that is not a
         // recognised compute tray (an NVSwitch host, another model), a daemon hidden from a
         // container, or nothing the host facts show.
         if ((cause == FabricCause::no_channel && channel_missing_tray(c.facts)) ||
             (cause == FabricCause::no_daemon && service_missing_tray(c.facts))) {
           return {};
         }
         Hit hit{fmt::format("{} refused a fabric-handle allocation: memory shared over the "
                             "multi-node NVLink fabric (NCCL's multi-node NVLink transport) "
                             "will fail",
                             refusals.size() == 1
                                 ? std::string("A GPU that says it supports fabric handles was")
                                 : fmt::format("{} GPUs that say they support fabric handles were",
                                               refusals.size())),
                 {}};
         add_refusals(c, refusals, hit.evidence);
         switch (cause) {
         case FabricCause::no_channel:
           hit.evidence.push_back(imex_device_evidence(s));
           hit.evidence.push_back("/dev/nvidia-caps-imex-channels: no channelN entry");
           hit.remedy = fmt::format(
               "Create IMEX channel 0 as root: `mkdir -p /dev/nvidia-caps-imex-channels && mknod "
               "/dev/nvidia-caps-imex-channels/channel0 c {} 0` ({}); channels do not survive a "
               "reboot, so create it at boot (or load the open module with "
               "NVreg_CreateImexChannel0=1 where every job may share one channel)",
               s.imex_major ? std::to_string(*s.imex_major) : std::string("<major>"),
               s.imex_major ? fmt::format("major {} from /proc/devices", *s.imex_major)
                            : std::string("the major being the nvidia-caps-imex-channels line of "
                                          "/proc/devices"));
           break;
         case FabricCause::channel_denied: {
           std::vector<std::string> paths;
           for (const DeviceNodeFact* node : channels_denied(c.facts)) {
             hit.evidence.push_back(
                 fmt::format("{}; this user cannot open it read-write", node_evidence(*node)));
             paths.push_back("/" + node->path);
           }
           hit.remedy = fmt::format(
               "Let the job's user open the IMEX channel: {} is not readable and writable for it "
               "(`ls -l /dev/nvidia-caps-imex-channels/`); give the channel a mode or group that "
               "admits the job's user (in a container, pass the channel device through), or "
               "create a channel of its own for it",
               join_some(paths));
           break;
         }
         case FabricCause::fabric_manager:
           hit.evidence.push_back(fmt::format(
               "NVSwitches on this host ({}); /proc/*/comm: no nv-fabricmanager process",
               join_some(s.nvswitch_nodes.empty() ? c.facts.topology.pcie.nvswitches
                                                  : s.nvswitch_nodes)));
           hit.remedy = "Start the host Fabric Manager of the driver's branch: `systemctl enable "
                        "--now nvidia-fabricmanager`; then re-run";
           break;
         case FabricCause::no_daemon:
           hit.evidence.push_back("/proc/*/comm: no nvidia-imex process");
           hit.remedy = "Start the IMEX daemon of the driver's branch: `systemctl enable --now "
                        "nvidia-imex`, with /etc/nvidia-imex/nodes_config.cfg listing the "
                        "address of every node of the NVLink domain; then re-run";
           break;
         case FabricCause::daemon_unseen:
           hit.evidence.push_back(
               "the process table is not the host's (a container): nvidia-imex cannot be seen");
           hit.remedy = "On the host, check that the IMEX daemon runs (`systemctl status "
                        "nvidia-imex`, `nvidia-imex-ctl -N`) and that the container is given an "
                        "IMEX channel (/dev/nvidia-caps-imex-channels/channelN) it may open";
           break;
         case FabricCause::unknown:
           hit.evidence.push_back(
               fmt::format("the host shows an IMEX channel ({}) and the IMEX daemon",
                           join_some(s.imex_channels)));
           hit.remedy = "Check the IMEX domain: `nvidia-imex-ctl -N` (every node of "
                        "/etc/nvidia-imex/nodes_config.cfg connected), the daemon's log "
                        "(/var/log/nvidia-imex.log), and that the channel's number is one the "
                        "domain grants to this job; then re-run";
           break;
         }
         return {std::move(hit)};
       }},
  };
  return rows;
}

} // namespace gpf
