// The Host reads the topology probes added (read_link, the sysfs link and attribute helpers,
// filesystem_space) and how a capture
// records them: links recreated as links, statvfs.json, binary config files byte-exact.
#include "gpf/capture/snapshot.hpp"
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

using namespace gpf;
namespace fs = std::filesystem;
using gpf::test::TempDir;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}
} // namespace

TEST_CASE("read_link returns the stored target and resolves the directories inside the root") {
  TempDir t;
  t.write("sys/devices/pci0000:00/0000:00:01.0/config", "x");
  t.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  t.link("escape", "/"); // an absolute link: inside a snapshot it names the snapshot's root
  t.link("sys/abs", "/sys/devices");
  const auto host = Host::snapshot(t.path).value();
  CHECK(host.read_link("sys/bus/pci/devices/0000:00:01.0").value() ==
        "../../../devices/pci0000:00/0000:00:01.0");
  CHECK(host.read_link("sys/abs").value() == "/sys/devices");
  // a link reached through a directory link: resolved in the root, never on the real host
  CHECK(host.read_link("escape/sys/bus/pci/devices/0000:00:01.0").value() ==
        "../../../devices/pci0000:00/0000:00:01.0");
  CHECK(host.read_link("sys/devices").error().message == "Invalid argument"); // not a link
  CHECK(host.read_link("sys/nothing").error().message == "No such file or directory");
  CHECK_FALSE(host.read_link("../etc").ok());
  CHECK_FALSE(host.read_link("/etc/alternatives").ok());
}

TEST_CASE("link targets are joined to the link's directory and stay inside the root") {
  struct Case {
    const char* link;
    const char* target;
    std::optional<std::string> joined;
  };
  const Case cases[] = {
      {"sys/bus/pci/devices/0000:01:00.0", "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
       "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"},
      {"sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/iommu_group",
       "../../../../kernel/iommu_groups/7", "sys/kernel/iommu_groups/7"},
      {"sys/class/iommu/dmar0", "./../../devices/virtual/iommu/dmar0",
       "sys/devices/virtual/iommu/dmar0"},
      {"sys/bus/pci/devices/x", "/sys/devices/pci0000:00/x",
       "sys/devices/pci0000:00/x"},                   // absolute: inside the root
      {"sys/x", "../../../etc/passwd", std::nullopt}, // climbs above the root
      {"x", "..", std::nullopt},
      {"a/b", "", std::nullopt},
  };
  for (const auto& c : cases) {
    INFO(c.link << " -> " << c.target);
    CHECK(join_link_target(c.link, c.target) == c.joined);
  }
}

TEST_CASE(
    "read_attribute: trimmed text, absent is nullopt, unreadable is an error with the reason") {
  TempDir t;
  t.write("sys/class/net/eth0/speed", "25000\n");
  t.write("sys/class/net/eth0/operstate", "  up \n");
  t.write("sys/class/net/eth0/queues/x", "");
  t.write("unreadable.json", R"({"sys/class/net/eth0/duplex": "Permission denied"})");
  t.write("sys/class/net/eth0/duplex", "full\n");
  const auto host = Host::snapshot(t.path).value();
  CHECK(host.read_attribute("sys/class/net/eth0/speed").value() ==
        std::optional<std::string>("25000"));
  CHECK(host.read_attribute("sys/class/net/eth0/operstate").value() ==
        std::optional<std::string>("up"));
  CHECK(host.read_attribute("sys/class/net/eth0/mtu").value() == std::nullopt); // absent
  CHECK(host.read_attribute("sys/class/net/eth9/speed").value() == std::nullopt);
  // recorded as unreadable: an error, never absent
  CHECK(host.read_attribute("sys/class/net/eth0/duplex").error().message == "Permission denied");
  // there but not a file: an error with the OS reason
  CHECK(host.read_attribute("sys/class/net/eth0/queues").error().message == "Is a directory");
  CHECK_FALSE(host.read_attribute("../etc/passwd").ok());
  // cut at the cap like any read
  CHECK(host.read_attribute("sys/class/net/eth0/speed", 2).value() ==
        std::optional<std::string>("25"));
}

TEST_CASE(
    "resolve_link: a sysfs link to a root-relative path; absent, not a link, unreadable, escaping") {
  TempDir t;
  t.write("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0/operstate", "up\n");
  t.link("sys/class/net/eth0", "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0");
  t.link("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0/device",
         "../../../0000:01:00.0");
  t.link("sys/class/net/abs", "/sys/devices/pci0000:00");
  t.link("sys/class/net/escape", "../../../../../etc");
  t.link("sys/class/net/denied", "../../devices/x");
  t.write("sys/class/net/plain/operstate", "down\n");
  t.write("unreadable.json", R"({"sys/class/net/denied": "Permission denied"})");
  const auto host = Host::snapshot(t.path).value();
  // a relative link with "..", joined to the link's directory
  CHECK(host.resolve_link("sys/class/net/eth0").value() ==
        std::optional<std::string>("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0"));
  // a device's `device` link, below the directory the class link resolved to: its PCI function
  const auto eth0 = host.resolve_link("sys/class/net/eth0").value().value();
  CHECK(host.resolve_link(eth0 + "/device").value() ==
        std::optional<std::string>("sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"));
  // an absolute target names a path inside the root
  CHECK(host.resolve_link("sys/class/net/abs").value() ==
        std::optional<std::string>("sys/devices/pci0000:00"));
  CHECK(host.resolve_link("sys/class/net/escape").error().message ==
        "link target ../../../../../etc leaves the root");
  CHECK(host.resolve_link("sys/class/net/denied").error().message == "Permission denied");
  CHECK(host.resolve_link("sys/class/net/lo").value() == std::nullopt);    // absent
  CHECK(host.resolve_link("sys/class/net/plain").value() == std::nullopt); // not a link
  CHECK(host.link_target("sys/class/net/eth0").value() ==
        std::optional<std::string>("../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/net/eth0"));
  CHECK(host.link_target("sys/class/net/plain").value() == std::nullopt);
  CHECK(host.link_target("sys/class/net/denied").error().message == "Permission denied");
  CHECK_FALSE(host.link_target("/sys/class/net/eth0").ok());
}

TEST_CASE("filesystem_space: statvfs.json in a snapshot, statvfs live") {
  TempDir t;
  t.write(
      "statvfs.json",
      R"({"dev/shm": {"size_bytes": 67108864, "available_bytes": 1024}, "gone": {"exists": false},
                              "bad": {"size_bytes": "many"}, "also-bad": 5})");
  const auto host = Host::snapshot(t.path).value();
  const auto shm = host.filesystem_space("dev/shm").value();
  CHECK(shm.exists);
  CHECK(shm.recorded);
  CHECK(shm.size_bytes == 67108864u);
  CHECK(shm.available_bytes == 1024u);
  CHECK_FALSE(host.filesystem_space("gone")->exists);
  CHECK_FALSE(host.filesystem_space("bad")->recorded);
  CHECK_FALSE(host.filesystem_space("also-bad")->recorded);
  CHECK_FALSE(host.filesystem_space("other")->recorded);

  const auto live = Host::live();
  const auto tmp = live.filesystem_space("tmp");
  REQUIRE(tmp.ok());
  CHECK(tmp->exists);
  CHECK(tmp->size_bytes > 0);
  CHECK_FALSE(live.filesystem_space("gpf-no-such-dir-xyz")->exists);
}

TEST_CASE(
    "a capture recreates links, records statvfs and keeps binary config byte-exact when redacting") {
  TempDir src;
  std::string config(4096, '\0');
  config[0] = '\xde';
  config[1] = '\x10';
  config[100] = '\n'; // a line break inside binary data must survive redaction
  src.write("sys/devices/pci0000:00/0000:00:01.0/config", config); // the bridge above the GPU
  const std::string gpu = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
  src.write(gpu + "/vendor", "0x10de\n");
  src.write("sys/kernel/iommu_groups/3/type", "DMA\n");
  src.link(gpu + "/iommu_group", "../../../../kernel/iommu_groups/3");
  src.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  src.link("sys/bus/pci/devices/0000:01:00.0",
           "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
  src.write("statvfs.json", R"({"dev/shm": {"size_bytes": 1048576, "available_bytes": 1048576}})");
  src.write("proc/driver/nvidia/gpus/0000:01:00.0/information",
            "Model: \t\t NVIDIA H100\nDevice Minor: \t 0\n");
  src.write(
      "proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (u@h)  d\n");
  src.write("proc/sys/kernel/osrelease", "5.15.0\n");

  auto host = Host::snapshot(src.path).value();
  TempDir out;
  CaptureOptions options;
  options.out = out.path / "snap";
  options.redact = true;
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  const auto report = capture_snapshot(host, probe_options, options);
  REQUIRE(report.ok());
  const fs::path snap = options.out;
  CHECK(fs::is_symlink(snap / "sys/bus/pci/devices/0000:00:01.0"));
  CHECK(fs::read_symlink(snap / "sys/bus/pci/devices/0000:00:01.0") ==
        "../../../devices/pci0000:00/0000:00:01.0");
  CHECK(fs::is_symlink(snap / "sys/bus/pci/devices/0000:01:00.0"));
  CHECK(fs::is_symlink(snap / (gpu + "/iommu_group")));
  CHECK(slurp(snap / "sys/devices/pci0000:00/0000:00:01.0/config") == config);
  CHECK(slurp(snap / "statvfs.json").find("\"size_bytes\": 1048576") != std::string::npos);

  // the replay sees what the source showed
  const auto replay = Host::snapshot(snap).value();
  CHECK(replay.filesystem_space("dev/shm")->size_bytes == 1048576u);
  ProbeOptions no_cuda;
  no_cuda.no_cuda = true;
  const auto a = collect_facts(Host::snapshot(src.path).value(), no_cuda);
  const auto b = collect_facts(replay, no_cuda);
  REQUIRE(a.topology.pcie.gpus.size() == 1);
  REQUIRE(b.topology.pcie.gpus.size() == 1);
  CHECK(b.topology.pcie.gpus[0].path == a.topology.pcie.gpus[0].path);
  CHECK(b.topology.pcie.gpus[0].iommu_group == std::optional<std::string>("3"));
  CHECK(b.topology.iommu.group_type == a.topology.iommu.group_type);
}

TEST_CASE(
    "read_link and filesystem_space are recorded for a capture; 'not a link' is an answer, not an error") {
  TempDir src;
  src.link("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
  src.write("sys/devices/pci0000:00/0000:00:01.0/vendor", "0x8086\n");
  src.write("unreadable.json", R"({"sys/denied": "Permission denied"})");
  auto host = Host::snapshot(src.path).value();
  std::vector<HostAccess> log;
  host.record_into(&log);
  CHECK(host.read_link("sys/bus/pci/devices/0000:00:01.0").ok());
  CHECK_FALSE(host.read_link("sys/devices").ok());
  CHECK(host.read_link("sys/denied").error().message == "Permission denied");
  CHECK(host.filesystem_space("dev/shm").ok());
  host.record_into(nullptr);
  REQUIRE(log.size() == 4);
  CHECK(log[0].kind == HostAccess::Kind::link);
  CHECK(log[0].found);
  CHECK(log[0].error.empty());
  CHECK_FALSE(log[1].found); // a directory, not a link
  CHECK(log[1].error.empty());
  CHECK(log[2].error == "Permission denied");
  CHECK(log[3].kind == HostAccess::Kind::filesystem);
}
