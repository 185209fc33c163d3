// The nccl.* rows (src/rules/nccl.cpp) on facts built in code: an all-reduce that hung between
// two GPUs, judged as the hang CUDA saw.
#include "gpf/report/report.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/rule_subset.hpp"
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("a hang NCCL saw is judged as the one CUDA saw: warn, one GPU, the transport named") {
  auto f = two_gpus(0x001d);
  auto& n = f.nccl;
  n.ran = true;
  n.library = "libnccl.so.2";
  n.library_from = "loader";
  n.version = "2.21.5";
  n.gpus = {k_a, k_b};
  n.timeout_s = 5;
  n.transports = {"0[0] -> 1[1] via P2P/CUMEM", "1[1] -> 0[0] via P2P/CUMEM"};
  NcclStep init;
  init.name = std::string(k_nccl_init_step);
  init.ok = true;
  NcclStep all_reduce;
  all_reduce.name = std::string(k_nccl_all_reduce_step);
  all_reduce.timed_out = true;
  all_reduce.duration_ms = 5000;
  n.steps = {init, all_reduce};
  const Rule* rule = find_rule("nccl.all-reduce-hung");
  REQUIRE(rule);
  CHECK(rule->severity == Severity::warn);
  const auto hung = run_rule("nccl.all-reduce-hung", f);
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].effect == Effect::single_gpu_only);
  CHECK(hung[0].keep == k_a);
  CHECK(hung[0].where == "ACS 0000:17:00.0");
  CHECK_THAT(hung[0].message, Catch::Contains("NCCL P2P/CUMEM"));
  CHECK_THAT(hung[0].remedy, Catch::Contains("CUDA_VISIBLE_DEVICES=0 ") &&
                                 Catch::Contains("NCCL_P2P_DISABLE=1 gpu-preflight --nccl="));

  // judged whole: a warning that keeps one GPU; --min-gpus 2 makes it a fail naming the port
  CheckOptions two;
  two.min_gpus = 2;
  const auto rules = gpf::test::rule_subset({"nccl.all-reduce-hung", "gpu.too-few-usable"});
  const Assessment warn = assess(f, rules, CheckOptions{});
  const Assessment fail = assess(f, rules, two);
  CHECK(warn.verdict == Verdict::warn);
  CHECK(warn.recommendation.devices == 1);
  CHECK(fail.verdict == Verdict::fail);
  REQUIRE(fail.primary_cause());
  CHECK(fail.primary_cause()->id == "nccl.all-reduce-hung");
  CHECK(cause_label(*fail.primary_cause()) == "nccl.all-reduce-hung ACS 0000:17:00.0");
}
