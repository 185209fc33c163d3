// The active step on the fake driver (docs/cuda-probe.md#active-step): memory patterns and the
// compute checksum per GPU, their judgement across the node's GPUs, a kernel that never finishes,
// the step's own machinery failing; and the multi-GPU child's timed copies outside the hang
// judgement (issue 42). The fake computes the kernels in host memory from its own arithmetic.
#include "unit/cuda_test_support.hpp"

#include "probes/cuda/kernels.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

using namespace gpf::cuda_test;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

RunResult live(const std::string& root, const Env& env, std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--root", root, "--libcuda", k_fake, "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_preflight(args, env);
}

std::vector<std::string> ids_of(const json& report) {
  std::vector<std::string> ids;
  for (const auto& f : report.at("findings")) {
    ids.push_back(f.at("id").get<std::string>());
  }
  return ids;
}

bool has(const json& report, const std::string& id) {
  return finding(report, id) != nullptr;
}

// Findings above information.
std::vector<std::string> judged(const json& report) {
  std::vector<std::string> ids;
  for (const auto& f : report.at("findings")) {
    if (f.at("severity") != "info") {
      ids.push_back(f.at("id").get<std::string>());
    }
  }
  return ids;
}

} // namespace

TEST_CASE("active kernels: the host reference of the patterns and the integer chain") {
  using namespace gpf::cuda;
  CHECK(pattern_word(5, 0, 0) == 5);
  CHECK(pattern_word(5, 1, 0) == ~5u);
  CHECK(pattern_word(33, 2, 0) == 2u);
  CHECK(pattern_word(33, 3, 0) == ~2u);
  CHECK(pattern_word(1ull << 32, 0, 0) == 0); // the low word of the index
  CHECK(pattern_word(7, 4, 1) != pattern_word(7, 4, 2));
  CHECK(pattern_name(4) == "random");
  CHECK(compute_integer(0, 0) == 1);
  CHECK(compute_integer(0, 1) ==
        ((1u * 1664525u + 1013904223u) ^ ((1u * 1664525u + 1013904223u) >> 15)));
  CHECK(compute_checksum({}) == "cbf29ce484222325"); // FNV-1a's offset basis
  const auto ptx = kernels_ptx();
  CHECK(ptx.back() == '\0');
  for (const char* name : k_kernel_names) {
    CHECK(ptx.find(fmt::format(".visible .entry {}(", name)) != std::string_view::npos);
  }
  CHECK(ptx.find(".version 6.0\n.target sm_30\n") != std::string_view::npos);
}

// Tests that count the memory patterns give the step time to spare: the fake computes the
// kernels on this machine's CPUs, beside whatever else runs there.
TEST_CASE("active: all healthy -> information only, and the figures per GPU in the report") {
  const json j =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}, {"--active-time", "20"}).json();
  CHECK(j.at("verdict") == "pass");
  CHECK(judged(j).empty());
  const json& cuda = j.at("facts").at("cuda");
  CHECK(cuda.at("active").at("ran") == true);
  CHECK(cuda.at("active").at("seconds") == 20);
  std::string checksum;
  for (const auto& d : cuda.at("devices")) {
    const json& a = d.at("active");
    CHECK(a.at("ran") == true);
    CHECK(a.at("not_checked") == "");
    CHECK(a.at("memory_bytes") == 16u << 20); // a quarter of the fake's 64 MiB free
    CHECK(a.at("patterns").size() == 5);
    CHECK(a.at("memory_mismatches") == 0);
    CHECK(a.at("integer_mismatches") == 0);
    CHECK(a.at("first_kernel_ms").get<double>() > 0);
    CHECK(a.at("checksum").get<std::string>().size() == 16);
    checksum = checksum.empty() ? a.at("checksum").get<std::string>() : checksum;
    CHECK(a.at("checksum") == checksum);
    std::vector<std::string> steps;
    for (const auto& s : d.at("steps")) {
      steps.push_back(s.at("name"));
    }
    CHECK(std::find(steps.begin(), steps.end(), "first_kernel") != steps.end());
    CHECK(std::find(steps.begin(), steps.end(), "memory_test") != steps.end());
  }
  const json* f = finding(j, "cuda.active-passed");
  REQUIRE(f);
  CHECK(f->at("severity") == "info");
  CHECK_THAT(evidence(*f), Catch::Contains("CUDA 3: first kernel") &&
                               Catch::Contains("16 MiB x 5 patterns") &&
                               Catch::Contains("cannot catch rare intermittent corruption"));
}

TEST_CASE("active: a stuck bit on one GPU of four -> named with its address and dropped") {
  const json j =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_STUCK_BIT", "2:4660:5"}},
           {"--active-time", "20"})
          .json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,3");
  const json* f = finding(j, "cuda.gpu-memory-error");
  REQUIRE(f);
  CHECK(f->at("severity") == "fail");
  CHECK(f->at("gpu") == "0000:03:00.0");
  // word 4660 = byte offset 18640 = 0x48d0; bit 5 stuck at 1: the patterns with a 0 there show it
  CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("offset 0x48d0"));
  // 0x1234 has bit 5 set: the address pattern cannot show it, its complement can
  CHECK_THAT(evidence(*f), Catch::Contains("pattern address-inverse: offset 0x48d0") &&
                               Catch::Contains("expected 0xffffedcb, got 0xffffedeb"));
  CHECK_THAT(evidence(*f), Catch::Contains("bits 0x00000020 differ") &&
                               Catch::Contains("device address 0x") &&
                               Catch::Contains("cannot catch rare intermittent corruption"));
  CHECK_THAT(f->at("remedy").get<std::string>(),
             Catch::Contains("nvidia-smi -r -i 0000:03:00.0") && Catch::Contains("dcgmi diag"));
  const auto ids = ids_of(j);
  CHECK(std::count(ids.begin(), ids.end(), "cuda.gpu-memory-error") == 1);
  CHECK_FALSE(has(j, "cuda.gpu-failed")); // its own finding, not a start-up failure
  // the multi-GPU test ran on the three others
  CHECK(j.at("facts").at("cuda").at("multi_gpu").at("devices") == json::array({0, 1, 3}));
}

TEST_CASE("active: the figures per GPU in Prometheus, and the clocks NVML sampled under load") {
  const auto prom =
      run_preflight({"--root", fixture("cuda-4gpu"), "--libcuda", k_fake, "--format", "prometheus",
                     "--active-time", "20"},
                    {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_STUCK_BIT", "2:4660:5"}})
          .out;
  // the stuck bit shows in the patterns whose word has a 0 there: at least one wrong word
  CHECK_THAT(prom,
             Catch::Contains("gpu_preflight_active_memory_errors{bus_id=\"0000:01:00.0\"} 0\n"));
  const std::string bad = "gpu_preflight_active_memory_errors{bus_id=\"0000:03:00.0\"} ";
  const auto at = prom.find(bad);
  REQUIRE(at != std::string::npos);
  CHECK(std::stoull(prom.substr(at + bad.size())) > 0);
  CHECK_THAT(
      prom,
      Catch::Contains("gpu_preflight_active_memory_tested_bytes{bus_id=\"0000:04:00.0\"} ") &&
          Catch::Contains("gpu_preflight_active_compute_errors{bus_id=\"0000:02:00.0\"} 0\n"));
  // without the step, none of its series (not zeros that would read as a pass)
  const auto off = run_preflight({"--root", fixture("cuda-4gpu"), "--libcuda", k_fake, "--format",
                                  "prometheus", "--no-active"},
                                 {{"FAKE_CUDA_GPUS", "4"}})
                       .out;
  CHECK_THAT(off, !Catch::Contains("gpu_preflight_active_"));
  // the NVML child's samples during the stage, replayed: GPU 3 held at 900 MHz
  const auto replay =
      run_preflight({"--root", fixture("nvml-traffic-faults"), "--format", "prometheus"}).out;
  CHECK_THAT(
      replay,
      Catch::Contains("gpu_preflight_sm_clock_under_load_hertz{bus_id=\"0000:03:00.0\"} "
                      "900000000\n") &&
          Catch::Contains("gpu_preflight_sm_clock_under_load_hertz{bus_id=\"0000:01:00.0\"} "
                          "1980000000\n") &&
          Catch::Contains("gpu_preflight_power_under_load_watts{bus_id=\"0000:01:00.0\"} 350\n"));
}

TEST_CASE("active: a wrong checksum on one GPU of eight -> named and dropped") {
  SECTION("its FMA words differ: only the other seven can tell") {
    const json j =
        live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "8"}, {"FAKE_CUDA_GPU_BAD_FP", "5"}}).json();
    CHECK(j.at("verdict") == "warn");
    CHECK(j.at("cuda_visible_devices") == "0,1,2,3,4,6,7");
    const json* f = finding(j, "cuda.gpu-compute-wrong");
    REQUIRE(f);
    CHECK_THAT(f->at("message").get<std::string>(),
               Catch::Contains("GPU 5") && Catch::Contains("differs from its model's other GPUs"));
    CHECK_THAT(evidence(*f), Catch::Contains("where 7 of the 8 GPUs of its model got"));
    const auto ids = ids_of(j);
    CHECK(std::count(ids.begin(), ids.end(), "cuda.gpu-compute-wrong") == 1);
  }
  SECTION("its integer words differ from the host's") {
    const json j =
        live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "8"}, {"FAKE_CUDA_GPU_BAD_INT", "2"}})
            .json();
    CHECK(j.at("cuda_visible_devices") == "0,1,3,4,5,6,7");
    const json* f = finding(j, "cuda.gpu-compute-wrong");
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains("1 wrong, first thread 77: expected 0x"));
  }
}

TEST_CASE("active: GPUs of one model that disagree with no majority -> said, none dropped") {
  const json j =
      live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "2"}, {"FAKE_CUDA_GPU_BAD_FP", "1"}}).json();
  CHECK(j.at("cuda_visible_devices") == "0,1");
  CHECK_FALSE(has(j, "cuda.gpu-compute-wrong"));
  const json* f = finding(j, "cuda.compute-no-majority");
  REQUIRE(f);
  CHECK(f->at("severity") == "warn");
  CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("no majority"));
}

TEST_CASE("active: a GPU alone of its model is judged by the host reference only") {
  const json fp =
      live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "1"}, {"FAKE_CUDA_GPU_BAD_FP", "0"}}).json();
  CHECK(fp.at("verdict") == "pass");
  const json bad =
      live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "1"}, {"FAKE_CUDA_GPU_BAD_INT", "0"}}).json();
  const json* f = finding(bad, "cuda.gpu-compute-wrong");
  REQUIRE(f);
  CHECK_THAT(evidence(*f), Catch::Contains("judged against the host's integer reference only"));
}

TEST_CASE("active: a kernel that never finishes -> a hang naming the GPU, within the deadline") {
  const auto r =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_KERNEL_HANG", "1"}},
           {"--cuda-timeout", "8"});
  const json j = r.json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,2,3");
  const json* f = finding(j, "cuda.gpu-hung");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:02:00.0");
  CHECK_THAT(f->at("message").get<std::string>(),
             Catch::Contains("hung in a test kernel") && Catch::Contains("first_kernel"));
  CHECK(r.seconds < 8 + 1);
}

TEST_CASE("active: the step's own machinery failing -> not checked with the reason, same verdict") {
  SECTION("the JIT refused") {
    const json j =
        live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_JIT_ERROR", "218"}})
            .json();
    CHECK(j.at("verdict") == "pass");
    CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
    CHECK(judged(j).empty());
    const json* f = finding(j, "cuda.active-not-checked");
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains("cuModuleLoadData") &&
                                 Catch::Contains("CUDA_ERROR_INVALID_PTX") &&
                                 Catch::Contains("CUDA device 3"));
    CHECK(j.at("facts").at("cuda").at("devices").at(0).at("active").at("ran") == false);
  }
  SECTION("an entry point missing from the module") {
    const json j =
        live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_NO_ENTRY", "gpf_check"}})
            .json();
    CHECK(j.at("verdict") == "pass");
    CHECK_THAT(evidence(*finding(j, "cuda.active-not-checked")),
               Catch::Contains("cuModuleGetFunction(gpf_check): CUDA_ERROR_NOT_FOUND"));
  }
}

TEST_CASE("active: --no-active turns it off; the figures replay from cuda.json") {
  const json off = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}, {"--no-active"}).json();
  CHECK(off.at("facts").at("cuda").at("active").at("not_checked") == "--no-active");
  CHECK_FALSE(off.at("facts").at("cuda").at("devices").at(0).contains("active"));
  CHECK_FALSE(has(off, "cuda.active-passed"));

  const json j =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_STUCK_BIT", "0:2:0"}})
          .json();
  TempSnapshot snap("cuda-4gpu");
  snap.write("cuda.json", j.at("facts").at("cuda").dump());
  const json replay = run_preflight({"--root", snap.path(), "--format", "json"}, {}).json();
  CHECK(replay.at("facts").at("cuda").at("devices") == j.at("facts").at("cuda").at("devices"));
  CHECK(replay.at("cuda_visible_devices") == "1,2,3");
  CHECK(has(replay, "cuda.gpu-memory-error"));
}

TEST_CASE("peer timing: a slow peer path is bandwidth not measured, never a multi-GPU hang") {
  // Every timed copy 0 <-> 1 takes 5 s of wall time: the deadline comes while timing.
  const auto r =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_P2P_SLEEP_MS", "0-1:5000"}},
           {"--cuda-timeout", "4", "--no-active"});
  const json j = r.json();
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  CHECK_FALSE(has(j, "cuda.multi-gpu-hung"));
  CHECK_FALSE(has(j, "cuda.multi-gpu-failed"));
  const json& multi = j.at("facts").at("cuda").at("multi_gpu");
  CHECK(multi.at("ok") == true);
  REQUIRE(multi.at("peers").size() == 12);
  bool cut = false;
  for (const auto& p : multi.at("peers")) {
    CHECK(p.at("ok") == true);
    if (p.at("from") == 0 && p.at("to") == 1) {
      CHECK_FALSE(p.contains("gbps"));
      CHECK_THAT(p.at("bandwidth_not_checked").get<std::string>(),
                 Catch::Contains("bandwidth not measured"));
      cut = true;
    }
  }
  CHECK(cut);
  const json* f = finding(j, "cuda.bandwidth-measured");
  REQUIRE(f);
  CHECK_THAT(evidence(*f), Catch::Contains("pairs not measured: CUDA 0 -> 1"));
  CHECK(r.seconds < 4 + 1);
}
