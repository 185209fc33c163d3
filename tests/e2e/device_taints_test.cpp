// contrib/kubernetes/gpu-preflight-device-taints on reports the binary makes with the fake NVML:
// a GPU left out with MIG enabled is tainted as the MIG devices NVIDIA's DRA driver publishes for
// it (named as the driver names them), a GPU without MIG as gpu-<minor>; a MIG-enabled GPU whose
// GPU instances NVML would not list is exit 2 with the reason (docs/integrations/kubernetes.md).
#include "support/lookup.hpp"
#include "support/run.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <string>

using gpf::test::fixture;
using gpf::test::run_preflight;
using gpf::test::run_program;
using gpf::test::RunResult;
using nlohmann::json;

namespace {

const std::string k_fake_nvml = GPF_FAKE_LIBNVML;
const std::string k_converter =
    std::string(GPF_SOURCE_DIR) + "/contrib/kubernetes/gpu-preflight-device-taints";
// healthy-4gpu: minors 0 to 3 in bus order.
const std::string k_buses = "0000:18:00.0,0000:2a:00.0,0000:3a:00.0,0000:5d:00.0";

// The JSON report of healthy-4gpu with the fake NVML answering as env says.
std::string report(std::map<std::string, std::string> env) {
  env.emplace("FAKE_NVML_BUS_IDS", k_buses);
  const auto r = run_preflight({"--root", fixture("healthy-4gpu"), "--no-cuda", "--libnvml",
                                k_fake_nvml, "--format", "json"},
                               env);
  REQUIRE(r.exit_code == 0); // GPUs left out: warn, ready with fewer GPUs
  REQUIRE(r.json().at("verdict") == "warn");
  return r.out;
}

RunResult convert(const std::string& report_json) {
  return run_program({"python3", k_converter, "--node", "node-07"}, {}, report_json);
}

// device -> taint effect of every rule in the converter's List.
std::map<std::string, std::string> tainted(const RunResult& r) {
  std::map<std::string, std::string> out;
  const json list = json::parse(r.out); // kept: a range-for over a temporary's member dangles
  for (const auto& rule : list.at("items")) {
    out[rule.at("spec").at("deviceSelector").at("device").get<std::string>()] =
        rule.at("spec").at("taint").at("effect").get<std::string>();
  }
  return out;
}

} // namespace

TEST_CASE("device taints: a MIG GPU left out is tainted per MIG device, a whole GPU as before") {
  // GPU 1 (minor 1): MIG with a 3g.40gb instance (profile id 9) at slice 4 and a 2g.20gb (id 14)
  // at slice 0; GPU 2 (minor 2): no MIG. Both have a failed row remap: left out.
  const std::string out = report({{"FAKE_NVML_REMAP_FAILURE", "1:1,2:1"},
                                  {"FAKE_NVML_MIG", "1:1"},
                                  {"FAKE_NVML_GPU_INSTANCES", "1:9@4+14@0"}});
  const json j = json::parse(out);
  const json& gpu1 = j.at("facts").at("nvml").at("gpus").at(1);
  CHECK(gpu1.at("mig_current") == 1);
  CHECK(gpu1.at("memory_total_bytes") == 81559ULL << 20U);
  REQUIRE(gpu1.at("gpu_instances").size() == 2);
  // By profile index: 2g (index 1) before 3g (index 2).
  CHECK(gpu1.at("gpu_instances").at(0) == json{{"profile", 1},
                                               {"profile_id", 14},
                                               {"id", 2},
                                               {"placement_start", 0},
                                               {"placement_size", 2},
                                               {"slice_count", 2},
                                               {"memory_mib", 19968}});
  CHECK(gpu1.at("gpu_instances").at(1).at("profile_id") == 9);
  CHECK(gpu1.at("gpu_instances").at(1).at("placement_size") == 4);
  CHECK(j.at("facts").at("nvml").at("gpus").at(2).at("gpu_instances").is_null());

  const auto r = convert(out);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(tainted(r) == std::map<std::string, std::string>{{"gpu-1-mig-2g20gb-14-0", "NoSchedule"},
                                                         {"gpu-1-mig-3g40gb-9-4", "NoSchedule"},
                                                         {"gpu-2", "NoSchedule"}});
  CHECK(r.out.find("gpu-preflight.node-07.gpu-1-mig-3g40gb-9-4") != std::string::npos);
}

TEST_CASE("device taints: the media-extension and 20 GB one-slice profiles are named as the "
          "driver names them") {
  const auto r = convert(report({{"FAKE_NVML_REMAP_FAILURE", "3:1"},
                                 {"FAKE_NVML_MIG", "3:1"},
                                 {"FAKE_NVML_GPU_INSTANCES", "3:20@6+15@4+19@0"}}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(tainted(r) == std::map<std::string, std::string>{{"gpu-3-mig-1g10gb-19-0", "NoSchedule"},
                                                         {"gpu-3-mig-1g10gb-me-20-6", "NoSchedule"},
                                                         {"gpu-3-mig-1g20gb-15-4", "NoSchedule"}});
}

TEST_CASE("device taints: a MIG GPU whose instances NVML would not list is exit 2, not skipped") {
  const std::string out = report({{"FAKE_NVML_REMAP_FAILURE", "1:1"},
                                  {"FAKE_NVML_MIG", "1:1"},
                                  {"FAKE_NVML_GPU_INSTANCES", "1:9@4"},
                                  {"FAKE_NVML_GI_DENY", "1"}});
  CHECK(json::parse(out).at("facts").at("nvml").at("gpus").at(1).at("gpu_instances").is_null());
  const auto r = convert(out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("0000:2a:00.0 has MIG enabled") != std::string::npos);
  CHECK(r.err.find("gpu_instances: Insufficient Permissions") != std::string::npos);
}

TEST_CASE("device taints: a MIG GPU left out with no GPU instance gets no rule, and says so") {
  const auto r = convert(report({{"FAKE_NVML_REMAP_FAILURE", "1:1"}, {"FAKE_NVML_MIG", "1:1"}}));
  REQUIRE(r.exit_code == 0);
  CHECK(tainted(r).empty());
  CHECK(r.err.find("no GPU instance") != std::string::npos);
}
