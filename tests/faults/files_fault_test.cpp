// Fault injection on snapshot roots (--root): what the kernel and a damaged disk can hand the
// checker. Each case asserts the right verdict or finding, valid JSON, no hang (guarded run).
#include "faults/fault_support.hpp"

#include <catch2/catch.hpp>

#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>

using namespace gpf::fault;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

Outcome check_json(const std::string& root, RunOptions options = {}) {
  return run_watched({"--root", root, "--format", "json"}, options);
}

// The run finished by itself, with a verdict, and printed a JSON report.
json verdict_json(const Outcome& r) {
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  REQUIRE_FALSE(r.signal.has_value());
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  return json::parse(r.out); // throws (fails the test) on invalid JSON or UTF-8
}

// The evidence of every finding with this id (one per failed probe), joined.
std::string all_evidence(const json& report, const std::string& id) {
  std::string all;
  for (const auto& f : report.at("findings")) {
    if (f.at("id") == id) {
      all += evidence(f);
    }
  }
  return all;
}

} // namespace

TEST_CASE("faults: unreadable files (a non-root user via setpriv) are probe failures, not passes") {
  TempDir root("healthy-4gpu");
  fs::permissions(root.path() / "proc/driver/nvidia/version", fs::perms::none);
  fs::permissions(root.path() / "proc/modules", fs::perms::none);
  if (::geteuid() != 0 || !has_program("setpriv")) {
    WARN(
        "skipped: needs root and setpriv to read as uid 65534 (the injected-error case below still runs)");
    return;
  }
  RunOptions as_nobody;
  as_nobody.wrapper = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  const auto r = check_json(root.str(), as_nobody);
  if (r.exit_code == 127 || r.err.find("setpriv") != std::string::npos) {
    WARN("skipped: setpriv could not drop privileges here: " << r.err);
    return;
  }
  const json j = verdict_json(r);
  CHECK(j.at("verdict") != "pass");
  CHECK_THAT(all_evidence(j, "probe.failed"),
             Catch::Contains("proc/driver/nvidia/version: Permission denied") &&
                 Catch::Contains("/proc/modules: Permission denied"));
}

TEST_CASE("faults: injected read errors (unreadable.json) are reported with the OS reason") {
  TempDir root("healthy-4gpu");
  root.write("unreadable.json", R"({"proc/driver/nvidia/version": "Input/output error",
                                    "proc/driver/nvidia/gpus/0000:18:00.0/information": "Permission denied"})");
  const json j = verdict_json(check_json(root.str()));
  CHECK(j.at("verdict") != "pass");
  CHECK_THAT(all_evidence(j, "probe.failed"),
             Catch::Contains("proc/driver/nvidia/version: Input/output error"));
  const json* gpu = finding(j, "gpu.information-unreadable");
  REQUIRE(gpu);
  CHECK_THAT(evidence(*gpu), Catch::Contains("Permission denied"));
  // what the checker could not read is not a node fault: not checked, a warning, GPU kept
  CHECK(gpu->at("severity") == "warn");
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("usable_gpus") == 4);
}

// The driver's directory there but not to be looked at: unknown, never driver.not-loaded (whose
// remedy would have the user reinstall a loaded driver).
TEST_CASE(
    "faults: proc/driver/nvidia that cannot be looked at is a probe failure, not a driver not loaded") {
  SECTION("an error the snapshot recorded for the directory") {
    TempDir root("healthy-4gpu");
    fs::remove_all(root.path() / "proc/driver/nvidia");
    root.write("unreadable.json", R"({"proc/driver/nvidia": "Permission denied"})");
    const json j = verdict_json(check_json(root.str()));
    CHECK(finding(j, "driver.not-loaded") == nullptr);
    CHECK_THAT(all_evidence(j, "probe.failed"),
               Catch::Contains("proc/driver/nvidia: Permission denied"));
  }
  SECTION("a parent without search permission, read as another user") {
    TempDir root("healthy-4gpu");
    fs::permissions(root.path() / "proc/driver", fs::perms::none);
    if (::geteuid() != 0 || !has_program("setpriv")) {
      WARN("skipped: needs root and setpriv to read as uid 65534");
      fs::permissions(root.path() / "proc/driver", fs::perms::owner_all);
      return;
    }
    RunOptions as_nobody;
    as_nobody.wrapper = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    const auto r = check_json(root.str(), as_nobody);
    fs::permissions(root.path() / "proc/driver", fs::perms::owner_all); // so TempDir can remove it
    if (r.exit_code == 127 || r.err.find("setpriv") != std::string::npos) {
      WARN("skipped: setpriv could not drop privileges here: " << r.err);
      return;
    }
    const json j = verdict_json(r);
    CHECK(j.at("verdict") != "pass");
    CHECK(finding(j, "driver.not-loaded") == nullptr);
    CHECK_THAT(all_evidence(j, "probe.failed"),
               Catch::Contains("proc/driver/nvidia: Permission denied"));
  }
}

TEST_CASE("faults: a directory where a file is expected is a probe failure naming it") {
  TempDir root("healthy-4gpu");
  fs::remove(root.path() / "proc/driver/nvidia/version");
  fs::create_directory(root.path() / "proc/driver/nvidia/version");
  const json j = verdict_json(check_json(root.str()));
  CHECK(j.at("verdict") != "pass");
  CHECK_THAT(all_evidence(j, "probe.failed"),
             Catch::Contains("proc/driver/nvidia/version: Is a directory"));
}

TEST_CASE("faults: symlink loops inside the root are errors, not hangs") {
  TempDir root("healthy-4gpu");
  const auto p = root.path();
  fs::remove(p / "proc/modules");
  fs::create_symlink("modules", p / "proc/modules"); // loops on itself
  const auto gpu = p / "proc/driver/nvidia/gpus/0000:18:00.0";
  fs::remove_all(gpu);
  fs::create_symlink("0000:18:00.0", gpu);
  fs::create_directory_symlink("../../..", p / "sys/devices/loop"); // a cycle for directory walks
  fs::create_symlink("b", p / "proc/a");
  fs::create_symlink("a", p / "proc/b");
  const auto r = check_json(root.str());
  const json j = verdict_json(r);
  CHECK(r.seconds < 30);
  CHECK(j.at("verdict") != "pass");
  CHECK_THAT(all_evidence(j, "probe.failed"),
             Catch::Contains("/proc/modules: Too many levels of symbolic links"));
  const json* info = finding(j, "gpu.information-unreadable");
  REQUIRE(info);
  CHECK_THAT(evidence(*info),
             Catch::Contains("0000:18:00.0/information: Too many levels of symbolic links"));
}

TEST_CASE(
    "faults: a 100 MiB single-line dmesg.txt is cut, flagged, and the Xid after it still found") {
  TempDir root("log-xid79-one-of-8");
  const std::string log = root.read("dmesg.txt");
  root.write("dmesg.txt", std::string(100u << 20, 'A') + "\n" + log);
  const auto r = check_json(root.str());
  const json j = verdict_json(r);
  CHECK(j.at("verdict") == "warn");
  CHECK(finding(j, "gpu.fallen-off-bus"));
  const json* damaged = finding(j, "log.damaged-input");
  REQUIRE(damaged);
  CHECK_THAT(evidence(*damaged), Catch::Contains("1 line longer than 64 KiB was cut"));
}

TEST_CASE("faults: CRLF line ends and NUL bytes in host files") {
  TempDir root("log-xid79-one-of-8");
  const auto crlf = [&](const std::string& rel) {
    std::string text = root.read(rel);
    std::string out;
    for (char c : text) {
      out += c == '\n' ? std::string("\r\n") : std::string(1, c);
    }
    root.write(rel, out);
  };
  for (const char* rel : {"proc/modules", "proc/driver/nvidia/version", "proc/driver/nvidia/params",
                          "proc/sys/kernel/osrelease", "dmesg.txt"}) {
    crlf(rel);
  }
  for (const auto& entry : fs::directory_iterator(root.path() / "proc/driver/nvidia/gpus")) {
    crlf(fs::relative(entry.path() / "information", root.path()).string());
  }
  SECTION("CRLF: the same facts and the same Xid as with LF") {
    const json j = verdict_json(check_json(root.str()));
    CHECK(j.at("verdict") == "warn");
    CHECK(j.at("facts").at("driver").at("version") == "550.54.14");
    CHECK(j.at("gpus").size() == 8);
    CHECK(finding(j, "gpu.fallen-off-bus"));
  }
  SECTION("NUL bytes inside the log and files: flagged in the log, facts still read") {
    const std::string log = root.read("dmesg.txt");
    root.write("dmesg.txt", std::string("\0\0\0garbage\0\r\n", 14) + log + std::string("\0\0", 2));
    root.write("proc/modules", std::string(64, '\0') + root.read("proc/modules"));
    const json j = verdict_json(check_json(root.str()));
    CHECK(finding(j, "gpu.fallen-off-bus"));
    const json* damaged = finding(j, "log.damaged-input");
    REQUIRE(damaged);
    CHECK_THAT(evidence(*damaged), Catch::Contains("NUL"));
    CHECK(j.at("facts").at("driver").at("version") == "550.54.14");
  }
}

TEST_CASE("faults: a root on a read-only bind mount judges the same as a writable one") {
  TempDir root("log-xid79-one-of-8");
  TempDir mount_point;
  if (::mount(root.str().c_str(), mount_point.str().c_str(), nullptr, MS_BIND, nullptr) != 0) {
    WARN("skipped: mount --bind is not permitted here: " << std::strerror(errno));
    return;
  }
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point.str()};
  if (::mount(nullptr, mount_point.str().c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY,
              nullptr) != 0) {
    WARN("skipped: cannot remount the bind read-only: " << std::strerror(errno));
    return;
  }
  const json on_ro = verdict_json(check_json(mount_point.str()));
  const json on_rw = verdict_json(check_json(root.str()));
  CHECK(on_ro.at("verdict") == on_rw.at("verdict"));
  CHECK(on_ro.at("findings").size() == on_rw.at("findings").size());
  CHECK(finding(on_ro, "gpu.fallen-off-bus"));
}

TEST_CASE("faults: environ with invalid entries: skipped lines, valid UTF-8 evidence, no crash") {
  TempDir root("healthy-4gpu");
  root.write("environ", std::string("no-equals-sign\n=value-without-name\n\xff\xfe=\xc0\xaf\n") +
                            "CUDA_VISIBLE_DEVICES=\xff,GPU-zz,-1,99999999999999999999\n" +
                            "NCCL_P2P_DISABLE=" + std::string(200000, 'x') + "\n" +
                            std::string("EMBEDDED=a\0b\n", 13) + "CUDA_DEVICE_ORDER=\r\n");
  const auto r = check_json(root.str());
  const json j = verdict_json(r);
  CHECK(j.at("verdict") == "fail"); // the job's CUDA_VISIBLE_DEVICES names no usable GPU
  const json* unknown = finding(j, "env.cuda-visible-devices-unknown-entry");
  REQUIRE(unknown);
  CHECK_THAT(evidence(*unknown), Catch::Contains("GPU-zz")); // quoted, the invalid byte replaced
  CHECK(finding(j, "env.nccl-p2p-disabled")); // the huge value was still read as a value
  for (const auto& f : j.at("findings")) {
    for (const auto& e : f.at("evidence")) {
      CHECK(e.get<std::string>().size() <= 4096); // evidence stays capped whatever the input
    }
  }
}
