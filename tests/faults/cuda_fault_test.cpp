// Fault injection in the CUDA stage (the fake driver, tests/fake_cuda) and on the output side:
// a driver hanging in cuInit deaf to SIGTERM and SIGINT, a child crashing with SIGSEGV, the
// checker itself interrupted mid-stage, and a reader that goes away (`| head -c 10`). Each
// asserts a prompt end, the right finding or a clear message, and no child left behind.
#include "faults/fault_support.hpp"

#include <catch2/catch.hpp>

#include <signal.h>

#include <fstream>
#include <sstream>
#include <thread>

using namespace gpf::fault;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

std::vector<std::string> live_args(const std::string& root, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--root", root, "--libcuda", k_fake_libcuda, "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

void check_no_child_left(const Outcome& r) {
  const auto left = still_present(r.children_seen);
  for (const auto& [pid, state] : left) {
    UNSCOPED_INFO("child " << pid << " still present, state " << state);
  }
  CHECK(left.empty());
}

} // namespace

TEST_CASE(
    "faults cuda: cuInit hangs ignoring SIGTERM and SIGINT -> cuda.init-hung at the deadline") {
  RunOptions options;
  options.env = {{"FAKE_CUDA_GPUS", "4"},
                 {"FAKE_CUDA_INIT_HANG", "1"},
                 {"FAKE_CUDA_IGNORE_SIGTERM", "1"},
                 {"FAKE_CUDA_IGNORE_SIGINT", "1"}};
  const auto r = run_watched(live_args(fixture("cuda-4gpu"), {"--cuda-timeout", "2"}), options);
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  const json j = r.json();
  CHECK(j.at("verdict") == "fail");
  const json* f = finding(j, "cuda.init-hung");
  REQUIRE(f);
  CHECK_THAT(evidence(*f), Catch::Contains("cuInit did not finish within"));
  CHECK(r.seconds < 2.0 + 4.0);
  CHECK_FALSE(r.children_seen.empty()); // the stage did start children
  check_no_child_left(r);
}

TEST_CASE("faults cuda: a GPU child crashing with SIGSEGV drops that GPU, names the signal") {
  RunOptions options;
  options.env = {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_SEGV", "2"}};
  const auto r = run_watched(live_args(fixture("cuda-4gpu")), options);
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  const json j = r.json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,3");
  const json* f = finding(j, "cuda.gpu-failed");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:03:00.0");
  // The child runs with default dispositions (no sanitizer handler): it dies of the signal itself.
  CHECK_THAT(evidence(*f), Catch::Contains("CHILD_DIED: killed by signal 11 (Segmentation fault)"));
  check_no_child_left(r);
}

TEST_CASE(
    "faults cuda: SIGINT or SIGTERM to gpu-preflight mid-stage: prompt exit, clear message, children gone") {
  for (const int sig : {SIGINT, SIGTERM}) {
    INFO("signal " << sig);
    RunOptions options;
    options.env = {{"FAKE_CUDA_GPUS", "4"},
                   {"FAKE_CUDA_INIT_HANG", "1"},
                   {"FAKE_CUDA_IGNORE_SIGTERM", "1"},
                   {"FAKE_CUDA_IGNORE_SIGINT", "1"}};
    options.limit_s = 40;
    std::optional<double> sent_at;
    std::optional<double> first_seen;
    options.on_tick = [&](pid_t pid, double elapsed) {
      // Once the CUDA children exist (and have had a moment to reach cuInit), interrupt.
      if (sent_at || children_of(pid).empty()) {
        return;
      }
      if (!first_seen) {
        first_seen = elapsed;
      } else if (elapsed - *first_seen > 0.3) {
        ::kill(pid, sig);
        sent_at = elapsed;
      }
    };
    const auto r = run_watched(live_args(fixture("cuda-4gpu"), {"--cuda-timeout", "30"}), options);
    INFO("stderr: " << r.err);
    REQUIRE(sent_at);
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.signal.has_value()); // dies of the signal, as a shell expects (exit status 128+N)
    CHECK(*r.signal == sig);
    CHECK(r.seconds - *sent_at < 3.0); // not the 30 s deadline
    CHECK_THAT(r.err,
               Catch::Contains(sig == SIGINT ? "interrupted (SIGINT) during the CUDA probe"
                                             : "terminated (SIGTERM) during the CUDA probe"));
    CHECK_THAT(r.err, Catch::Contains("child processes were stopped and reaped"));
    CHECK(r.out.empty()); // no half report
    CHECK_FALSE(r.children_seen.empty());
    check_no_child_left(r);
  }
}

TEST_CASE("faults cuda: a slow cuInit in every process: the multi-GPU child's runs beside the "
          "others', and one cut at the deadline is not a multi-GPU hang") {
  RunOptions options;
  // No timed copies and no active step: under a sanitizer on two cores they take over a second
  // per GPU, and this test is about when the multi-GPU child starts, not about what it measures.
  options.env = {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_INIT_MS", "2000"}};
  const std::vector<std::string> quick{"--cuda-timeout", "3.5", "--no-bandwidth", "--no-active"};
  SECTION("every GPU healthy: the multi-GPU child started at time 0 finishes within 3.5 s") {
    // After enumeration (~2 s) its own cuInit would need another 2 s: past the deadline.
    auto args = live_args(fixture("cuda-4gpu"), quick);
    args.insert(args.end(), {"--min-gpus", "4"});
    const auto r = run_watched(args, options);
    INFO("stderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    const json j = r.json();
    INFO(j.at("findings").dump(1));
    CHECK(r.exit_code == 0);
    const json& multi = j.at("facts").at("cuda").at("multi_gpu");
    CHECK(multi.at("ok") == true);
    CHECK(multi.at("devices") == json::array({0, 1, 2, 3}));
    CHECK(multi.at("peers").size() == 12);
    CHECK(finding(j, "cuda.multi-gpu-not-completed") == nullptr);
    CHECK(j.at("facts").at("cuda").at("wall_ms").get<double>() < 3500);
    check_no_child_left(r);
  }
  SECTION("GPU 3's context fails: the multi-GPU test over the other three starts after the "
          "per-GPU tests, and the deadline cuts its cuInit") {
    options.env["FAKE_CUDA_GPU_CTX_ERROR"] = "3:999";
    auto args = live_args(fixture("cuda-4gpu"), quick);
    args.insert(args.end(), {"--min-gpus", "3"});
    const auto r = run_watched(args, options);
    INFO("stderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    const json j = r.json();
    INFO(j.at("findings").dump(1));
    CHECK(finding(j, "cuda.multi-gpu-hung") == nullptr);
    CHECK(finding(j, "cuda.multi-gpu-failed") == nullptr);
    CHECK(finding(j, "gpu.too-few-usable") == nullptr);
    REQUIRE(finding(j, "cuda.gpu-failed"));
    const json* f = finding(j, "cuda.multi-gpu-not-completed");
    REQUIRE(f);
    CHECK(f->at("severity") == "info");
    CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("not completed in time"));
    CHECK_THAT(evidence(*f),
               Catch::Contains("multi-GPU child: cuInit killed at the deadline after") &&
                   Catch::Contains("slowest per-GPU cuInit: 2.0") &&
                   Catch::Contains("GPUs tested together: CUDA 0, 1, 2"));
    CHECK(j.at("cuda_visible_devices") == "0,1,2"); // the three healthy GPUs kept
    check_no_child_left(r);
  }
}

TEST_CASE("faults cuda: helper processes the driver library forks die with the stage") {
  // Every child's cuInit forks a helper deaf to SIGTERM that would live 60 s; the children finish
  // normally (not killed at a deadline), so only killing each child's whole group ends them, and
  // a helper that left the group (setsid) only the adoption of orphans (a child subreaper).
  const bool own_session = GENERATE(false, true);
  INFO("helper in its own session: " << own_session);
  TempDir scratch;
  const std::string pids_file = scratch.str() + "/helpers";
  RunOptions options;
  options.env = {{"FAKE_CUDA_GPUS", "2"}, {"FAKE_CUDA_HELPER", pids_file}};
  if (own_session) {
    options.env.emplace("FAKE_CUDA_HELPER_SETSID", "1");
  }
  const auto r = run_watched(live_args(fixture("cuda-4gpu")), options);
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.seconds < 10);
  const std::string text = scratch.read("helpers");
  std::vector<pid_t> helpers;
  std::istringstream in(text);
  for (long pid = 0; in >> pid;) {
    helpers.push_back(static_cast<pid_t>(pid));
  }
  CHECK(helpers.size() >= 3); // enumeration, a child per GPU, the multi-GPU child
  const auto alive = [&] {
    std::vector<pid_t> left;
    for (const pid_t pid : helpers) {
      std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
      std::string name;
      if (comm && std::getline(comm, name) && name == "fake-cuda-help") {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string all((std::istreambuf_iterator<char>(stat)), {});
        const auto close = all.rfind(')');
        if (close != std::string::npos && close + 2 < all.size() && all[close + 2] != 'Z') {
          left.push_back(pid); // alive (a zombie is dead, waiting for init to reap it)
        }
      }
    }
    return left;
  };
  std::vector<pid_t> left = alive();
  for (int i = 0; i < 100 && !left.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    left = alive();
  }
  for (const pid_t pid : left) {
    UNSCOPED_INFO("helper " << pid << " outlived the check");
    ::kill(pid, SIGKILL);
  }
  CHECK(left.empty());
  check_no_child_left(r);
}

TEST_CASE("faults cuda: a child's over-long line or flood of bytes is a protocol error at once, "
          "not a hang") {
  struct Case {
    const char* bytes;
    const char* line;
    const char* why;
  };
  for (const Case c : {Case{"100000", "", "a line longer than 65536 bytes"},
                       Case{"6000000", "1000", "more than 4194304 bytes"}}) {
    INFO(c.why);
    RunOptions options;
    options.env = {{"FAKE_CUDA_GPUS", "2"}, {"FAKE_CUDA_PIPE_JUNK", c.bytes}};
    if (*c.line != '\0') {
      options.env.emplace("FAKE_CUDA_PIPE_JUNK_LINE", c.line);
    }
    const auto r = run_watched(live_args(fixture("cuda-4gpu"), {"--cuda-timeout", "60"}), options);
    INFO("stderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    CHECK(r.seconds < 30); // well before the 60 s deadline (a sanitized build on a loaded machine
                           // takes about 12 s)
    CHECK(r.exit_code == 1);
    const json j = r.json();
    CHECK(finding(j, "cuda.init-hung") == nullptr);
    const json* f = finding(j, "cuda.init-failed");
    REQUIRE(f);
    CHECK_THAT(evidence(*f),
               Catch::Contains("killed for a protocol error: it wrote " + std::string(c.why)));
    check_no_child_left(r);
  }
}

TEST_CASE("faults: a reader that goes away after 10 bytes (| head -c 10): no hang, no crash") {
  for (const bool ignore_sigpipe : {false, true}) {
    for (const char* format : {"json", "text"}) {
      INFO("format " << format << ", SIGPIPE ignored " << ignore_sigpipe);
      RunOptions options;
      options.out = Stdout::close_after_10_bytes;
      options.ignore_sigpipe = ignore_sigpipe;
      options.env = {{"FAKE_CUDA_GPUS", "4"}};
      const auto r =
          run_watched({"--root", fixture("log-xid79-one-of-8"), "--format", format}, options);
      INFO("stderr: " << r.err);
      REQUIRE_FALSE(r.timed_out);
      CHECK(r.out.size() <= 10);
      if (r.signal) {
        CHECK(*r.signal == SIGPIPE); // the usual end of a writer whose reader left
      } else {
        // Either everything fitted in the pipe before the reader left (a verdict), or the write
        // failed: exit 2 with a message on stderr.
        CHECK((r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2));
        if (r.exit_code == 2) {
          CHECK_FALSE(r.err.empty());
        }
      }
    }
  }
}

TEST_CASE("faults cuda: a GPU child SIGKILLed by someone else (the OOM killer) is exit 2, not a "
          "failed GPU") {
  RunOptions options;
  // GPU 2's child is killed with SIGKILL as it pins the bandwidth step's buffer, as the kernel's
  // OOM killer does in a memory cgroup too small for it.
  options.env = {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_PINNED_OOM_KILL", "2"}};
  const auto r = run_watched(live_args(fixture("cuda-4gpu")), options);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty()); // no report, so no verdict about the GPU
  CHECK_THAT(r.err, Catch::Contains("killed by signal 9") &&
                        Catch::Contains("which the checker did not send") &&
                        Catch::Contains("killed by the kernel: out of memory in this cgroup?") &&
                        Catch::Contains("needs about") && Catch::Contains("on 4 GPUs") &&
                        Catch::Contains("each GPU child pins 128 MiB") &&
                        Catch::Contains("the checker could not run; no verdict"));
  CHECK_THAT(r.err, !Catch::Contains("cuda.gpu-failed") && !Catch::Contains("replace it"));
  check_no_child_left(r);

  // The same node without the step that pins the buffer: a verdict again, every GPU usable.
  const auto without = run_watched(live_args(fixture("cuda-4gpu"), {"--no-bandwidth"}), options);
  INFO("--no-bandwidth stderr: " << without.err);
  CHECK(without.exit_code == 0);
  CHECK(without.json().at("cuda_visible_devices") == "0,1,2,3");
  // A child that kills itself with another signal (a driver crash) stays the GPU's failure: the
  // SIGSEGV test above.
}
