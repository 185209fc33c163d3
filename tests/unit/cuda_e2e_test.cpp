// The gpu-preflight binary on fixture snapshots with the fake driver (--root DIR --libcuda FAKE):
// verdict, exit code, recommendation, evidence and (loosely) the time it took. Also replay of
// cuda.json, and the snapshot without one.
#include "unit/cuda_test_support.hpp"

#include <catch2/catch.hpp>

#include <tuple>

using namespace gpf::cuda_test;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using gpf::test::run_program;
using nlohmann::json;

namespace {

// The fixture's four GPUs: bus 0000:0N:00.0, UUID GPU-fa4ec0de-0000-4000-8000-00000000000(N-1),
// which is what the fake driver reports by default.
RunResult live(const std::string& root, const Env& env, std::vector<std::string> extra = {},
               const std::string& lib = k_fake) {
  std::vector<std::string> args{"--root", root, "--libcuda", lib, "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_preflight(args, env);
}

std::string severity(const json& report, const std::string& id) {
  const json* f = finding(report, id);
  return f ? f->at("severity").get<std::string>() : "absent";
}

const json& cuda_probe(const json& report) {
  for (const auto& p : report.at("probes")) {
    if (p.at("name") == "cuda") {
      return p;
    }
  }
  throw std::runtime_error("no cuda probe in the report");
}

} // namespace

TEST_CASE("e2e cuda: four healthy GPUs pass, CUDA facts in the JSON report") {
  const auto r = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}});
  const json j = r.json();
  CHECK(r.exit_code == 0);
  CHECK(j.at("verdict") == "pass");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  CHECK_FALSE(j.contains("cuda_device_order"));
  const json& cuda = j.at("facts").at("cuda");
  CHECK(cuda.at("driver_cuda_version") == "12.4");
  CHECK(cuda.at("devices").size() == 4);
  CHECK(cuda.at("devices").at(3).at("uuid") == "GPU-fa4ec0de-0000-4000-8000-000000000003");
  CHECK(cuda.at("devices").at(3).at("compute_capability") == "8.0");
  CHECK(cuda.at("devices").at(0).at("steps").at(3).at("name") == "primary_context");
  CHECK(cuda.at("multi_gpu").at("ok") == true);
  CHECK(cuda.at("multi_gpu").at("matrix").at(1).at(0) == "ok");
  CHECK(cuda_probe(j).at("status") == "ok");
}

TEST_CASE("e2e cuda: cuInit error fails with the error by name and no GPU recommended") {
  const auto r =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_INIT_ERROR", "999"}});
  const json j = r.json();
  CHECK(r.exit_code == 1);
  CHECK(j.at("verdict") == "fail");
  CHECK(j.at("cuda_visible_devices") == "");
  const json* f = finding(j, "cuda.init-failed");
  REQUIRE(f);
  CHECK_THAT(evidence(*f),
             Catch::Contains("cuInit failed after") && Catch::Contains("CUDA_ERROR_UNKNOWN (999)"));
  CHECK(j.at("usable_gpus") == 0);
  CHECK(j.at("gpus").at(0).at("reasons").at(0) == "cuda.init-failed");
}

TEST_CASE("e2e cuda: a CUresult the driver cannot name is named by CUDA's enum, with its meaning") {
  // The fake libcuda's cuGetErrorName knows neither code (as a driver older than the code would).
  for (const auto& [code, name, meaning] :
       {std::tuple{"805", "CUDA_ERROR_MPS_CONNECTION_FAILED",
                   "could not connect to the MPS control daemon or server"},
        std::tuple{"918", "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE",
                   "recapturing a graph failed and was ended"}}) {
    INFO("CUresult " << code);
    const json j =
        live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_INIT_ERROR", code}})
            .json();
    const json* f = finding(j, "cuda.init-failed");
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains(std::string(name) + " (" + code + ")") &&
                                 Catch::Contains(std::string("(CUDA: ") + meaning + ")"));
    CHECK_THAT(evidence(*f), !Catch::Contains("CUresult " + std::string(code)));
  }
}

TEST_CASE("e2e cuda: cuInit hanging, even ignoring SIGTERM, gives a verdict at the deadline") {
  for (const char* ignore : {"0", "1"}) {
    INFO("ignore SIGTERM " << ignore);
    const auto r = live(fixture("cuda-4gpu"),
                        {{"FAKE_CUDA_GPUS", "4"},
                         {"FAKE_CUDA_INIT_HANG", "1"},
                         {"FAKE_CUDA_IGNORE_SIGTERM", ignore}},
                        {"--cuda-timeout", "2"});
    const json j = r.json();
    CHECK(r.exit_code == 1);
    CHECK(j.at("verdict") == "fail");
    const json* f = finding(j, "cuda.init-hung");
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains("cuInit did not finish within") &&
                                 Catch::Contains("--cuda-timeout 2 s"));
    CHECK(r.seconds >= 1.9);
    CHECK(r.seconds < 2.0 + 1.0 + 1.0); // deadline + 1 s, and 1 s of slack for a loaded machine
  }
}

TEST_CASE("e2e cuda: one GPU's context hangs -> that GPU dropped, the others fine -> warn") {
  const auto r =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_HANG", "1"}},
           {"--cuda-timeout", "4"});
  const json j = r.json();
  CHECK(r.exit_code == 0);
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,2,3");
  const json* f = finding(j, "cuda.gpu-hung");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:02:00.0");
  CHECK_THAT(
      evidence(*f),
      Catch::Contains("CUDA device 1 (0000:02:00.0, GPU-fa4ec0de-0000-4000-8000-000000000001)") &&
          Catch::Contains("primary_context did not finish within"));
  CHECK(j.at("facts").at("cuda").at("multi_gpu").at("ok") == true); // the other three together
  CHECK(r.seconds >= 0.6 * 4 - 0.1); // the hung GPU held the per-GPU share of the deadline
  CHECK(r.seconds < 4.0 + 1.5);
}

TEST_CASE("e2e cuda: one GPU errors -> dropped with the driver's error") {
  const auto r =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_ERROR", "3:214"}});
  const json j = r.json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,2");
  const json* f = finding(j, "cuda.gpu-failed");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:04:00.0");
  CHECK_THAT(evidence(*f),
             Catch::Contains(
                 "CUDA_ERROR_ECC_UNCORRECTABLE (214): cuDevicePrimaryCtxRetain: uncorrectable"));
  CHECK(j.at("gpus").at(3).at("reasons").at(0) == "cuda.gpu-failed");
}

TEST_CASE("e2e cuda: a slow GPU is a warning, not a dropped GPU") {
  const auto r =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_MS", "2:1500"}});
  const json j = r.json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  const json* f = finding(j, "cuda.gpu-slow-init");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:03:00.0");
  CHECK_THAT(evidence(*f), Catch::Contains("cuInit + primary_context"));
}

TEST_CASE("e2e cuda: a hung peer copy recommends a single GPU and names the remedies") {
  // --no-active: the fake computes the active step's kernels on this machine's CPUs, which a 3 s
  // deadline shared by four children does not leave room for on a loaded machine.
  const auto r = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_PEER_HANG", "1"}},
                      {"--cuda-timeout", "3", "--no-active"});
  const json j = r.json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0");
  const json* f = finding(j, "cuda.multi-gpu-hung");
  REQUIRE(f);
  CHECK_THAT(f->at("remedy").get<std::string>(),
             Catch::Contains("NCCL_P2P_DISABLE=1") && Catch::Contains("ACS"));
  CHECK_THAT(evidence(*f), Catch::Contains("peer copy CUDA 0 -> CUDA 1 did not finish"));
  CHECK(j.at("facts").at("cuda").at("multi_gpu").at("matrix").at(0).at(1) == "hung");
  CHECK(r.seconds < 4.5);
}

TEST_CASE("e2e cuda: stub library, missing library, 803, missing entry points") {
  SECTION("stub") {
    const json j = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_STUB", "1"}}).json();
    CHECK(j.at("verdict") == "fail");
    REQUIRE(finding(j, "cuda.stub-library"));
    CHECK_THAT(evidence(*finding(j, "cuda.stub-library")), Catch::Contains("(34)"));
    CHECK(severity(j, "cuda.init-failed") == "absent");
  }
  SECTION("library missing while the driver is loaded: fail, with the loader's words") {
    // a soname the loader does not find (a path that does not exist is a usage error, exit 2)
    const json j = live(fixture("cuda-4gpu"), {}, {}, "libcuda-nonexistent.so.1").json();
    CHECK(j.at("verdict") == "fail");
    CHECK(severity(j, "cuda.library-missing") == "fail");
    CHECK_THAT(evidence(*finding(j, "cuda.library-missing")),
               Catch::Contains("cannot open shared object file"));
    CHECK(j.at("cuda_visible_devices") == "");
  }
  SECTION("library missing without a driver: info only") {
    const json j = live(fixture("cuda-no-driver"), {}, {}, "libcuda-nonexistent.so.1").json();
    CHECK(severity(j, "cuda.library-missing") == "info");
    CHECK(severity(j, "driver.not-loaded") == "fail");
  }
  SECTION("803: driver mismatch with both versions") {
    const json j = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_INIT_ERROR", "803"}}).json();
    CHECK(j.at("verdict") == "fail");
    const json* f = finding(j, "cuda.driver-mismatch");
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)") &&
                                 Catch::Contains("kernel module: 550.54.14") &&
                                 Catch::Contains("(CUDA 12.4)"));
  }
  SECTION("a required entry point missing") {
    const json j = live(fixture("cuda-4gpu"), {}, {}, k_fake_no_memset).json();
    CHECK(j.at("verdict") == "fail");
    REQUIRE(finding(j, "cuda.required-symbol-missing"));
    CHECK_THAT(evidence(*finding(j, "cuda.required-symbol-missing")),
               Catch::Contains("dlsym(cuMemsetD8_v2)"));
  }
}

TEST_CASE(
    "e2e cuda: kernel below 5.5 -- a passing multi-GPU test keeps all GPUs, no test keeps one") {
  const json passed = live(fixture("cuda-2gpu-kernel54"), {{"FAKE_CUDA_GPUS", "2"}}).json();
  CHECK(severity(passed, "kernel.below-5.5-multi-gpu") == "info");
  CHECK(passed.at("cuda_visible_devices") == "0,1");
  CHECK(passed.at("verdict") == "pass");

  const json no_peer =
      live(fixture("cuda-2gpu-kernel54"), {{"FAKE_CUDA_GPUS", "2"}}, {}, k_fake_no_peer).json();
  CHECK(severity(no_peer, "kernel.below-5.5-multi-gpu") == "warn");
  CHECK(severity(no_peer, "cuda.optional-symbol-missing") == "info");
  CHECK(no_peer.at("cuda_visible_devices") == "0");

  const json skipped =
      run_preflight({"--root", fixture("cuda-2gpu-kernel54"), "--no-cuda", "--format", "json"})
          .json();
  CHECK(severity(skipped, "kernel.below-5.5-multi-gpu") == "warn");
  CHECK(skipped.at("cuda_visible_devices") == "0");
  CHECK(cuda_probe(skipped).at("status") == "skipped");
}

TEST_CASE("e2e cuda: the job's CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are respected") {
  // The fake lists the GPUs fastest-first as bus 3, 1, 2 (UUIDs follow their buses).
  const Env order{
      {"FAKE_CUDA_GPUS", "3"},
      {"FAKE_CUDA_BUS_IDS", "0000:03:00.0,0000:01:00.0,0000:02:00.0"},
      {"FAKE_CUDA_UUIDS",
       "GPU-fa4ec0de-0000-4000-8000-000000000002,GPU-fa4ec0de-0000-4000-8000-000000000000,"
       "GPU-fa4ec0de-0000-4000-8000-000000000001"}};
  TempSnapshot snap("cuda-4gpu");
  std::filesystem::remove_all(std::filesystem::path(snap.path()) /
                              "proc/driver/nvidia/gpus/0000:04:00.0");

  SECTION("default order: CUDA's indices, no CUDA_DEVICE_ORDER") {
    const json j = live(snap.path(), order).json();
    CHECK(j.at("cuda_visible_devices") == "0,1,2");
    CHECK_FALSE(j.contains("cuda_device_order"));
    CHECK(j.at("gpus").at(0).at("bus_id") == "0000:03:00.0");
  }
  SECTION("the job's CUDA_VISIBLE_DEVICES (index and UUID prefix) narrows the recommendation") {
    snap.write("environ", "CUDA_VISIBLE_DEVICES=GPU-fa4ec0de-0000-4000-8000-000000000000,0\n");
    const json j = live(snap.path(), order).json();
    CHECK(j.at("cuda_visible_devices") == "0,1"); // CUDA 1 (bus 1) and CUDA 0 (bus 3)
    // the GPU the job does not use is still probed
    CHECK(j.at("facts").at("cuda").at("devices").at(2).at("usable") == true);
    CHECK(j.at("facts").at("cuda").at("multi_gpu").at("devices") == json::array({0, 1}));
  }
  SECTION("the job's CUDA_DEVICE_ORDER=PCI_BUS_ID is restated") {
    snap.write("environ", "CUDA_DEVICE_ORDER=PCI_BUS_ID\nCUDA_VISIBLE_DEVICES=2\n");
    const json j = live(snap.path(), order).json();
    CHECK(j.at("cuda_visible_devices") == "2");
    CHECK(j.at("cuda_device_order") == "PCI_BUS_ID");
    CHECK(j.at("gpus").at(2).at("bus_id") == "0000:03:00.0");
  }
  SECTION("--cvd-form uuid") {
    const json j = live(snap.path(), order, {"--cvd-form", "uuid"}).json();
    CHECK(j.at("cuda_visible_devices") ==
          "GPU-fa4ec0de-0000-4000-8000-000000000002,GPU-fa4ec0de-0000-4000-8000-000000000000,"
          "GPU-fa4ec0de-0000-4000-8000-000000000001");
    CHECK_FALSE(j.contains("cuda_device_order"));
  }
}

TEST_CASE("e2e cuda: GPUs the driver lists but CUDA does not, and WSL2 GPUs from CUDA") {
  const json j = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "3"}}).json();
  const json* f = finding(j, "cuda.gpu-not-enumerated");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:04:00.0");
  CHECK(j.at("cuda_visible_devices") == "0,1,2");
  CHECK(j.at("gpus").at(3).at("index").is_null());

  const json wsl = live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "2"}}).json();
  CHECK(wsl.at("verdict") == "pass");
  CHECK(wsl.at("cuda_visible_devices") == "0,1");
  CHECK(wsl.at("gpus").at(1).at("model") == "NVIDIA Fake GPU");
}

TEST_CASE("e2e cuda: a live result saved as cuda.json replays to the same verdict") {
  const auto first =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_ERROR", "0:999"}});
  const json live_report = first.json();
  TempSnapshot snap("cuda-4gpu");
  snap.write("cuda.json", live_report.at("facts").at("cuda").dump(2));
  const auto again =
      run_preflight({"--root", snap.path(), "--format", "json"}); // no FAKE_CUDA_*: nothing live
  const json replay = again.json();
  CHECK(again.exit_code == first.exit_code);
  CHECK(replay.at("verdict") == live_report.at("verdict"));
  CHECK(replay.at("cuda_visible_devices") == "1,2,3");
  CHECK(replay.at("findings") == live_report.at("findings"));
  json replayed_cuda = replay.at("facts").at("cuda");
  json live_cuda = live_report.at("facts").at("cuda");
  replayed_cuda.erase("source");
  live_cuda.erase("source");
  CHECK(replayed_cuda == live_cuda);
  CHECK(cuda_probe(replay).at("status") == "ok");
}

TEST_CASE("e2e cuda: `snapshot` records the live CUDA result as cuda.json, and the replay agrees") {
  const Env env{{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_ERROR", "2:214"}};
  TempSnapshot scratch("cuda-no-driver"); // a scratch directory removed at the end
  const std::string dir = scratch.path() + "/capture";
  const auto captured = run_preflight(
      {"--root", fixture("cuda-4gpu"), "--libcuda", k_fake, "snapshot", "-o", dir}, env);
  REQUIRE(captured.exit_code == 0);
  REQUIRE(std::filesystem::exists(std::filesystem::path(dir) / "cuda.json"));
  const json live_report = live(fixture("cuda-4gpu"), env).json();
  const json replay = run_preflight({"--root", dir, "--format", "json"}).json();
  CHECK(replay.at("verdict") == live_report.at("verdict"));
  CHECK(replay.at("cuda_visible_devices") == "0,1,3");
  CHECK(replay.at("cuda_visible_devices") == live_report.at("cuda_visible_devices"));
  REQUIRE(finding(replay, "cuda.gpu-failed"));
  CHECK(finding(replay, "cuda.gpu-failed")->at("gpu") == "0000:03:00.0");
}

TEST_CASE("e2e cuda: replay of a recorded cuda.json, a garbage one, and none") {
  const json hung =
      run_preflight({"--root", fixture("cuda-replay-gpu-hung"), "--format", "json"}).json();
  CHECK(hung.at("verdict") == "warn");
  CHECK(hung.at("cuda_visible_devices") == "0");
  REQUIRE(finding(hung, "cuda.gpu-hung"));

  const json garbage =
      run_preflight({"--root", fixture("cuda-replay-garbage"), "--format", "json"}).json();
  CHECK(cuda_probe(garbage).at("status") == "error");
  REQUIRE(finding(garbage, "probe.failed"));
  CHECK_THAT(evidence(*finding(garbage, "probe.failed")),
             Catch::Contains("cuda.json: not valid JSON"));

  const json none = run_preflight({"--root", fixture("cuda-4gpu"), "--format", "json"}).json();
  CHECK(cuda_probe(none).at("status") == "skipped");
  CHECK(none.at("verdict") == "pass");
  CHECK(none.at("cuda_device_order") == "PCI_BUS_ID"); // the driver's PCI order without CUDA
}

TEST_CASE("e2e cuda: option errors exit 2") {
  CHECK(run_preflight({"--cuda-timeout", "0", "--no-cuda"}).exit_code == 2);
  CHECK(run_preflight({"--cvd-form", "bus", "--no-cuda"}).exit_code == 2);
}

TEST_CASE("e2e cuda: the report, the rules, Prometheus and summarize see one start-up figure") {
  // A recorded result with known steps: GPU 2's context took 2.9 s; GPU 3 has no cuInit step.
  json cuda = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}).json().at("facts").at("cuda");
  for (auto& d : cuda.at("devices")) {
    for (auto& s : d.at("steps")) {
      const auto name = s.at("name").get<std::string>();
      s["duration_ms"] = name == "primary_context" ? (d.at("index") == 2 ? 2900.0 : 150.0)
                         : name == "cuInit"        ? 100.0
                                                   : 1.0;
    }
  }
  auto& steps3 = cuda.at("devices").at(3).at("steps");
  steps3.erase(steps3.begin() + 1);
  REQUIRE(steps3.at(0).at("name") == "load");
  TempSnapshot snap("cuda-4gpu");
  snap.write("cuda.json", cuda.dump(2));

  const json report = run_preflight({"--root", snap.path(), "--format", "json"}).json();
  const json& devices = report.at("facts").at("cuda").at("devices");
  CHECK(devices.at(0).at("init_ms") == 250.0);
  CHECK(devices.at(0).at("startup_ms") == 252.0); // load + cuInit + device_get + context
  CHECK(devices.at(2).at("init_ms") == 3000.0);
  CHECK(devices.at(2).at("startup_ms") == 3002.0);
  CHECK(devices.at(3).at("init_ms").is_null()); // a step missing: no figure, not a smaller one
  CHECK(devices.at(3).at("startup_ms").is_null());
  // the rules: GPU 2 is slow by its init time (3000 ms against the others' 250)
  const json* slow = finding(report, "cuda.gpu-slow-init");
  REQUIRE(slow);
  CHECK(slow->at("gpu") == "0000:03:00.0");
  CHECK_THAT(evidence(*slow), Catch::Contains("cuInit + primary_context 3.00 s; median of the "
                                              "other GPUs 250.0 ms"));
  // Prometheus: the start-up time of each GPU that has one
  const auto prom = run_preflight({"--root", snap.path(), "--format", "prometheus"}).out;
  CHECK_THAT(prom,
             Catch::Contains("gpu_preflight_cuda_startup_seconds{bus_id=\"0000:01:00.0\"} "
                             "0.252\n") &&
                 Catch::Contains("gpu_preflight_cuda_startup_seconds{bus_id=\"0000:03:00.0\"} "
                                 "3.002\n"));
  CHECK_THAT(prom, !Catch::Contains("cuda_startup_seconds{bus_id=\"0000:04:00.0\"}"));
  // summarize: the node's figure is its slowest GPU's, read from the report; a report of an
  // older version, without the figures, gives the same from its steps
  const auto summarized = [](const json& r) {
    const auto out =
        run_program({GPF_BINARY, "summarize", "--format", "json"}, {}, r.dump() + "\n");
    INFO(out.err);
    return json::parse(out.out).at("nodes").at(0).at("cuda_startup_ms");
  };
  CHECK(summarized(report) == 3002.0);
  json older = report;
  for (auto& d : older.at("facts").at("cuda").at("devices")) {
    d.erase("init_ms");
    d.erase("startup_ms");
  }
  CHECK(summarized(older) == 3002.0);
  json no_figure = report;
  for (auto& d : no_figure.at("facts").at("cuda").at("devices")) {
    d["startup_ms"] = nullptr;
  }
  CHECK(summarized(no_figure).is_null());
}
