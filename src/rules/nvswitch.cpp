// Rules whose id starts with "nvswitch.": NVSwitch systems: Fabric Manager present, running and
// matching the driver.
#include "common.hpp"

namespace gpf {
namespace {

std::vector<std::string> nvswitch_evidence(const TopologyFacts& t) {
  std::vector<std::string> evidence;
  std::size_t dropped = 0;
  for (const auto& node : t.services.nvswitch_nodes) {
    add_capped(evidence, "/" + node + ": exists", dropped);
  }
  for (const auto& bus : t.pcie.nvswitches) {
    add_capped(evidence,
               fmt::format("/sys/bus/pci/devices/{}: vendor 0x10de, class 0x0680 (NVSwitch)", bus),
               dropped);
  }
  if (dropped > 0) {
    evidence.push_back(fmt::format("... and {} more", dropped));
  }
  return evidence;
}

bool has_nvswitch(const TopologyFacts& t) {
  return !t.services.nvswitch_nodes.empty() || !t.pcie.nvswitches.empty();
}

constexpr std::string_view k_fm_guide =
    "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html";

// The current boot's SXid events the row being evaluated judges, one hit each, naming the
// GPUs of the fabric (every GPU the driver lists: on an NVSwitch baseboard they all talk through
// the switches).
std::vector<Hit> sxid_hits(const RuleContext& c) {
  std::vector<Hit> hits;
  std::vector<std::string> gpus;
  for (const auto& g : c.facts.gpus) {
    gpus.push_back(c.job.label(g.bus_id));
  }
  for (const auto& e : c.facts.log.host_events) {
    if (e.kind != LogEventKind::sxid || !c.rule->events.judges(e)) {
      continue;
    }
    const EventPtrs one{&e};
    const SxidInfo* info = e.sxid ? find_sxid(*e.sxid) : nullptr;
    Hit hit{fmt::format("{}{}{}", describe(one), gpus.empty() ? "" : "; the NVLink fabric of ",
                        gpus.empty() ? std::string() : join(gpus)),
            evidence_of(one)};
    if (info && info->cls == SxidClass::harmless) {
      hit.severity = Severity::info;
      hit.remedy = "Nothing to do: NVIDIA's SXid catalog says this one is corrected or can be "
                   "safely ignored";
    } else if (info && info->cls == SxidClass::degraded) {
      hit.remedy = fmt::format(
          "Watch for it in later runs; NVLink bandwidth through {} may be lower. For thermal "
          "events, check the system's cooling",
          e.detail);
    } else if (info && info->cls == SxidClass::stalled) {
      hit.remedy = fmt::format(
          "Reset the GPUs and NVSwitches of the fabric (stop the jobs and nv-fabricmanager, "
          "`nvidia-smi -r`, or reboot the node): NVLink traffic through the port of {} stays "
          "stalled until then",
          e.detail);
    }
    hits.push_back(std::move(hit));
  }
  return hits;
}

} // namespace

std::span<const Rule> nvswitch_rules() {
  static const Rule rows[] = {
      {.id = "nvswitch.fabric-manager-missing",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "nv-fabricmanager runs on a host with NVSwitches",
       .remedy =
           "Install and start the Fabric Manager of the driver's exact version: `systemctl enable --now nvidia-fabricmanager` (package nvidia-fabricmanager-<branch>)",
       .source = "docs/sources.md#fabric-manager",
       .explanation =
           "On HGX/DGX systems with NVSwitches the NVLink fabric is set up by the Fabric Manager daemon. Until it runs, CUDA initialisation fails with CUDA_ERROR_SYSTEM_NOT_READY (802) and the GPUs report their fabric state as not completed.",
       .evidence =
           "NVSwitches: /dev/nvidia-nvswitch<N> nodes or NVIDIA PCI devices of class 0x0680; the process table (/proc/<pid>/comm, where the name shows as nv-fabricmanage).",
       .reads = {ProbeId::services},
       .cases = {fires("topo-nvswitch-no-fm"), silent("topo-nvswitch-container")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& t = c.facts.topology;
         if (!has_nvswitch(t) || !sees_host_processes(t.services) ||
             !t.services.fabric_manager.empty()) {
           return {};
         }
         auto evidence = nvswitch_evidence(t);
         evidence.push_back("/proc/*/comm: no nv-fabricmanager process (comm \"nv-fabricmanage\")");
         return {
             {"NVSwitches are present but nv-fabricmanager is not running: CUDA initialisation fails with CUDA_ERROR_SYSTEM_NOT_READY (802) until the NVLink fabric is set up",
              std::move(evidence)}};
       }},
      {.id = "nvswitch.fabric-manager-unchecked",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Whether nv-fabricmanager runs could be checked on a host with NVSwitches",
       .remedy = "Check on the host itself: `systemctl status nvidia-fabricmanager`",
       .source = "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/",
       .explanation =
           "Inside a container's PID namespace the host's processes are invisible, so a missing nv-fabricmanager there proves nothing; the check says it was not made.",
       .evidence =
           "NVSwitches as for nvswitch.fabric-manager-missing; /proc/1/comm (systemd or init on a host).",
       .reads = {ProbeId::services},
       .cases = {fires("topo-nvswitch-container"), silent("topo-nvswitch-fm-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& t = c.facts.topology;
         if (!has_nvswitch(t) || !t.services.ran || sees_host_processes(t.services) ||
             !t.services.fabric_manager.empty()) {
           return {};
         }
         auto evidence = nvswitch_evidence(t);
         evidence.push_back(
             t.services.init_comm
                 ? fmt::format("/proc/1/comm: {}", quote_evidence(*t.services.init_comm, 64))
                 : std::string("/proc/1/comm: not readable"));
         return {
             {"NVSwitches are present, but this process table is not the host's (a container's PID namespace), so whether nv-fabricmanager runs on the host was not checked",
              std::move(evidence)}};
       }},
      {.id = "nvswitch.fabric-manager-version",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "nv-fabricmanager has the driver's version",
       .remedy =
           "Install the Fabric Manager package of exactly the driver's version (e.g. nvidia-fabricmanager-550=550.54.14-1) and restart it, or reboot into the driver that matches it",
       .source = "docs/sources.md#fabric-manager",
       .explanation =
           "Fabric Manager must have exactly the driver's version; a different one refuses to start, and CUDA initialisation then fails with 802.",
       .evidence =
           "The installed nvidia-fabricmanager package in the Debian package database (var/lib/dpkg/status), against the driver version; RPM databases are not read.",
       .reads = {ProbeId::services, ProbeId::driver},
       .cases = {fires("topo-nvswitch-fm-mismatch"), silent("topo-nvswitch-container")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& s = c.facts.topology.services;
         const auto& d = c.facts.driver;
         if (!s.fabric_manager_version || !d.version || s.fabric_manager.empty()) {
           return {};
         }
         const auto fm = Version::parse(*s.fabric_manager_version);
         if (!fm || *fm == *d.version) {
           return {};
         }
         return {
             {fmt::format(
                  "nv-fabricmanager {} does not match the driver {}: Fabric Manager refuses to run against another driver version, and CUDA then fails with CUDA_ERROR_SYSTEM_NOT_READY (802)",
                  *s.fabric_manager_version, d.version_text),
              {s.fabric_manager_version_source, "/" + d.version_source + ": " + d.version_text}}};
       }},
      {.id = "nvswitch.sxid-fatal",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "No NVSwitch reported a fatal SXid since boot",
       .remedy =
           "Reset the NVLink fabric: stop the jobs and nv-fabricmanager, reset all GPUs and NVSwitches (or reboot the node), then start nv-fabricmanager again",
       .source = k_fm_guide,
       .explanation =
           "NVSwitch errors are logged as SXids (`nvidia-nvswitchN: SXid (PCI:…): <code>, …`, three lines per error). NVIDIA's SXid catalog in the Fabric Manager User Guide says which are fatal to the fabric: after one, NVLink traffic through the switch fails (the GPUs see Xid 74/45) until the GPUs and NVSwitches are reset. The catalog decides, not the word in the line; an SXid the catalog does not list follows its line's own word (Fatal is fatal). Only the current boot counts: a reboot resets the fabric, and SXids of earlier boots are information (log.earlier-boot).",
       .evidence = "The SXid lines of the current boot's kernel log.",
       .reads = {ProbeId::kernel_log},
       .events = sxid_events(true),
       .cases = {fires("log-sxid-fatal"), silent("log-sxid-earlier-boot")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return sxid_hits(c); }},
      {.id = "nvswitch.sxid-nonfatal",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for SXids the catalog calls corrected or safe to ignore (e.g. 22013)",
       .title = "No NVSwitch reported a non-fatal SXid that needs attention since boot",
       .remedy = "Follow the finding: the SXid catalog's action for that code",
       .source = k_fm_guide,
       .explanation =
           "Non-fatal SXids differ widely: some stall NVLink traffic through a port until the fabric is reset (12028, 11004: jobs hang with Xid 45), some cost NVLink throughput (replays, thermal single-lane mode), and some are corrected by the hardware or logged at every link training and can be safely ignored (single-bit ECC, 22013). A flat 'non-fatal is a warning' would warn on every boot of some hosts, so the catalog's class decides: harmless ones are information. An SXid the catalog does not list is a warning unless its line says Fatal.",
       .evidence = "The SXid lines of the current boot's kernel log.",
       .reads = {ProbeId::kernel_log},
       .events = sxid_events(false),
       .cases = {fires("log-sxid-earlier-boot"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return sxid_hits(c); }},
  };
  return rows;
}

} // namespace gpf
