// The gpu-preflight binary with --nccl on the fake libcuda and the fake libnccl (tests/fake_nccl):
// version and step times when healthy, a hung init, a hung all-reduce, a wrong sum and an NCCL
// error code each named; nothing of NCCL loaded without --nccl; where the library is looked for;
// NCCL's defaults against the job's NCCL_* variables; nccl.json replayed.
#include "unit/cuda_test_support.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace gpf::cuda_test;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using nlohmann::json;

namespace {

const std::string k_fake_nccl = GPF_FAKE_LIBNCCL;

RunResult live(const std::string& root, Env env, std::vector<std::string> extra) {
  env.emplace("FAKE_CUDA_GPUS", "4");
  std::vector<std::string> args{"--root", root, "--libcuda", k_fake, "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_preflight(args, env);
}

RunResult with_nccl(const Env& env, std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), "--nccl=" + k_fake_nccl);
  return live(fixture("cuda-4gpu"), env, extra);
}

const json& probe(const json& report, const std::string& name) {
  for (const auto& p : report.at("probes")) {
    if (p.at("name") == name) {
      return p;
    }
  }
  throw std::runtime_error("no such probe in the report: " + name);
}

std::vector<std::string> nccl_findings(const json& report) {
  std::vector<std::string> ids;
  for (const auto& f : report.at("findings")) {
    const auto id = f.at("id").get<std::string>();
    if (id.rfind("nccl.", 0) == 0) {
      ids.push_back(id);
    }
  }
  return ids;
}

// A scratch file name that does not exist yet.
std::filesystem::path marker_path() {
  static int n = 0;
  return std::filesystem::temp_directory_path() /
         ("gpf-nccl-marker-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
}

} // namespace

TEST_CASE("e2e nccl: healthy fake NCCL on four GPUs: version, step times, transports, no finding") {
  const auto marker = marker_path();
  const auto r = with_nccl({{"FAKE_NCCL_LOADED_MARKER", marker.string()}});
  INFO(r.err);
  const json j = r.json();
  CHECK(r.exit_code == 0);
  CHECK(j.at("verdict") == "pass");
  CHECK(nccl_findings(j).empty());
  const json& n = j.at("facts").at("nccl");
  CHECK(n.at("ok") == true);
  CHECK(n.at("version") == "2.21.5");
  CHECK(n.at("init_ms").is_number());
  CHECK(n.at("all_reduce_ms").is_number());
  CHECK(n.at("library_from") == "--nccl");
  CHECK(n.at("env_mode") == "defaults");
  CHECK(n.at("gpus") ==
        json::array({"0000:01:00.0", "0000:02:00.0", "0000:03:00.0", "0000:04:00.0"}));
  CHECK(n.at("transports").size() == 4); // the ring 0 -> 1 -> 2 -> 3 -> 0
  CHECK(n.at("transports").at(3) == "3[3] -> 0[0] via P2P/CUMEM");
  const json& p = probe(j, "nccl");
  CHECK(p.at("status") == "ok");
  CHECK_THAT(p.at("message").get<std::string>(),
             Catch::StartsWith("NCCL 2.21.5 on 4 GPUs: init ") &&
                 Catch::Contains("(NCCL's defaults)"));
  CHECK(std::filesystem::exists(marker)); // the fake proves it was loaded
  std::filesystem::remove(marker);

  // The text report names the probe's outcome nowhere as a finding, and the JSON has the steps.
  std::vector<std::string> names;
  for (const auto& s : n.at("steps")) {
    names.push_back(s.at("name").get<std::string>());
  }
  CHECK(names == std::vector<std::string>{"load_cuda", "cuInit", "buffers", "load_nccl",
                                          "ncclGetVersion", "init", "all_reduce", "check"});
}

TEST_CASE("e2e nccl: --budget counts the NCCL deadline; the default makes room for it") {
  // The default budget (60 s) grows by --nccl-timeout: a 59.5 s NCCL deadline still runs.
  auto r = with_nccl({}, {"--nccl-timeout", "59.5"});
  INFO(r.err);
  json j = r.json();
  CHECK(probe(j, "nccl").at("status") == "ok");
  CHECK(j.at("facts").at("nccl").at("ok") == true);

  // An explicit budget that the NCCL deadline does not fit: not run, said why, no finding; the
  // bandwidth step leaves room for NCCL's deadline and is not checked either.
  const auto marker = marker_path();
  r = with_nccl({{"FAKE_NCCL_LOADED_MARKER", marker.string()}},
                {"--cuda-timeout", "3", "--nccl-timeout", "20", "--budget", "10"});
  INFO(r.err);
  j = r.json();
  CHECK(r.exit_code == 0);
  const json& p = probe(j, "nccl");
  CHECK(p.at("status") == "skipped");
  CHECK_THAT(p.at("message").get<std::string>(),
             Catch::StartsWith("budget: its deadline of 20 s does not fit the "));
  CHECK(nccl_findings(j).empty());
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK_THAT(j.at("facts").at("cuda").at("bandwidth").at("not_checked").get<std::string>(),
             Catch::EndsWith("after the CUDA stage's deadline and the NCCL test's"));
}

TEST_CASE("e2e nccl: without --nccl nothing of NCCL is loaded and the report has no NCCL block") {
  const auto marker = marker_path();
  const auto r = live(fixture("cuda-4gpu"), {{"FAKE_NCCL_LOADED_MARKER", marker.string()}},
                      {"--nccl-timeout", "5"});
  const json j = r.json();
  CHECK(r.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK_FALSE(j.at("facts").contains("nccl"));
  CHECK(probe(j, "nccl").at("status") == "skipped");
  CHECK(nccl_findings(j).empty());
}

TEST_CASE("e2e nccl: a hung init and a hung all-reduce name the step, the GPUs and NCCL's words") {
  for (const auto& [var, id, call] :
       {std::tuple{"FAKE_NCCL_INIT_HANG", "nccl.init-hung", "ncclCommInitAll"},
        std::tuple{"FAKE_NCCL_ALLREDUCE_HANG", "nccl.all-reduce-hung", "ncclAllReduce"}}) {
    INFO(id);
    const auto r = with_nccl({{var, "1"}}, {"--nccl-timeout", "1"});
    const json j = r.json();
    // judged as the hang CUDA's peer copies show: a warning, the job started on one GPU
    CHECK(r.exit_code == 0);
    CHECK(j.at("verdict") == "warn");
    CHECK(j.at("recommended_gpus") == 1);
    CHECK(j.at("cuda_visible_devices") == "0");
    CHECK(nccl_findings(j) == std::vector<std::string>{id});
    const json* f = finding(j, id);
    REQUIRE(f);
    CHECK_THAT(evidence(*f), Catch::Contains(std::string(call) + " over 4 GPUs did not return") &&
                                 Catch::Contains("rank 3: GPU 3 (0000:04:00.0") &&
                                 Catch::Contains("NCCL said: "));
    CHECK_THAT(f->at("message").get<std::string>(),
               Catch::Contains("0000:01:00.0, 0000:02:00.0, 0000:03:00.0, 0000:04:00.0"));
    CHECK_THAT(f->at("remedy").get<std::string>(),
               Catch::StartsWith("Start the job on one GPU, GPU 0 (0000:01:00.0") &&
                   Catch::Contains("NCCL_P2P_DISABLE=1 gpu-preflight --nccl="));
    CHECK(f->at("severity") == "warn");
    const json& n = j.at("facts").at("nccl");
    CHECK(n.at("deadline_hit") == true);
    CHECK(n.at("ok") == false);
    // a job that needs several GPUs cannot start: a fail, as for cuda.multi-gpu-hung
    const auto four = with_nccl({{var, "1"}}, {"--nccl-timeout", "1", "--min-gpus", "4"});
    CHECK(four.exit_code == 1);
    CHECK(four.json().at("verdict") == "fail");
    CHECK(four.json().at("primary_cause").at("id") == id);
  }
  // the all-reduce hang names the transport NCCL connected the GPUs with
  const auto r = with_nccl({{"FAKE_NCCL_ALLREDUCE_HANG", "1"}}, {"--nccl-timeout", "1"});
  const json report = r.json(); // kept: finding() points into it
  const json* f = finding(report, "nccl.all-reduce-hung");
  REQUIRE(f);
  CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("NCCL P2P/CUMEM"));
}

TEST_CASE("e2e nccl: a wrong sum fails naming the rank and the element") {
  const auto r = with_nccl({{"FAKE_NCCL_WRONG_SUM", "2"}});
  const json j = r.json();
  CHECK(r.exit_code == 1);
  CHECK(nccl_findings(j) == std::vector<std::string>{"nccl.wrong-result"});
  const json* f = finding(j, "nccl.wrong-result");
  REQUIRE(f);
  // element 7 of rank 2: 10 * 8 + 1
  CHECK_THAT(evidence(*f), Catch::Contains("rank 2: element 7 of 262144 is 81, the sum over 4 "
                                           "ranks is 80") &&
                               Catch::Contains("rank 2: GPU 2 (0000:03:00.0"));
}

TEST_CASE("e2e nccl: an NCCL error code is reported with NCCL's own message") {
  const auto r = with_nccl({{"FAKE_NCCL_INIT_ERROR", "2"},
                            {"FAKE_NCCL_LAST_ERROR", "socket bind failed: address in use"}});
  const json j = r.json();
  CHECK(r.exit_code == 1);
  CHECK(nccl_findings(j) == std::vector<std::string>{"nccl.call-failed"});
  const json* f = finding(j, "nccl.call-failed");
  REQUIRE(f);
  CHECK_THAT(evidence(*f), Catch::Contains("step init: ncclSystemError (2): ncclCommInitAll: "
                                           "unhandled system error (fake) (socket bind failed: "
                                           "address in use)"));

  const auto reduce = with_nccl({{"FAKE_NCCL_ALLREDUCE_ERROR", "6"}});
  const json rj = reduce.json();
  const json* g = finding(rj, "nccl.call-failed");
  REQUIRE(g);
  CHECK_THAT(evidence(*g), Catch::Contains("step all_reduce: ncclRemoteError (6)"));
}

TEST_CASE("e2e nccl: a library that does not exist is nccl.not-loaded, not a crash") {
  TempSnapshot snap("cuda-4gpu");
  const auto r = live(snap.path(), {}, {"--nccl=libnccl-absent-for-test.so.2"});
  const json j = r.json();
  CHECK(r.exit_code == 0); // a warning
  CHECK(nccl_findings(j) == std::vector<std::string>{"nccl.not-loaded"});
  CHECK_THAT(evidence(*finding(j, "nccl.not-loaded")),
             Catch::Contains("libnccl-absent-for-test.so.2"));
}

TEST_CASE("e2e nccl: the job's NCCL_* variables are used only with --nccl-env job") {
  TempSnapshot snap("cuda-4gpu");
  snap.write("environ", "NCCL_P2P_DISABLE=1\nNCCL_DEBUG=WARN\n");
  const Env echo{{"FAKE_NCCL_ENV_ECHO", "1"}, {"NCCL_SHM_DISABLE", "1"}};
  const auto log_of = [](const json& j) { return j.at("facts").at("nccl").at("log").dump(); };

  const auto defaults = live(snap.path(), echo, {"--nccl=" + k_fake_nccl});
  const json d = defaults.json();
  CHECK(d.at("facts").at("nccl").at("env_mode") == "defaults");
  CHECK(d.at("facts").at("nccl").at("job_env") ==
        json::array({"NCCL_DEBUG=WARN", "NCCL_P2P_DISABLE=1"}));
  CHECK_THAT(log_of(d), Catch::Contains("env NCCL_DEBUG=INFO"));
  CHECK_THAT(log_of(d), !Catch::Contains("NCCL_P2P_DISABLE") && !Catch::Contains("NCCL_SHM"));

  const auto job = live(snap.path(), echo, {"--nccl=" + k_fake_nccl, "--nccl-env", "job"});
  const json jj = job.json();
  CHECK(jj.at("facts").at("nccl").at("env_mode") == "job");
  CHECK_THAT(log_of(jj), Catch::Contains("env NCCL_P2P_DISABLE=1"));
  CHECK_THAT(log_of(jj), Catch::Contains("env NCCL_DEBUG=INFO")); // its lines are still captured
}

TEST_CASE("e2e nccl: under --root, bare --nccl loads nothing the snapshot's environment names") {
  namespace fs = std::filesystem;
  // A library planted in the snapshot where its environment leads (LD_LIBRARY_PATH, VIRTUAL_ENV,
  // CONDA_PREFIX): it is never loaded, the check refuses the run (exit 2) before anything starts.
  TempSnapshot snap("cuda-4gpu");
  for (const char* dir : {"opt/nccl/lib", "venv/lib/python3.11/site-packages/nvidia/nccl/lib",
                          "conda/lib/python3.11/site-packages/nvidia/nccl/lib"}) {
    fs::create_directories(fs::path(snap.path()) / dir);
    fs::copy_file(k_fake_nccl, fs::path(snap.path()) / dir / "libnccl.so.2");
  }
  snap.write(
      "environ",
      "LD_LIBRARY_PATH=/nonexistent:/opt/nccl/lib/\nVIRTUAL_ENV=/venv\nCONDA_PREFIX=/conda\n");
  const auto marker = marker_path();
  const auto r = live(snap.path(), {{"FAKE_NCCL_LOADED_MARKER", marker.string()}}, {"--nccl"});
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--nccl=PATH") && Catch::Contains("never loaded"));
  CHECK(r.out.empty()); // no report, no verdict
  CHECK_FALSE(fs::exists(marker));
  // an explicit --nccl=PATH is loaded, whatever the snapshot's environment says
  const json j = live(snap.path(), {}, {"--nccl=" + k_fake_nccl}).json();
  CHECK(j.at("facts").at("nccl").at("library") == k_fake_nccl);
  CHECK(j.at("facts").at("nccl").at("library_from") == "--nccl");
  CHECK(j.at("facts").at("nccl").at("ok") == true);
}

TEST_CASE("e2e nccl: no snapshot variable that names a file or a plugin reaches the NCCL child") {
  TempSnapshot snap("cuda-4gpu");
  snap.write("environ", "NCCL_P2P_DISABLE=1\n"
                        "NCCL_TOPO_DUMP_FILE=/tmp/gpf-topo-dump.xml\n"
                        "NCCL_TOPO_FILE=/etc/topo.xml\n"
                        "NCCL_GRAPH_FILE=graph.xml\n"
                        "NCCL_NET_PLUGIN=evil\n"
                        "NCCL_TUNER_PLUGIN=tuner\n"
                        "NCCL_PROFILER_PLUGIN=profiler\n"
                        "NCCL_SOCKET_IFNAME=/dev/../eth0\n"
                        "NCCL_IB_HCA=mlx5_0:1\n"
                        "NCCL_IB_TOKEN=S3cr3t-1\n"
                        "NCCL_SOCKET_PASSWORD=S3cr3t-2\n");
  const Env echo{{"FAKE_NCCL_ENV_ECHO", "1"}};
  const auto r = live(snap.path(), echo, {"--nccl=" + k_fake_nccl, "--nccl-env", "job"});
  const json j = r.json();
  const json& n = j.at("facts").at("nccl");
  const std::string log = n.at("log").dump();
  INFO(log);
  CHECK_THAT(log, Catch::Contains("env NCCL_P2P_DISABLE=1"));
  CHECK_THAT(log, Catch::Contains("env NCCL_IB_HCA=mlx5_0:1"));
  for (const char* withheld :
       {"NCCL_TOPO_DUMP_FILE", "NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_NET_PLUGIN",
        "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "NCCL_SOCKET_IFNAME"}) {
    INFO(withheld);
    CHECK_THAT(log, !Catch::Contains(std::string("env ") + withheld));
    CHECK(std::find(n.at("env_withheld").begin(), n.at("env_withheld").end(), withheld) !=
          n.at("env_withheld").end());
  }
  // the job's secrets are passed on to NCCL but never shown in the report
  CHECK(r.out.find("S3cr3t") == std::string::npos);
  const auto job_env = n.at("job_env").dump();
  CHECK_THAT(job_env, Catch::Contains("NCCL_IB_TOKEN=REDACTED"));
  CHECK_THAT(job_env, Catch::Contains("NCCL_SOCKET_PASSWORD=REDACTED"));
}

TEST_CASE("e2e nccl: a snapshot's nccl.json is replayed and judged the same") {
  const auto hung = with_nccl({{"FAKE_NCCL_INIT_HANG", "1"}}, {"--nccl-timeout", "1"});
  TempSnapshot snap("cuda-4gpu");
  snap.write("nccl.json", hung.json().at("facts").at("nccl").dump(2));
  // No --libcuda: a replay, which needs no --nccl (the snapshot recorded the test).
  const auto r = run_preflight({"--root", snap.path(), "--format", "json"});
  const json j = r.json();
  CHECK(j.at("facts").at("nccl").at("source") == "nccl.json");
  CHECK(nccl_findings(j) == std::vector<std::string>{"nccl.init-hung"});
  CHECK_THAT(probe(j, "nccl").at("message").get<std::string>(),
             Catch::StartsWith("replayed nccl.json: NCCL init did not finish"));
}

TEST_CASE("e2e nccl: a flood of NCCL's lines is counted, never the child's death or a wrong sum") {
  // 30000 INFO lines passed the child protocol's 20000-line cap: the checker killed the child
  // and read the step it was in as NCCL's failure (nccl.wrong-result, "corrupts training")
  const auto r = with_nccl({{"FAKE_NCCL_FLOOD", "30000"}});
  INFO(r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  const json j = r.json();
  CHECK(nccl_findings(j).empty());
  const json& n = j.at("facts").at("nccl");
  CHECK(n.at("ok") == true);
  CHECK(n.at("log").size() == 200);
  CHECK(n.at("log_lines_dropped").get<std::size_t>() > 29000);
}
