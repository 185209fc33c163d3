// Launch integration end to end: exec, the one-line format, snapshot capture and exact replay.
#include "gpf/capture/snapshot.hpp"
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

using namespace gpf::test;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The parts of a report a replay must reproduce: everything but durations.
// A report without what differs from one run to the next: durations and the time of the check.
json comparable(const std::string& out) {
  json j = json::parse(out);
  for (auto& p : j.at("probes")) {
    p.erase("duration_ms");
  }
  j.erase("checked_at");
  return j;
}

} // namespace

TEST_CASE(
    "exec launches on the recommended GPUs with arguments verbatim and returns the command's status") {
  const auto r = run_preflight(
      {"exec", "--root", fixture("environ-restricted"), "--", "sh", "-c",
       "printf '%s|%s|%s|%s' \"$CUDA_VISIBLE_DEVICES\" \"$CUDA_DEVICE_ORDER\" \"$1\" \"$2\"; exit 7",
       "sh", "two words", "it's \"quoted\" $HOME"});
  CHECK(r.exit_code == 7);
  CHECK(r.out == "1,3|PCI_BUS_ID|two words|it's \"quoted\" $HOME");
  CHECK(r.err == "gpu-preflight: PASS 2/4 GPUs CUDA_VISIBLE_DEVICES=1,3\n");
}

TEST_CASE("exec refuses to start on a failing node and does not run the command") {
  TempDir t;
  const auto marker = (t.path / "ran").string();
  const auto r = run_preflight({"exec", "--root", fixture("missing-uvm"), "--", "touch", marker});
  CHECK(r.exit_code == 1);
  CHECK_FALSE(fs::exists(marker));
  CHECK(r.err.find("devnode.nvidia-uvm-missing") != std::string::npos);
  CHECK(r.out.empty());

  const auto strict =
      run_preflight({"exec", "--strict", "--root", fixture("excluded-gpu"), "--", "touch", marker});
  CHECK(strict.exit_code == 1);
  CHECK_FALSE(fs::exists(marker));
  CHECK(
      run_preflight({"exec", "--root", fixture("excluded-gpu"), "--", "touch", marker}).exit_code ==
      0);
  CHECK(fs::exists(marker));
}

TEST_CASE("exec: 127 for a missing command, quiet and keep-env") {
  const auto missing =
      run_preflight({"exec", "--root", fixture("healthy-4gpu"), "--", "gpf-no-such-command-xyz"});
  CHECK(missing.exit_code == 127);
  CHECK(missing.err.find("gpf-no-such-command-xyz: command not found") != std::string::npos);

  const auto kept =
      run_preflight({"exec", "--quiet", "--keep-env", "--root", fixture("excluded-gpu"), "--", "sh",
                     "-c", "printf '%s' \"${CUDA_VISIBLE_DEVICES-unset}\""},
                    {{"CUDA_VISIBLE_DEVICES", "\x01unset"}});
  CHECK(kept.exit_code == 0);
  CHECK(kept.out == "unset");
  CHECK(kept.err.empty());
}

TEST_CASE("line format: one line of at most 80 bytes for every fixture") {
  const std::regex form(
      R"(((PASS (\d+/\d+ GPUs|\d+ MIG)|WARN (\d+/\d+ GPUs|\d+ MIG)(: [a-z0-9.-]+( [0-9a-f:.]+| ACS [0-9a-f:.]+)?( \+\d+ GPUs?)?( \+\d+ more)?)?)(; driver [ -~]+)?|FAIL [a-z0-9.-]+( [0-9a-f:.]+| ACS [0-9a-f:.]+)?( \+\d+ GPUs?)?( \+\d+ more)?)\n)");
  for (const auto& name : sweep_fixtures()) {
    INFO(name);
    const auto r = run_preflight({"--root", fixture(name), "--format", "line"});
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK(r.out.size() <= 81);
    CHECK(std::regex_match(r.out, form));
  }
  // then the versions where they fit (not on a FAIL: a drain reason stays the same); here they
  // do not fit in 80 bytes
  CHECK(run_preflight({"--root", fixture("excluded-gpu"), "--format", "line"}).out ==
        "WARN 3/4 GPUs: gpu.excluded 0000:3a:00.0\n");
  CHECK(run_preflight({"--root", fixture("healthy-4gpu"), "--format", "line"}).out ==
        "PASS 4/4 GPUs; driver 550.54.14 (open), kernel 5.15.0-91-generic\n");
  CHECK(run_preflight({"--root", fixture("nouveau"), "--format", "line"}).out ==
        "FAIL module.nouveau-loaded +1 more\n"); // the cause, before the driver it keeps away
}

TEST_CASE("snapshot then replay reproduces the verdict, findings and facts of every fixture") {
  for (const auto& name : sweep_fixtures()) {
    INFO(name);
    TempDir t;
    const auto dir = (t.path / "snap").string();
    const auto cap = run_preflight({"snapshot", "--root", fixture(name), "-o", dir});
    REQUIRE(cap.exit_code == 0);
    const auto original = run_preflight({"--root", fixture(name), "--format", "json"});
    const auto replay = run_preflight({"--root", dir, "--format", "json"});
    CHECK(replay.exit_code == original.exit_code);
    CHECK(comparable(replay.out) == comparable(original.out));
  }
}

TEST_CASE("snapshot of this machine replays to the same verdict and findings") {
  TempDir t;
  const auto dir = (t.path / "snap").string();
  REQUIRE(run_preflight({"snapshot", "-o", dir}).exit_code == 0);
  const auto live = comparable(run_preflight({"--format", "json"}).out);
  const auto replay = comparable(run_preflight({"--root", dir, "--format", "json"}).out);
  CHECK(replay.at("verdict") == live.at("verdict"));
  CHECK(replay.at("findings") == live.at("findings"));
  CHECK(replay.at("cuda_visible_devices") == live.at("cuda_visible_devices"));
  CHECK(replay.at("facts").at("kernel") == live.at("facts").at("kernel"));
  // the kernel log travels with the snapshot: its text, or the reason it could not be read
  CHECK((fs::exists(fs::path(dir) / "dmesg.txt") || fs::exists(fs::path(dir) / "dmesg.error")));
  CHECK(replay.at("facts").at("log").at("gpu_events") ==
        live.at("facts").at("log").at("gpu_events"));
  CHECK(replay.at("facts").at("log").at("host_events") ==
        live.at("facts").at("log").at("host_events"));
}

TEST_CASE(
    "snapshot keeps the kernel log given with --dmesg as dmesg.txt, and the replay finds the same events") {
  const auto log = fixture("log-xid79-one-of-8") + "/dmesg.txt";
  TempDir t;
  const auto dir = (t.path / "snap").string();
  REQUIRE(run_preflight({"snapshot", "--root", fixture("healthy-4gpu"), "--dmesg", log, "-o", dir})
              .exit_code == 0);
  std::ifstream kept(fs::path(dir) / "dmesg.txt", std::ios::binary);
  std::ifstream original(log, std::ios::binary);
  CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) ==
        std::string(std::istreambuf_iterator<char>(original), {}));
  const auto direct =
      run_preflight({"--root", fixture("healthy-4gpu"), "--dmesg", log, "--format", "json"});
  const auto replay = run_preflight({"--root", dir, "--format", "json"});
  CHECK(replay.exit_code == direct.exit_code);
  CHECK(comparable(replay.out).at("findings") == comparable(direct.out).at("findings"));

  // a log from standard input cannot be read twice: said, not silently dropped
  TempDir u;
  const auto from_stdin = run_preflight({"snapshot", "--root", fixture("healthy-4gpu"), "--dmesg",
                                         "-", "-o", (u.path / "snap").string()});
  CHECK(from_stdin.out.find("standard input") != std::string::npos);
}

TEST_CASE(
    "snapshot refuses a non-empty directory; --force replaces only a previous snapshot, and says what it captured") {
  TempDir t;
  std::ofstream(t.path / "existing") << "x";
  const auto refused =
      run_preflight({"snapshot", "--root", fixture("healthy-4gpu"), "-o", t.path.string()});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("is not empty") != std::string::npos);
  const auto not_snapshot = run_preflight(
      {"snapshot", "--force", "--root", fixture("healthy-4gpu"), "-o", t.path.string()});
  CHECK(not_snapshot.exit_code == 2);
  CHECK(not_snapshot.err.find("not a previous snapshot") != std::string::npos);
  CHECK(fs::exists(t.path / "existing"));

  const auto dir = (t.path / "snap").string();
  REQUIRE(run_preflight({"snapshot", "--root", fixture("missing-uvm"), "-o", dir}).exit_code == 0);
  CHECK(run_preflight({"snapshot", "--root", fixture("healthy-4gpu"), "-o", dir}).exit_code == 2);
  const auto forced =
      run_preflight({"snapshot", "--force", "--root", fixture("healthy-4gpu"), "-o", dir});
  CHECK(forced.exit_code == 0);
  CHECK(forced.out.find("captured ") == 0);
  const json record = json::parse(std::ifstream(fs::path(dir) / "capture.json"));
  CHECK(record.at("captured").size() >= 10);
  CHECK(run_preflight({"--root", dir, "--format", "line"}).out ==
        "PASS 4/4 GPUs; driver 550.54.14 (open), kernel 5.15.0-91-generic\n");
}

TEST_CASE("snapshot never follows a link out of the tree it copies") {
  TempDir src;
  fs::create_directories(src.path / "proc/driver/nvidia");
  fs::create_symlink("/etc/os-release", src.path / "proc/driver/nvidia/version");
  TempDir out;
  const auto dir = (out.path / "snap").string();
  REQUIRE(run_preflight({"snapshot", "--root", src.path.string(), "-o", dir}).exit_code == 0);
  CHECK_FALSE(fs::exists(fs::path(dir) /
                         "proc/driver/nvidia/version")); // the link led nowhere inside the root
}

TEST_CASE("unreadable inputs are recorded and replay as the same error") {
  TempDir src;
  fs::create_directories(src.path / "proc/sys/kernel");
  std::ofstream(src.path / "proc/sys/kernel/osrelease") << "6.1.0-18-amd64\n";
  std::ofstream(src.path / "proc/modules") << "nvidia 1 0 - Live 0x0\n";
  std::ofstream(src.path / "unreadable.json") << R"({"proc/modules": "Permission denied"})";
  TempDir out;
  const auto dir = (out.path / "snap").string();
  const auto cap = run_preflight({"snapshot", "--root", src.path.string(), "-o", dir});
  REQUIRE(cap.exit_code == 0);
  CHECK(cap.out.find("not readable: proc/modules: Permission denied") != std::string::npos);
  const auto replay = run_preflight({"--root", dir, "--format", "json"});
  CHECK(replay.out.find("proc/modules: Permission denied") != std::string::npos);
}

TEST_CASE("snapshot groups what it could not read: one line per kind, with a count") {
  TempDir src;
  fs::create_directories(src.path / "proc/sys/kernel");
  std::ofstream(src.path / "proc/sys/kernel/osrelease") << "6.1.0-18-amd64\n";
  std::ofstream(src.path / "proc/modules") << "nvidia 1 0 - Live 0x0\n";
  std::string unreadable = R"({"proc/modules": "Permission denied")";
  for (int pid = 100; pid < 196; ++pid) {
    fs::create_directories(src.path / "proc" / std::to_string(pid));
    std::ofstream(src.path / "proc" / std::to_string(pid) / "comm") << "python3\n";
    unreadable += ", \"proc/" + std::to_string(pid) + "/fd\": \"Permission denied\"";
  }
  std::ofstream(src.path / "unreadable.json") << unreadable << "}";
  TempDir out;
  const auto dir = (out.path / "snap").string();
  const auto cap = run_preflight(
      {"--no-nvml", "snapshot", "--root", src.path.string(), "--mode", "0640", "-o", dir});
  REQUIRE(cap.exit_code == 0);
  INFO(cap.out);
  CHECK(cap.out.find("not readable: proc/modules: Permission denied\n") != std::string::npos);
  CHECK(cap.out.find("not readable: proc/<pid>/fd: Permission denied (96 processes)\n") !=
        std::string::npos);
  CHECK(cap.out.find("proc/100/fd") == std::string::npos);
  // as an ordinary user it says that root captures more; as root there is nothing to add
  // ... with a command that runs as given: the binary by its path (sudo's secure_path may not
  // hold it), --force (DIR now holds a snapshot) and the options of this capture
  const std::string hint = fmt::format("as root the snapshot holds them: `sudo {} --no-nvml "
                                       "snapshot --force --root {} --mode 0640 -o {}`, then "
                                       "`sudo chown -R ",
                                       fs::canonical(GPF_BINARY).string(), src.path.string(), dir);
  std::string flat = cap.out; // wrapped: the hint may continue on the next line
  for (auto at = flat.find("\n   "); at != std::string::npos; at = flat.find("\n   ", at)) {
    flat.replace(at, 4, " ");
  }
  CHECK((flat.find(hint) != std::string::npos) == (::geteuid() != 0));
  // wrapped as the check's text is
  const auto narrow = run_preflight({"snapshot", "--root", src.path.string(), "-o", dir, "--force"},
                                    {{"COLUMNS", "60"}});
  REQUIRE(narrow.exit_code == 0);
  INFO(narrow.out);
  std::istringstream lines(narrow.out);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 60);
  }
}
