// The checker's own failures are exit 2, never a verdict about the node (ctest label security): a
// fork that cannot happen (RLIMIT_NPROC, as uid 65534 because root is exempt from it), a --root it
// cannot read, an empty --root, a stdout that cannot be written (/dev/full), NaN or negative
// timeouts.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

using namespace gpf::test;
namespace fs = std::filesystem;

namespace {

bool has_program(const std::string& name) {
  return run_program({"sh", "-c", "command -v " + name + " >/dev/null"}).exit_code == 0;
}

// Runs the binary as uid/gid 65534, with an optional process limit for that user.
RunResult as_nobody(const std::vector<std::string>& args, const std::string& nproc = "",
                    const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> argv{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  if (!nproc.empty()) {
    argv.insert(argv.end(), {"prlimit", "--nproc=" + nproc + ":" + nproc, "--"});
  }
  argv.push_back(GPF_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program(argv, env);
}

// Whether uid 65534 may run the binary at all (a checkout under a private home directory is not
// searchable for it): without that the tests below would measure setpriv, not the checker.
bool nobody_can_run() {
  return as_nobody({"--version"}).exit_code == 0;
}

} // namespace

TEST_CASE("security: a CUDA child that cannot be forked is exit 2, not a failed GPU") {
  if (::geteuid() != 0 || !has_program("setpriv") || !has_program("prlimit")) {
    WARN("skipped: needs root, setpriv and prlimit (RLIMIT_NPROC does not bind root, so the test "
         "runs as uid 65534)");
    return;
  }
  // Unlimited: the same command works as that user (the limit is what fails it below).
  const std::vector<std::string> args{"--root",         fixture("cuda-4gpu"), "--libcuda",
                                      GPF_FAKE_LIBCUDA, "--format",           "line"};
  const std::map<std::string, std::string> env{{"FAKE_CUDA_GPUS", "4"}};
  if (!nobody_can_run()) {
    WARN(
        "skipped: uid 65534 cannot run the binary here (a directory on its path is not searchable)");
    return;
  }
  if (const auto path = unreadable_to_nobody({fixture("cuda-4gpu"), GPF_FAKE_LIBCUDA});
      !path.empty()) {
    WARN("skipped: uid 65534 cannot read " << path
                                           << " (a directory on its path is not searchable)");
    return;
  }
  const auto fine = as_nobody(args, "", env);
  REQUIRE(fine.exit_code == 0);
  // 1: not even the enumeration child; 2: the enumeration child but no per-GPU child.
  // In the sanitizer build LeakSanitizer's exit-time check needs a thread of its own, which the
  // same limit refuses (a fatal error, exit 1): it is not what this test is about.
  auto limited_env = env;
  limited_env.emplace("ASAN_OPTIONS", "detect_leaks=0");
  for (const char* limit : {"1", "2"}) {
    INFO("RLIMIT_NPROC " << limit << ": " << fine.out);
    const auto r = as_nobody(args, limit, limited_env);
    if (r.err.find("prlimit") != std::string::npos && r.exit_code != 2) {
      WARN("skipped: prlimit could not set the limit: " << r.err);
      return;
    }
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("fork: Resource temporarily unavailable") &&
                          Catch::Contains("the checker could not run; no verdict"));
    CHECK_THAT(r.err, !Catch::Contains("failed CUDA start-up"));
  }
}

TEST_CASE("security: an unreadable or empty --root is exit 2, not a host without a driver") {
  CHECK(run_preflight({"--root", "", "--format", "line"}).exit_code == 2);
  CHECK(run_preflight({"--root=", "--format", "line"}).exit_code == 2);
  if (::geteuid() != 0 || !has_program("setpriv") || !nobody_can_run()) {
    WARN("skipped: needs root, setpriv, and a binary uid 65534 can run, to read as uid 65534");
    return;
  }
  TempDir t;
  fs::copy(fixture("healthy-4gpu"), t.path / "snap",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  ::chmod(t.path.c_str(), 0755);
  ::chmod((t.path / "snap").c_str(), 0700); // root's; uid 65534 may not list or read it
  const auto r = as_nobody({"--root", (t.path / "snap").string(), "--format", "line"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("Permission denied"));
}

TEST_CASE("security: a stdout that cannot be written is exit 2 in every format and subcommand") {
  const std::string root = fixture("healthy-4gpu");
  const std::vector<std::vector<std::string>> commands{
      {"--root", root, "--format", "text"},
      {"--root", root, "--format", "json"},
      {"--root", root, "--format", "env"},
      {"--root", root, "--format", "line"},
      {"check", "--root", fixture("missing-uvm"), "--format", "line"},
      {"rules"},
      {"rules", "--format", "json"},
      {"explain", "cuda.gpu-failed"},
      {"--help"},
      {"--version"},
  };
  for (const auto& args : commands) {
    std::string shown;
    for (const auto& a : args) {
      shown += a + " ";
    }
    INFO(shown);
    std::vector<std::string> argv{"sh", "-c", "exec \"$0\" \"$@\" >/dev/full", GPF_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    const auto r = run_program(argv);
    CHECK(r.exit_code == 2);
    CHECK_FALSE(r.err.empty());
  }
  TempDir t;
  const auto snap = run_program({"sh", "-c", "exec \"$0\" \"$@\" >/dev/full", GPF_BINARY,
                                 "snapshot", "--root", root, "-o", (t.path / "snap").string()});
  CHECK(snap.exit_code == 2);
}

TEST_CASE("security: NaN, infinite and negative --cuda-timeout are refused by the parser") {
  for (const char* bad : {"nan", "NaN", "-1", "inf", "-inf", "0", "1e9", "x"}) {
    INFO(bad);
    const auto r = run_preflight(
        {"--root", fixture("healthy-4gpu"), "--cuda-timeout", bad, "--format", "line"});
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
  }
  CHECK(run_preflight(
            {"--root", fixture("healthy-4gpu"), "--cuda-timeout", "2.5", "--format", "line"})
            .exit_code == 0);
}

TEST_CASE("security: a user-named input that does not exist, or a FIFO as --rules, is exit 2") {
  // the user's typo is not a verdict about the node: --dmesg gave exit 0, --libcuda exit 1, and
  // --rules on a FIFO blocked forever
  const auto dmesg = run_preflight({"--root", fixture("healthy-4gpu"), "--dmesg", "/no/such/log"});
  CHECK(dmesg.exit_code == 2);
  CHECK(dmesg.err.find("--dmesg: /no/such/log: No such file or directory") != std::string::npos);
  const auto lib =
      run_preflight({"--root", fixture("healthy-4gpu"), "--libcuda", "/no/such/libcuda.so.1"});
  CHECK(lib.exit_code == 2);
  CHECK(lib.err.find("--libcuda: /no/such/libcuda.so.1: No such file or directory") !=
        std::string::npos);
  const auto nvml =
      run_preflight({"--root", fixture("healthy-4gpu"), "--libnvml", "/no/such/libnvidia-ml.so.1"});
  CHECK(nvml.exit_code == 2);
  CHECK(nvml.err.find("--libnvml: /no/such/libnvidia-ml.so.1: No such file or directory") !=
        std::string::npos);
  char dir[] = "/tmp/gpf-fifo-XXXXXX";
  REQUIRE(::mkdtemp(dir) != nullptr);
  const std::string fifo = std::string(dir) + "/rules.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  RunOptions options;
  options.limit_s = 20;
  const auto rules = run_binary({"--root", fixture("healthy-4gpu"), "--rules", fifo}, options);
  ::unlink(fifo.c_str());
  ::rmdir(dir);
  REQUIRE_FALSE(rules.timed_out);
  CHECK(rules.exit_code == 2);
  CHECK(rules.err.find("--rules: " + fifo + ": not a regular file") != std::string::npos);
}
