// The live CUDA stage against the fake driver, in this process (the children are forked from it):
// what each child learns, deadlines, and that no child is left behind. Time bounds are loose.
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"
#include "probes/cuda/live_probe.hpp"
#include "support/temp_dir.hpp"
#include "unit/cuda_test_support.hpp"

#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <regex>

using namespace gpf;
using namespace gpf::cuda;
using gpf::cuda_test::ScopedEnv;

namespace {

LiveProbeInput input(double timeout_s = 20) {
  LiveProbeInput in;
  in.library = gpf::cuda_test::k_fake;
  in.timeout_s = timeout_s;
  return in;
}

// True when this process has no child left: none running, no zombie.
bool no_children_left() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD;
}

std::vector<std::string> step_names(const CudaDevice& d) {
  std::vector<std::string> names;
  for (const auto& s : d.steps) {
    names.push_back(s.name);
  }
  return names;
}

} // namespace

TEST_CASE("live cuda: healthy GPUs are enumerated, tested one by one and together") {
  ScopedEnv env({{"FAKE_CUDA_GPUS", "3"},
                 {"FAKE_CUDA_BUS_IDS", "00000000:3B:00.0,00000000:86:00.0,00000000:AF:00.0"},
                 {"FAKE_CUDA_CC", "9.0"},
                 {"FAKE_CUDA_DRIVER_VERSION", "12080"}});
  auto r = run_live_probe(input());
  REQUIRE(r);
  const CudaFacts& c = *r;
  CHECK(c.ran);
  CHECK(c.enumeration_complete);
  CHECK(c.driver_version == 12080);
  CHECK_THAT(c.library_path, Catch::EndsWith("libcuda.so.1"));
  REQUIRE(c.devices.size() == 3);
  CHECK(c.devices[0].bus_id == "0000:3b:00.0"); // the driver's 8-digit upper-case form, normalised
  CHECK(c.devices[2].uuid == "GPU-fa4ec0de-0000-4000-8000-000000000002");
  CHECK(c.devices[1].cc_major == 9);
  CHECK(c.devices[1].total_mem_bytes == 81559ULL << 20);
  for (const auto& d : c.devices) {
    CHECK(d.usable);
    CHECK(step_names(d) == std::vector<std::string>{"load", "cuInit", "device_get",
                                                    "primary_context", "alloc", "memset",
                                                    "copy_roundtrip", "release"});
    CHECK(d.visible_as == *d.uuid);
  }
  CHECK(c.multi_gpu_ran);
  CHECK(c.multi_gpu_ok == true);
  CHECK(c.multi_gpu_devices == std::vector<int>{0, 1, 2});
  CHECK(c.peers.size() == 6);
  CHECK_FALSE(c.deadline_hit);
  CHECK(no_children_left());
}

TEST_CASE("live cuda: a library that does not load is reported at once") {
  ScopedEnv env({});
  LiveProbeInput in = input();
  in.library = "/nonexistent/libcuda.so.1";
  auto r = run_live_probe(in);
  REQUIRE(r);
  CHECK_THAT(r->load_error, Catch::Contains("/nonexistent/libcuda.so.1"));
  CHECK_FALSE(r->enumeration_complete);
  CHECK(r->wall_ms < 5000);
  CHECK(no_children_left());
}

TEST_CASE(
    "live cuda: cuInit hanging (even ignoring SIGTERM) ends at the deadline, children reaped") {
  for (const char* ignore : {"0", "1"}) {
    ScopedEnv env({{"FAKE_CUDA_INIT_HANG", "1"},
                   {"FAKE_CUDA_IGNORE_SIGTERM", ignore},
                   {"FAKE_CUDA_GPUS", "2"}});
    LiveProbeInput in = input(1.5);
    in.driver_gpus = {
        {"0000:01:00.0", "GPU-fa4ec0de-0000-4000-8000-000000000000"}}; // a child starts at once too
    auto r = run_live_probe(in);
    REQUIRE(r);
    INFO("ignore SIGTERM " << ignore);
    CHECK(r->deadline_hit);
    CHECK(r->init.timed_out);
    CHECK(r->init.duration_ms > 1000);
    CHECK(r->wall_ms >= 1400);
    CHECK(r->wall_ms < 2500);
    CHECK(no_children_left());
  }
}

TEST_CASE("live cuda: one GPU's hang, error or crash is pinned to that GPU and step") {
  ScopedEnv env({{"FAKE_CUDA_GPUS", "4"},
                 {"FAKE_CUDA_GPU_CTX_HANG", "1"},
                 {"FAKE_CUDA_GPU_CTX_ERROR", "2:214"},
                 {"FAKE_CUDA_GPU_CTX_CRASH", "3"}});
  auto r = run_live_probe(input(3));
  REQUIRE(r);
  const auto& d = r->devices;
  REQUIRE(d.size() == 4);
  CHECK(d[0].usable);
  CHECK_FALSE(d[1].usable);
  CHECK(d[1].steps.back().name == "primary_context");
  CHECK(d[1].steps.back().timed_out);
  CHECK_FALSE(d[2].usable);
  CHECK(d[2].steps.back().error_code == 214);
  CHECK(d[2].steps.back().error_name == "CUDA_ERROR_ECC_UNCORRECTABLE");
  CHECK_FALSE(d[3].usable);
  CHECK(d[3].steps.back().error_name == "CHILD_DIED");
  CHECK_THAT(d[3].steps.back().error_text, Catch::Contains("signal 6"));
  CHECK_FALSE(r->multi_gpu_ran); // one GPU passed: nothing to test together
  CHECK(r->wall_ms < 4500);
  CHECK(no_children_left());
}

TEST_CASE("live cuda: a hung peer copy is pinned to the pair") {
  ScopedEnv env({{"FAKE_CUDA_GPUS", "2"}, {"FAKE_CUDA_PEER_HANG", "1"}});
  auto r = run_live_probe(input(2));
  REQUIRE(r);
  CHECK(r->multi_gpu_ran);
  CHECK(r->multi_gpu_ok == false);
  REQUIRE_FALSE(r->peers.empty());
  CHECK(r->peers.front().timed_out);
  CHECK(r->peers.front().from == 0);
  CHECK(r->peers.front().to == 1);
  CHECK(r->wall_ms < 3500);
  CHECK(no_children_left());
}

TEST_CASE("live cuda: CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES of the job") {
  const std::string u0 = "GPU-fa4ec0de-0000-4000-8000-0000000000aa";
  const std::string u1 = "GPU-fa4ec0de-0000-4000-8000-0000000000bb";
  ScopedEnv env(
      {{"FAKE_CUDA_GPUS", "2"},
       {"FAKE_CUDA_BUS_IDS", "0000:86:00.0,0000:3b:00.0"}, // fastest first is not PCI order
       {"FAKE_CUDA_UUIDS", u0 + "," + u1}});
  auto fastest = run_live_probe(input());
  REQUIRE(fastest);
  REQUIRE(fastest->devices.size() == 2);
  CHECK(fastest->devices[0].bus_id == "0000:86:00.0");
  CHECK(fastest->device_order.empty());

  LiveProbeInput in = input();
  in.job_device_order = "PCI_BUS_ID";
  in.job_visible_devices =
      "GPU-fa4ec0de-0000-4000-8000-0000000000bb"; // the job uses one GPU: no multi-GPU test
  auto pci = run_live_probe(in);
  REQUIRE(pci);
  CHECK(pci->device_order == "PCI_BUS_ID");
  CHECK(pci->devices[0].bus_id == "0000:3b:00.0");
  CHECK(pci->devices[0].usable);
  CHECK(pci->devices[1].usable);
  CHECK_FALSE(pci->multi_gpu_ran);
  CHECK(no_children_left());
}

TEST_CASE("live cuda: GPUs whose UUID CUDA cannot tell are tested by CUDA index") {
  ScopedEnv env({{"FAKE_CUDA_GPUS", "2"}, {"FAKE_CUDA_NO_UUID", "1"}});
  auto r = run_live_probe(input());
  REQUIRE(r);
  REQUIRE(r->devices.size() == 2);
  CHECK_FALSE(r->devices[1].uuid);
  CHECK(r->devices[1].visible_as == "1");
  CHECK(r->devices[1].usable);
  CHECK(r->multi_gpu_ok == true);
  CHECK(no_children_left());
}

TEST_CASE("live cuda: one check with --skip-busy lists each proc/<pid>/fd once, through the Host") {
  // The CUDA probe takes the GPUs' holders from the gpu-processes probe's facts instead of
  // scanning the process table again (once for --skip-busy, once for a busy GPU's holders).
  ScopedEnv env({{"FAKE_CUDA_GPUS", "4"}, {"FAKE_CUDA_GPU_CTX_ERROR", "2:46"}});
  gpf::test::TempDir root;
  std::filesystem::copy(gpf::test::fixture("cuda-4gpu"), root.path,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks);
  for (const char* pid : {"1", "300", "4242"}) {
    root.write(std::string("proc/") + pid + "/comm", "python3\n");
    root.link(std::string("proc/") + pid + "/fd/0", "/dev/null");
  }
  auto host = Host::snapshot(root.path).value();
  std::vector<HostAccess> log;
  host.record_into(&log);
  ProbeOptions options;
  options.libcuda = gpf::cuda_test::k_fake;
  options.skip_busy = true;
  options.cuda_timeout_s = 20;
  const Facts facts = collect_facts(host, options);
  host.record_into(nullptr);
  const auto cuda = std::find_if(facts.probes.begin(), facts.probes.end(),
                                 [](const ProbeStatus& p) { return p.name == "cuda"; });
  REQUIRE(cuda != facts.probes.end());
  CHECK(cuda->state == ProbeState::ok); // no holder: the live probe ran
  REQUIRE(facts.cuda.devices.size() == 4);
  CHECK(facts.cuda.devices[2].in_use); // a busy GPU: its holders were looked up too
  static const std::regex fd_dir(R"(proc/[0-9]+/fd)");
  std::map<std::string, int> listed;
  for (const auto& access : log) {
    if (access.kind == HostAccess::Kind::directory && std::regex_match(access.path, fd_dir)) {
      ++listed[access.path];
    }
  }
  CHECK(listed ==
        std::map<std::string, int>{{"proc/1/fd", 1}, {"proc/300/fd", 1}, {"proc/4242/fd", 1}});
}
