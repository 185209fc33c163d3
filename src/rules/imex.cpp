// Rules whose id starts with "imex.": the host-side pieces a GB200/GB300 NVL compute tray needs
// for memory shared over the multi-node NVLink fabric: an IMEX channel and the IMEX daemon.
// Facts: NVreg_ImexChannelCount and NVreg_CreateImexChannel0 in
// https://github.com/NVIDIA/open-gpu-kernel-modules/blob/595.45.04/kernel-open/nvidia/nv-reg.h
// (the driver never creates the channel nodes; without one the fabric-handle APIs fail with
// insufficient permission); the IMEX guide for the daemon and its node list.
#include "common.hpp"

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
                   "dev/nvidia-caps-imex-channels/.",
       .reads = {ProbeId::driver, ProbeId::pcie, ProbeId::services},
       .cases = {fires("imex-gb200-no-channel"), silent("imex-gb200-ready")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& s = c.facts.topology.services;
         const auto tray = nvl_compute_tray(c.facts);
         if (!tray || !c.facts.driver.loaded || !s.ran || !s.imex_channels.empty()) {
           return {};
         }
         Hit hit{
             "GB200/GB300 compute tray without an IMEX channel: memory shared over the "
             "multi-node NVLink fabric (cuMemCreate with a fabric handle) fails with "
             "CUDA_ERROR_NOT_PERMITTED; work within this tray is unaffected",
             {*tray, imex_device_evidence(s), "/dev/nvidia-caps-imex-channels: no channelN entry"}};
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
                   "table (/proc/<pid>/comm nvidia-imex) when it is the host's.",
       .reads = {ProbeId::driver, ProbeId::pcie, ProbeId::services},
       .cases = {fires("imex-gb200-no-service"), silent("imex-gb200-ready")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& s = c.facts.topology.services;
         const auto tray = nvl_compute_tray(c.facts);
         if (!tray || !c.facts.driver.loaded || !sees_host_processes(s) || !s.imex.empty()) {
           return {};
         }
         return {{"GB200/GB300 compute tray without the IMEX daemon (nvidia-imex): memory "
                  "exported over the multi-node NVLink fabric cannot be imported by another "
                  "tray; work within this tray is unaffected",
                  {*tray, "/proc/*/comm: no nvidia-imex process"}}};
       }},
  };
  return rows;
}

} // namespace gpf
