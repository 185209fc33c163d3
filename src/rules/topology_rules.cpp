// Rows for the real causes of multi-GPU hangs and slow starts (docs/multi-gpu-hangs.md): PCIe ACS
// and the IOMMU, /dev/shm and memlock, NVSwitch Fabric Manager, persistence, GSP firmware files,
// hazards in the job environment and compute modes. Facts and sources:
// ../shared/reference/nvidia-facts.md §11, §10b, §10c, §6d, §7.
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/topology.hpp"
#include "gpf/rules/verdict.hpp"
#include "gpf/facts/visible_devices.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace gpf {
namespace {

constexpr std::string_view k_src_nccl =
    "nvidia-facts.md §11 (NCCL user guide, Troubleshooting: GPU Direct, PCI Access Control Services, IOMMU; "
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)";
constexpr std::string_view k_src_env = "nvidia-facts.md §10c (CUDA Programming Guide, environment variables)";
constexpr std::uint64_t k_shm_minimum = 1ull << 30;
constexpr double k_slow_init_ms = 1000;
constexpr std::size_t k_max_lines = 8;

std::string bytes_text(std::uint64_t bytes) {
  constexpr std::pair<std::uint64_t, std::string_view> units[] = {{1ull << 30, "GiB"}, {1ull << 20, "MiB"}, {1ull << 10, "KiB"}};
  for (const auto& [size, name] : units) {
    if (bytes >= size) {
      const double v = static_cast<double>(bytes) / static_cast<double>(size);
      return bytes % size == 0 ? fmt::format("{} {}", bytes / size, name) : fmt::format("{:.1f} {}", v, name);
    }
  }
  return fmt::format("{} bytes", bytes);
}

std::string join(const std::vector<std::string>& items) { return fmt::format("{}", fmt::join(items, ", ")); }

// At most k_max_lines lines, the rest counted.
void add_capped(std::vector<std::string>& evidence, std::string line, std::size_t& dropped) {
  if (evidence.size() < k_max_lines) {
    evidence.push_back(std::move(line));
  } else {
    ++dropped;
  }
}

// ---- PCIe / ACS ----------------------------------------------------------------------------------

std::vector<Hit> acs_redirect(const RuleContext& c) {
  const auto gpus = job_gpus(c);
  const auto& t = c.facts.topology;
  std::map<std::string, std::set<std::string>> peers; // bridge -> GPUs whose traffic it redirects
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      for (const PciBridge* bridge : acs_redirects_between(t, gpus[i], gpus[j])) {
        peers[bridge->bus_id].insert(gpus[i]);
        peers[bridge->bus_id].insert(gpus[j]);
      }
    }
  }
  std::vector<Hit> hits;
  for (const auto& [bus, involved] : peers) {
    const PciBridge& bridge = t.pcie.bridges.at(bus);
    std::vector<std::string> below;
    std::vector<std::string> others;
    for (const auto& g : involved) {
      const auto* path = find_gpu_path(t, g);
      const bool under = path && std::find(path->bridges.begin(), path->bridges.end(), bus) != path->bridges.end();
      (under ? below : others).push_back(g);
    }
    const std::string pair_text =
        others.empty() ? fmt::format("between GPUs {}", join(below)) : fmt::format("between GPU(s) {} and {}", join(below), join(others));
    Hit hit{fmt::format("ACS redirect is enabled on {} {} above GPU(s) {}: peer-to-peer traffic {} is sent up to the root "
                        "complex instead of across the switch (slow, and a hang when the root complex or the IOMMU does not "
                        "pass it on)",
                        port_kind(bridge), bus, join(below), pair_text),
            {acs_evidence(bridge)}};
    hit.remedy = fmt::format("Disable ACS on {0}: in the BIOS (PCIe ACS / \"ACS Control\" off), or as root at every boot "
                             "with `setpci -s {0} ECAP_ACS+0x6.w=0000`; until then NCCL_P2P_DISABLE=1 avoids peer-to-peer "
                             "copies at a bandwidth cost. Keep ACS if the host passes GPUs to VMs (it isolates them)",
                             bus);
    hits.push_back(std::move(hit));
  }
  return hits;
}

std::vector<Hit> acs_not_checked(const RuleContext& c) {
  const auto gpus = job_gpus(c);
  const auto& t = c.facts.topology;
  std::set<std::string> unknown;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      for (const auto& bus : bridges_between(t, gpus[i], gpus[j])) {
        const auto it = t.pcie.bridges.find(bus);
        if (it != t.pcie.bridges.end() && it->second.config.acs_state == AcsState::unknown) {
          unknown.insert(bus);
        }
      }
    }
  }
  if (unknown.empty()) {
    return {};
  }
  std::vector<std::string> evidence;
  std::size_t dropped = 0;
  for (const auto& bus : unknown) {
    add_capped(evidence, acs_evidence(t.pcie.bridges.at(bus)), dropped);
  }
  if (dropped > 0) {
    evidence.push_back(fmt::format("... and {} more bridges", dropped));
  }
  return {{fmt::format("ACS on {} bridge(s) between the GPUs was not checked: their extended configuration space could "
                       "not be read",
                       unknown.size()),
           std::move(evidence)}};
}

std::vector<Hit> gpu_pairs_share_switch(const RuleContext& c) {
  const auto gpus = job_gpus(c);
  const auto& t = c.facts.topology;
  std::map<std::string, std::set<std::string>> groups; // deepest shared bridge -> GPUs
  std::size_t apart = 0;
  std::size_t known_pairs = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      const auto between = bridges_between(t, gpus[i], gpus[j]);
      const auto shared = shared_bridge(t, gpus[i], gpus[j]);
      if (between.empty() && shared.empty()) {
        continue; // a path is unknown
      }
      ++known_pairs;
      if (shared.empty()) {
        ++apart;
      } else {
        groups[shared].insert(gpus[i]);
        groups[shared].insert(gpus[j]);
      }
    }
  }
  if (known_pairs == 0) {
    return {};
  }
  std::vector<std::string> evidence;
  for (const auto& [bus, members] : groups) {
    const auto it = t.pcie.bridges.find(bus);
    const std::string kind = it == t.pcie.bridges.end() ? "bridge" : port_kind(it->second);
    evidence.push_back(fmt::format("{} {}: GPUs {}", kind, bus, join({members.begin(), members.end()})));
  }
  if (apart > 0) {
    evidence.push_back(fmt::format("{} GPU pair(s) share no PCIe bridge: their traffic crosses the CPU's root complex", apart));
  }
  return {{groups.empty() ? std::string("No two GPUs share a PCIe switch or port: peer-to-peer traffic crosses the root complex")
                          : fmt::format("{} group(s) of GPUs share a PCIe switch or port", groups.size()),
           std::move(evidence)}};
}

// ---- IOMMU ---------------------------------------------------------------------------------------

std::vector<Hit> iommu_not_passthrough(const RuleContext& c) {
  const auto gpus = job_gpus(c);
  const auto& t = c.facts.topology;
  if (gpus.size() < 2) {
    return {};
  }
  std::vector<std::string> translated;
  std::vector<std::string> evidence;
  std::set<std::string> groups_seen;
  for (const auto& g : gpus) {
    if (iommu_translates(t, g) != true) {
      continue;
    }
    translated.push_back(g);
    const auto* path = find_gpu_path(t, g);
    if (path && path->iommu_group && groups_seen.insert(*path->iommu_group).second &&
        evidence.size() < k_max_lines / 2) {
      if (auto type = t.iommu.group_type.find(*path->iommu_group); type != t.iommu.group_type.end()) {
        evidence.push_back(fmt::format("/sys/kernel/iommu_groups/{}/type: {} (GPU {})", *path->iommu_group, type->second, g));
      }
    }
  }
  if (translated.empty()) {
    return {};
  }
  if (t.iommu.groups) {
    evidence.push_back(fmt::format("/sys/kernel/iommu_groups: {} groups", *t.iommu.groups));
  }
  if (t.iommu.cmdline) {
    evidence.push_back("/proc/cmdline: " + quote_evidence(*t.iommu.cmdline, 300));
  }
  Hit hit;
  hit.evidence = std::move(evidence);
  if (t.iommu.hypervisor == true) {
    hit.severity = Severity::info;
    hit.evidence.push_back("/proc/cpuinfo flags: hypervisor");
    hit.message = fmt::format("This is a virtual machine and its IOMMU translates the DMA of {} GPU(s): peer-to-peer between "
                              "passed-through GPUs depends on the host's IOMMU and ACS settings, which the guest can neither "
                              "see nor change",
                              translated.size());
    hit.remedy = "If multi-GPU jobs hang or are slow here, run with NCCL_P2P_DISABLE=1 and ask the provider for an instance "
                 "type with GPU peer-to-peer support";
  } else {
    hit.message = fmt::format("The IOMMU translates the DMA of {} GPU(s) (not passthrough) on bare metal: peer-to-peer traffic "
                              "is redirected through the root complex, which makes NCCL slow or hang",
                              translated.size());
  }
  return {hit};
}

// ---- /dev/shm and memlock ------------------------------------------------------------------------

std::vector<Hit> shm_too_small(const RuleContext& c) {
  const auto& shm = c.facts.topology.shm;
  const auto gpus = job_gpus(c);
  if (!shm.ran || gpus.size() < 2) {
    return {};
  }
  std::vector<std::string> evidence;
  std::string message;
  if (!shm.exists) {
    message = fmt::format("/dev/shm does not exist and {} GPUs pass their own checks: NCCL's shared-memory transport and DataLoader "
                          "workers cannot work",
                          gpus.size());
    evidence.push_back("/dev/shm: No such file or directory");
  } else if (shm.size_bytes && *shm.size_bytes < k_shm_minimum) {
    message = fmt::format("/dev/shm is {} and {} GPUs pass their own checks: NCCL needs shared-memory segments per rank and fails "
                          "with \"No space left on device\" (or hangs) when it is full",
                          bytes_text(*shm.size_bytes), gpus.size());
    evidence.push_back(fmt::format("statvfs(/dev/shm): size {} bytes, {} bytes available", *shm.size_bytes,
                                   shm.available_bytes.value_or(0)));
  } else {
    return {};
  }
  if (shm.mount_line) {
    evidence.push_back("/proc/mounts: " + quote_evidence(*shm.mount_line, 300));
  }
  return {{std::move(message), std::move(evidence)}};
}

std::vector<Hit> memlock_low(const RuleContext& c) {
  const auto& shm = c.facts.topology.shm;
  if (shm.rdma_devices.empty() || shm.memlock_unlimited || !shm.memlock_soft || !shm.memlock_line) {
    return {};
  }
  return {{fmt::format("The locked-memory limit is {} while RDMA devices exist: GPUDirect RDMA and InfiniBand transports pin "
                       "memory and fail under a low limit",
                       bytes_text(*shm.memlock_soft)),
           {"/proc/self/limits: " + quote_evidence(*shm.memlock_line, 200),
            "/sys/class/infiniband: " + quote_evidence(join(shm.rdma_devices), 200)}}};
}

// ---- NVSwitch / Fabric Manager -------------------------------------------------------------------

std::vector<std::string> nvswitch_evidence(const TopologyFacts& t) {
  std::vector<std::string> evidence;
  std::size_t dropped = 0;
  for (const auto& node : t.services.nvswitch_nodes) {
    add_capped(evidence, "/" + node + ": exists", dropped);
  }
  for (const auto& bus : t.pcie.nvswitches) {
    add_capped(evidence, fmt::format("/sys/bus/pci/devices/{}: vendor 0x10de, class 0x0680 (NVSwitch)", bus), dropped);
  }
  if (dropped > 0) {
    evidence.push_back(fmt::format("... and {} more", dropped));
  }
  return evidence;
}

bool has_nvswitch(const TopologyFacts& t) { return !t.services.nvswitch_nodes.empty() || !t.pcie.nvswitches.empty(); }

bool sees_host_processes(const ServiceFacts& s) { return s.process_table && s.host_process_table(); }

std::vector<Hit> fabric_manager_missing(const RuleContext& c) {
  const auto& t = c.facts.topology;
  if (!has_nvswitch(t) || !sees_host_processes(t.services) || !t.services.fabric_manager.empty()) {
    return {};
  }
  auto evidence = nvswitch_evidence(t);
  evidence.push_back("/proc/*/comm: no nv-fabricmanager process (comm \"nv-fabricmanage\")");
  return {{"NVSwitches are present but nv-fabricmanager is not running: CUDA initialisation fails with "
           "CUDA_ERROR_SYSTEM_NOT_READY (802) until the NVLink fabric is set up",
           std::move(evidence)}};
}

std::vector<Hit> fabric_manager_unchecked(const RuleContext& c) {
  const auto& t = c.facts.topology;
  if (!has_nvswitch(t) || !t.services.ran || sees_host_processes(t.services) || !t.services.fabric_manager.empty()) {
    return {};
  }
  auto evidence = nvswitch_evidence(t);
  evidence.push_back(t.services.init_comm ? fmt::format("/proc/1/comm: {}", quote_evidence(*t.services.init_comm, 64))
                                          : std::string("/proc/1/comm: not readable"));
  return {{"NVSwitches are present, but this process table is not the host's (a container's PID namespace), so whether "
           "nv-fabricmanager runs on the host was not checked",
           std::move(evidence)}};
}

std::vector<Hit> fabric_manager_version(const RuleContext& c) {
  const auto& s = c.facts.topology.services;
  const auto& d = c.facts.driver;
  if (!s.fabric_manager_version || !d.version || s.fabric_manager.empty()) {
    return {};
  }
  const auto fm = Version::parse(*s.fabric_manager_version);
  if (!fm || *fm == *d.version) {
    return {};
  }
  return {{fmt::format("nv-fabricmanager {} does not match the driver {}: Fabric Manager refuses to run against another "
                       "driver version, and CUDA then fails with CUDA_ERROR_SYSTEM_NOT_READY (802)",
                       *s.fabric_manager_version, d.version_text),
           {s.fabric_manager_version_source, "/" + d.version_source + ": " + d.version_text}}};
}

// ---- persistence ---------------------------------------------------------------------------------

double device_init_ms(const CudaDevice& d) {
  double ms = 0;
  for (const auto& step : d.steps) {
    if (step.name == "cuInit" || step.name == "primary_context") {
      ms += step.duration_ms;
    }
  }
  return ms;
}

std::vector<Hit> persistence_not_running(const RuleContext& c) {
  const auto& cuda = c.facts.cuda;
  const auto& s = c.facts.topology.services;
  if (!cuda.ran || !sees_host_processes(s) || !s.persistenced.empty()) {
    return {};
  }
  std::vector<std::string> evidence;
  if (cuda.init.ok && cuda.init.duration_ms >= k_slow_init_ms) {
    evidence.push_back(fmt::format("cuInit (enumeration): {:.0f} ms", cuda.init.duration_ms));
  }
  for (const auto& d : cuda.devices) {
    if (const double ms = device_init_ms(d); ms >= k_slow_init_ms && evidence.size() < k_max_lines) {
      evidence.push_back(fmt::format("GPU {} (CUDA {}): cuInit + primary context {:.0f} ms", d.bus_id, d.index, ms));
    }
  }
  if (evidence.empty()) {
    return {};
  }
  evidence.push_back("/proc/*/comm: no nvidia-persistenced process (comm \"nvidia-persiste\")");
  return {{"CUDA start-up is slow and nvidia-persistenced is not running: without it the driver tears GPU state down when "
           "the last client exits, and every job start pays the full initialisation",
           std::move(evidence)}};
}

// ---- GSP firmware files --------------------------------------------------------------------------

bool gsp_in_use(const GpuFacts& g) { return g.firmware && !g.firmware->empty() && *g.firmware != "N/A"; }

std::vector<Hit> gsp_firmware_missing(const RuleContext& c) {
  const auto& fw = c.facts.topology.firmware;
  const auto& driver = c.facts.driver;
  if (!fw.ran) {
    return {};
  }
  std::map<std::string, std::vector<std::string>> missing; // file ("" = any gsp_*.bin) -> GPUs
  std::vector<std::string> why;
  for (const auto& g : c.facts.gpus) {
    if (g.excluded == true || (driver.flavour != DriverFlavour::open && !gsp_in_use(g))) {
      continue;
    }
    std::optional<std::string> needed;
    const auto* path = find_gpu_path(c.facts.topology, g.bus_id);
    const bool id_known = path && path->device_id;
    const std::uint16_t device_id = id_known ? *path->device_id : 0;
    if (id_known) {
      needed = gsp_firmware_for_device(device_id);
      if (needed && needed->empty() && !gsp_in_use(g)) {
        continue; // pre-Turing: no GSP (the open module rejects it: another rule's finding)
      }
    }
    const std::string file = needed && !needed->empty() ? *needed : std::string();
    const bool present = file.empty() ? !fw.files.empty() : std::find(fw.files.begin(), fw.files.end(), file) != fw.files.end();
    if (present) {
      continue;
    }
    missing[file].push_back(g.bus_id);
    if (id_known && why.size() < 4) {
      why.push_back(fmt::format("GPU {}: PCI device 0x{:04x} loads {}", g.bus_id, device_id, file.empty() ? "a gsp_*.bin" : file));
    }
  }
  std::vector<Hit> hits;
  for (const auto& [file, gpus] : missing) {
    std::vector<std::string> evidence;
    evidence.push_back(fmt::format("looked in: /{}", fmt::join(fw.dirs_checked, ", /")));
    evidence.push_back(fw.files.empty() ? std::string("gsp_*.bin files found: none")
                                        : fmt::format("gsp_*.bin files found in /{}: {}", fw.found_in, join(fw.files)));
    evidence.push_back("/" + driver.version_source + ": " + driver.version_text +
                       (driver.flavour == DriverFlavour::open ? " (open kernel module)" : ""));
    evidence.insert(evidence.end(), why.begin(), why.end());
    Hit hit{fmt::format("GSP firmware {} for driver {} is missing: GPU(s) {} load it whenever they initialise and fail without "
                        "it (RmInitAdapter failed 0x61:0x56)",
                        file.empty() ? std::string("(gsp_*.bin)") : file, driver.version_text, join(gpus)),
            std::move(evidence)};
    hit.remedy = fmt::format("Reinstall the driver package that ships the firmware of {0} so that "
                             "/lib/firmware/nvidia/{0}/{1} exists (the firmware must be the kernel module's exact version), "
                             "then reload the driver or reboot",
                             driver.version_text, file.empty() ? "gsp_*.bin" : file);
    hits.push_back(std::move(hit));
  }
  return hits;
}

// ---- the job environment -------------------------------------------------------------------------

std::vector<Hit> visible_devices_duplicate(const RuleContext& c) {
  const auto value = c.facts.env.get("CUDA_VISIBLE_DEVICES");
  if (!value || trim(*value).empty()) {
    return {};
  }
  const auto space = gpu_index_space(c.facts);
  std::map<std::string, std::string> first; // key -> first entry naming it
  std::vector<std::string> repeats;
  for (auto raw : split(*value, ',')) {
    const std::string entry(trim(raw));
    const auto one = parse_visible_devices(entry, space);
    if (one.bus_ids.empty()) {
      break; // CUDA ignores this entry and the rest (env.cuda-visible-devices-unknown-entry)
    }
    std::string key = one.bus_ids.front();
    if (auto mig = parse_mig_reference(entry)) {
      key += fmt::format("/{}/{}", mig->gpu_instance, mig->compute_instance); // instances of one GPU differ
    }
    const auto [it, inserted] = first.emplace(key, entry);
    if (!inserted) {
      repeats.push_back(fmt::format("GPU {} is named by \"{}\" and \"{}\"", one.bus_ids.front(), quote_evidence(it->second, 80),
                                    quote_evidence(entry, 80)));
    }
  }
  if (repeats.empty()) {
    return {};
  }
  std::vector<std::string> evidence{"CUDA_VISIBLE_DEVICES=" + quote_evidence(*value, 300)};
  evidence.insert(evidence.end(), repeats.begin(), repeats.end());
  return {{fmt::format("CUDA_VISIBLE_DEVICES names the same GPU more than once ({} repeat(s))", repeats.size()), std::move(evidence)}};
}

std::vector<Hit> mig_instance_unknown(const RuleContext& c) {
  std::vector<Hit> hits;
  for (const auto& mig : c.facts.topology.mig_entries) {
    if (mig.exists != false) {
      continue;
    }
    hits.push_back({fmt::format("CUDA_VISIBLE_DEVICES entry \"{}\" names a MIG instance that does not exist on GPU {}: CUDA "
                                "ignores it and every entry after it",
                                quote_evidence(mig.entry, 120), mig.bus_id.value_or("?")),
                    {"/" + mig.path + ": No such file or directory",
                     "CUDA_VISIBLE_DEVICES=" + quote_evidence(c.facts.env.get("CUDA_VISIBLE_DEVICES").value_or(""), 300)},
                    mig.bus_id});
  }
  return hits;
}

std::vector<Hit> device_order_ambiguous(const RuleContext& c) {
  std::map<std::string, int> models;
  for (const auto& g : c.facts.gpus) {
    if (g.model && g.excluded != true) {
      ++models[*g.model];
    }
  }
  const auto order = c.facts.env.get("CUDA_DEVICE_ORDER");
  if (models.size() < 2 || order == std::string("PCI_BUS_ID")) {
    return {};
  }
  // Only indices are ambiguous: unset, every GPU is used (only the numbering differs, and
  // gpu-preflight's own recommendation exports PCI_BUS_ID); UUIDs name GPUs unambiguously.
  // Named: split() returns views into it, and a temporary would die before the loop body runs.
  const std::string visible = c.facts.env.get("CUDA_VISIBLE_DEVICES").value_or("");
  bool indices = false;
  for (auto entry : split(visible, ',')) {
    indices = indices || parse_uint(trim(entry)).has_value();
  }
  if (!indices) {
    return {};
  }
  std::vector<std::string> mix;
  for (const auto& [model, n] : models) {
    mix.push_back(fmt::format("{} x{}", quote_evidence(model, 80), n));
  }
  return {{fmt::format("GPUs of different models ({}) and CUDA_DEVICE_ORDER is not PCI_BUS_ID: CUDA numbers the fastest "
                       "GPU first, so the indices in CUDA_VISIBLE_DEVICES may pick other GPUs than nvidia-smi's of the "
                       "same numbers",
                       join(mix)),
           {order ? "CUDA_DEVICE_ORDER=" + quote_evidence(*order, 80) : std::string("CUDA_DEVICE_ORDER is not set (FASTEST_FIRST)"),
            "CUDA_VISIBLE_DEVICES=" + quote_evidence(visible, 300)}}};
}

std::optional<std::string> set_value(const RuleContext& c, std::string_view name) {
  auto v = c.facts.env.get(name);
  if (!v || trim(*v).empty()) {
    return std::nullopt;
  }
  return v;
}

bool flag_on(const std::optional<std::string>& v) { return v && trim(*v) != "0"; }

std::vector<Hit> cuda_injection(const RuleContext& c) {
  const auto v = set_value(c, "CUDA_INJECTION64_PATH");
  if (!v) {
    return {};
  }
  return {{"CUDA_INJECTION64_PATH is set: every CUDA process of the job loads that library (a profiler's or debugger's "
           "injection), which slows start-up and kernels and breaks CUDA initialisation when the library is stale",
           {"CUDA_INJECTION64_PATH=" + quote_evidence(*v, 300)}}};
}

std::vector<Hit> launch_blocking(const RuleContext& c) {
  const auto v = set_value(c, "CUDA_LAUNCH_BLOCKING");
  if (!flag_on(v)) {
    return {};
  }
  return {{"CUDA_LAUNCH_BLOCKING is on: every kernel launch waits for the GPU to finish, a debugging setting that makes "
           "training many times slower",
           {"CUDA_LAUNCH_BLOCKING=" + quote_evidence(*v, 80)}}};
}

std::vector<Hit> nccl_disabled(const RuleContext& c, std::string_view name, std::string_view what) {
  const auto v = set_value(c, name);
  if (!flag_on(v)) {
    return {};
  }
  return {{fmt::format("{} is set: {}", name, what), {fmt::format("{}={}", name, quote_evidence(*v, 80))}}};
}

std::vector<Hit> nccl_p2p_disabled(const RuleContext& c) {
  return nccl_disabled(c, "NCCL_P2P_DISABLE",
                       "NCCL copies between GPUs through host memory instead of peer-to-peer, which explains slower "
                       "multi-GPU steps (it is also the usual workaround for ACS/IOMMU hangs)");
}

std::vector<Hit> nccl_shm_disabled(const RuleContext& c) {
  return nccl_disabled(c, "NCCL_SHM_DISABLE",
                       "NCCL does not use shared memory between processes and falls back to network transports, which "
                       "explains slower multi-GPU steps (it is also the workaround for a small /dev/shm)");
}

// ---- compute mode --------------------------------------------------------------------------------

// CUcomputemode (cuda.h): 0 DEFAULT, 1 EXCLUSIVE_THREAD (removed in later toolkits), 2 PROHIBITED,
// 3 EXCLUSIVE_PROCESS.
std::string_view compute_mode_name(int mode) {
  switch (mode) {
  case 1:
    return "EXCLUSIVE_THREAD";
  case 2:
    return "PROHIBITED";
  case 3:
    return "EXCLUSIVE_PROCESS";
  default:
    return "DEFAULT";
  }
}

std::vector<Hit> compute_mode_hits(const RuleContext& c, bool prohibited) {
  std::vector<Hit> hits;
  for (const auto& d : c.facts.cuda.devices) {
    if (!d.compute_mode || *d.compute_mode == 0 || (*d.compute_mode == 2) != prohibited) {
      continue;
    }
    const std::string evidence = fmt::format("CUDA {} ({}): CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = {} ({})", d.index, d.bus_id,
                                             *d.compute_mode, compute_mode_name(*d.compute_mode));
    hits.push_back({prohibited ? fmt::format("GPU {} is in compute mode Prohibited: no process can create a CUDA context on it", d.bus_id)
                               : fmt::format("GPU {} is in an exclusive compute mode: only one process at a time can use it "
                                             "(a second one gets CUDA_ERROR_DEVICE_UNAVAILABLE, 46)",
                                             d.bus_id),
                    {evidence},
                    d.bus_id});
  }
  return hits;
}

std::vector<Hit> compute_mode_exclusive(const RuleContext& c) { return compute_mode_hits(c, false); }
std::vector<Hit> compute_mode_prohibited(const RuleContext& c) { return compute_mode_hits(c, true); }

const Rule k_rules[] = {
    {"pcie.acs-redirect", Severity::warn, Stage::host,
     "No PCIe bridge between GPUs the job uses together redirects peer-to-peer traffic (ACS)",
     "Disable ACS on the bridges in the evidence (BIOS, or `setpci -s BDF ECAP_ACS+0x6.w=0000` as root at boot), or run "
     "with NCCL_P2P_DISABLE=1 at a bandwidth cost",
     k_src_nccl, acs_redirect,
     "PCIe Access Control Services on a switch port or root port can force peer-to-peer requests and completions up to the root complex (ReqRedir, CmpltRedir, EgressCtrl). GPU-to-GPU copies then cross the CPU's root complex and, with an IOMMU, its translation: slow at best, a hang of NCCL's first collective at worst. NVIDIA's NCCL guide asks for ACS off on bridges between GPUs. Only bridges below the deepest bridge two GPUs share are judged: the ones above both never see their peer traffic.",
     "The `config` file (binary configuration space) of each bridge on the sysfs path of each GPU the job uses: the ACS extended capability (ID 0x000D) and its control register."},
    {"pcie.acs-not-checked", Severity::info, Stage::host, "ACS could be read on the bridges between the GPUs",
     "Run gpu-preflight (or `gpu-preflight snapshot`) as root: only root can read PCI configuration space beyond the first "
     "64 bytes",
     k_src_nccl, acs_not_checked,
     "Without root, sysfs returns only the first 64 bytes of a device's configuration space, so the ACS capability (in the extended space) cannot be read. That is reported as not checked, never as 'no ACS'. A looping or truncated capability list is reported the same way.",
     "The length and capability lists of the `config` files of the bridges between the GPUs."},
    {"pcie.gpu-pairs-share-switch", Severity::info, Stage::host, "Which GPUs share a PCIe switch or port",
     "Nothing to do; put the GPUs that exchange the most data (e.g. a tensor-parallel group) under one switch",
     k_src_nccl, gpu_pairs_share_switch,
     "GPUs under one PCIe switch exchange peer-to-peer traffic inside the switch; pairs under different root ports or host bridges go through the CPU's root complex (or the inter-socket link). Useful for placing tensor-parallel groups; not a problem in itself.",
     "The sysfs paths of the GPUs (sys/bus/pci/devices/* links into sys/devices/...) and the PCI Express port types of their bridges."},
    {"iommu.not-passthrough", Severity::warn, Stage::host, "The IOMMU does not translate GPU DMA on a multi-GPU host",
     "Boot with iommu=pt (add it to GRUB_CMDLINE_LINUX, update-grub, reboot), or turn VT-d/AMD-Vi off in the BIOS if "
     "nothing needs the IOMMU; NCCL_P2P_DISABLE=1 works around it at a bandwidth cost",
     k_src_nccl, iommu_not_passthrough,
     "An IOMMU that translates the GPUs' DMA (group type DMA or DMA-FQ) makes peer-to-peer traffic go through the root complex for address translation; NCCL then runs slowly or hangs. NVIDIA's NCCL guide recommends iommu=pt (passthrough) or VT-d/AMD-Vi off on bare metal. In a virtual machine the guest sees the hypervisor's virtual IOMMU and cannot fix the host, so the finding explains instead of warning.",
     "The type of each GPU's IOMMU group (sys/kernel/iommu_groups/N/type), else the IOMMU groups and units with the kernel command line (iommu=pt, iommu.passthrough=1, *iommu=off); the hypervisor flag of /proc/cpuinfo."},
    {"shm.too-small", Severity::warn, Stage::host, "/dev/shm holds at least 1 GiB when two or more GPUs are used",
     "Give the container more shared memory: `docker run --shm-size=1g` (NVIDIA suggests --shm-size=1g --ulimit "
     "memlock=-1) or --ipc=host; in Kubernetes mount an emptyDir with medium: Memory at /dev/shm; or set "
     "NCCL_SHM_DISABLE=1 (DataLoader workers still need shared memory)",
     "nvidia-facts.md §11 (/dev/shm: Docker's 64 MB default, NCCL shared-memory segments)", shm_too_small,
     "NCCL's shared-memory transport and PyTorch DataLoader workers allocate segments in /dev/shm. Docker gives containers 64 MB by default; NCCL then fails with 'No space left on device' while creating or extending /dev/shm/nccl-* segments, or hangs. Checked when two or more GPUs are used; 1 GiB is NVIDIA's suggested minimum (--shm-size=1g).",
     "statvfs of /dev/shm (a snapshot's statvfs.json) and its /proc/mounts line."},
    {"limits.memlock-low", Severity::info, Stage::host, "The locked-memory limit is unlimited where RDMA devices exist",
     "Raise the limit for the job: `docker run --ulimit memlock=-1`, LimitMEMLOCK=infinity in its systemd unit, or "
     "`* - memlock unlimited` in /etc/security/limits.conf",
     "nvidia-facts.md §11 (NVIDIA containers: --ulimit memlock=-1)", memlock_low,
     "GPUDirect RDMA and InfiniBand verbs pin (lock) memory; with a low RLIMIT_MEMLOCK memory registration fails. NVIDIA's container guidance is --ulimit memlock=-1. Reported only where RDMA devices exist.",
     "Max locked memory in /proc/self/limits (the checker's limits, which `gpu-preflight exec` hands to the job) and the entries of /sys/class/infiniband."},
    {"nvswitch.fabric-manager-missing", Severity::fail, Stage::host, "nv-fabricmanager runs on a host with NVSwitches",
     "Install and start the Fabric Manager of the driver's exact version: `systemctl enable --now nvidia-fabricmanager` "
     "(package nvidia-fabricmanager-<branch>)",
     "nvidia-facts.md §11 (Fabric Manager User Guide), §5 (802 without Fabric Manager), §7 (nvswitch nodes)",
     fabric_manager_missing,
     "On HGX/DGX systems with NVSwitches the NVLink fabric is set up by the Fabric Manager daemon. Until it runs, CUDA initialisation fails with CUDA_ERROR_SYSTEM_NOT_READY (802) and the GPUs report their fabric state as not completed.",
     "NVSwitches: /dev/nvidia-nvswitch<N> nodes or NVIDIA PCI devices of class 0x0680; the process table (/proc/<pid>/comm, where the name shows as nv-fabricmanage)."},
    {"nvswitch.fabric-manager-unchecked", Severity::info, Stage::host,
     "Whether nv-fabricmanager runs could be checked on a host with NVSwitches",
     "Check on the host itself: `systemctl status nvidia-fabricmanager`", "nvidia-facts.md §11 (Fabric Manager User Guide)",
     fabric_manager_unchecked,
     "Inside a container's PID namespace the host's processes are invisible, so a missing nv-fabricmanager there proves nothing; the check says it was not made.",
     "NVSwitches as for nvswitch.fabric-manager-missing; /proc/1/comm (systemd or init on a host)."},
    {"nvswitch.fabric-manager-version", Severity::fail, Stage::host, "nv-fabricmanager has the driver's version",
     "Install the Fabric Manager package of exactly the driver's version (e.g. nvidia-fabricmanager-550=550.54.14-1) and "
     "restart it, or reboot into the driver that matches it",
     "nvidia-facts.md §5 (Fabric Manager version must equal the driver's), §11", fabric_manager_version,
     "Fabric Manager must have exactly the driver's version; a different one refuses to start, and CUDA initialisation then fails with 802.",
     "The installed nvidia-fabricmanager package in the Debian package database (var/lib/dpkg/status), against the driver version; RPM databases are not read."},
    {"persistence.not-running", Severity::info, Stage::host, "nvidia-persistenced runs when CUDA start-up is slow",
     "Enable the persistence daemon: `systemctl enable --now nvidia-persistenced` (legacy `nvidia-smi -pm 1` is "
     "deprecated)",
     "nvidia-facts.md §11 (Persistence), §5 (persistence mode deprecation)", persistence_not_running,
     "Without nvidia-persistenced the driver tears GPU state down when the last client exits, so each job start pays the full initialisation (seconds per GPU, more with many GPUs) and a short start-up timeout can fire. Reported only when the CUDA probe measured a slow start (1 s or more).",
     "The CUDA probe's cuInit and primary-context times; the process table (nvidia-persiste)."},
    {"gsp.firmware-files-missing", Severity::fail, Stage::host, "The GSP firmware files of the loaded driver version exist",
     "Reinstall the driver package that ships /lib/firmware/nvidia/<version>/gsp_*.bin for the loaded version, then reload "
     "the driver or reboot",
     "nvidia-facts.md §11 (GSP firmware files, nv-firmware.h), §5 (RmInitAdapter 0x61:0x56)", gsp_firmware_missing,
     "GSP-based GPUs (Turing and later) load their GSP-RM firmware from /lib/firmware/nvidia/<driver version>/ whenever they initialise; without the file the driver logs 'RmInitAdapter failed! (0x61:0x56)' and the GPU is unusable. Judged with the open kernel module, or for a GPU whose information file shows GSP firmware in use. Without /lib/firmware at all (most containers) it is not judged.",
     "The directories the kernel's firmware loader searches for nvidia/<version>/gsp_*.bin; each GPU's PCI device id (gsp_tu10x.bin for Turing and GA100, gsp_ga10x.bin for GA10x, Hopper, Ada, Blackwell)."},
    {"env.cuda-visible-devices-duplicate", Severity::warn, Stage::host, "CUDA_VISIBLE_DEVICES names each GPU once",
     "List each GPU once; launchers that count the entries (torchrun --nproc-per-node, accelerate) would start more ranks "
     "than there are GPUs, and CUDA does not document what duplicates do",
     k_src_env, visible_devices_duplicate,
     "A GPU listed twice in CUDA_VISIBLE_DEVICES (by index and by UUID, or twice by index) is not documented by CUDA; launchers that derive the number of ranks from the list start more ranks than there are GPUs, which then contend for one GPU.",
     "CUDA_VISIBLE_DEVICES of the job environment, each entry resolved to a GPU up to the first entry that names none."},
    {"env.cuda-visible-devices-mig-unknown", Severity::warn, Stage::host,
     "Every MIG instance CUDA_VISIBLE_DEVICES names exists",
     "List the MIG instances with `nvidia-smi -L` and name existing ones, or create the instance "
     "(`nvidia-smi mig -cgi <profile> -C`)",
     "nvidia-facts.md §10c (MIG-<GPU-UUID>/<gi>/<ci>), §6d (proc/driver/nvidia/capabilities)", mig_instance_unknown,
     "CUDA_VISIBLE_DEVICES may name MIG instances as MIG-<GPU-UUID>/<gi>/<ci>. An instance that does not exist is an invalid entry: CUDA ignores it and every entry after it.",
     "proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<gi>/ci<ci>/access, which the driver creates for every compute instance."},
    {"env.device-order-ambiguous", Severity::warn, Stage::host,
     "GPU indices are unambiguous on a host with mixed GPU models",
     "Export CUDA_DEVICE_ORDER=PCI_BUS_ID (gpu-preflight's env output does) or name GPUs by UUID in CUDA_VISIBLE_DEVICES",
     k_src_env, device_order_ambiguous,
     "CUDA numbers devices fastest first by default (CUDA_DEVICE_ORDER=FASTEST_FIRST); nvidia-smi and NVML number them by PCI bus id. With one model the two orders usually agree; with mixed models index N in CUDA_VISIBLE_DEVICES or in the job may be another GPU than nvidia-smi's GPU N.",
     "The GPUs' models, CUDA_DEVICE_ORDER and the integer entries of CUDA_VISIBLE_DEVICES (unset, every GPU is used and "
     "only the numbering differs: not reported)."},
    {"env.cuda-injection", Severity::warn, Stage::host, "No profiler or debugger library is injected into CUDA",
     "Unset CUDA_INJECTION64_PATH unless the job is meant to run under that tool",
     "issue 10 (environment hazards); CUDA injection for CUPTI-based tools (UNVERIFIED in nvidia-facts.md)", cuda_injection,
     "CUDA_INJECTION64_PATH makes every CUDA process load the named library at initialisation (how CUPTI-based profilers and debuggers attach). Left set, it slows the job and a stale path breaks CUDA initialisation.",
     "CUDA_INJECTION64_PATH in the job environment."},
    {"env.launch-blocking", Severity::warn, Stage::host, "CUDA_LAUNCH_BLOCKING is not left on",
     "Unset CUDA_LAUNCH_BLOCKING (or set it to 0) outside debugging sessions", k_src_env, launch_blocking,
     "CUDA_LAUNCH_BLOCKING=1 makes every kernel launch synchronous, a debugging aid that makes training many times slower when left on.",
     "CUDA_LAUNCH_BLOCKING in the job environment."},
    {"env.nccl-p2p-disabled", Severity::info, Stage::host, "Whether NCCL peer-to-peer is disabled",
     "Nothing to do if it works around an ACS/IOMMU problem; otherwise unset NCCL_P2P_DISABLE for faster multi-GPU steps",
     "nvidia-facts.md §11 (NCCL troubleshooting: NCCL_P2P_DISABLE)", nccl_p2p_disabled,
     "NCCL_P2P_DISABLE=1 makes NCCL copy between GPUs through host memory. It is the usual workaround for ACS/IOMMU hangs; it also explains slower multi-GPU steps.",
     "NCCL_P2P_DISABLE in the job environment."},
    {"env.nccl-shm-disabled", Severity::info, Stage::host, "Whether NCCL's shared-memory transport is disabled",
     "Nothing to do if /dev/shm cannot be enlarged; otherwise unset NCCL_SHM_DISABLE and give the job a bigger /dev/shm",
     "nvidia-facts.md §11 (/dev/shm: NCCL_SHM_DISABLE=1)", nccl_shm_disabled,
     "NCCL_SHM_DISABLE=1 stops NCCL from using shared memory between processes; it falls back to network transports. The workaround for a small /dev/shm; it also explains slower steps.",
     "NCCL_SHM_DISABLE in the job environment."},
    {"gpu.compute-mode-exclusive", Severity::info, Stage::gpu, "Whether a GPU is in an exclusive compute mode",
     "Nothing to do for one process per GPU (gpu-preflight releases its contexts before the job starts); for several "
     "processes per GPU set Default mode: `nvidia-smi -i <bus id> -c DEFAULT`",
     "nvidia-facts.md §11 (Compute mode), §10b (CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20, DEVICE_UNAVAILABLE = 46)",
     compute_mode_exclusive,
     "In Exclusive-Process mode one process at a time may hold a context on the GPU; a second gets CUDA_ERROR_DEVICE_UNAVAILABLE (46). Fine for one process per GPU; the CUDA probe releases its contexts before the job starts, so it does not hold the GPU.",
     "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE of each CUDA device (CUDA probe)."},
    {"gpu.compute-mode-prohibited", Severity::warn, Stage::gpu, "No GPU is in compute mode Prohibited",
     "Set Default mode as root: `nvidia-smi -i <bus id> -c DEFAULT`", "nvidia-facts.md §11 (Compute mode), §10b",
     compute_mode_prohibited,
     "In Prohibited mode no process may create a context on the GPU: the job cannot use it.",
     "CU_DEVICE_ATTRIBUTE_COMPUTE_MODE of each CUDA device (CUDA probe)."},
};

} // namespace

std::span<const Rule> topology_rules() { return k_rules; }

} // namespace gpf
