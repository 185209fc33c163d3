// The fabric allocation probe (docs/cuda-probe.md#fabric-allocation) end to end: the binary on the
// GB200 compute-tray fixture (an IMEX channel, the IMEX daemon) with the fake driver configured per
// GPU, its snapshot and replay, and an older libcuda without cuMemCreate.
#include "unit/cuda_test_support.hpp"

#include <catch2/catch.hpp>

using namespace gpf::cuda_test;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

constexpr const char* k_rule = "imex.fabric-allocation-refused";

// The fixture's four GB200s, as the fake driver shows them.
Env tray(Env extra) {
  Env env{{"FAKE_CUDA_GPUS", "4"},
          {"FAKE_CUDA_BUS_IDS", "0000:18:00.0,0000:2a:00.0,0000:3a:00.0,0000:5d:00.0"},
          {"FAKE_CUDA_NAMES", "NVIDIA GB200,NVIDIA GB200,NVIDIA GB200,NVIDIA GB200"},
          {"FAKE_CUDA_CC", "10.0"}};
  for (auto& [k, v] : extra) {
    env[k] = v;
  }
  return env;
}

json check_tray(const Env& env, const std::string& lib = k_fake) {
  return run_preflight({"--root", fixture("imex-gb200-ready"), "--libcuda", lib, "--no-nvml",
                        "--format", "json"},
                       env)
      .json();
}

const json& fabric_of(const json& report, std::size_t gpu) {
  return report.at("facts").at("cuda").at("devices").at(gpu).at("fabric");
}

bool has_step(const json& report, std::size_t gpu, const std::string& name) {
  for (const auto& s : report.at("facts").at("cuda").at("devices").at(gpu).at("steps")) {
    if (s.at("name") == name) {
      return true;
    }
  }
  return false;
}

} // namespace

TEST_CASE("e2e fabric: attribute 1 and refused -> a finding naming the GPU and the error; "
          "allocated -> silent; attribute 0 -> not tried") {
  const json refused = check_tray(
      tray({{"FAKE_CUDA_FABRIC", "0,1,2,3"}, {"FAKE_CUDA_FABRIC_CREATE_ERROR", "1:800"}}));
  const json* f = finding(refused, k_rule);
  REQUIRE(f);
  CHECK(f->at("severity") == "warn");
  const std::string ev = f->at("evidence").dump();
  CHECK_THAT(ev, Catch::Contains("0000:2a:00.0"));
  CHECK_THAT(ev, Catch::Contains("cuMemCreate"));
  CHECK_THAT(ev, Catch::Contains("CUDA_ERROR_NOT_PERMITTED (800)"));
  CHECK_THAT(ev, Catch::Contains("CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 1"));
  CHECK_THAT(ev, !Catch::Contains("0000:18:00.0:")); // the GPUs that allocated are not named
  const json& gpu1 = fabric_of(refused, 1);
  CHECK(gpu1.at("attribute") == 1);
  CHECK(gpu1.at("tried") == true);
  CHECK(gpu1.at("allocated") == false);
  CHECK(gpu1.at("call") == "cuMemCreate");
  CHECK(gpu1.at("error_name") == "CUDA_ERROR_NOT_PERMITTED");
  CHECK(gpu1.at("granularity") == 2 << 20);
  // a refusal is not the GPU's failure: every GPU stays usable
  CHECK(refused.at("cuda_visible_devices") == "0,1,2,3");
  CHECK(fabric_of(refused, 0).at("allocated") == true);
  CHECK(has_step(refused, 0, "fabric_alloc"));

  const json allocated = check_tray(tray({{"FAKE_CUDA_FABRIC", "0,1,2,3"}}));
  CHECK_FALSE(finding(allocated, k_rule));
  CHECK(fabric_of(allocated, 3).at("allocated") == true);
  CHECK_FALSE(fabric_of(allocated, 3).contains("error_name"));

  // attribute 0: nothing tried, no step, silent even where cuMemCreate would refuse
  const json unsupported = check_tray(tray({{"FAKE_CUDA_FABRIC_CREATE_ERROR", "0:800"}}));
  CHECK_FALSE(finding(unsupported, k_rule));
  CHECK(fabric_of(unsupported, 0).at("attribute") == 0);
  CHECK(fabric_of(unsupported, 0).at("tried") == false);
  CHECK_THAT(fabric_of(unsupported, 0).at("not_tried").get<std::string>(), Catch::Contains("is 0"));
  CHECK_FALSE(has_step(unsupported, 0, "fabric_alloc"));

  // an older driver: the attribute unknown
  const json old = check_tray(tray({{"FAKE_CUDA_FABRIC_UNKNOWN", "1"}}));
  CHECK(fabric_of(old, 0).at("attribute").is_null());
  CHECK_THAT(fabric_of(old, 0).at("not_tried").get<std::string>(),
             Catch::Contains("CUDA_ERROR_INVALID_VALUE"));
}

TEST_CASE("e2e fabric: a libcuda without cuMemCreate says not asked and the probe goes on") {
  const json r = check_tray(tray({{"FAKE_CUDA_FABRIC", "0,1,2,3"}}), k_fake_no_peer);
  CHECK_FALSE(finding(r, k_rule));
  const json& fabric = fabric_of(r, 0);
  CHECK(fabric.at("attribute") == 1);
  CHECK(fabric.at("tried") == false);
  CHECK_THAT(fabric.at("not_tried").get<std::string>(),
             Catch::Contains("not asked: libcuda lacks") && Catch::Contains("cuMemCreate"));
  CHECK(r.at("facts").at("cuda").at("devices").at(0).at("usable") == true);
  const std::string missing = r.at("facts").at("cuda").at("missing_optional_symbols").dump();
  CHECK_THAT(missing, Catch::Contains("cuMemCreate"));
}

TEST_CASE("e2e fabric: `snapshot` keeps the fabric result in cuda.json, and the replay judges it") {
  const Env env = tray({{"FAKE_CUDA_FABRIC", "0,1,2,3"},
                        {"FAKE_CUDA_FABRIC_CREATE_ERROR", "0:800,1:800,2:800,3:800"}});
  TempSnapshot scratch("cuda-no-driver"); // a scratch directory removed at the end
  const std::string dir = scratch.path() + "/capture";
  const auto captured = run_preflight({"--root", fixture("imex-gb200-ready"), "--libcuda", k_fake,
                                       "--no-nvml", "snapshot", "-o", dir},
                                      env);
  REQUIRE(captured.exit_code == 0);
  const json replay = run_preflight({"--root", dir, "--format", "json"}).json();
  const json* f = finding(replay, k_rule);
  REQUIRE(f);
  CHECK_THAT(f->at("evidence").dump(), Catch::Contains("0000:5d:00.0"));
  CHECK(fabric_of(replay, 2).at("error_code") == 800);
}
