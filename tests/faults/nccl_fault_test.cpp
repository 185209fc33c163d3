// Fault injection in the --nccl test (the fake libnccl, tests/fake_nccl): NCCL hanging in its
// communicator's initialisation or in the all-reduce, and a wrong sum. Each asserts that the
// check ends within the NCCL deadline plus one second with the step named, and that no child is
// left behind.
#include "faults/fault_support.hpp"

#include <catch2/catch.hpp>

#include <signal.h>

using namespace gpf::fault;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

const std::string k_fake_libnccl = GPF_FAKE_LIBNCCL;
constexpr double k_nccl_timeout_s = 2;

Outcome run_nccl(const std::map<std::string, std::string>& fake) {
  RunOptions options;
  options.env = fake;
  options.env.emplace("FAKE_CUDA_GPUS", "4");
  options.limit_s = 60;
  return run_watched({"--root", fixture("cuda-4gpu"), "--libcuda", k_fake_libcuda, "--format",
                      "json", "--nccl=" + k_fake_libnccl, "--nccl-timeout", "2"},
                     options);
}

} // namespace

TEST_CASE("faults nccl: a hung init or all-reduce is named within the deadline plus one second") {
  for (const auto& [var, id, step] :
       {std::tuple{"FAKE_NCCL_INIT_HANG", "nccl.init-hung", "init"},
        std::tuple{"FAKE_NCCL_ALLREDUCE_HANG", "nccl.all-reduce-hung", "all_reduce"}}) {
    INFO(id);
    const auto r = run_nccl({{var, "1"}});
    INFO("stderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    // a hang between GPUs is one judgement whichever probe saw it: a warning that keeps one GPU
    // (docs/multi-gpu-hangs.md); --min-gpus 2 would make it a failure
    CHECK(r.exit_code == 0);
    const json j = r.json();
    CHECK(j.at("verdict") == "warn");
    const json* f = finding(j, id);
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains("rank 0: GPU 0 (0000:01:00.0"));
    const json& n = j.at("facts").at("nccl");
    for (const auto& s : n.at("steps")) {
      if (s.at("name") == step) {
        CHECK(s.at("timed_out") == true);
      }
    }
    // The NCCL stage's own wall time, from its child's start to the verdict on it.
    CHECK(n.at("wall_ms").get<double>() < (k_nccl_timeout_s + 1) * 1000);
    CHECK(r.seconds < k_nccl_timeout_s + 10); // the whole run, CUDA stage included: generous
    CHECK_FALSE(r.children_seen.empty());
    const auto left = still_present(r.children_seen);
    CHECK(left.empty());
  }
}

TEST_CASE("faults nccl: a wrong sum is a failure, promptly, with nothing left running") {
  const auto r = run_nccl({{"FAKE_NCCL_WRONG_SUM", "0"}});
  INFO("stderr: " << r.err);
  REQUIRE_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  const json j = r.json();
  REQUIRE(finding(j, "nccl.wrong-result"));
  CHECK(j.at("facts").at("nccl").at("deadline_hit") == false);
  CHECK(still_present(r.children_seen).empty());
}

TEST_CASE("faults nccl: SIGINT while NCCL hangs names the NCCL probe and leaves no child") {
  RunOptions options;
  options.env = {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_NCCL_INIT_HANG", "1"}};
  options.limit_s = 60;
  std::optional<double> sent_at;
  options.on_tick = [&](pid_t pid, double elapsed) {
    // NCCL's child hangs in its init for 30 s: the signal goes once a child has the fake libnccl
    // loaded, however long the CUDA stage before it took.
    if (!sent_at && maps_file(pid, k_fake_libnccl)) {
      ::kill(pid, SIGINT);
      sent_at = elapsed;
    }
  };
  const auto r =
      run_watched({"--root", fixture("cuda-4gpu"), "--libcuda", k_fake_libcuda, "--format", "json",
                   "--nccl=" + k_fake_libnccl, "--nccl-timeout", "30"},
                  options);
  INFO("stderr: " << r.err);
  REQUIRE(sent_at);
  REQUIRE(r.signal.has_value());
  CHECK(*r.signal == SIGINT);
  CHECK(r.seconds - *sent_at < 3.0);
  CHECK_THAT(r.err, Catch::Contains("interrupted (SIGINT) during the NCCL probe; no verdict"));
  CHECK(r.out.empty());
  CHECK(still_present(r.children_seen).empty());
}
