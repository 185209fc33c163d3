// The counters around the checker's own traffic: the NVML child reads them before the CUDA stage
// and, once the parent says the stage ended, after it; the clocks are sampled meanwhile. The
// binary on cuda-4gpu (GPUs 0000:01:00.0 … 0000:04:00.0) with the fake libcuda and the fake
// libnvidia-ml, a rise injected with FAKE_NVML_RISE (the fake raises a counter once its process
// has sampled the clocks, i.e. during the wait).
#include "rules/nvml_traffic.hpp"
#include "unit/cuda_test_support.hpp"

#include <catch2/catch.hpp>

using namespace gpf::cuda_test;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

const std::string k_fake_nvml = GPF_FAKE_LIBNVML;

RunResult traffic_run(Env env, std::vector<std::string> extra = {}) {
  env.emplace("FAKE_CUDA_GPUS", "4");
  env.emplace("FAKE_NVML_BUS_IDS", "0000:01:00.0,0000:02:00.0,0000:03:00.0,0000:04:00.0");
  env.emplace("FAKE_NVML_NVLINKS", "0:4,1:4,2:4,3:4");
  std::vector<std::string> args{"--root",    fixture("cuda-4gpu"), "--libcuda", k_fake,
                                "--libnvml", k_fake_nvml,          "--format",  "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_preflight(args, env);
}

std::string severity(const json& report, const std::string& id) {
  const json* f = finding(report, id);
  return f ? f->at("severity").get<std::string>() : "absent";
}

const json& traffic_of(const json& report, std::size_t gpu) {
  return report.at("facts").at("nvml").at("gpus").at(gpu).at("traffic");
}

} // namespace

TEST_CASE("traffic: no counter rose, nothing is reported; the window is in facts.nvml") {
  const json j = traffic_run({}).json();
  CHECK(j.at("verdict") == "pass");
  CHECK(severity(j, "nvml.errors-during-check") == "absent");
  CHECK(severity(j, "nvml.ecc-uncorrectable-during-check") == "absent");
  CHECK(severity(j, "nvml.clock-below-peers") == "absent");
  for (std::size_t i = 0; i < 4; ++i) {
    const json& t = traffic_of(j, i);
    REQUIRE(t.at("after").is_object());
    CHECK(t.at("before").at("nvlinks").size() == 4);
    CHECK(t.at("after").at("nvlinks").at(2).at("replay") == 0);
    CHECK(t.at("after").at("pcie_replay") == 0);
    CHECK(t.at("processes_after") == 0);
    CHECK(t.at("during").at("count").get<unsigned>() >= 1);
    CHECK(t.at("during").at("sm_clock_max_mhz") == 1980);
    CHECK(t.at("not_read") == "");
  }
  CHECK(j.at("gpus").at(0).at("health").at("inforom_valid") == true);
}

TEST_CASE("traffic: a rise on one NVLink is a warning naming the GPU and the link") {
  const json j = traffic_run({{"FAKE_NVML_RISE", "1:nvlink2"}}).json();
  const json* f = finding(j, "nvml.errors-during-check");
  REQUIRE(f);
  CHECK(f->at("severity") == "warn");
  CHECK(f->at("gpu") == "0000:02:00.0");
  const auto message = f->at("message").get<std::string>();
  CHECK_THAT(message, Catch::Contains("0000:02:00.0") &&
                          Catch::Contains("NVLink 2 replay errors") &&
                          Catch::Contains("NVLink 2 flit CRC errors"));
  CHECK_THAT(message, !Catch::Contains("NVLink 1"));
  CHECK_THAT(evidence(*f), Catch::Contains("nvmlDeviceGetNvLinkErrorCounter(link 2, DL_REPLAY): "
                                           "0 before, 2 after"));
  CHECK(finding(j, "nvml.errors-during-check", "0000:01:00.0") == nullptr);
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3"); // the GPU still works
}

TEST_CASE("traffic: PCIe replays, corrected ECC, the SRAM flag and a remap are rises too") {
  const json j = traffic_run({{"FAKE_NVML_RISE", "0:pcie,0:ecc_corr,0:sram,0:remap"}}).json();
  const json* f = finding(j, "nvml.errors-during-check", "0000:01:00.0");
  REQUIRE(f);
  CHECK_THAT(f->at("message").get<std::string>(),
             Catch::Contains("PCIe replays") && Catch::Contains("corrected ECC errors") &&
                 Catch::Contains("SRAM error threshold exceeded") &&
                 Catch::Contains("row remap pending"));
  CHECK_THAT(evidence(*f), Catch::Contains("nvmlDeviceGetPcieReplayCounter: 0 before, 2 after"));
}

TEST_CASE("traffic: an uncorrectable ECC error during the check drops the GPU") {
  const json j = traffic_run({{"FAKE_NVML_RISE", "3:ecc_unc"}}).json();
  const json* f = finding(j, "nvml.ecc-uncorrectable-during-check");
  REQUIRE(f);
  CHECK(f->at("severity") == "fail");
  CHECK(f->at("gpu") == "0000:04:00.0");
  CHECK_THAT(evidence(*f), Catch::Contains("0 before, 1 after"));
  CHECK(j.at("cuda_visible_devices") == "0,1,2");
  CHECK(severity(j, "nvml.errors-during-check") == "absent"); // one judgement per condition
}

TEST_CASE("traffic: a GPU another process uses, or one without the CUDA stage, is not judged") {
  SECTION("busy") {
    const json j =
        traffic_run({{"FAKE_NVML_RISE", "1:nvlink2,1:ecc_unc"}, {"FAKE_NVML_PROCS", "1:4242"}})
            .json();
    CHECK(severity(j, "nvml.errors-during-check") == "absent");
    CHECK(severity(j, "nvml.ecc-uncorrectable-during-check") == "absent");
    CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  }
  SECTION("--no-cuda: no traffic of ours between the reads") {
    const json j = traffic_run({{"FAKE_NVML_RISE", "1:nvlink2,1:ecc_unc"}}, {"--no-cuda"}).json();
    CHECK(severity(j, "nvml.errors-during-check") == "absent");
    CHECK(severity(j, "nvml.ecc-uncorrectable-during-check") == "absent");
    CHECK(traffic_of(j, 1).at("after").is_object()); // read, but not judged
  }
}

TEST_CASE("traffic: a GPU whose SM clock stays far below its peers' is named with the reason") {
  const json j =
      traffic_run({{"FAKE_NVML_SM_CLOCK", "2:900"}, {"FAKE_NVML_CLOCKS", "2:0x8"}}).json();
  const json* f = finding(j, "nvml.clock-below-peers");
  REQUIRE(f);
  CHECK(f->at("severity") == "warn");
  CHECK(f->at("gpu") == "0000:03:00.0");
  CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("900 MHz") &&
                                                      Catch::Contains("1980 MHz") &&
                                                      Catch::Contains("hardware slowdown"));
  CHECK(finding(j, "nvml.clock-below-peers", "0000:01:00.0") == nullptr);
  SECTION("without the active step the clocks are not judged") {
    const json off = traffic_run({{"FAKE_NVML_SM_CLOCK", "2:900"}}, {"--no-active"}).json();
    CHECK(severity(off, "nvml.clock-below-peers") == "absent");
  }
}

TEST_CASE("traffic: a CUDA stage hung to the deadline leaves no hung NVML GPU, only no `after`") {
  const auto r = traffic_run({{"FAKE_CUDA_INIT_HANG", "1"}}, {"--timeout", "2"});
  const json j = r.json();
  CHECK(severity(j, "cuda.init-hung") == "fail");
  CHECK(severity(j, "nvml.gpu-hung") == "absent");
  const json& t = traffic_of(j, 0);
  CHECK(t.at("after").is_null());
  CHECK_THAT(t.at("not_read").get<std::string>(), Catch::Contains("deadline"));
  CHECK(r.seconds < 3.5);
}

TEST_CASE("traffic: a corrupted InfoROM is a warning on its GPU") {
  const json j = traffic_run({{"FAKE_NVML_INFOROM_CORRUPT", "2"}}, {"--no-cuda"}).json();
  const json* f = finding(j, "nvml.inforom-corrupted");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:03:00.0");
  CHECK(f->at("severity") == "warn");
  CHECK(j.at("gpus").at(2).at("health").at("inforom_valid") == false);
}

TEST_CASE("traffic: counter_rises names each risen counter once, links first") {
  gpf::NvmlCounters before;
  before.pcie_replay = 5;
  before.ecc_volatile_corrected = 1;
  before.ecc_volatile_uncorrected = 0;
  before.sram_threshold_exceeded = false;
  before.nvlinks = {{0, 0, 0, 0, 0}, {1, 7, 0, 3, 0}};
  gpf::NvmlCounters after = before;
  CHECK(gpf::counter_rises(before, after).empty());
  after.nvlinks[1].crc_flit = 4;
  after.pcie_replay = 6;
  after.ecc_volatile_uncorrected = 2; // its own row
  after.sram_threshold_exceeded = true;
  after.ecc_volatile_corrected = 0; // a counter that went down (reset) is no rise
  const auto rises = gpf::counter_rises(before, after);
  REQUIRE(rises.size() == 3);
  CHECK(rises[0].link == 1u);
  CHECK(rises[0].what == "flit CRC errors");
  CHECK(rises[0].before == 3);
  CHECK(rises[0].after == 4);
  CHECK(rises[1].what == "PCIe replays");
  CHECK(rises[2].what == "SRAM error threshold exceeded");
  SECTION("a counter read only before (or only after) is not judged") {
    after.pcie_replay.reset();
    CHECK(gpf::counter_rises(before, after).size() == 2);
  }
}

TEST_CASE("traffic: clock reasons by name, idle left out, unknown bits kept") {
  CHECK(gpf::clock_reason_names(0) == "none given");
  CHECK(gpf::clock_reason_names(0x1) == "none given");
  CHECK(gpf::clock_reason_names(0x8 | 0x4 | 0x1) == "software power cap, hardware slowdown");
  CHECK(gpf::clock_reason_names(0x400) == "unknown reason 0x400");
}
