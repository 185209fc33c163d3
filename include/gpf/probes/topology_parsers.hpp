#pragma once
// Pure parse functions of the topology probes (pcie, iommu, shm, services, firmware, mig): bytes or
// text in, typed facts out. They never throw and never read the host. Tested on inline data.
#include "gpf/facts/topology_facts.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// A PCI `config` file (binary, little endian). Walks the capability list (from 0x34) for the PCI
// Express capability and the extended capability list (from 0x100) for ACS (ID 0x000D). A file too
// short for the extended space (non-root reads get 64 bytes) gives AcsState::unknown, never absent;
// a looping, out-of-range or truncated list also gives unknown with a note saying where.
PciConfig parse_pci_config(std::string_view bytes);

// "dddd:bb:dd.f" exactly (the form of sysfs directory names), lowercase or uppercase hex.
bool is_pci_address(std::string_view s);

// Splits a sysfs device path into the host bridge component and the PCI addresses below it, in
// order ("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0" -> "pci0000:00",
// {"0000:00:01.0", "0000:01:00.0"}). Components that are not PCI addresses before the first one are
// skipped (virtual buses); the last non-address component before the first address is the root.
struct SysfsPciPath {
  std::string root;
  std::vector<std::string> devices;
};
SysfsPciPath parse_sysfs_pci_path(std::string_view path);

// The directory of the component `bus_id` on a sysfs device path
// ("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/mlx5_0", "0000:01:00.0" ->
// "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"); "" when the path has no such component.
std::string sysfs_prefix_through(std::string_view path, std::string_view bus_id);

// A sysfs hex attribute ("0x10de\n") -> value; nullopt on garbage.
std::optional<std::uint32_t> parse_sysfs_hex(std::string_view text);

// "16.0 GT/s PCIe", "8 GT/s" (older kernels), "2.5 GT/s" -> tenths of GT/s; nullopt for "Unknown",
// "Unknown speed" or garbage.
std::optional<unsigned> parse_link_speed(std::string_view text);

// current_link_width / max_link_width ("16\n") -> lanes; nullopt on garbage or more than 32.
std::optional<unsigned> parse_link_width(std::string_view text);

// An aer_dev_* file ("RxErr 0\n...TOTAL_ERR_COR 2\n") -> the value of the line named `total`
// (TOTAL_ERR_COR, TOTAL_ERR_FATAL, TOTAL_ERR_NONFATAL); nullopt when there is no such line.
std::optional<std::uint64_t> parse_aer_total(std::string_view text, std::string_view total);

// An InfiniBand port's `state` or `phys_state` ("4: ACTIVE", "5: LinkUp", "1: DOWN") -> the code
// and the name; nullopt on garbage.
struct IbPortState {
  unsigned code = 0;
  std::string name;
};
std::optional<IbPortState> parse_ib_state(std::string_view text);

// An InfiniBand port's `rate` ("400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)") -> tenths of Gb/s;
// nullopt on garbage.
std::optional<unsigned> parse_ib_rate(std::string_view text);

// proc/cmdline -> the IOMMU options it holds and what they mean.
struct IommuCmdline {
  std::vector<std::string> options; // every iommu-related option, verbatim
  bool passthrough = false;         // iommu=pt, iommu.passthrough=1 (or on/y)
  bool off = false;                 // iommu=off, intel_iommu=off, amd_iommu=off
};
IommuCmdline parse_iommu_cmdline(std::string_view cmdline);

// proc/cpuinfo -> whether the first "flags"/"Features" line carries "hypervisor"; nullopt when
// there is no flags line (e.g. ARM cpuinfo without it).
std::optional<bool> cpuinfo_hypervisor(std::string_view cpuinfo);

// proc/mounts -> the line of the last mount on mount_point (later mounts hide earlier ones);
// octal escapes (\040) in mount points are decoded before comparing. nullopt when none.
std::optional<std::string> find_mount_line(std::string_view mounts, std::string_view mount_point);

// proc/<pid>/limits -> the "Max locked memory" line and its soft limit.
struct MemlockLimit {
  std::string line;
  std::optional<std::uint64_t> soft; // bytes
  bool unlimited = false;
};
std::optional<MemlockLimit> parse_memlock_limit(std::string_view limits);

// var/lib/dpkg/status -> the installed nvidia-fabricmanager package's version ("550.54.14" from
// "550.54.14-1") and its "Package: ... Version: ..." evidence. nullopt when none is installed.
struct PackageVersion {
  std::string version;
  std::string evidence;
};
std::optional<PackageVersion> dpkg_fabric_manager(std::string_view status);

} // namespace gpf
