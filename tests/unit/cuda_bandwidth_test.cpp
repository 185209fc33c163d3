// The bandwidth step on the fake driver (FAKE_CUDA_H2D_GBPS / _D2H_ / _P2P_): figures in the
// report, the judgement within the node, replay, Prometheus and summarize; and --budget.
#include "unit/cuda_test_support.hpp"

#include "gpf/probes/pipeline.hpp"
#include "gpf/util/robust.hpp"
#include "probes/cuda/live_probe.hpp"
#include "probes/cuda/memory_room.hpp"
#include "support/temp_dir.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>

using namespace gpf::cuda_test;
using gpf::test::evidence;
using gpf::test::finding;
using gpf::test::fixture;
using gpf::test::run_program;
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

// The text report with its wrapping undone: every run of white space as one space.
std::string flat(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) {
      out += space ? ' ' : c;
    }
  }
  return out;
}

bool has(const json& report, const std::string& id) {
  return finding(report, id) != nullptr;
}

const json& probe(const json& report, const std::string& name) {
  for (const auto& p : report.at("probes")) {
    if (p.at("name") == name) {
      return p;
    }
  }
  throw std::runtime_error("no such probe in the report: " + name);
}

} // namespace

TEST_CASE("robust spread: median, MAD and its floor") {
  CHECK(gpf::median_of({}) == 0);
  CHECK(gpf::median_of({3, 1, 2}) == 2);
  CHECK(gpf::median_of({4, 1, 3, 2}) == 2.5);
  const auto r = gpf::robust_spread({24, 24, 24, 12}, 0.02);
  CHECK(r.median == 24);
  CHECK(r.mad == 0);
  CHECK(r.spread == Approx(0.48)); // the floor: 2% of the median
  CHECK(r.deviations(12) == Approx(-25));
  const auto s = gpf::robust_spread({10, 12, 14, 16, 100}, 0);
  CHECK(s.median == 14);
  CHECK(s.mad == 2);
  CHECK(s.spread == Approx(2 * gpf::k_mad_scale));
}

TEST_CASE("budget: optional stages in ascending order of estimate while they fit") {
  using gpf::stages_within;
  CHECK(stages_within({{"a", 5}, {"b", 1}, {"c", 3}}, 4) == std::vector<bool>{false, true, true});
  CHECK(stages_within({{"a", 5}}, 4.9) == std::vector<bool>{false});
  CHECK(stages_within({{"a", 5}}, 5) == std::vector<bool>{true});
  CHECK(stages_within({{"a", 1}}, -3) == std::vector<bool>{false});
  CHECK(stages_within({}, 10).empty());
}

TEST_CASE("bandwidth: all GPUs equal -> figures in the report, no bandwidth warning") {
  const json j = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}).json();
  CHECK(j.at("verdict") == "pass");
  const json& cuda = j.at("facts").at("cuda");
  CHECK(cuda.at("bandwidth").at("ran") == true);
  CHECK(cuda.at("bandwidth").at("bytes") == 128u << 20);
  for (const auto& d : cuda.at("devices")) {
    CHECK(d.at("h2d_gbps").get<double>() == Approx(24).epsilon(0.01));
    CHECK(d.at("d2h_gbps").get<double>() == Approx(24).epsilon(0.01));
  }
  const json& peers = cuda.at("multi_gpu").at("peers");
  REQUIRE(peers.size() == 12);
  for (const auto& p : peers) {
    CHECK(p.at("gbps").get<double>() == Approx(48).epsilon(0.01));
  }
  CHECK_FALSE(has(j, "cuda.host-bandwidth-low"));
  CHECK_FALSE(has(j, "cuda.peer-bandwidth-low"));
  const json* figures = finding(j, "cuda.bandwidth-measured");
  REQUIRE(figures);
  CHECK(figures->at("severity") == "info");
  CHECK_THAT(evidence(*figures),
             Catch::Contains("CUDA 3 24.0/24.0") && Catch::Contains("12 pairs, 48.0 to 48.0 GB/s"));
}

TEST_CASE("bandwidth: a GPU at half its peers' host-to-device rate is a warning naming it") {
  const json j =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_H2D_GBPS", "2:12"}}).json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3"); // kept
  const json* f = finding(j, "cuda.host-bandwidth-low");
  REQUIRE(f);
  CHECK(f->at("severity") == "warn");
  CHECK(f->at("gpu") == "0000:03:00.0");
  const auto message = f->at("message").get<std::string>();
  CHECK_THAT(message, Catch::Contains("host-to-device at 12.0 GB/s") &&
                          Catch::Contains("50% of the 24.0 GB/s expected") &&
                          Catch::Contains("likely cause"));
  CHECK_THAT(evidence(*f), Catch::Contains("CUDA device 2 (0000:03:00.0") &&
                               Catch::Contains("expected 24.0 GB/s: the median of 4 GPUs"));
  CHECK_THAT(f->at("remedy").get<std::string>(), Catch::Contains("lspci -vv -s 0000:03:00.0"));
  // one finding: its device-to-host copies are as fast as the others'
  const auto ids = ids_of(j);
  CHECK(std::count(ids.begin(), ids.end(), "cuda.host-bandwidth-low") == 1);
  for (const auto& g : j.at("gpus")) {
    CHECK(g.at("usable") == true);
  }
}

TEST_CASE("bandwidth: a pair at a third of the others' peer rate is a warning naming the pair") {
  const json j =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_P2P_GBPS", "1-3:16"}})
          .json();
  CHECK(j.at("verdict") == "warn");
  CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
  CHECK_FALSE(has(j, "cuda.host-bandwidth-low"));
  std::vector<std::string> messages;
  for (const auto& f : j.at("findings")) {
    if (f.at("id") == "cuda.peer-bandwidth-low") {
      messages.push_back(f.at("message").get<std::string>());
    }
  }
  REQUIRE(messages.size() == 2); // both directions of the pair, no other pair
  CHECK_THAT(messages[0], Catch::Contains("from GPU 1 (0000:02:00.0") &&
                              Catch::Contains("to GPU 3 (0000:04:00.0") &&
                              Catch::Contains("16.0 GB/s") && Catch::Contains("48.0 GB/s"));
  CHECK_THAT(messages[1],
             Catch::Contains("from GPU 3 (0000:04:00.0") && Catch::Contains("to GPU 1"));
}

TEST_CASE("bandwidth: fewer than three GPUs of a class are reported, not judged") {
  // WSL2: the GPUs come from CUDA alone; one GPU at a tenth of the other's rate
  const json two =
      live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "2"}, {"FAKE_CUDA_H2D_GBPS", "1:2.4"}}).json();
  CHECK(two.at("verdict") == "pass");
  CHECK(two.at("facts").at("cuda").at("devices").at(1).at("h2d_gbps").get<double>() ==
        Approx(2.4).epsilon(0.01));
  CHECK_FALSE(has(two, "cuda.host-bandwidth-low"));
  CHECK_FALSE(has(two, "cuda.peer-bandwidth-low"));
  const json* figures = finding(two, "cuda.bandwidth-measured");
  REQUIRE(figures);
  CHECK_THAT(evidence(*figures),
             Catch::Contains("reported, not judged") && Catch::Contains("CUDA 0, CUDA 1"));

  const json one = live(fixture("cuda-wsl2"), {{"FAKE_CUDA_GPUS", "1"}}).json();
  CHECK(one.at("verdict") == "pass");
  CHECK(one.at("facts").at("cuda").at("devices").at(0).at("d2h_gbps").get<double>() ==
        Approx(24).epsilon(0.01));
  REQUIRE(finding(one, "cuda.bandwidth-measured"));
  CHECK_THAT(evidence(*finding(one, "cuda.bandwidth-measured")),
             Catch::Contains("reported, not judged") && Catch::Contains("CUDA 0"));
}

TEST_CASE("bandwidth: no pinned memory leaves the figures unmeasured, the GPUs usable") {
  const json j =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_NO_PINNED", "1"}}).json();
  CHECK(j.at("verdict") == "pass");
  const json& d = j.at("facts").at("cuda").at("devices").at(0);
  CHECK_FALSE(d.contains("h2d_gbps"));
  CHECK_THAT(d.at("bandwidth_not_checked").get<std::string>(),
             Catch::Contains("cuMemAllocHost of 128 MiB: CUDA_ERROR_OUT_OF_MEMORY"));
  CHECK_THAT(evidence(*finding(j, "cuda.bandwidth-measured")), Catch::Contains("not checked"));
}

TEST_CASE("bandwidth: the pinned buffers fit the memory cgroup's room, or the step is left out") {
  // cuda-4gpu with this process in a cgroup v2 /job whose parent sets the smaller room
  gpf::test::TempDir root;
  std::filesystem::copy(fixture("cuda-4gpu"), root.path,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  root.write("proc/self/cgroup", "0::/slice/job\n");
  root.write("sys/fs/cgroup/slice/job/memory.max", "max\n");
  const auto with_room = [&](std::uint64_t mib) {
    root.write("sys/fs/cgroup/slice/memory.max", std::to_string(mib << 20) + "\n");
    root.write("sys/fs/cgroup/slice/memory.current", std::to_string(16u << 20) + "\n");
    return live(root.path.string(), {{"FAKE_CUDA_GPUS", "4"}}).json();
  };
  // the other children on 4 GPUs: 64 + 192 x 6 + 32 x 5 = 1376 MiB
  const std::uint64_t others = gpf::cuda::host_memory_need_bytes(4, false) >> 20;
  REQUIRE(others == 1376);
  // plenty of room: the default 128 MiB per GPU
  json j = with_room(others + 16 + 4 * 200);
  CHECK(j.at("facts").at("cuda").at("bandwidth").at("bytes") == 128u << 20);
  // room for 64 MiB per GPU: the copies shrink to it, the figures are still measured
  j = with_room(others + 16 + 4 * 64);
  CHECK(j.at("facts").at("cuda").at("bandwidth").at("bytes") == 64u << 20);
  CHECK(j.at("facts").at("cuda").at("devices").at(0).contains("h2d_gbps"));
  CHECK(j.at("verdict") == "pass");
  // room for 16 MiB per GPU: left out with the reason, the GPUs still checked and usable
  j = with_room(others + 16 + 4 * 16);
  const json& bw = j.at("facts").at("cuda").at("bandwidth");
  CHECK(bw.at("ran") == false);
  CHECK_THAT(
      bw.at("not_checked").get<std::string>(),
      Catch::StartsWith("memory: the live stage needs about 1376 MiB without it on 4 GPUs") &&
          Catch::Contains("/sys/fs/cgroup/slice/memory.max"));
  CHECK(j.at("usable_gpus") == 4);
}

TEST_CASE("bandwidth: the figures replay from cuda.json and reach Prometheus and summarize") {
  const json first =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_D2H_GBPS", "0:8"}}).json();
  REQUIRE(finding(first, "cuda.host-bandwidth-low"));
  TempSnapshot snap("cuda-4gpu");
  snap.write("cuda.json", first.at("facts").at("cuda").dump(2));
  const json replay = run_preflight({"--root", snap.path(), "--format", "json"}).json();
  CHECK(replay.at("verdict") == "warn");
  const json* f = finding(replay, "cuda.host-bandwidth-low");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:01:00.0");
  CHECK_THAT(f->at("message").get<std::string>(), Catch::Contains("device-to-host at 8.0 GB/s"));

  const auto prom = run_preflight({"--root", snap.path(), "--format", "prometheus"}).out;
  CHECK_THAT(prom, Catch::Contains("gpu_preflight_copy_bandwidth_gbps{bus_id=\"0000:01:00.0\","
                                   "direction=\"d2h\"} 8") &&
                       Catch::Contains("gpu_preflight_peer_bandwidth_gbps{from=\"0000:01:00.0\","
                                       "to=\"0000:02:00.0\"} 48"));

  // summarize: three nodes alike, a fourth whose slowest GPU copies to the host at 8 GB/s
  std::string lines;
  json healthy = replay;
  for (auto& d : healthy.at("facts").at("cuda").at("devices")) {
    d["d2h_gbps"] = 24.0;
  }
  for (int i = 0; i < 4; ++i) {
    json r = i == 3 ? replay : healthy;
    r["host"] = fmt::format("node{}", i);
    lines += r.dump() + "\n";
  }
  const auto out = run_program({GPF_BINARY, "summarize", "--format", "json"}, {}, lines).json();
  bool found = false;
  for (const auto& o : out.at("outliers")) {
    if (o.at("metric") == "d2h_gbps") {
      found = true;
      CHECK(o.at("node") == "node3");
      CHECK(o.at("gpu") == "0000:01:00.0");
      CHECK(o.at("value") == 8.0);
    }
  }
  CHECK(found);
}

TEST_CASE("budget: a budget shorter than the CUDA stage leaves it not checked, same exit code") {
  const auto skipped = run_preflight(
      {"--root", fixture("cuda-4gpu"), "--libcuda", k_fake, "--format", "json", "--budget", "5"},
      {{"FAKE_CUDA_GPUS", "4"}});
  const auto no_cuda =
      run_preflight({"--root", fixture("cuda-4gpu"), "--format", "json", "--no-cuda"});
  const json j = skipped.json();
  CHECK(skipped.exit_code == no_cuda.exit_code);
  CHECK(j.at("verdict") == no_cuda.json().at("verdict"));
  CHECK(probe(j, "cuda").at("status") == "skipped");
  CHECK_THAT(probe(j, "cuda").at("message").get<std::string>(),
             Catch::StartsWith("budget: its deadline of 30 s does not fit"));
  const auto text = run_preflight(
      {"--root", fixture("cuda-4gpu"), "--libcuda", k_fake, "--budget", "5", "--color", "never"},
      {{"FAKE_CUDA_GPUS", "4"}});
  CHECK(text.exit_code == skipped.exit_code);
  CHECK_THAT(flat(text.out), Catch::Contains("not checked: ") &&
                                 Catch::Contains("CUDA start-up (budget: its deadline of 30 s"));
}

TEST_CASE("budget: a stage asked for and left out is said on the line and on stderr, and is no "
          "pass under --strict") {
  const Env env{{"FAKE_CUDA_GPUS", "4"}};
  const std::vector<std::string> base{"--root", fixture("cuda-4gpu"), "--libcuda", k_fake};
  const auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_preflight(args, env);
  };
  // The same node with CUDA left out on purpose: what the line says before the budget's note.
  const auto no_cuda =
      run_preflight({"--root", fixture("cuda-4gpu"), "--format", "line", "--no-cuda"});
  std::string plain = no_cuda.out;
  REQUIRE_FALSE(plain.empty());
  plain.pop_back();                          // the newline
  plain = plain.substr(0, plain.find("; ")); // the verdict, without the versions where they fit
  REQUIRE_THAT(plain, Catch::StartsWith("PASS "));

  // --cuda-timeout 10 cannot fit --budget 5: warned at once, said on the line, info in the report
  const auto line = with({"--format", "line", "--budget", "5", "--cuda-timeout", "10"});
  INFO("stderr: " << line.err);
  CHECK(line.exit_code == 0);
  CHECK_THAT(line.out, Catch::StartsWith(plain + " (CUDA not checked: budget)"));
  // (NVML replays the snapshot here: only CUDA runs live, so only CUDA is named)
  CHECK_THAT(line.err, Catch::Contains("warning: --cuda-timeout 10 does not fit --budget 5: the "
                                       "CUDA stage will not be checked"));
  const json j = with({"--format", "json", "--budget", "5", "--cuda-timeout", "10"}).json();
  const json* f = finding(j, "probe.stage-over-budget");
  REQUIRE(f);
  CHECK(f->at("severity") == "info");
  CHECK_THAT(evidence(*f), Catch::Contains("probe cuda: budget: its deadline of 10 s"));
  CHECK(j.at("verdict") == "pass");

  // --strict: a stage asked for and left out is not a pass (exit 1), and the line says why
  const auto strict =
      with({"--format", "line", "--budget", "5", "--cuda-timeout", "10", "--strict"});
  CHECK(strict.exit_code == 1);
  CHECK_THAT(strict.out, Catch::StartsWith("WARN ") && Catch::Contains("probe.stage-over-budget") &&
                             Catch::EndsWith("(CUDA not checked: budget)\n"));
  const json js =
      with({"--format", "json", "--budget", "5", "--cuda-timeout", "10", "--strict"}).json();
  const json* fs = finding(js, "probe.stage-over-budget");
  REQUIRE(fs);
  CHECK(fs->at("severity") == "warn");

  // a deadline that fits: no warning, no note, no finding; CUDA checked
  const auto fits =
      with({"--format", "line", "--budget", "20", "--cuda-timeout", "10", "--strict"});
  CHECK(fits.exit_code == 0);
  CHECK_THAT(fits.out, Catch::StartsWith("PASS ") && !Catch::Contains("not checked"));
  CHECK_THAT(fits.err, !Catch::Contains("does not fit"));
  // --no-cuda is not the budget's doing: nothing said
  CHECK_THAT(no_cuda.out, !Catch::Contains("budget"));
}

TEST_CASE("budget: the bandwidth step starts only when its estimate fits what is left") {
  // 30 s of deadline and 0.5 s more: the stage runs, the copies do not
  const auto r = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}, {"--budget", "30.5"});
  const json j = r.json();
  CHECK(r.exit_code == 0);
  CHECK(j.at("verdict") == "pass");
  const json& bw = j.at("facts").at("cuda").at("bandwidth");
  CHECK(bw.at("ran") == false);
  CHECK_THAT(bw.at("not_checked").get<std::string>(), Catch::StartsWith("budget: its estimate"));
  CHECK_FALSE(j.at("facts").at("cuda").at("devices").at(0).contains("h2d_gbps"));
  CHECK_FALSE(has(j, "cuda.bandwidth-measured"));
  const auto text = run_preflight(
      {"--root", fixture("cuda-4gpu"), "--libcuda", k_fake, "--budget", "30.5", "--color", "never"},
      {{"FAKE_CUDA_GPUS", "4"}});
  CHECK(text.exit_code == 0);
  CHECK_THAT(flat(text.out), Catch::Contains("not checked: ") &&
                                 Catch::Contains("copy bandwidth (budget: its estimate"));
  // --no-bandwidth says so the same way; --budget 0 is no budget
  const json off = live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}, {"--no-bandwidth"}).json();
  CHECK(off.at("facts").at("cuda").at("bandwidth").at("not_checked") == "--no-bandwidth");
  const json unlimited =
      live(fixture("cuda-4gpu"), {{"FAKE_CUDA_GPUS", "4"}}, {"--budget", "0"}).json();
  CHECK(unlimited.at("facts").at("cuda").at("bandwidth").at("ran") == true);
}

TEST_CASE("bandwidth: a GPU another process holds is started and tested, never timed") {
  ScopedEnv env({{"FAKE_CUDA_GPUS", "3"}, {"FAKE_CUDA_H2D_GBPS", "0:10.5"}});
  gpf::cuda::LiveProbeInput in;
  in.library = k_fake;
  in.timeout_s = 20;
  in.bandwidth = {true, 4u << 20, 2u << 20, 2};
  in.busy["0000:02:00.0"] = "4242 (python)";
  const auto r = gpf::cuda::run_live_probe(in);
  REQUIRE(r);
  REQUIRE(r->devices.size() == 3);
  const auto& busy = r->devices[1];
  CHECK(busy.usable);
  CHECK_FALSE(busy.h2d_gbps);
  CHECK(busy.bandwidth_not_checked == "in use by 4242 (python)");
  CHECK(std::none_of(busy.steps.begin(), busy.steps.end(),
                     [](const gpf::CudaStep& s) { return s.name == "bandwidth"; }));
  REQUIRE(r->devices[0].h2d_gbps);
  CHECK(*r->devices[0].h2d_gbps == Approx(10.5).epsilon(0.01));
  CHECK(*r->devices[2].d2h_gbps == Approx(24).epsilon(0.01));
  CHECK(r->bandwidth.run);
  CHECK(r->bandwidth.repeats == 2);
  REQUIRE(r->peers.size() == 6);
  for (const auto& p : r->peers) {
    CHECK(p.ok);
    CHECK(p.gbps.has_value() == (p.from != 1 && p.to != 1));
  }
}

TEST_CASE("bandwidth: the checker's cgroup from /proc/self/cgroup, v2 first, v1's memory else") {
  using gpf::cuda::parse_self_cgroup;
  const auto v2 = parse_self_cgroup("0::/system.slice/job.service\n");
  REQUIRE(v2);
  CHECK(v2->v2);
  CHECK(v2->path == "/system.slice/job.service");
  const auto v1 =
      parse_self_cgroup("12:cpu,cpuacct:/a\n5:memory:/kubepods/pod1/c1\n1:name=systemd:/x\n");
  REQUIRE(v1);
  CHECK_FALSE(v1->v2);
  CHECK(v1->path == "/kubepods/pod1/c1");
  // a path that leaves the hierarchy, or no path at all, names no cgroup
  CHECK_FALSE(parse_self_cgroup("0::/../../etc\n"));
  CHECK_FALSE(parse_self_cgroup("0::\n"));
  CHECK_FALSE(parse_self_cgroup("garbage"));
}
