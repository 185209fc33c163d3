// Busy GPUs are not broken GPUs (ctest label security): the fake libcuda refuses the context with
// CUDA_ERROR_DEVICE_UNAVAILABLE (46) or CUDA_ERROR_OUT_OF_MEMORY (2), as a driver does when another
// process holds the GPU; --skip-busy leaves a held GPU alone. The process table is a snapshot's
// proc/<pid>/fd links, read through the same Host as on a live node.
#include "support/run.hpp"
#include "support/temp_dir.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

using namespace gpf::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// One open file of a process: the link's text and the device number behind it (devices.json, as a
// snapshot records it); major 0: not a device (a plain file).
struct OpenFile {
  std::string target;
  unsigned major = 0;
  unsigned minor = 0;
};

// /dev/nvidiaN as the process opened it: the GPU of minor N.
OpenFile gpu_node(unsigned n) {
  return {"/dev/nvidia" + std::to_string(n), 195, n};
}

OpenFile ctl_node() {
  return {"/dev/nvidiactl", 195, 255};
}

// cuda-4gpu copied, plus processes: pid -> {comm, the files it holds open}.
struct Root {
  TempDir dir;
  Root(const std::vector<std::tuple<std::string, std::string, std::vector<OpenFile>>>& processes) {
    fs::copy(fixture("cuda-4gpu"), dir.path,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    json nodes = json::object();
    for (const auto& [pid, comm, files] : processes) {
      dir.write("proc/" + pid + "/comm", comm + "\n");
      if (comm == "nvidia-persiste") {
        // the daemon as a host shows it: known by its executable (gpu-processes), not its comm
        dir.link("proc/" + pid + "/exe", "/usr/bin/nvidia-persistenced");
      }
      int fd = 3;
      for (const auto& file : files) {
        const std::string link = "proc/" + pid + "/fd/" + std::to_string(fd++);
        dir.link(link, file.target);
        if (file.major != 0) {
          nodes[link] = {
              {"type", "char"}, {"major", file.major}, {"minor", file.minor}, {"mode", "0666"}};
        }
      }
      dir.link("proc/" + pid + "/fd/" + std::to_string(fd), "/dev/null");
    }
    dir.write("devices.json", nodes.dump());
  }
};

RunResult live(const std::string& root, const std::map<std::string, std::string>& env,
               std::vector<std::string> extra = {}) {
  std::vector<std::string> args{"--root", root, "--libcuda", GPF_FAKE_LIBCUDA, "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto all = env;
  all.emplace("FAKE_CUDA_GPUS", "4");
  return run_preflight(args, all);
}

} // namespace

TEST_CASE("security: a GPU whose context is refused as busy (46) or out of memory (2) is in use, "
          "not unusable") {
  Root root({{"4242", "python", {gpu_node(3)}}});
  for (const char* code : {"46", "2"}) {
    INFO("CUresult " << code);
    const auto r =
        live(root.dir.path.string(), {{"FAKE_CUDA_GPU_CTX_ERROR", std::string("3:") + code}},
             {"--min-gpus", "4"});
    const json j = json::parse(r.out);
    CHECK(r.exit_code == 0); // a warning, not a failure: no gpu.too-few-usable with --min-gpus 4
    CHECK(j.at("verdict") == "warn");
    CHECK(finding(j, "cuda.gpu-failed") == nullptr);
    CHECK(finding(j, "gpu.too-few-usable") == nullptr);
    const json* f = finding(j, "cuda.gpu-in-use");
    REQUIRE(f);
    CHECK(f->at("gpu") == "0000:04:00.0");
    CHECK_THAT(evidence(*f), Catch::Contains("processes holding it: 4242 (python)"));
    CHECK_THAT(f->at("remedy").get<std::string>(),
               !Catch::Contains("replace") && !Catch::Contains("reset"));
    CHECK(j.at("cuda_visible_devices") == "0,1,2,3");
    const json& dev = j.at("facts").at("cuda").at("devices").at(3);
    CHECK(dev.at("in_use") == true);
    CHECK(dev.at("usable") == false);
  }
}

TEST_CASE("security: every GPU busy is still not a failed node") {
  Root root({});
  const auto r = live(root.dir.path.string(), {{"FAKE_CUDA_GPU_CTX_ERROR", "0:46,1:46,2:2,3:46"}});
  const json j = json::parse(r.out);
  CHECK(r.exit_code == 0);
  CHECK(j.at("verdict") == "warn");
  CHECK(finding(j, "gpu.too-few-usable") == nullptr);
  CHECK(finding(j, "cuda.gpu-failed") == nullptr);
  int in_use = 0;
  for (const auto& f : j.at("findings")) {
    in_use += f.at("id") == "cuda.gpu-in-use" ? 1 : 0;
  }
  CHECK(in_use == 4);
  // the same refusal with a real error code is still a failure
  const auto broken = live(root.dir.path.string(), {{"FAKE_CUDA_GPU_CTX_ERROR", "3:214"}});
  CHECK(finding(json::parse(broken.out), "cuda.gpu-failed") != nullptr);
}

TEST_CASE("security: --skip-busy creates no context while a process holds a GPU node") {
  // A GPU child that touched a context would crash (SIGABRT) and fail the GPU: the probe must not
  // run.
  const std::map<std::string, std::string> trap{{"FAKE_CUDA_GPU_CTX_CRASH", "0,1,2,3"}};
  Root busy(
      {{"4242", "python", {gpu_node(1)}}, {"77", "nvidia-persiste", {gpu_node(0), gpu_node(1)}}});
  const auto skipped = live(busy.dir.path.string(), trap, {"--skip-busy"});
  const json j = json::parse(skipped.out);
  CHECK(finding(j, "cuda.gpu-failed") == nullptr);
  bool said = false;
  for (const auto& p : j.at("probes")) {
    if (p.at("name") == "cuda") {
      CHECK(p.at("status") == "skipped");
      said = p.at("message").get<std::string>().find("dev/nvidia1 by 4242 (python)") !=
             std::string::npos;
    }
  }
  CHECK(said);

  // Only NVIDIA's daemons hold the nodes (an idle node): the probe runs.
  Root idle({{"77", "nvidia-persiste", {gpu_node(0), gpu_node(1), ctl_node()}}});
  const auto ran = live(idle.dir.path.string(), trap, {"--skip-busy"});
  CHECK(finding(json::parse(ran.out), "cuda.gpu-failed") != nullptr);
}

namespace {

// The cuda probe's status message when it was skipped, else "".
std::string cuda_skipped(const json& report) {
  for (const auto& p : report.at("probes")) {
    if (p.at("name") == "cuda" && p.at("status") == "skipped") {
      return p.at("message").get<std::string>();
    }
  }
  return "";
}

} // namespace

TEST_CASE("security: --skip-busy and process.holds-gpu agree about a process, by device number") {
  // A GPU child that touched a context would crash and fail the GPU: shows whether the probe ran.
  const std::map<std::string, std::string> trap{{"FAKE_CUDA_GPU_CTX_CRASH", "0,1,2,3"}};
  // The link's text names /dev/nvidia0, but the file behind it is no NVIDIA device (a bind mount
  // of something else, a stale name): neither counts it.
  Root named_only({{"4242", "python", {{"/dev/nvidia0", 0, 0}, {"/dev/nvidia2", 1, 3}}}});
  const json ran = json::parse(live(named_only.dir.path.string(), trap, {"--skip-busy"}).out);
  CHECK(cuda_skipped(ran).empty());
  CHECK(finding(ran, "cuda.gpu-failed") != nullptr); // the probe ran and hit the trap
  CHECK(finding(ran, "process.holds-gpu") == nullptr);

  // The converse: the text is the GPU Operator's path, the device is 195:2: both count it.
  Root operator_path(
      {{"5151", "trainer", {{"/run/nvidia/driver/dev/nvidia2", 195, 2}, ctl_node()}}});
  const json skipped =
      json::parse(live(operator_path.dir.path.string(), trap, {"--skip-busy"}).out);
  CHECK_THAT(cuda_skipped(skipped), Catch::Contains("dev/nvidia2 by 5151 (trainer)"));
  CHECK(finding(skipped, "cuda.gpu-failed") == nullptr);
  const json* held = finding(skipped, "process.holds-gpu");
  REQUIRE(held);
  CHECK_THAT(held->at("message").get<std::string>(), Catch::Contains("pid 5151 (trainer)"));
}

TEST_CASE("security: out of memory with no process on the GPU anywhere is a failure, not in use") {
  // no process holds a GPU node, and NVML lists no process on any GPU
  Root root({});
  const auto r =
      live(root.dir.path.string(),
           {{"FAKE_CUDA_GPU_CTX_ERROR", "3:2"},
            {"FAKE_NVML_BUS_IDS", "0000:01:00.0,0000:02:00.0,0000:03:00.0,0000:04:00.0"}},
           {"--libnvml", GPF_FAKE_LIBNVML});
  INFO(r.err);
  const json j = json::parse(r.out);
  CHECK(finding(j, "cuda.gpu-in-use") == nullptr);
  const json* f = finding(j, "cuda.gpu-failed");
  REQUIRE(f);
  CHECK(f->at("gpu") == "0000:04:00.0");
  CHECK(j.at("cuda_visible_devices") == "0,1,2");
}
