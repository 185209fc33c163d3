// Writes as root (ctest label security): `snapshot -o DIR` and `--json-out FILE` against links,
// devices, FIFOs and directories planted in the way, a link race made deterministic with the
// GPF_TEST_CAPTURE_PAUSE hook, and a write that fails part-way (RLIMIT_FSIZE stands in for a full
// disk).
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <thread>

using namespace gpf::test;
namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Names beside dir that a capture's private directory would have (".NAME.gpf-XXXXXX").
int leftovers_beside(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir.parent_path())) {
    n +=
        e.path().filename().string().rfind("." + dir.filename().string() + ".gpf-", 0) == 0 ? 1 : 0;
  }
  return n;
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st.st_mode & 07777;
}

// gpu-preflight-hooked: the checker with the capture pause (tests/support/capture_pause.cpp).
RunResult run_hooked(const std::vector<std::string>& args, const fs::path& pause) {
  std::vector<std::string> argv{GPF_HOOKED_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, {{"GPF_TEST_CAPTURE_PAUSE", pause.string()}});
}
} // namespace

TEST_CASE(
    "security: snapshot writes a fresh directory, 0700 with 0600 files, or the mode asked for") {
  TempDir t;
  const auto dir = t.path / "snap";
  REQUIRE(run_preflight({"snapshot", "--root", fixture("healthy-4gpu"), "-o", dir.string()})
              .exit_code == 0);
  CHECK(mode_of(dir) == 0700);
  CHECK(mode_of(dir / "capture.json") == 0600);
  CHECK(mode_of(dir / "proc/driver/nvidia/version") == 0600);
  CHECK(mode_of(dir / "proc") == 0700);
  CHECK(leftovers_beside(dir) == 0);

  const auto shared = t.path / "shared";
  REQUIRE(run_preflight({"snapshot", "--mode", "0640", "--root", fixture("healthy-4gpu"), "-o",
                         shared.string()})
              .exit_code == 0);
  CHECK(mode_of(shared) == 0750);
  CHECK(mode_of(shared / "capture.json") == 0640);
  const auto bad = run_preflight({"snapshot", "--mode", "999", "--root", fixture("healthy-4gpu"),
                                  "-o", (t.path / "x").string()});
  CHECK(bad.exit_code == 2);
  CHECK_FALSE(fs::exists(t.path / "x"));
}

TEST_CASE("security: links planted while the probes run are never written through") {
  TempDir t;
  const auto victim = t.path / "victim";
  std::ofstream(victim) << "root-only\n";
  const auto victim_dir = t.path / "victim-dir";
  fs::create_directories(victim_dir);
  const auto dir = t.path / "snap";
  const auto pause = t.path / "pause";

  // The capture stops after probing; links go into its private directory and onto DIR itself.
  auto run = std::async(std::launch::async, [&] {
    return run_hooked({"snapshot", "--root", fixture("healthy-4gpu"), "-o", dir.string()}, pause);
  });
  std::string work;
  for (int i = 0; i < 3000 && work.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    work = slurp(pause);
    if (!work.empty() && work.back() == '\n') {
      work.pop_back();
    } else {
      work.clear();
    }
  }
  REQUIRE_FALSE(work.empty());
  fs::create_symlink(victim, fs::path(work) / "capture.json");
  fs::create_symlink(victim, fs::path(work) / "date");
  fs::create_symlink(victim_dir, fs::path(work) / "proc");
  fs::create_symlink(victim_dir, dir);
  fs::remove(pause);
  const auto r = run.get();
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("refusing to write") != std::string::npos);
  CHECK(r.err.find("partial snapshot was removed") != std::string::npos);
  CHECK(slurp(victim) == "root-only\n");
  CHECK(fs::is_empty(victim_dir));
  CHECK(fs::is_symlink(dir)); // left as planted, not replaced or followed
  CHECK(leftovers_beside(dir) == 0);
}

TEST_CASE("security: a directory made non-empty during the capture is not written into") {
  TempDir t;
  const auto dir = t.path / "snap";
  const auto pause = t.path / "pause";
  auto run = std::async(std::launch::async, [&] {
    return run_hooked({"snapshot", "--root", fixture("healthy-4gpu"), "-o", dir.string()}, pause);
  });
  for (int i = 0; i < 3000 && !fs::exists(pause); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::this_thread::sleep_for(
      std::chrono::milliseconds(50)); // the path is written after the file is made
  fs::create_directories(dir);
  fs::create_symlink("/etc/passwd", dir / "date");
  fs::remove(pause);
  const auto r = run.get();
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is not empty") != std::string::npos);
  CHECK(fs::is_symlink(dir / "date"));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  CHECK(leftovers_beside(dir) == 0);
}

TEST_CASE("security: --force replaces a previous snapshot whole, links in it included, and nothing "
          "else") {
  TempDir t;
  const auto victim = t.path / "victim";
  std::ofstream(victim) << "root-only\n";
  const auto dir = t.path / "snap";
  REQUIRE(
      run_preflight({"snapshot", "--root", fixture("missing-uvm"), "-o", dir.string()}).exit_code ==
      0);
  // planted links where the next capture writes, and a stale file the new capture does not make
  fs::create_symlink(victim, dir / "date");
  fs::remove_all(dir / "proc");
  fs::create_symlink(t.path, dir / "proc");
  std::ofstream(dir / "dmesg.error") << "stale\n";

  const auto forced =
      run_preflight({"snapshot", "--force", "--root", fixture("healthy-4gpu"), "-o", dir.string()});
  REQUIRE(forced.exit_code == 0);
  CHECK(slurp(victim) == "root-only\n");
  CHECK_FALSE(fs::is_symlink(dir / "proc"));
  CHECK_FALSE(fs::exists(dir / "dmesg.error")); // stale files do not survive into the new capture
  CHECK(fs::exists(t.path / "victim")); // removing the old tree did not follow its proc link
  CHECK(leftovers_beside(dir) == 0);
  CHECK(run_preflight({"--root", dir.string(), "--format", "line"}).out.rfind("PASS 4/4 GPUs", 0) ==
        0);

  // --force never empties a directory that is not a snapshot
  const auto other = t.path / "other";
  fs::create_directories(other);
  std::ofstream(other / "precious") << "x";
  const auto not_snapshot = run_preflight(
      {"snapshot", "--force", "--root", fixture("healthy-4gpu"), "-o", other.string()});
  CHECK(not_snapshot.exit_code == 2);
  CHECK(fs::exists(other / "precious"));
}

TEST_CASE("security: a write that fails part-way is exit 2 naming the file, and the partial "
          "snapshot is removed") {
  TempDir t;
  const auto log = t.path / "big.log";
  {
    std::ofstream out(log);
    for (int i = 0; i < 4000; ++i) {
      out << "[    1.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  line " << i
          << "\n";
    }
  }
  const auto dir = t.path / "snap";
  // RLIMIT_FSIZE (16 blocks of 512 bytes) fails the write with EFBIG the way a full disk fails it
  // with ENOSPC; SIGXFSZ is ignored so the write returns the error instead of killing the process.
  const auto r = run_program({"sh", "-c", "trap '' XFSZ; ulimit -f 16; exec \"$0\" \"$@\"",
                              GPF_BINARY, "snapshot", "--root", fixture("healthy-4gpu"), "--dmesg",
                              log.string(), "-o", dir.string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("cannot write " + (dir / "dmesg.txt").string()) != std::string::npos);
  CHECK(r.err.find("partial snapshot was removed") != std::string::npos);
  CHECK_FALSE(fs::exists(dir));
  CHECK(leftovers_beside(dir) == 0);
}

TEST_CASE("security: --json-out replaces a regular file only; links, devices, FIFOs and "
          "directories are refused") {
  TempDir t;
  const auto victim = t.path / "victim";
  std::ofstream(victim) << "keep\n";
  const auto base =
      std::vector<std::string>{"--root", fixture("healthy-4gpu"), "--format", "line", "--json-out"};
  const auto with = [&](const fs::path& p) {
    auto args = base;
    args.push_back(p.string());
    return run_preflight(args);
  };

  fs::create_symlink(victim, t.path / "to-file");
  fs::create_symlink("/dev/null", t.path / "to-device");
  fs::create_symlink("/dev/zero", t.path / "to-zero");
  REQUIRE(::mkfifo((t.path / "fifo").c_str(), 0600) == 0);
  fs::create_directories(t.path / "dir");
  for (const auto& [name, kind] :
       std::vector<std::pair<std::string, std::string>>{{"to-file", "a symbolic link"},
                                                        {"to-device", "a symbolic link"},
                                                        {"to-zero", "a symbolic link"},
                                                        {"fifo", "a FIFO"},
                                                        {"dir", "a directory"}}) {
    INFO(name);
    const auto started = std::chrono::steady_clock::now();
    const auto r = with(t.path / name); // a FIFO opened for writing would block here for ever
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("it is " + kind + ", not a regular file") != std::string::npos);
  }
  CHECK(slurp(victim) == "keep\n");
  CHECK(fs::is_symlink(t.path / "to-file"));
  CHECK(fs::is_empty(t.path / "dir"));
  // a device node itself (the path of /dev/null), not only a link to one
  CHECK(with("/dev/null").exit_code == 2);

  // a regular file is replaced, and no temporary file is left beside it
  const auto report = t.path / "report.json";
  std::ofstream(report) << "old";
  CHECK(with(report).exit_code == 0);
  CHECK(nlohmann::json::parse(slurp(report)).at("verdict") == "pass");
  int temporaries = 0;
  for (const auto& e : fs::directory_iterator(t.path)) {
    temporaries += e.path().filename().string().rfind("report.json.", 0) == 0 ? 1 : 0;
  }
  CHECK(temporaries == 0);
}

TEST_CASE("security: the capture test hook never writes through a planted link") {
  // (only in gpu-preflight-hooked, the test build's second binary)
  TempDir t;
  const auto victim = t.path / "victim";
  { std::ofstream(victim) << "untouched\n"; }
  const auto pause = t.path / "pause";
  fs::create_symlink(victim, pause);
  const auto r = run_hooked(
      {"snapshot", "--root", fixture("healthy-4gpu"), "-o", (t.path / "snap").string()}, pause);
  CHECK(r.exit_code == 0);
  CHECK(slurp(victim) == "untouched\n");
}

TEST_CASE("security: the installed binary has no capture hook") {
  TempDir t;
  const auto pause = t.path / "pause";
  const auto r = run_preflight(
      {"snapshot", "--root", fixture("healthy-4gpu"), "-o", (t.path / "snap").string()},
      {{"GPF_TEST_CAPTURE_PAUSE", pause.string()}});
  CHECK(r.exit_code == 0);
  CHECK_FALSE(fs::exists(pause)); // the hooked binary would have created it and waited
}
