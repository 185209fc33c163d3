// The env.* rows (src/rules/env.cpp) on facts built in code: the job's CUDA_VISIBLE_DEVICES,
// CUDA_DEVICE_ORDER and the variables that change how CUDA and NCCL run.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("CUDA_VISIBLE_DEVICES duplicates: by GPU, MIG instances of one GPU differ") {
  auto f = two_gpus(std::nullopt);
  const auto dup = [&](const std::string& value) {
    f.env = env_of({{"CUDA_VISIBLE_DEVICES", value}});
    return run_rule("env.cuda-visible-devices-duplicate", f);
  };
  CHECK(dup("0,1").empty());
  auto hits = dup("0,1,GPU-0000:18");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].evidence.at(1) ==
        "GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3) is named by \"0\" and \"GPU-0000:18\"");
  CHECK(dup("1, 1").size() == 1);
  CHECK(dup("0,7,0").empty()); // 7 ends the list for CUDA: the second 0 is never read
  CHECK(dup("MIG-GPU-0000:18:00.0/1/0,MIG-GPU-0000:18:00.0/2/0").empty());
  CHECK(dup("MIG-GPU-0000:18:00.0/1/0,MIG-GPU-0000:18:00.0/1/0").size() == 1);
  CHECK(dup("").empty());
}

TEST_CASE("device order: mixed models without PCI_BUS_ID, when GPUs are named by index") {
  auto f = two_gpus(std::nullopt);
  CHECK(run_rule("env.device-order-ambiguous", f).empty()); // one model
  f.gpus[1].model = "NVIDIA L40S";
  CHECK(run_rule("env.device-order-ambiguous", f)
            .empty()); // unset: every GPU is used, only the numbering differs
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1"}});
  const auto hits = run_rule("env.device-order-ambiguous", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].evidence == std::vector<std::string>{"CUDA_DEVICE_ORDER is not set (FASTEST_FIRST)",
                                                     "CUDA_VISIBLE_DEVICES=1"});
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "GPU-0000:2a"}});
  CHECK(run_rule("env.device-order-ambiguous", f).empty());
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
  CHECK(run_rule("env.device-order-ambiguous", f).empty());
}

TEST_CASE("environment flags: set, unset, empty, zero") {
  struct Case {
    const char* id;
    const char* name;
    const char* value;
    bool fires;
  };
  const Case cases[] = {
      {"env.cuda-injection", "CUDA_INJECTION64_PATH", "/opt/tool/libinj.so", true},
      {"env.cuda-injection", "CUDA_INJECTION64_PATH", "", false},
      {"env.launch-blocking", "CUDA_LAUNCH_BLOCKING", "1", true},
      {"env.launch-blocking", "CUDA_LAUNCH_BLOCKING", "0", false},
      {"env.nccl-p2p-disabled", "NCCL_P2P_DISABLE", "1", true},
      {"env.nccl-p2p-disabled", "NCCL_P2P_DISABLE", "0", false},
      {"env.nccl-shm-disabled", "NCCL_SHM_DISABLE", "1", true},
      {"env.nccl-shm-disabled", "NCCL_SHM_DISABLE", " ", false},
  };
  for (const auto& c : cases) {
    INFO(c.name << "=" << c.value);
    auto f = two_gpus(std::nullopt);
    CHECK(run_rule(c.id, f).empty());
    f.env = env_of({{c.name, c.value}});
    const auto hits = run_rule(c.id, f);
    CHECK(hits.size() == (c.fires ? 1u : 0u));
    if (c.fires) {
      CHECK(hits[0].evidence.at(0) == std::string(c.name) + "=" + c.value);
    }
  }
}
