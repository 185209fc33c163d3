// The topology probes' parsers (src/probes/topology/parsers.cpp): their text parsers, table-driven
// on inline strings; parse_pci_config on config spaces built byte by byte: capability-list
// walking, the ACS extended capability and its control bits, short files (non-root reads),
// malformed and looping lists, garbage.
#include "gpf/probes/topology_parsers.hpp"

#include <catch2/catch.hpp>

#include <random>

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

namespace {

// A config space under construction: little-endian writes at offsets.
struct Config {
  std::string bytes;
  explicit Config(std::size_t size = 4096) : bytes(size, '\0') {}
  Config& u8(std::size_t at, unsigned v) {
    bytes.at(at) = static_cast<char>(v & 0xFF);
    return *this;
  }
  Config& u16(std::size_t at, unsigned v) { return u8(at, v).u8(at + 1, v >> 8); }
  Config& u32(std::size_t at, std::uint32_t v) { return u16(at, v & 0xFFFF).u16(at + 2, v >> 16); }
  // vendor/device, status "capability list", first capability at 0x40 (power management) -> 0x60
  // (PCI Express with the given port type, last)
  static Config pcie_bridge(std::size_t size, unsigned port_type) {
    Config c(size);
    c.u16(0x00, 0x1000).u16(0x02, 0xC030).u8(0x0E, 0x01).u16(0x06, 0x0010).u8(0x34, 0x40);
    c.u8(0x40, 0x01).u8(0x41, 0x60);
    c.u8(0x60, 0x10).u8(0x61, 0x00).u16(0x62, 0x0002 | (port_type << 4));
    return c;
  }
  // extended header: id, version 1, next offset
  Config& ext(std::size_t at, unsigned id, unsigned next) {
    return u32(at, id | (1u << 16) | (next << 20));
  }
  Config& acs(std::size_t at, unsigned control, unsigned next = 0) {
    return ext(at, 0x000D, next).u16(at + 4, 0x005F).u16(at + 6, control);
  }
};

} // namespace

TEST_CASE("ACS found behind another extended capability, with its control bits") {
  auto c = Config::pcie_bridge(4096, 6);
  c.ext(0x100, 0x0001, 0x148).acs(0x148, 0x001D);
  const auto p = parse_pci_config(c.bytes);
  CHECK(p.size == 4096);
  CHECK(p.vendor == 0x1000);
  CHECK(p.header_type == 1);
  CHECK(p.port_type == 6);
  REQUIRE(p.acs_state == AcsState::present);
  REQUIRE(p.acs);
  CHECK(p.acs->offset == 0x148);
  CHECK(p.acs->capability == 0x005F);
  CHECK(p.acs->control == 0x001D);
  CHECK(p.acs->source_validation());
  CHECK_FALSE(p.acs->translation_blocking());
  CHECK(p.acs->request_redirect());
  CHECK(p.acs->completion_redirect());
  CHECK(p.acs->upstream_forwarding());
  CHECK_FALSE(p.acs->egress_control());
  CHECK_FALSE(p.acs->direct_translated());
  CHECK(p.acs->redirects_p2p());
  CHECK(p.note.empty());
}

TEST_CASE("which ACS control bits count as redirecting peer-to-peer traffic") {
  struct Case {
    unsigned control;
    bool redirects;
  };
  const Case cases[] = {
      {0x0000, false}, {0x0001, false}, {0x0002, false}, {0x0004, true},  {0x0008, true},
      {0x0010, false}, {0x0020, true},  {0x0040, false}, {0x0051, false}, {0x007F, true},
  };
  for (const auto& k : cases) {
    INFO("control 0x" << std::hex << k.control);
    auto c = Config::pcie_bridge(4096, 6);
    c.acs(0x100, k.control);
    const auto p = parse_pci_config(c.bytes);
    REQUIRE(p.acs);
    CHECK(p.acs->redirects_p2p() == k.redirects);
  }
}

TEST_CASE("an extended list without ACS, or an empty one, means no ACS") {
  auto with_aer = Config::pcie_bridge(4096, 4);
  with_aer.ext(0x100, 0x0001, 0x150).ext(0x150, 0x0019, 0);
  CHECK(parse_pci_config(with_aer.bytes).acs_state == AcsState::absent);
  const auto empty = Config::pcie_bridge(4096, 4);
  const auto p = parse_pci_config(empty.bytes);
  CHECK(p.acs_state == AcsState::absent);
  CHECK(p.port_type == 4);
}

TEST_CASE("a short config file is unknown, never 'no ACS'") {
  auto full = Config::pcie_bridge(4096, 6);
  full.acs(0x100, 0x001D);
  const auto header = parse_pci_config(full.bytes.substr(0, 64)); // what a non-root read returns
  CHECK(header.acs_state == AcsState::unknown);
  CHECK_FALSE(header.acs);
  CHECK(header.note.find("64-byte header") != std::string::npos);
  CHECK(header.vendor == 0x1000);

  const auto conventional =
      parse_pci_config(full.bytes.substr(0, 256)); // no extended space (no ECAM)
  CHECK(conventional.acs_state == AcsState::unknown);
  CHECK(conventional.port_type == 6);
  CHECK(conventional.note.find("256 bytes") != std::string::npos);

  for (std::size_t n : {0u, 1u, 2u, 10u, 63u}) {
    INFO(n);
    const auto tiny = parse_pci_config(full.bytes.substr(0, n));
    CHECK(tiny.acs_state == AcsState::unknown);
    CHECK_FALSE(tiny.note.empty());
  }
}

TEST_CASE("a device without a PCI Express capability has no ACS") {
  Config conventional(256);
  conventional.u16(0x00, 0x8086).u16(0x06, 0x0010).u8(0x34, 0x40).u8(0x40, 0x01).u8(0x41, 0x00);
  const auto p = parse_pci_config(conventional.bytes);
  CHECK(p.acs_state == AcsState::absent);
  CHECK_FALSE(p.port_type);
  Config no_list(4096);
  no_list.u16(0x00, 0x8086); // status bit 4 clear: no capability list at all
  CHECK(parse_pci_config(no_list.bytes).acs_state == AcsState::absent);
}

TEST_CASE("malformed and looping capability lists end with a note, not a hang or a crash") {
  SECTION("the extended list points at itself") {
    auto c = Config::pcie_bridge(4096, 6);
    c.ext(0x100, 0x0001, 0x100);
    const auto p = parse_pci_config(c.bytes);
    CHECK(p.acs_state == AcsState::unknown);
    CHECK(p.note == "extended capability list loops at 0x100");
  }
  SECTION("a two-element extended loop") {
    auto c = Config::pcie_bridge(4096, 6);
    c.ext(0x100, 0x0001, 0x200).ext(0x200, 0x0002, 0x100);
    CHECK(parse_pci_config(c.bytes).note == "extended capability list loops at 0x100");
  }
  SECTION("the extended list points back into the standard space") {
    auto c = Config::pcie_bridge(4096, 6);
    c.u32(0x100, 0x0001 | (1u << 16) | (0x040u << 20));
    const auto p = parse_pci_config(c.bytes);
    CHECK(p.acs_state == AcsState::unknown);
    CHECK(p.note.find("points back") != std::string::npos);
  }
  SECTION("the extended list continues past the end of a cut file") {
    auto c = Config::pcie_bridge(4096, 6);
    c.ext(0x100, 0x0001, 0x400).acs(0x400, 0x001D);
    const auto p = parse_pci_config(c.bytes.substr(0, 0x200));
    CHECK(p.acs_state == AcsState::unknown);
    CHECK(p.note.find("beyond the 512 bytes read") != std::string::npos);
  }
  SECTION("the ACS capability itself is cut off") {
    auto c = Config::pcie_bridge(4096, 6);
    c.ext(0x100, 0x0001, 0x1FC).ext(0x1FC, 0x000D, 0);
    const auto p = parse_pci_config(c.bytes.substr(0, 0x200));
    CHECK(p.acs_state == AcsState::unknown);
    CHECK(p.note.find("cut off") != std::string::npos);
  }
  SECTION("the standard list loops, but the extended list is still walked") {
    auto c = Config::pcie_bridge(4096, 6);
    c.u8(0x61, 0x40); // PCI Express capability -> back to 0x40
    c.acs(0x100, 0x0004);
    const auto p = parse_pci_config(c.bytes);
    CHECK(p.acs_state == AcsState::present);
    CHECK(p.note == "capability list loops at 0x40");
  }
  SECTION("a capability pointer into the header") {
    auto c = Config::pcie_bridge(256, 6);
    c.u8(0x34, 0x10);
    const auto p = parse_pci_config(c.bytes);
    CHECK(p.acs_state == AcsState::unknown);
    CHECK(p.note.find("into the header") != std::string::npos);
  }
  SECTION("a device that reads as all ones") {
    const auto p = parse_pci_config(std::string(4096, '\xFF'));
    CHECK(p.acs_state == AcsState::unknown);
    CHECK(p.note.find("all ones") != std::string::npos);
  }
  SECTION("an extended space that reads as all ones") {
    auto c = Config::pcie_bridge(4096, 6);
    c.u32(0x100, 0xFFFFFFFF);
    CHECK(parse_pci_config(c.bytes).acs_state == AcsState::unknown);
  }
}

TEST_CASE("random bytes never crash the parser and always give a consistent answer") {
  std::mt19937 rng(20261130);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> size(0, 4096);
  for (int i = 0; i < 3000; ++i) {
    std::string bytes(static_cast<std::size_t>(size(rng)), '\0');
    for (auto& b : bytes) {
      b = static_cast<char>(byte(rng));
    }
    if (bytes.size() > 0x34 && i % 2 == 0) {
      bytes[0x06] = 0x10; // half of them with a capability list to walk
    }
    const auto p = parse_pci_config(bytes);
    CHECK(p.size == bytes.size());
    CHECK((p.acs_state == AcsState::present) == p.acs.has_value());
    if (p.acs_state == AcsState::unknown) {
      CHECK_FALSE(p.note.empty());
    }
  }
}
