#include "gpf/host/host.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace gpf;
namespace fs = std::filesystem;
using gpf::test::TempDir;

TEST_CASE("a snapshot root must be an existing directory") {
  CHECK_FALSE(Host::snapshot("/nonexistent/gpf-root").ok());
  TempDir t;
  t.write("file", "x");
  const auto not_dir = Host::snapshot(t.path / "file");
  REQUIRE_FALSE(not_dir.ok());
  CHECK(not_dir.error().message.find("not a directory") != std::string::npos);
  CHECK(Host::snapshot(t.path).ok());
}

TEST_CASE("snapshot reads are rooted, capped and report the OS reason") {
  TempDir t;
  t.write("proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
  t.write("big", std::string(5000, 'a'));
  t.write("environ", "CUDA_VISIBLE_DEVICES=0,1\n# comment\nnoequals\nEMPTY=\n");
  fs::create_directories(t.path / "adir");
  const auto host = Host::snapshot(t.path).value();
  CHECK_FALSE(host.is_live());
  CHECK(host.kernel_release().value() == "5.15.0-91-generic");

  const auto capped = host.read_file("big", 100);
  REQUIRE(capped.ok());
  CHECK(capped->data.size() == 100);
  CHECK(capped->truncated);
  CHECK_FALSE(host.read_file("big")->truncated);

  const auto missing = host.read_file("proc/driver/nvidia/version");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "No such file or directory");
  CHECK(host.read_file("adir").error().message == "Is a directory");
  CHECK_FALSE(host.read_file("/etc/passwd").ok());      // absolute paths are refused
  CHECK_FALSE(host.read_file("../../etc/passwd").ok()); // so is climbing out

  CHECK(host.environment().get("CUDA_VISIBLE_DEVICES") == "0,1");
  CHECK(host.environment().get("EMPTY") == "");
  CHECK_FALSE(host.environment().get("noequals"));
  CHECK(host.environment().vars().size() == 2);
}

TEST_CASE("a snapshot without osrelease says why") {
  TempDir t;
  const auto host = Host::snapshot(t.path).value();
  const auto release = host.kernel_release();
  REQUIRE_FALSE(release.ok());
  CHECK(release.error().message.find("osrelease") != std::string::npos);
}

TEST_CASE("device nodes: stand-in files and the devices.json manifest") {
  TempDir t;
  t.write("dev/nvidiactl", "");
  t.write("dev/nvidia0", "");
  t.write(
      "devices.json",
      R"({"dev/nvidia0": {"type": "char", "major": 195, "minor": 0, "mode": "0660", "rw_access": false},
                              "dev/nvidia-uvm": {"type": "missing"}})");
  const auto host = Host::snapshot(t.path).value();
  const auto ctl = host.stat_node("dev/nvidiactl");
  CHECK(ctl.exists());
  CHECK(ctl.stand_in);
  CHECK_FALSE(ctl.major);
  CHECK_FALSE(ctl.rw_access); // unknown, not wrong

  const auto n0 = host.stat_node("dev/nvidia0");
  CHECK(n0.type == NodeType::char_device);
  CHECK_FALSE(n0.stand_in);
  CHECK(n0.major == 195u);
  CHECK(n0.mode == 0660u);
  CHECK(n0.rw_access == false);

  CHECK_FALSE(host.stat_node("dev/nvidia-uvm").exists());
  CHECK_FALSE(host.stat_node("dev/nvidia7").exists());
  CHECK(host.manifest_error().empty());
}

TEST_CASE("a broken manifest is reported, not fatal") {
  TempDir t;
  t.write("devices.json", "{not json");
  const auto host = Host::snapshot(t.path).value();
  CHECK_FALSE(host.manifest_error().empty());
}

TEST_CASE("the live host answers the kernel release and lists directories sorted") {
  const auto host = Host::live();
  CHECK(host.is_live());
  CHECK_FALSE(host.kernel_release().value().empty());
  TempDir t;
  t.write("b", "");
  t.write("a", "");
  const auto snap = Host::snapshot(t.path).value();
  CHECK(snap.list_dir("").ok() == false); // "" is not a valid relative path
  const auto names =
      Host::snapshot(t.path.parent_path()).value().list_dir(t.path.filename().string());
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"a", "b"});
}

TEST_CASE("snapshot symlinks resolve inside the root, never on the real host") {
  TempDir t;
  t.write("etc/release", "snapshot's own\n");
  fs::create_directories(t.path / "proc/driver/nvidia");
  fs::create_symlink("/etc/release", t.path / "proc/driver/nvidia/version"); // absolute
  fs::create_symlink("../../../../../../etc/passwd",
                     t.path / "proc/driver/nvidia/params"); // climbs
  fs::create_symlink("loop", t.path / "proc/driver/nvidia/loop");
  fs::create_symlink("/dev/null", t.path / "proc/driver/nvidia/registry");
  const auto host = Host::snapshot(t.path).value();
  CHECK(host.read_file("proc/driver/nvidia/version")->data == "snapshot's own\n");
  const auto climbed = host.read_file("proc/driver/nvidia/params");
  CHECK_FALSE(climbed.ok()); // resolves to the snapshot's etc/passwd, which does not exist
  const auto loop = host.read_file("proc/driver/nvidia/loop");
  REQUIRE_FALSE(loop.ok());
  CHECK(loop.error().message == "Too many levels of symbolic links");
  CHECK_FALSE(host.stat_node("proc/driver/nvidia/registry").exists()); // not the real /dev/null
}

TEST_CASE("the access log records what a check read") {
  TempDir t;
  t.write("proc/modules", "nvidia 1 0 - Live 0x0\n");
  t.write("dev/nvidiactl", "");
  auto host = Host::snapshot(t.path).value();
  std::vector<HostAccess> log;
  host.record_into(&log);
  (void)host.read_file("proc/modules");
  (void)host.read_file("proc/driver/nvidia/version");
  (void)host.stat_node("dev/nvidiactl");
  host.record_into(nullptr);
  (void)host.read_file("proc/modules");
  REQUIRE(log.size() == 3);
  CHECK(log[0].path == "proc/modules");
  CHECK(log[0].found);
  CHECK_FALSE(log[1].found);
  CHECK(log[1].error.empty());
  CHECK(log[2].kind == HostAccess::Kind::node);
}

TEST_CASE("dir_links lists a directory and reads the chosen links as read_link would, "
          "recording each") {
  TempDir t;
  fs::create_directories(t.path / "proc/7/fd");
  fs::create_symlink("/dev/nvidia0", t.path / "proc/7/fd/3");
  fs::create_symlink("/etc/passwd", t.path / "proc/7/fd/4"); // read as text, never followed
  fs::create_symlink("socket:[1234]", t.path / "proc/7/fd/5");
  t.write("proc/7/fd/6", "not a link");
  fs::create_symlink("pipe:[9]", t.path / "proc/7/fd/8");
  fs::create_symlink("/dev/null", t.path / "proc/7/fd/9");
  t.write("unreadable.json", R"({"proc/7/fd/8": "Permission denied"})");
  auto host = Host::snapshot(t.path).value();
  std::vector<HostAccess> log;
  host.record_into(&log);
  std::vector<std::string> offered;
  const auto links = host.dir_links("proc/7/fd", [&](std::vector<std::string> names) {
    offered = names;
    names.pop_back(); // "9" left out: the caller's choice
    return names;
  });
  host.record_into(nullptr);
  REQUIRE(links.ok());
  CHECK(offered == std::vector<std::string>{"3", "4", "5", "6", "8", "9"}); // sorted, as list_dir
  REQUIRE(links->names == std::vector<std::string>{"3", "4", "5", "6", "8"});
  REQUIRE(links->targets.size() == links->names.size());
  for (std::size_t i = 0; i < links->names.size(); ++i) {
    INFO(links->names[i]);
    const auto one = host.read_link("proc/7/fd/" + links->names[i]);
    CHECK(links->targets[i].ok() == one.ok());
    if (one.ok()) {
      CHECK(*links->targets[i] == *one);
    }
  }
  CHECK(*links->targets[0] == "/dev/nvidia0");
  CHECK(*links->targets[1] == "/etc/passwd");
  CHECK_FALSE(links->targets[3].ok()); // a plain file
  REQUIRE_FALSE(links->targets[4].ok());
  CHECK(links->targets[4].error().message == "Permission denied"); // unreadable.json's reason
  // the listing and each chosen link are one access each, so a snapshot of the check copies
  // exactly these links
  std::size_t link_reads = 0;
  std::size_t dir_reads = 0;
  for (const auto& a : log) {
    link_reads += a.kind == HostAccess::Kind::link ? 1 : 0;
    dir_reads += a.kind == HostAccess::Kind::directory ? 1 : 0;
  }
  CHECK(link_reads == links->names.size());
  CHECK(dir_reads == 1);
  CHECK_FALSE(host.dir_links("proc/8/fd", [](auto names) { return names; }).ok()); // absent
}
