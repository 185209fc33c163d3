// The NVML probe end to end: the binary on a fixture snapshot (healthy-4gpu: GPUs 0000:18:00.0,
// 0000:2a:00.0, 0000:3a:00.0, 0000:5d:00.0, driver loaded) with the fake libnvidia-ml.so.1
// (--root DIR --libnvml FAKE --no-cuda): each condition's finding, the GPU's usability and the
// recommended CUDA_VISIBLE_DEVICES; hung init / hung GPU within the deadline; nvml.json replay.
#include "gpf/facts/nvml_json.hpp"
#include "gpf/probes/nvml_probe.hpp"
#include "gpf/probes/pipeline.hpp"
#include "gpf/probes/probes.hpp"
#include "unit/cuda_test_support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

using namespace gpf::cuda_test;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

const std::string k_fake_nvml = GPF_FAKE_LIBNVML;
const std::string k_buses = "0000:18:00.0,0000:2a:00.0,0000:3a:00.0,0000:5d:00.0";

RunResult nvml_run(Env env, std::vector<std::string> extra = {},
                   const std::string& root = "healthy-4gpu") {
  env.emplace("FAKE_NVML_BUS_IDS", k_buses);
  std::vector<std::string> args{"--root",    fixture(root), "--no-cuda", "--libnvml",
                                k_fake_nvml, "--format",    "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_preflight(args, env);
}

std::string severity(const json& report, const std::string& id) {
  const json* f = finding(report, id);
  return f ? f->at("severity").get<std::string>() : "absent";
}

// No nvml.* finding above info.
bool no_nvml_problem(const json& report) {
  for (const auto& f : report.at("findings")) {
    if (f.at("id").get<std::string>().rfind("nvml.", 0) == 0 && f.at("severity") != "info") {
      return false;
    }
  }
  return true;
}

} // namespace

TEST_CASE("e2e nvml: four healthy GPUs pass, health in gpus[] and facts.nvml") {
  const auto r = nvml_run({});
  const json j = r.json();
  CHECK(j.at("verdict") == "pass");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  CHECK(no_nvml_problem(j));
  const json& nvml = j.at("facts").at("nvml");
  CHECK(nvml.at("init_code") == 0);
  CHECK(nvml.at("init_call") == "nvmlInitWithFlags");
  CHECK(nvml.at("driver_version") == "535.261.03");
  REQUIRE(nvml.at("gpus").size() == 4);
  CHECK(nvml.at("gpus").at(1).at("nvml_bus_id") == "00000000:2A:00.0");
  const json& health = j.at("gpus").at(1).at("health");
  CHECK(health.at("bus_id") == "0000:2a:00.0");
  CHECK(health.at("remap_pending") == false);
  // R535 has no recovery-action field: NOT_SUPPORTED is recorded, and is not a finding.
  bool recorded = false;
  for (const auto& c : health.at("calls")) {
    recorded = recorded || (c.at("name") == "recovery_action" && c.at("code") == 3);
  }
  CHECK(recorded);
}

TEST_CASE("e2e nvml: each condition gives its finding, usability and recommendation") {
  struct Case {
    const char* what;
    Env env;
    const char* id;
    const char* severity;
    const char* gpu;
    const char* cvd;
    const char* remedy_has;
  };
  const std::vector<Case> cases{
      {"row remap pending keeps the GPU",
       {{"FAKE_NVML_REMAP_PENDING", "1:1"}},
       "nvml.row-remap-pending",
       "warn",
       "0000:2a:00.0",
       "0,1,2,3",
       "nvidia-smi -r -i 0000:2a:00.0"},
      {"row remap failure drops it",
       {{"FAKE_NVML_REMAP_FAILURE", "1:1"}},
       "nvml.row-remap-failure",
       "fail",
       "0000:2a:00.0",
       "0,2,3",
       "RMA"},
      {"retired pages pending (Volta) drops it",
       {{"FAKE_NVML_ARCH", "2:5"}, {"FAKE_NVML_RETIRED_PENDING", "2:1"}},
       "nvml.retired-pages-pending",
       "fail",
       "0000:3a:00.0",
       "0,1,3",
       "nvidia-smi -r -i 0000:3a:00.0"},
      {"recovery action reset drops it",
       {{"FAKE_NVML_RECOVERY", "0:1"}},
       "nvml.recovery-action",
       "fail",
       "0000:18:00.0",
       "1,2,3",
       "nvidia-smi -r -i 0000:18:00.0"},
      {"unknown recovery action drops it",
       {{"FAKE_NVML_RECOVERY", "0:42"}},
       "nvml.recovery-action",
       "fail",
       "0000:18:00.0",
       "1,2,3",
       "42"},
      {"volatile DBE before Ampere drops it",
       {{"FAKE_NVML_ARCH", "3:6"}, {"FAKE_NVML_ECC_VOL", "3:2"}},
       "nvml.ecc-volatile-uncorrectable",
       "fail",
       "0000:5d:00.0",
       "0,1,2",
       "nvidia-smi -r -i 0000:5d:00.0"},
      {"volatile uncorrectable on Ampere+ is a warning",
       {{"FAKE_NVML_ARCH", "3:8"}, {"FAKE_NVML_ECC_VOL", "3:2"}},
       "nvml.ecc-volatile-uncorrectable",
       "warn",
       "0000:5d:00.0",
       "0,1,2,3",
       "nvidia-smi -r -i 0000:5d:00.0"},
      {"aggregate count alone is information",
       {{"FAKE_NVML_ECC_AGG", "3:5"}},
       "nvml.ecc-aggregate-uncorrectable",
       "info",
       "0000:5d:00.0",
       "0,1,2,3",
       ""},
      {"hardware thermal slowdown warns",
       {{"FAKE_NVML_CLOCKS", "2:0x41"}},
       "nvml.hw-slowdown",
       "warn",
       "0000:3a:00.0",
       "0,1,2,3",
       "cooling"},
      {"power brake warns",
       {{"FAKE_NVML_CLOCKS", "2:0x80"}},
       "nvml.hw-slowdown",
       "warn",
       "0000:3a:00.0",
       "0,1,2,3",
       ""},
      {"PCIe x8 of x16 warns",
       {{"FAKE_NVML_PCIE_WIDTH", "0:8"}},
       "nvml.pcie-width-degraded",
       "warn",
       "0000:18:00.0",
       "0,1,2,3",
       ""},
      {"PCIe generation below max is information",
       {{"FAKE_NVML_PCIE_GEN", "0:1"}},
       "nvml.pcie-gen-below-max",
       "info",
       "0000:18:00.0",
       "0,1,2,3",
       ""},
      {"one NVLink down warns",
       {{"FAKE_NVML_NVLINKS", "1:18"}, {"FAKE_NVML_NVLINK_DOWN", "1:4"}},
       "nvml.nvlink-down",
       "warn",
       "0000:2a:00.0",
       "0,1,2,3",
       ""},
      {"fabric not started drops it",
       {{"FAKE_NVML_FABRIC", "1:1"}},
       "nvml.fabric-incomplete",
       "fail",
       "0000:2a:00.0",
       "0,2,3",
       "fabricmanager"},
      {"fabric completed with an error drops it",
       {{"FAKE_NVML_FABRIC", "1:3"}, {"FAKE_NVML_FABRIC_STATUS", "1:999"}},
       "nvml.fabric-incomplete",
       "fail",
       "0000:2a:00.0",
       "0,2,3",
       ""},
      {"compute mode prohibited drops it",
       {{"FAKE_NVML_COMPUTE_MODE", "3:2"}},
       "nvml.compute-prohibited",
       "fail",
       "0000:5d:00.0",
       "0,1,2",
       "-c DEFAULT"},
      {"exclusive process with a process drops it",
       {{"FAKE_NVML_COMPUTE_MODE", "0:3"}, {"FAKE_NVML_PROCS", "0:4242"}},
       "nvml.exclusive-process-busy",
       "fail",
       "0000:18:00.0",
       "1,2,3",
       ""},
      {"another process warns and keeps it",
       {{"FAKE_NVML_PROCS", "2:4242"}},
       "nvml.processes-present",
       "warn",
       "0000:3a:00.0",
       "0,1,2,3",
       ""},
      {"MIG change pending warns",
       {{"FAKE_NVML_MIG_PENDING", "1:1"}},
       "nvml.mig-pending",
       "warn",
       "0000:2a:00.0",
       "0,1,2,3",
       "nvidia-smi -r -i 0000:2a:00.0"},
      {"persistence off is information",
       {{"FAKE_NVML_PERSISTENCE", "0:0"}},
       "nvml.persistence-off",
       "info",
       "0000:18:00.0",
       "0,1,2,3",
       "nvidia-persistenced"},
      {"a lost GPU drops it",
       {{"FAKE_NVML_LOST", "1"}},
       "nvml.gpu-unreachable",
       "fail",
       "0000:2a:00.0",
       "0,2,3",
       "reboot"},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what) {
      const json j = nvml_run(c.env).json();
      const json* f = finding(j, c.id);
      REQUIRE(f);
      CHECK(f->at("severity") == c.severity);
      CHECK(f->at("gpu") == c.gpu);
      CHECK(j.at("cuda_visible_devices") == c.cvd);
      CHECK_FALSE(f->at("evidence").empty());
      // evidence that stands alone: the GPU's bus id and the NVML call that said it
      const std::string first = f->at("evidence").at(0).get<std::string>();
      CHECK_THAT(first, Catch::StartsWith(std::string(c.gpu) + ": ") && Catch::Contains("nvml"));
      CHECK_THAT(f->at("remedy").get<std::string>(), Catch::Contains(c.remedy_has));
    }
  }
}

// https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227: after `systemctl daemon-reload`
// on the host, nvidia-smi in a running container says "Failed to initialize NVML: Unknown Error".
TEST_CASE("e2e nvml: Unknown Error in a container names lost device access and recreating it") {
  const json j = nvml_run({{"FAKE_NVML_INIT_RC", "999"}}, {}, "topo-nvswitch-container").json();
  const json* f = finding(j, "nvml.init-failed");
  REQUIRE(f);
  const std::string message = f->at("message").get<std::string>();
  CHECK_THAT(message, Catch::Contains("cgroup device rules") && Catch::Contains("daemon-reload"));
  CHECK_THAT(f->at("remedy").get<std::string>(),
             Catch::StartsWith("Recreate the container") &&
                 Catch::Contains("nvidia-ctk system create-dev-char-symlinks"));
  CHECK_THAT(f->dump(), Catch::Contains("proc/1/comm: bash"));
  // on a host the same code keeps the generic words
  const json host = nvml_run({{"FAKE_NVML_INIT_RC", "999"}}).json();
  const json* h = finding(host, "nvml.init-failed");
  REQUIRE(h);
  CHECK_THAT(h->at("message").get<std::string>(), !Catch::Contains("cgroup"));
}

TEST_CASE("e2e nvml: benign clock reasons and NOT_SUPPORTED per generation are not findings") {
  // Idle + application clocks + software power cap; Volta (no remapping, no MIG) next to Hopper.
  const json j = nvml_run({{"FAKE_NVML_CLOCKS", "0:0x7"}, {"FAKE_NVML_ARCH", "1:5,2:7"}}).json();
  CHECK(no_nvml_problem(j));
  CHECK(severity(j, "nvml.hw-slowdown") == "absent");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  const json& volta = j.at("facts").at("nvml").at("gpus").at(1);
  CHECK(volta.at("remapped_uncorrectable").is_null());
  CHECK(volta.at("retired_pages_pending") == false);
}

TEST_CASE("e2e nvml: a hung GPU is named and dropped, the others answer, within the deadline") {
  const auto r = nvml_run({{"FAKE_NVML_HANG", "2:remapped_rows"}}, {"--timeout", "2"});
  const json j = r.json();
  CHECK(r.seconds < 3.0);
  const json* f = finding(j, "nvml.gpu-hung");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:3a:00.0");
  CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("remapped_rows"));
  CHECK(j.at("cuda_visible_devices") == "0,1,3");
  CHECK(j.at("facts").at("nvml").at("gpus").at(0).at("hang").is_null());
}

TEST_CASE("e2e nvml: a hung init that ignores SIGTERM gives a verdict within the deadline") {
  const auto r = nvml_run({{"FAKE_NVML_INIT_HANG", "1"}}, {"--timeout", "1.5"});
  const json j = r.json();
  CHECK(r.seconds < 2.5);
  CHECK(severity(j, "nvml.init-hung") == "fail");
  CHECK(j.at("verdict") == "fail");
  CHECK(severity(j, "nvml.gpu-hung") == "absent"); // one cause, one finding
}

TEST_CASE("e2e nvml: init errors are one clear finding each") {
  const json mismatch = nvml_run({{"FAKE_NVML_INIT_RC", "18"}}).json();
  REQUIRE(finding(mismatch, "nvml.init-failed"));
  CHECK(severity(mismatch, "nvml.init-failed") == "fail");
  CHECK_THAT(evidence(*finding(mismatch, "nvml.init-failed")),
             Catch::Contains("Driver/library version mismatch"));
  CHECK_THAT(finding(mismatch, "nvml.init-failed")->at("remedy").get<std::string>(),
             Catch::Contains("reboot"));
  const json perm = nvml_run({{"FAKE_NVML_INIT_RC", "4"}}).json();
  CHECK(severity(perm, "nvml.init-failed") == "warn");
}

TEST_CASE("e2e nvml: no NVML library on a host without a driver is not a second failure") {
  const json j = run_preflight({"--root", fixture("no-driver"), "--no-cuda", "--libnvml",
                                "libnvidia-ml-absent.so.1", "--format", "json"})
                     .json();
  CHECK(severity(j, "nvml.library-missing") == "absent");
  CHECK(severity(j, "nvml.init-failed") == "absent");
  const json with_driver =
      run_preflight({"--root", fixture("healthy-4gpu"), "--no-cuda", "--libnvml",
                     "libnvidia-ml-absent.so.1", "--format", "json"})
          .json();
  CHECK(severity(with_driver, "nvml.library-missing") == "warn");
}

TEST_CASE("e2e nvml: `snapshot` records nvml.json and the replay agrees; absent means skipped") {
  const Env env{{"FAKE_NVML_BUS_IDS", k_buses}, {"FAKE_NVML_REMAP_FAILURE", "1:1"}};
  TempSnapshot scratch("no-driver");
  const std::string dir = scratch.path() + "/capture";
  const auto captured = run_preflight({"--root", fixture("healthy-4gpu"), "--no-cuda", "--libnvml",
                                       k_fake_nvml, "snapshot", "-o", dir},
                                      env);
  REQUIRE(captured.exit_code == 0);
  REQUIRE(std::filesystem::exists(std::filesystem::path(dir) / "nvml.json"));
  const json live = nvml_run({{"FAKE_NVML_REMAP_FAILURE", "1:1"}}).json();
  const json replay = run_preflight({"--root", dir, "--no-cuda", "--format", "json"}).json();
  CHECK(replay.at("verdict") == live.at("verdict"));
  CHECK(replay.at("cuda_visible_devices") == "0,2,3");
  // Two runs: the traffic window's timings (its wait, how many samples) are each run's own.
  const auto untimed = [](json gpus) {
    for (auto& g : gpus) {
      if (g.at("traffic").is_object()) {
        g.at("traffic").erase("waited_ms");
        g.at("traffic").erase("during");
      }
    }
    return gpus;
  };
  CHECK(untimed(replay.at("facts").at("nvml").at("gpus")) ==
        untimed(live.at("facts").at("nvml").at("gpus")));
  REQUIRE(finding(replay, "nvml.row-remap-failure"));
  const json none =
      run_preflight({"--root", fixture("healthy-4gpu"), "--no-cuda", "--format", "json"}).json();
  bool skipped = false;
  for (const auto& p : none.at("probes")) {
    skipped = skipped || (p.at("name") == "nvml" && p.at("status") == "skipped");
  }
  CHECK(skipped);
}

TEST_CASE("e2e nvml: the text report's GPU table has a health column") {
  const auto text = [](Env env, std::vector<std::string> extra) {
    env.emplace("FAKE_NVML_BUS_IDS", k_buses);
    std::vector<std::string> args{"--root", fixture("healthy-4gpu"), "--no-cuda", "--libnvml",
                                  k_fake_nvml};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_preflight(args, env);
  };
  const auto r = text({{"FAKE_NVML_REMAP_PENDING", "1:1"}, {"FAKE_NVML_CLOCKS", "1:0x8"}}, {});
  INFO(r.out);
  CHECK(r.out.find("0000:18:00.0") != std::string::npos);
  // the healthy GPU says ok; the other lists its nvml.* findings without the prefix
  CHECK(r.out.find("0000:18:00.0 NVIDIA H100 80GB HBM3  health: ok\n") != std::string::npos);
  CHECK(r.out.find("health: row-remap-pending, hw-slowdown\n") != std::string::npos);
  // without NVML there is no column
  const auto none = text({}, {"--no-nvml"});
  CHECK(none.out.find("health:") == std::string::npos);
}

TEST_CASE("e2e nvml: the children report their isolation, kept by snapshot and replay") {
  const json nvml = nvml_run({}).json().at("facts").at("nvml");
  REQUIRE(nvml.at("isolation").is_object());
  CHECK(nvml.at("isolation").at("detail").get<std::string>().size() > 0);
}

// The ML engineer's case: not root, kernel log unreadable (dmesg_restrict), yet NVML still says
// how the GPUs are. Run as nobody through setpriv, so the children take the unprivileged path of
// their isolation too.
TEST_CASE("e2e nvml: an ordinary user whose kernel log is unreadable still gets GPU health") {
  if (::geteuid() != 0 || ::access("/usr/bin/setpriv", X_OK) != 0) {
    WARN("skipped: needs root and /usr/bin/setpriv to run the check as an ordinary user");
    return;
  }
  if (const auto path = gpf::test::unreadable_to_nobody({fixture("log-not-readable"), k_fake_nvml});
      !path.empty()) {
    WARN("skipped: uid 65534 cannot read " << path
                                           << " (a directory on its path is not searchable)");
    return;
  }
  gpf::test::RunOptions as_nobody;
  as_nobody.env = {{"FAKE_NVML_BUS_IDS", k_buses}, {"FAKE_NVML_REMAP_FAILURE", "1:1"}};
  as_nobody.wrapper = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                       "--"};
  const auto r = gpf::test::run_binary({"--root", fixture("log-not-readable"), "--no-cuda",
                                        "--libnvml", k_fake_nvml, "--format", "json"},
                                       as_nobody);
  INFO(r.out);
  if (r.exit_code == 126 || r.exit_code == 127) {
    WARN(
        "skipped: uid 65534 cannot run the binary here (a directory on its path is not searchable)");
    return;
  }
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  const json j = r.json();
  CHECK(finding(j, "log.not-readable") != nullptr);
  const json* remap = finding(j, "nvml.row-remap-failure");
  REQUIRE(remap != nullptr);
  CHECK(remap->at("gpu") == "0000:2a:00.0");
  const json& iso = j.at("facts").at("nvml").at("isolation");
  CHECK(iso.at("isolated") == true);
  CHECK(iso.at("detail").get<std::string>().find("no_new_privs") != std::string::npos);
}

TEST_CASE("e2e nvml: a process on a GPU is named once, and judged alike whichever probe saw it") {
  // proc-stray-gpu3: pid 4242 (python3) holds /dev/nvidia3, GPU 3 (0000:5d:00.0).
  const json both = nvml_run({{"FAKE_NVML_PROCS", "3:4242"}}, {}, "proc-stray-gpu3").json();
  const json* held = finding(both, "process.holds-gpu");
  REQUIRE(held);
  // NVML's figure (the fake's 1 GiB) makes it a warning: memory the job would share
  CHECK(held->at("severity") == "warn");
  CHECK_THAT(evidence(*held), Catch::Contains("0000:5d:00.0: nvmlDeviceGetComputeRunningProcesses: "
                                              "pid 4242 (python3, 1024 MiB)"));
  CHECK_THAT(held->at("remedy").get<std::string>(), Catch::Contains("kill 4242"));
  CHECK(severity(both, "nvml.processes-present") == "absent"); // one process, one finding
  CHECK(both.at("cuda_visible_devices") == "0,1,2,3");

  // a pid only NVML lists (another PID namespace) is NVML's row, with the same judgement
  const json other = nvml_run({{"FAKE_NVML_PROCS", "3:777"}}, {}, "proc-stray-gpu3").json();
  const json* listed = finding(other, "nvml.processes-present");
  REQUIRE(listed);
  CHECK(listed->at("severity") == "warn");
  CHECK_THAT(listed->at("message").get<std::string>(), Catch::Contains("pid 777 (1024 MiB)"));
  CHECK_THAT(listed->at("message").get<std::string>(), !Catch::Contains("4242"));
  CHECK_THAT(listed->at("remedy").get<std::string>(), Catch::Contains("`ps -p 777`"));
  CHECK(severity(other, "process.holds-gpu") == "info"); // 4242: the node open, no memory known

  // proc alone: information, a warning once the node is meant to be idle
  const json alone = nvml_run({}, {}, "proc-stray-gpu3").json();
  CHECK(severity(alone, "process.holds-gpu") == "info");
  CHECK(severity(alone, "nvml.processes-present") == "absent");
  const json idle = nvml_run({}, {"--expect-idle"}, "proc-stray-gpu3").json();
  CHECK(severity(idle, "process.holds-gpu") == "warn");
  // and the busy GPU (GPU 3) leaves the recommendation, which it keeps otherwise
  CHECK(idle["cuda_visible_devices"] == "0,1,2");
  CHECK(alone["cuda_visible_devices"] == "0,1,2,3");
}

TEST_CASE("pipeline: gpu-processes runs before the NVML and CUDA children start") {
  const auto schedule = gpf::probe_schedule();
  const auto at = [&](const std::string& phase) {
    const auto it = std::find(schedule.begin(), schedule.end(), phase);
    REQUIRE(it != schedule.end());
    REQUIRE(std::count(schedule.begin(), schedule.end(), phase) == 1);
    return it - schedule.begin();
  };
  // otherwise the checker's own children would be listed as processes holding a GPU
  CHECK(at("gpu-processes") < at("start nvml"));
  CHECK(at("gpu-processes") < at("cuda"));
  // NVML's children work while the CUDA stage runs, and are collected after it
  CHECK(at("start nvml") + 1 == at("cuda"));
  CHECK(at("cuda") < at("nvml"));
  // the registered rows are well formed (collect_facts refuses them otherwise: exit 2)
  CHECK(gpf::probe_rows_problem().empty());
}

TEST_CASE("e2e nvml: the NVML children work beside the CUDA stage, under one deadline each") {
  // Both stages hang until their 2 s deadline: side by side the check takes about 2 s, one after
  // the other about 4 s.
  const auto r = run_preflight(
      {"--root", fixture("healthy-4gpu"), "--libcuda", k_fake, "--libnvml", k_fake_nvml,
       "--timeout", "2", "--format", "json"},
      {{"FAKE_NVML_BUS_IDS", k_buses}, {"FAKE_NVML_INIT_HANG", "1"}, {"FAKE_CUDA_INIT_HANG", "1"}});
  const json j = r.json();
  CHECK(severity(j, "nvml.init-hung") == "fail");
  CHECK(severity(j, "cuda.init-hung") == "fail");
  CHECK(r.seconds >= 1.9);
  CHECK(r.seconds < 3.5);
}

namespace {

// Every member of the NVML facts set away from its default; `source` is the probe's ("live",
// "nvml.json"), never written.
gpf::NvmlFacts every_nvml_member() {
  gpf::NvmlGpu g;
  g.index = 2;
  g.bus_id = "0000:3a:00.0";
  g.nvml_bus_id = "00000000:3A:00.0";
  g.name = "NVIDIA H100 80GB HBM3";
  g.uuid = "GPU-0000";
  g.minor = 2;
  g.architecture = 9;
  g.ecc_enabled = true;
  g.ecc_pending_enabled = false;
  g.ecc_volatile_uncorrected = 5;
  g.ecc_aggregate_uncorrected = 7;
  g.retired_pages_sbe = 1;
  g.retired_pages_dbe = 2;
  g.retired_pages_pending = true;
  g.remapped_correctable = 3;
  g.remapped_uncorrectable = 4;
  g.remap_pending = true;
  g.remap_failure = false;
  g.recovery_action = 1;
  g.clock_event_reasons = 0x40;
  g.temperature_c = 84;
  g.slowdown_temperature_c = 90;
  g.persistence_mode = false;
  g.compute_mode = 2;
  g.mig_current = 1;
  g.mig_pending = 0;
  g.memory_total_bytes = 81559ULL << 20U;
  g.gpu_instances =
      std::vector<gpf::NvmlGpuInstance>{{2, 9, 1, 4, 4, 3, 40192}, {1, 14, 2, 0, 2, 2, 19968}};
  g.pcie_gen = 4;
  g.pcie_gen_max = 5;
  g.pcie_width = 8;
  g.pcie_width_max = 16;
  g.nvlink_active = {true, false, true};
  g.fabric_state = 3;
  g.fabric_status = 0;
  g.processes = std::vector<gpf::NvmlProcess>{{4242, 1ULL << 30}, {4243, std::nullopt}};
  g.inforom_valid = false;
  gpf::NvmlTraffic t;
  t.before.ecc_volatile_corrected = 1;
  t.before.ecc_volatile_uncorrected = 2;
  t.before.pcie_replay = 3;
  t.before.sram_threshold_exceeded = false;
  t.before.remap_pending = false;
  t.before.nvlinks = {{1, 4, 5, 6, 7}};
  t.after = t.before;
  t.after->nvlinks[0].crc_data = 8;
  t.during = {12, 1980, 350000, 0x9};
  t.processes_after = 1;
  t.not_read = "the deadline passed while the CUDA stage ran";
  t.waited_ms = 812.5;
  g.traffic = t;
  g.calls = {{"remapped_rows", 3, "Not Supported"}};
  g.handle_error = gpf::NvmlCall{"handle", 15, "GPU is lost"};
  g.hang = gpf::NvmlHang{"temperature", 2001.5};
  g.child_error = "its NVML child exited with status 3 without finishing";
  gpf::NvmlFacts n;
  n.ran = true;
  n.library = "libnvidia-ml.so.1";
  n.library_path = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.550.54.14";
  n.load_error = "dlopen: no";
  n.missing_symbols = {"nvmlInit_v2"};
  n.missing_optional_symbols = {"nvmlDeviceGetGpuFabricInfo"};
  n.nvml_version = "12.550.54.14";
  n.driver_version = "550.54.14";
  n.init_call = "nvmlInitWithFlags";
  n.init_code = 0;
  n.init_text = "Success";
  n.init_hang = gpf::NvmlHang{"init", 1500};
  n.device_count = 4;
  n.gpus = {g, gpf::NvmlGpu{}};
  n.gpus[1].bus_id = "0000:5d:00.0";
  n.deadline_hit = true;
  n.timeout_s = 30;
  n.wall_ms = 321.25;
  n.child_error = "the NVML system child was killed by signal 9";
  n.isolation = gpf::ChildIsolation{true, "no new privileges"};
  return n;
}

} // namespace

TEST_CASE("nvml.json: one field list writes and reads every member of the NVML facts") {
  const auto n = every_nvml_member();
  const auto back = gpf::parse_nvml_json(gpf::nvml_facts_json(n).dump());
  REQUIRE(back);
  CHECK(back->gpus == n.gpus); // first, so that a failure points at the GPUs or the rest
  CHECK(*back == n);
  const auto gpu = gpf::nvml_gpu_from_json(json::parse(gpf::nvml_gpu_json(n.gpus[0]).dump()));
  REQUIRE(gpu);
  CHECK(*gpu == n.gpus[0]); // a child's "gpu" event
}

TEST_CASE("nvml.json: a file of an older version still reads, keeping every member it has") {
  // Written by `snapshot` before the field lists (healthy-4gpu, the fake library: a process on
  // GPU 0, GPU 2 hung in remapped_rows, GPU 3 lost).
  std::ifstream in(std::string(GPF_SOURCE_DIR) + "/tests/data/nvml-v1/nvml.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!text.empty());
  const auto facts = gpf::parse_nvml_json(text);
  REQUIRE(facts);
  REQUIRE(facts->gpus.size() == 4);
  CHECK(facts->gpus[2].hang);
  // the same members, values and key order as the older writer's; the members added since are
  // null (not read)
  auto written = gpf::nvml_facts_json(*facts);
  for (auto& g : written.at("gpus")) {
    CHECK(g.at("inforom_valid").is_null());
    CHECK(g.at("traffic").is_null());
    CHECK(g.at("memory_total_bytes").is_null());
    CHECK(g.at("gpu_instances").is_null());
    g.erase("inforom_valid");
    g.erase("traffic");
    g.erase("memory_total_bytes");
    g.erase("gpu_instances");
  }
  CHECK(written.dump(2) == nlohmann::ordered_json::parse(text).dump(2));
}

TEST_CASE("e2e nvml: 1600 processes on each GPU are busy GPUs, never hung ones") {
  // Each GPU's facts are one line of the child's protocol; 1,600 processes passed its 64 KiB cap
  // and the child was killed as a GPU that does not answer (FAIL nvml.gpu-hung).
  const auto r = nvml_run({{"FAKE_NVML_PROC_COUNT", "1600"}});
  INFO(r.err);
  const json j = r.json();
  CHECK(severity(j, "nvml.gpu-hung") == "absent");
  CHECK(j.at("verdict") != "fail");
  const json& gpus = j.at("facts").at("nvml").at("gpus");
  REQUIRE(gpus.size() == 4);
  for (const auto& g : gpus) {
    CHECK(g.at("processes").size() == 512);
  }
  std::string cut;
  for (const auto& p : j.at("probes")) {
    if (p.at("name") == "nvml") {
      cut = p.value("cut", json::array()).dump();
    }
  }
  CHECK_THAT(cut,
             Catch::Contains("nvmlDeviceGetComputeRunningProcesses (the first 512 processes)"));
  CHECK(severity(j, "nvml.processes-present") != "absent"); // still named: the GPUs are in use
}

TEST_CASE("e2e nvml: a library's output reaches the checker's stderr bounded, never the report") {
  // 5 children (the system child and one per GPU) writing 8 MB each went to stderr in full
  const auto r = nvml_run({{"FAKE_NVML_STDERR_BYTES", "8000000"}});
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  CHECK_NOTHROW(r.json()); // stdout is the report alone
  CHECK(r.err.size() < 5 * (64 * 1024 + 256) + 4096);
  CHECK_THAT(r.err, Catch::Contains("child's output was cut at 64 KiB"));
  CHECK_THAT(r.err, Catch::Contains(std::string(99, 'c')));
  CHECK(severity(r.json(), "nvml.gpu-hung") == "absent");
}
