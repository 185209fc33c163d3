#pragma once
// Facts behind multi-GPU hangs and slow starts (docs/multi-gpu-hangs.md): the PCIe path above each
// GPU with the ACS control bits of its bridges, the IOMMU, /dev/shm and the memlock limit, the
// NVIDIA daemons, NVSwitches, the GSP firmware files and MIG entries of CUDA_VISIBLE_DEVICES.
// Filled in by the probes pcie, iommu, shm, services and firmware; read by topology_rules.
// Sources: docs/sources.md#multi-gpu-hazards and the sections after it, #device-nodes,
// #cuda_visible_devices.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

// ACS control register bits (PCIe base spec, ACS extended capability, control register at +6).
struct AcsControl {
  std::uint16_t capability = 0; // the ACS capability register (which controls exist)
  std::uint16_t control = 0;    // the ACS control register (which are on)
  std::uint16_t offset = 0;     // config-space offset of the capability header
  bool source_validation() const { return control & 0x01; }
  bool translation_blocking() const { return control & 0x02; }
  bool request_redirect() const { return control & 0x04; }
  bool completion_redirect() const { return control & 0x08; }
  bool upstream_forwarding() const { return control & 0x10; }
  bool egress_control() const { return control & 0x20; }
  bool direct_translated() const { return control & 0x40; }
  // Peer-to-peer requests or completions are sent up to the root complex instead of across.
  bool redirects_p2p() const {
    return request_redirect() || completion_redirect() || egress_control();
  }
};

enum class AcsState {
  unknown, // the config space was unreadable or too short to hold extended capabilities
  absent,  // the whole extended space was walked: no ACS capability
  present,
};

// What the capability lists of one config space say (pure parse of the `config` file).
struct PciConfig {
  std::size_t size = 0;                // bytes available
  std::optional<std::uint16_t> vendor; // offset 0
  std::optional<std::uint8_t> header_type;
  std::optional<std::uint8_t>
      port_type; // PCI Express capability: Device/Port Type (4 root port, 5/6 switch up/down)
  AcsState acs_state = AcsState::unknown;
  std::optional<AcsControl> acs;
  std::string note; // why ACS is unknown, or what was wrong with the lists ("capability list loops
                    // at 0x48")
};

// The link a PCIe port reports in sysfs: its own Link Status and Link Capabilities
// (current_link_width, max_link_width, current_link_speed, max_link_speed). A root port or switch
// downstream port reports the link below it; a switch upstream port or an endpoint the link above.
// Speeds are in tenths of GT/s (16.0 GT/s = 160). nullopt: the attribute is absent or says
// "Unknown".
struct PciLinkState {
  std::optional<unsigned> width;     // lanes; 0 = the link is down
  std::optional<unsigned> max_width; // lanes the port supports
  std::optional<unsigned> speed;     // tenths of GT/s
  std::optional<unsigned> max_speed;
  std::string speed_text; // verbatim, trimmed ("16.0 GT/s PCIe")
  std::string max_speed_text;
  bool known() const { return width || max_width || speed || max_speed; }
};

// AER counters of one PCIe port since boot: the TOTAL_ERR_* line of each of aer_dev_fatal,
// aer_dev_nonfatal and aer_dev_correctable (the stable lines; the per-error names differ between
// kernels). nullopt: the file is absent (no AER capability, or an older kernel).
struct AerCounts {
  std::optional<std::uint64_t> fatal;
  std::optional<std::uint64_t> nonfatal;
  std::optional<std::uint64_t> correctable;
  bool known() const { return fatal || nonfatal || correctable; }
};

// A bridge or switch port above a GPU.
struct PciBridge {
  std::string bus_id; // dddd:bb:dd.f
  std::string path;   // root-relative sysfs directory ("sys/devices/pci0000:00/0000:00:01.0")
  PciConfig config;
  std::string error; // `config` could not be read (OS reason)
  PciLinkState link;
  AerCounts aer;
};

struct GpuPciPath {
  std::string bus_id;               // the driver's bus id
  std::string path;                 // root-relative sysfs directory of the GPU ("" = not found)
  std::vector<std::string> bridges; // bus ids from the root port down to the GPU's parent
  std::string root; // the host bridge component ("pci0000:00"); GPUs under different roots share no
                    // PCIe bridge
  std::optional<std::uint16_t> device_id; // PCI device id (sysfs `device`)
  std::optional<std::string> iommu_group; // the group's name under sys/kernel/iommu_groups
  std::string error;                      // why the path is unknown
  PciLinkState link;                      // the GPU's own link (to its parent port)
  AerCounts aer;
};

struct PcieFacts {
  bool ran = false;
  std::vector<GpuPciPath> gpus;
  std::map<std::string, PciBridge> bridges; // by bus id
  std::vector<std::string> nvswitches;      // bus ids of NVIDIA devices of class 0x0680 (NVSwitch)
  std::size_t devices_seen = 0;
  std::vector<std::string> nvidia_devices;    // bus ids of every vendor 0x10de device (any class)
  std::vector<std::string> vendor_unreadable; // bus ids whose vendor attribute could not be read
};

struct IommuFacts {
  bool ran = false;
  std::optional<std::size_t>
      groups;                     // entries of sys/kernel/iommu_groups; nullopt = unreadable/absent
  std::vector<std::string> units; // sys/class/iommu entries (dmar0, ivhd0, ...)
  std::map<std::string, std::string>
      group_type; // group name -> sys/kernel/iommu_groups/N/type ("identity", "DMA", "DMA-FQ")
  std::optional<std::string> cmdline; // proc/cmdline, trimmed
  std::vector<std::string>
      cmdline_options;              // the IOMMU options found in it ("iommu=pt", "intel_iommu=on")
  bool cmdline_passthrough = false; // iommu=pt, iommu.passthrough=1
  bool cmdline_off = false;         // iommu=off, intel_iommu=off, amd_iommu=off
  std::optional<bool> hypervisor;   // the "hypervisor" cpu flag; nullopt = no flags line
};

struct ShmFacts {
  bool ran = false;
  bool exists = true;                      // dev/shm exists
  std::optional<std::uint64_t> size_bytes; // statvfs of dev/shm
  std::optional<std::uint64_t> available_bytes;
  std::optional<std::string> mount_line;     // its proc/mounts line, verbatim
  std::optional<std::string> memlock_line;   // "Max locked memory ..." from proc/self/limits
  std::optional<std::uint64_t> memlock_soft; // bytes; nullopt with memlock_unlimited or unknown
  bool memlock_unlimited = false; // RDMA devices, for which the limit matters: RdmaFacts::devices
};

struct ProcessSeen {
  int pid = 0;
  std::string comm;
};

struct ServiceFacts {
  bool ran = false;
  bool process_table = false; // proc/ was listed
  std::optional<std::string>
      init_comm; // proc/1/comm: "systemd"/"init" on a host; else likely a container's PID namespace
  std::vector<ProcessSeen> fabric_manager;
  std::vector<ProcessSeen> persistenced;
  std::optional<std::string> fabric_manager_version; // from the package database
  std::string
      fabric_manager_version_source; // "var/lib/dpkg/status: nvidia-fabricmanager-550 550.54.14-1"
  std::vector<std::string> nvswitch_nodes; // dev/nvidia-nvswitch* entries
  // IMEX (multi-node NVLink memory sharing): its daemon, the channel device's line in
  // proc/devices ("511 nvidia-caps-imex-channels"; nullopt: not registered, i.e. IMEX channels
  // disabled) and the channel nodes an administrator created (dev/nvidia-caps-imex-channels/*).
  std::vector<ProcessSeen> imex;
  bool proc_devices_read = false;
  std::optional<std::string> imex_devices_line;
  std::optional<unsigned> imex_major;
  std::vector<std::string> imex_channels; // "dev/nvidia-caps-imex-channels/channel0"
  bool host_process_table() const {
    return init_comm && (*init_comm == "systemd" || *init_comm == "init");
  }
};

struct FirmwareFacts {
  bool ran = false;
  std::vector<std::string> dirs_checked; // root-relative directories looked at
  std::vector<std::string> files;        // gsp_*.bin names found (any checked directory)
  std::string found_in;                  // the first directory holding gsp files
};

// A MIG-<GPU-UUID>/<gi>/<ci> entry of CUDA_VISIBLE_DEVICES and whether the instance exists.
struct MigEntry {
  std::string entry;
  std::optional<std::string> bus_id; // the parent GPU
  std::string path;                  // proc/driver/nvidia/capabilities/gpu<minor>/mig/gi<g>/ci<c>
  std::optional<bool> exists;        // nullopt = not checkable (GPU unknown)
};

// One port of an RDMA device (sys/class/infiniband/<dev>/ports/<n>): InfiniBand, or RoCE when the
// link layer is Ethernet. `state` and `phys_state` are independent: DOWN with LinkUp is a cabled
// port no subnet manager has configured. Facts: Linux ABI, sysfs-class-infiniband.
struct IbPort {
  unsigned port = 0;
  std::optional<unsigned> state_code; // "4: ACTIVE" -> 4
  std::string state;                  // -> "ACTIVE"
  std::optional<unsigned> phys_state_code;
  std::string phys_state;       // "LinkUp", "Polling", "Disabled", ...
  std::optional<unsigned> rate; // tenths of Gb/s; also reported (stale) by ports that are down
  std::string rate_text;        // verbatim, trimmed ("400 Gb/sec (4X NDR)")
  std::string link_layer;       // "InfiniBand", "Ethernet"
  std::string error;            // an attribute that exists but could not be read
  bool active() const { return state_code == 4 && phys_state_code == 5; } // ACTIVE, LinkUp
};

// How close a NIC is to a GPU on the PCIe tree, nearest first.
enum class PciDistance {
  switch_shared, // below one PCIe switch (they share a bridge under the root port)
  root_port,     // below one root port
  host_bridge,   // below one host bridge (PCIe root complex)
  apart,         // different host bridges: the CPU's interconnect, possibly another socket
};

struct RdmaDevice {
  std::string name;   // "mlx5_0"
  std::string path;   // root-relative sysfs directory of the device (".../infiniband/mlx5_0")
  std::string bus_id; // the PCI function it belongs to ("" when not a PCI device)
  std::string root;   // its host bridge ("pci0000:00")
  std::vector<std::string> bridges; // bus ids from the root port down to the NIC's parent
  std::optional<int> numa_node;     // sysfs numa_node of the PCI function (-1 = none)
  std::vector<IbPort> ports;
};

// The RDMA device nearest to one GPU.
struct GpuNic {
  std::string gpu; // bus id
  std::string nic; // RDMA device name
  std::string nic_bus_id;
  PciDistance distance = PciDistance::apart;
  std::optional<int> gpu_numa_node;
  std::optional<int> nic_numa_node;
};

struct RdmaFacts {
  bool ran = false;
  std::vector<RdmaDevice> devices;
  // sys/module/nvidia_peermem/version (the GPUDirect RDMA peer-memory module), read whether or
  // not any RDMA device exists; nullopt = absent. The legacy nv_peer_mem has versions of its own
  // (not compared), so only its presence in proc/modules counts.
  std::optional<std::string> peermem_version;
  std::vector<GpuNic> nearest; // per GPU with a known PCIe path, when any RDMA device is PCI
  // The devices' names (the entries of sys/class/infiniband), in order.
  std::vector<std::string> device_names() const {
    std::vector<std::string> names;
    for (const auto& d : devices) {
      names.push_back(d.name);
    }
    return names;
  }
};

// A process with an NVIDIA device node open: a /proc/<pid>/fd/* entry that is a character device
// of major 195 (the GPUs' minors, nvidiactl 255, nvidia-modeset 254), matched by device number,
// never by the link's text (which is a path in the process's own mount namespace).
struct GpuHolder {
  int pid = 0;
  std::string comm;
  char state = '?';             // "State:" of /proc/<pid>/status ('D' = uninterruptible)
  std::vector<unsigned> minors; // GPU minors it holds (below 254), sorted, unique
  std::vector<std::string> fds; // "fd/4 -> /dev/nvidia3 (195:3)", capped
  // One of NVIDIA's daemons that keep the nodes open by design (nvidia-persistenced,
  // nv-fabricmanager, DCGM, nvidia-smi): no job's leftover. Decided once, by the probe.
  bool nvidia_daemon = false;
};

struct GpuProcessFacts {
  bool ran = false;
  std::size_t processes = 0;      // pids listed in proc
  std::vector<GpuHolder> holders; // every process holding one (the checker holds none yet)
  std::size_t unreadable = 0;     // processes whose fd directory could not be listed
};

struct TopologyFacts {
  PcieFacts pcie;
  IommuFacts iommu;
  ShmFacts shm;
  ServiceFacts services;
  FirmwareFacts firmware;
  std::vector<MigEntry> mig_entries;
  RdmaFacts rdma;
  GpuProcessFacts gpu_processes;
};

} // namespace gpf
