#pragma once
// Typed facts the probes learn about the host. Whatever a probe may fail to learn is
// std::optional; whether it ran at all is in ProbeStatus. Facts are plain data: rules read them,
// the JSON report prints them.
#include "gpf/facts/compat_facts.hpp"
#include "gpf/facts/cuda_facts.hpp"
#include "gpf/facts/log_facts.hpp"
#include "gpf/facts/module_load_facts.hpp"
#include "gpf/facts/nccl_facts.hpp"
#include "gpf/facts/nvml_facts.hpp"
#include "gpf/facts/topology_facts.hpp"
#include "gpf/host/host.hpp"
#include "gpf/util/version.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpf {

enum class ProbeState { ok, skipped, error };

struct ProbeStatus {
  std::string name; // its pipeline row's name (the probe's ProbeRegistration, probes.hpp)
  std::string what; // what it checks, in a user's words ("CUDA start-up")
  ProbeState state = ProbeState::ok;
  std::string message; // why skipped / what failed (OS reason)
  double duration_ms = 0;
  std::vector<std::string> cut; // inputs read only up to their cap: "path (first N bytes)"

  // The input is one this kind of host does not have: its checks do not apply (not a finding).
  ProbeStatus& skip(std::string why) {
    state = ProbeState::skipped;
    message = std::move(why);
    return *this;
  }
  // The input exists but could not be read or understood: probe.failed reports it.
  ProbeStatus& fail(std::string why) {
    state = ProbeState::error;
    message = std::move(why);
    return *this;
  }
  // One more input of the probe that could not be read: the reasons join with "; ".
  ProbeStatus& fail_also(const std::string& why) {
    state = ProbeState::error;
    message += (message.empty() ? "" : "; ") + why;
    return *this;
  }
};

enum class KernelFlavour { generic, ubuntu, debian, rhel, amazon, suse, wsl2, gvisor, unknown };

struct KernelFacts {
  std::string release;            // as uname -r prints it (made valid UTF-8)
  std::optional<Version> version; // major.minor.patch; nullopt when unparseable
  KernelFlavour flavour = KernelFlavour::unknown;
  std::string flavour_detail;     // e.g. "el8_10", "generic", "aws", "amzn2"
  bool release_candidate = false; // "-rcN"
};

struct DeviceNodeFact {
  std::string path; // root-relative, e.g. "dev/nvidiactl"
  NodeInfo info;
};

enum class DriverFlavour { unknown, open, proprietary };

struct RegistryFacts {
  std::string raw;                      // the file as read (valid UTF-8)
  std::vector<std::string> binary_keys; // names inside Binary: "..."
  bool parsed = false;                  // matched the `Binary: "..."` format
};

struct DriverFacts {
  bool loaded = false; // proc/driver/nvidia exists
  std::optional<Version> version;
  std::string version_text;   // the version as printed, e.g. "550.54.14"
  std::string version_source; // which file gave the version
  std::string version_line;   // the NVRM version line, verbatim
  DriverFlavour flavour = DriverFlavour::unknown;
  std::map<std::string, std::string> params; // values unquoted
  std::optional<unsigned long> enable_gpu_firmware;
  std::optional<RegistryFacts> registry;
};

struct GpuFacts {
  std::string bus_id; // "dddd:bb:dd.f", from the gpus/ directory name
  std::optional<std::string> model;
  std::optional<std::string> uuid;
  std::optional<std::string> vbios;
  std::optional<std::string> firmware; // "GPU Firmware" (GSP) line
  std::optional<std::string> bus_location;
  std::optional<unsigned> device_minor;
  std::optional<bool> excluded;
  std::string error; // the information file could not be read / parsed
  // error is the OS's (the file exists and could not be read): the GPU was not checked, which
  // says nothing about it; otherwise the driver's own file is malformed.
  bool unreadable = false;
};

struct ModuleFacts {
  std::set<std::string> loaded; // every module name in proc/modules
  bool has(const std::string& name) const { return loaded.count(name) != 0; }
};

struct Facts {
  KernelFacts kernel;
  std::vector<DeviceNodeFact> devices;
  DriverFacts driver;
  std::vector<GpuFacts> gpus; // the driver's GPUs, sorted by bus id (PCI order)
  ModuleFacts modules;
  Environment env;
  LogFacts log;           // kernel-log scanner
  CudaFacts cuda;         // CUDA probe
  NvmlFacts nvml;         // NVML probe (per-GPU health from the driver)
  CompatFacts compat;     // compatibility inputs (expected CUDA, driver libraries)
  TopologyFacts topology; // PCIe/ACS, IOMMU, /dev/shm, daemons, GSP firmware (multi-GPU start-up)
  NcclFacts nccl;         // the opt-in NCCL start-up test (--nccl)
  ModuleLoadFacts module_load; // Secure Boot, lockdown, signing keys, module files, DKMS
  std::vector<ProbeStatus> probes;

  // The facts blocks that describe their own JSON, which the report writes after the blocks
  // above: `v("key", block)` each, where the block's struct has its field list,
  // `json_fields::List<S>` (include/gpf/util/json_fields.hpp: `member<&S::x>("x")` per member),
  // the one list that writes its JSON and reads it back.
  template <class V> void blocks(V& v) const {
    v("module_load", module_load);
    if (nccl.ran) { // opt-in: a report without --nccl has no NCCL block
      v("nccl", nccl);
    }
  }

  const ProbeStatus* probe(std::string_view name) const;
  const GpuFacts* gpu_by_bus(std::string_view bus_id) const;
  const DeviceNodeFact* device(std::string_view path) const;
  bool is_wsl2() const;
};

} // namespace gpf
