// The text parsers of the topology probes, table-driven on inline strings.
#include "gpf/probes/topology_parsers.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("PCI addresses as sysfs names them") {
  CHECK(is_pci_address("0000:3b:00.0"));
  CHECK(is_pci_address("0000:3B:1F.7"));
  CHECK_FALSE(is_pci_address("0000:3b:00.8"));
  CHECK_FALSE(is_pci_address("3b:00.0"));
  CHECK_FALSE(is_pci_address("pci0000:00"));
  CHECK_FALSE(is_pci_address("0000:3b:00.0x"));
  CHECK_FALSE(is_pci_address("000g:3b:00.0"));
  CHECK_FALSE(is_pci_address(""));
}

TEST_CASE("the directory of one device on a sysfs path, or nothing when it is not on it") {
  const std::string path = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/mlx5_0";
  CHECK(sysfs_prefix_through(path, "0000:01:00.0") ==
        "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  CHECK(sysfs_prefix_through(path, "0000:00:01.0") == "sys/devices/pci0000:00/0000:00:01.0");
  CHECK(sysfs_prefix_through(path, "0000:02:00.0").empty());
}

TEST_CASE("a sysfs device path splits into its host bridge and the devices below it") {
  auto p = parse_sysfs_pci_path(
      "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:00.0/0000:18:00.0");
  CHECK(p.root == "pci0000:15");
  CHECK(p.devices ==
        std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:18:00.0"});
  // a virtual bus (Hyper-V) before the PCI domain; upper-case hex is normalised
  p = parse_sysfs_pci_path(
      "sys/devices/LNXSYSTM:00/VMBUS:01/47505500-0001/pci0001:00/0001:00:00.0/0001:01:00.0");
  CHECK(p.root == "pci0001:00");
  CHECK(p.devices == std::vector<std::string>{"0001:00:00.0", "0001:01:00.0"});
  p = parse_sysfs_pci_path("sys/devices/pci0000:00/0000:00:1F.3");
  CHECK(p.devices == std::vector<std::string>{"0000:00:1f.3"});
  p = parse_sysfs_pci_path("sys/devices/platform/serial8250");
  CHECK(p.devices.empty());
}

TEST_CASE("sysfs hex attributes") {
  CHECK(parse_sysfs_hex("0x10de\n") == 0x10DEu);
  CHECK(parse_sysfs_hex("0x068000\n") == 0x068000u);
  CHECK(parse_sysfs_hex("2330") == 0x2330u);
  CHECK_FALSE(parse_sysfs_hex(""));
  CHECK_FALSE(parse_sysfs_hex("0x"));
  CHECK_FALSE(parse_sysfs_hex("garbage"));
  CHECK_FALSE(parse_sysfs_hex("0x123456789"));
}

TEST_CASE("IOMMU options on the kernel command line") {
  struct Case {
    const char* cmdline;
    bool passthrough;
    bool off;
    std::size_t options;
  };
  const Case cases[] = {
      {"BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet", false, false, 0},
      {"ro iommu=pt", true, false, 1},
      {"ro intel_iommu=on iommu=pt", true, false, 2},
      {"ro amd_iommu=on", false, false, 1},
      {"ro intel_iommu=off", false, true, 1},
      {"ro amd_iommu=off", false, true, 1},
      {"ro iommu=off", false, true, 1},
      {"ro iommu.passthrough=1", true, false, 1},
      {"ro iommu.passthrough=0", false, false, 1},
      {"ro intel_iommu=on,sm_on", false, false, 1},
      {"ro IOMMU=PT", true, false, 1},
      {"ro myiommu=pt iommu_extra=pt", false, false, 0},
      {"", false, false, 0},
  };
  for (const auto& c : cases) {
    INFO(c.cmdline);
    const auto p = parse_iommu_cmdline(c.cmdline);
    CHECK(p.passthrough == c.passthrough);
    CHECK(p.off == c.off);
    CHECK(p.options.size() == c.options);
  }
}

TEST_CASE("the hypervisor flag of cpuinfo") {
  CHECK(cpuinfo_hypervisor(
            "processor\t: 0\nflags\t\t: fpu vme hypervisor lahf_lm\n\nprocessor\t: 1\n") == true);
  CHECK(cpuinfo_hypervisor("processor\t: 0\nflags\t\t: fpu vme lahf_lm\n") == false);
  CHECK(cpuinfo_hypervisor("flags\t\t: fpu hypervisorish\n") == false);
  CHECK(cpuinfo_hypervisor("processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\n") ==
        false);
  CHECK_FALSE(cpuinfo_hypervisor("processor\t: 0\nBogoMIPS\t: 50.00\n"));
  CHECK_FALSE(cpuinfo_hypervisor(""));
}

TEST_CASE("the /dev/shm line of proc/mounts: the last mount wins, escapes decoded") {
  const std::string mounts = "tmpfs /dev/shm tmpfs rw,size=65536k 0 0\n"
                             "proc /proc proc rw 0 0\n"
                             "shm /dev/shm tmpfs rw,nosuid,size=1048576k 0 0\n"
                             "tmpfs /mnt/my\\040disk tmpfs rw 0 0\n";
  CHECK(find_mount_line(mounts, "/dev/shm") == "shm /dev/shm tmpfs rw,nosuid,size=1048576k 0 0");
  CHECK(find_mount_line(mounts, "/mnt/my disk") == "tmpfs /mnt/my\\040disk tmpfs rw 0 0");
  CHECK_FALSE(find_mount_line(mounts, "/dev"));
  CHECK_FALSE(find_mount_line("garbage\n\n", "/dev/shm"));
  CHECK_FALSE(find_mount_line("tmpfs /dev/shm\\0 tmpfs 0 0\n", "/dev/shm"));
}

TEST_CASE("the memlock line of proc/<pid>/limits") {
  const auto n = parse_memlock_limit(
      "Limit                     Soft Limit           Hard Limit           Units\n"
      "Max locked memory         65536                131072               bytes\n");
  REQUIRE(n);
  CHECK(n->soft == 65536u);
  CHECK_FALSE(n->unlimited);
  CHECK(n->line == "Max locked memory         65536                131072               bytes");
  const auto u = parse_memlock_limit(
      "Max locked memory         unlimited            unlimited            bytes\n");
  REQUIRE(u);
  CHECK(u->unlimited);
  CHECK_FALSE(u->soft);
  const auto odd = parse_memlock_limit("Max locked memory         lots\n");
  REQUIRE(odd);
  CHECK_FALSE(odd->soft);
  CHECK_FALSE(odd->unlimited);
  CHECK_FALSE(parse_memlock_limit("Max open files  1024 1024 files\n"));
}

TEST_CASE("the installed Fabric Manager from the dpkg status file") {
  const std::string status =
      "Package: libc6\nStatus: install ok installed\nVersion: 2.35\n\n"
      "Package: nvidia-fabricmanager-dev-550\nStatus: install ok installed\nVersion: 550.54.14-1\n\n"
      "Package: nvidia-fabricmanager-535\nStatus: deinstall ok config-files\nVersion: 535.104.05-1\n\n"
      "Package: nvidia-fabricmanager-550\nStatus: install ok installed\nVersion: 1:550.54.15-1\n";
  const auto fm = dpkg_fabric_manager(status);
  REQUIRE(fm);
  CHECK(fm->version == "550.54.15");
  CHECK(fm->evidence == "Package: nvidia-fabricmanager-550, Version: 1:550.54.15-1");
  CHECK_FALSE(dpkg_fabric_manager(
      "Package: nvidia-fabricmanager-535\nStatus: deinstall ok config-files\nVersion: 535.1-1\n"));
  CHECK_FALSE(dpkg_fabric_manager(""));
  CHECK_FALSE(dpkg_fabric_manager(std::string(1000, '\xff')));
}
