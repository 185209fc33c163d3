// The read-only guarantee, checked on the system calls: gpu-preflight under
// `strace -f -e trace=%file,%process` (a live check with the fake driver so the CUDA stage runs,
// and snapshot replays) opens nothing for writing, creates, renames, removes, links or chmods
// nothing, and executes no program, except the output the user asked for (--json-out FILE).
#include "faults/fault_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>

using namespace gpf::fault;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;

namespace {

struct Trace {
  bool ran = false;
  std::string why_not; // why strace could not trace here
  std::vector<std::string> lines;
  Outcome outcome;
};

Trace traced(const TempDir& scratch, const std::vector<std::string>& args,
             const std::map<std::string, std::string>& env = {}) {
  Trace t;
  if (!has_program("strace")) {
    t.why_not = "strace is not installed (scripts/install-deps.sh installs it)";
    return t;
  }
  const std::string log = (scratch.path() / "strace.log").string();
  RunOptions options;
  options.env = env;
  // LeakSanitizer stops the world with ptrace, which a traced process cannot do.
  options.env["ASAN_OPTIONS"] = "detect_leaks=0";
  options.wrapper = {"strace", "-f", "-qq", "-e", "trace=%file,%process", "-o", log};
  t.outcome = run_watched(args, options);
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    t.lines.push_back(line);
  }
  if (t.lines.empty() || t.outcome.err.find("ptrace") != std::string::npos) {
    t.why_not = "strace cannot trace here: " + t.outcome.err;
    return t;
  }
  t.ran = true;
  return t;
}

// Every line of the trace that changes the file system or runs a program, outside `allowed`
// (paths the user asked to be written; a temporary sibling "<path>.*" counts as the same output).
std::vector<std::string> violations(const Trace& t, const std::vector<std::string>& allowed) {
  static const std::regex writes(
      R"re((^|\s|>)(open|openat|openat2|creat)\(.*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC))re");
  static const std::regex changes(
      R"re((^|\s|>)(creat|unlink|unlinkat|rename|renameat|renameat2|rmdir|mkdir|mkdirat|mknod|mknodat|chmod|fchmodat|chown|lchown|fchownat|link|linkat|symlink|symlinkat|truncate|utimensat|setxattr|lsetxattr|removexattr)\()re");
  static const std::regex exec(R"re((^|\s)(execve|execveat)\("([^"]*)")re");
  std::vector<std::string> bad;
  bool first_exec = true;
  for (const auto& line : t.lines) {
    const bool is_allowed =
        std::any_of(allowed.begin(), allowed.end(), [&](const std::string& path) {
          return line.find("\"" + path + "\"") != std::string::npos ||
                 line.find("\"" + path + ".") != std::string::npos;
        });
    std::smatch m;
    if (std::regex_search(line, m, exec)) {
      // The wrapper's exec of the binary itself, then only the binary again (its own children).
      if (!(m[3] == k_binary || first_exec)) {
        bad.push_back(line);
      }
      first_exec = false;
      continue;
    }
    if ((std::regex_search(line, writes) || std::regex_search(line, changes)) && !is_allowed) {
      bad.push_back(line);
    }
  }
  return bad;
}

void check_clean(const Trace& t, const std::vector<std::string>& allowed = {}) {
  const auto bad = violations(t, allowed);
  for (const auto& line : bad) {
    UNSCOPED_INFO("writes or executes: " << line);
  }
  CHECK(bad.empty());
}

} // namespace

TEST_CASE("read-only: a live check with the CUDA stage changes nothing and runs no program") {
  TempDir scratch;
  const auto t = traced(scratch, {"check", "--format", "json", "--libcuda", k_fake_libcuda},
                        {{"FAKE_CUDA_GPUS", "2"}});
  if (!t.ran) {
    WARN("skipped: " << t.why_not);
    return;
  }
  INFO("stderr: " << t.outcome.err);
  REQUIRE_FALSE(t.outcome.timed_out);
  CHECK((t.outcome.exit_code == 0 || t.outcome.exit_code == 1));
  CHECK_NOTHROW(nlohmann::json::parse(t.outcome.out));
  // The CUDA stage ran: its children were forked and the fake library was opened.
  const bool forked = std::any_of(t.lines.begin(), t.lines.end(), [](const std::string& l) {
    return l.find("clone") != std::string::npos || l.find("fork") != std::string::npos;
  });
  CHECK(forked);
  const bool loaded = std::any_of(t.lines.begin(), t.lines.end(), [](const std::string& l) {
    return l.find(k_fake_libcuda) != std::string::npos;
  });
  CHECK(loaded);
  check_clean(t);
}

TEST_CASE("read-only: snapshot replays, with and without the fake driver, change nothing") {
  TempDir scratch;
  for (const char* name :
       {"healthy-4gpu", "log-xid79-one-of-8", "cuda-replay-gpu-hung", "garbage-files"}) {
    INFO("fixture " << name);
    const auto t = traced(scratch, {"--root", fixture(name), "--format", "json"});
    if (!t.ran) {
      WARN("skipped: " << t.why_not);
      return;
    }
    CHECK_NOTHROW(nlohmann::json::parse(t.outcome.out));
    check_clean(t);
  }
  const auto live_cuda = traced(
      scratch, {"--root", fixture("cuda-4gpu"), "--libcuda", k_fake_libcuda, "--format", "text"},
      {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_CRASH", "1"}});
  if (live_cuda.ran) {
    CHECK(live_cuda.outcome.exit_code == 0);
    check_clean(live_cuda);
  }
}

TEST_CASE(
    "read-only: --json-out writes that file and nothing else, and the check sees that write") {
  TempDir scratch;
  const std::string out = (scratch.path() / "report.json").string();
  const auto t = traced(scratch, {"--root", fixture("healthy-4gpu"), "--json-out", out});
  if (!t.ran) {
    WARN("skipped: " << t.why_not);
    return;
  }
  CHECK(t.outcome.exit_code == 0);
  CHECK_NOTHROW(nlohmann::json::parse(std::ifstream(out)));
  check_clean(t, {out});
  // Without the allowance the same trace shows the write: the check can see writes at all.
  CHECK_FALSE(violations(t, {}).empty());
}

TEST_CASE("one scan of the process table: with --skip-busy and a live CUDA probe each "
          "/proc/<pid>/fd is listed once") {
  // The gpu-processes probe lists every process's open files; --skip-busy and the holders of a
  // busy GPU come from its facts, not from a second (and third) scan of their own.
  TempDir scratch;
  const auto t =
      traced(scratch, {"check", "--format", "json", "--skip-busy", "--libcuda", k_fake_libcuda},
             {{"FAKE_CUDA_GPUS", "2"}});
  if (!t.ran) {
    WARN("skipped: " << t.why_not);
    return;
  }
  REQUIRE_FALSE(t.outcome.timed_out);
  const auto report = nlohmann::json::parse(t.outcome.out);
  static const std::regex listing(R"re(open(at)?\([^"]*"/proc/([0-9]+)/fd",[^)]*O_DIRECTORY)re");
  std::map<std::string, int> listed;
  for (const auto& line : t.lines) {
    std::smatch m;
    if (std::regex_search(line, m, listing)) {
      ++listed[m[2]];
    }
  }
  CHECK(listed.size() > 1); // the scan ran: at least init's and the checker's own fd directory
  for (const auto& [pid, times] : listed) {
    INFO("/proc/" << pid << "/fd");
    CHECK(times == 1);
  }
  // The CUDA stage ran live (unless a process on this machine holds a GPU: then --skip-busy
  // skipped it, which the probe's message says).
  for (const auto& p : report.at("probes")) {
    if (p.at("name") == "cuda" && p.at("status") != "skipped") {
      const bool loaded = std::any_of(t.lines.begin(), t.lines.end(), [](const std::string& l) {
        return l.find(k_fake_libcuda) != std::string::npos;
      });
      CHECK(loaded);
    } else if (p.at("name") == "cuda") {
      CHECK_THAT(p.at("message").get<std::string>(), Catch::StartsWith("--skip-busy"));
    }
  }
}
