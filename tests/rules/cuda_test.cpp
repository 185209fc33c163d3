// The cuda.* rows (src/rules/cuda.cpp) on facts built in code: what each finds, with which
// severity and words, and what it does to the verdict and the recommendation; the cause a
// multi-GPU hang names from the topology; the job's CUDA version against the driver.
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/compat_rule_facts.hpp"
#include "support/cuda_rule_facts.hpp"
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>
#include <tuple>

using namespace gpf;
using gpf::test::finding;
using namespace gpf::test::compat_rule_facts;
using namespace gpf::test::cuda_rule_facts;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("cuda rules: table rows are well-formed") {
  const std::regex id_form(R"(cuda\.[a-z0-9]+(-[a-z0-9]+)*)");
  std::set<std::string_view> ids;
  for (const auto& r : cuda_rules()) {
    INFO(r.id);
    CHECK(std::regex_match(std::string(r.id), id_form));
    CHECK(ids.insert(r.id).second);
    CHECK_FALSE(r.remedy.empty());
    CHECK_FALSE(r.source.empty());
    REQUIRE(find_rule(r.id));
    CHECK(find_rule(r.id)->title == r.title); // the table joined in the same row
  }
  CHECK(ids.size() >= 13);
}

TEST_CASE("cuda rules: all GPUs pass -> pass, CUDA's indices, no CUDA_DEVICE_ORDER") {
  Facts f = host(2);
  cuda_ok(f, {0, 1});
  multi_ok(f);
  const auto a = judge(f);
  CHECK(a.verdict == Verdict::pass);
  CHECK(a.findings.empty());
  CHECK(a.recommendation.cuda_visible_devices == "0,1");
  CHECK_FALSE(a.recommendation.cuda_device_order);
}

TEST_CASE(
    "cuda rules: indices follow CUDA's order, CUDA_DEVICE_ORDER only when the job set PCI_BUS_ID") {
  Facts f = host(3);
  cuda_ok(f, {2, 0, 1}); // fastest first: the driver's third GPU is CUDA 0
  f.cuda.devices[2].usable = false;
  f.cuda.devices[2].steps.push_back(
      {"memset", false, false, 2, 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cuMemsetD8: x"});
  auto a = judge(f);
  REQUIRE(a.gpus.size() == 3);
  CHECK(a.gpus[0].bus_id == bus(2));
  CHECK(a.gpus[2].bus_id == bus(1));
  CHECK_FALSE(a.gpus[2].usable);
  CHECK(a.recommendation.cuda_visible_devices == "0,1");
  CHECK_FALSE(a.recommendation.cuda_device_order);

  f.cuda.device_order = "PCI_BUS_ID";
  a = judge(f);
  CHECK(a.recommendation.cuda_device_order == "PCI_BUS_ID");

  // --cvd-form uuid: UUIDs in CUDA order, nothing relies on the order variable.
  a = judge(f, CvdForm::uuid);
  CHECK(a.recommendation.cuda_visible_devices == uuid(2) + "," + uuid(0));
  CHECK_FALSE(a.recommendation.cuda_device_order);
}

TEST_CASE("cuda rules: the job's CUDA_VISIBLE_DEVICES is read in CUDA's index space") {
  Facts f = host(3);
  cuda_ok(f, {2, 0, 1});
  f.env = Environment({{"CUDA_VISIBLE_DEVICES", "0," + uuid(1)}});
  auto a = judge(f);
  CHECK(a.recommendation.cuda_visible_devices ==
        "0,2"); // CUDA 0 = bus 3, the UUID = CUDA 2 (bus 2)
  // an ambiguous UUID prefix names no GPU: CUDA ignores it and what follows
  f.env = Environment({{"CUDA_VISIBLE_DEVICES", "0," + uuid(1).substr(0, 30) + ",1"}});
  a = judge(f);
  CHECK(a.recommendation.cuda_visible_devices == "0");
}

TEST_CASE("cuda rules: a hung GPU is dropped with its step and elapsed time; others stay -> warn") {
  Facts f = host(3);
  cuda_ok(f, {0, 1, 2});
  CudaDevice& d = f.cuda.devices[1];
  d.usable = false;
  d.steps = {step("cuInit", 90), {"primary_context", false, true, 17400, std::nullopt, "", ""}};
  const auto a = judge(f);
  CHECK(a.verdict == Verdict::warn);
  const Finding* hung = finding(a, "cuda.gpu-hung");
  REQUIRE(hung);
  CHECK(hung->gpu == bus(1));
  CHECK(hung->effect == Effect::gpu_unusable);
  CHECK_THAT(joined(hung->evidence),
             Catch::Contains("primary_context did not finish within 17.40 s") &&
                 Catch::Contains(uuid(1)) && Catch::Contains("CUDA_VISIBLE_DEVICES=" + uuid(1)));
  CHECK(a.recommendation.cuda_visible_devices == "0,2");
  CHECK_FALSE(finding(a, "cuda.gpu-failed"));
}

TEST_CASE("cuda rules: a GPU whose step fails is dropped with the error by name") {
  Facts f = host(2);
  cuda_ok(f, {0, 1});
  CudaDevice& d = f.cuda.devices[0];
  d.usable = false;
  d.steps.push_back({"copy_roundtrip", false, false, 3, std::nullopt, "DATA_MISMATCH",
                     "byte 524288 of 1048576 read back as 0x5a"});
  const auto a = judge(f);
  const Finding* failed = finding(a, "cuda.gpu-failed");
  REQUIRE(failed);
  CHECK_THAT(failed->message,
             Catch::Contains("copy_roundtrip") && Catch::Contains("DATA_MISMATCH"));
  CHECK_THAT(joined(failed->evidence), Catch::Contains("byte 524288"));
  CHECK(a.recommendation.cuda_visible_devices == "1");
}

TEST_CASE("cuda rules: slow initialisation is > 5x the other GPUs' median and > 1 s") {
  struct Case {
    std::vector<double> ctx_ms;
    int slow; // -1: none
  };
  const Case cases[] = {
      {{150, 160, 140, 3000}, 3}, {{100, 900}, -1},         // 9x but under a second
      {{800, 1500}, -1},                                    // over a second but under 5x
      {{100, 1500}, 1},           {{2000, 2100, 1900}, -1}, // all slow: nothing stands out
  };
  for (const auto& c : cases) {
    Facts f = host(static_cast<int>(c.ctx_ms.size()));
    std::vector<int> order;
    for (std::size_t i = 0; i < c.ctx_ms.size(); ++i) {
      order.push_back(static_cast<int>(i));
    }
    cuda_ok(f, order);
    for (std::size_t i = 0; i < c.ctx_ms.size(); ++i) {
      f.cuda.devices[i].steps[1].duration_ms = c.ctx_ms[i];
      f.cuda.devices[i].derive_timing(); // as the probe does when it decodes a child's steps
    }
    const auto a = judge(f);
    const Finding* slow = finding(a, "cuda.gpu-slow-init");
    INFO(c.ctx_ms.size() << " GPUs, expected slow " << c.slow);
    if (c.slow < 0) {
      CHECK_FALSE(slow);
    } else {
      REQUIRE(slow);
      CHECK(slow->gpu == bus(c.slow));
      CHECK(slow->severity == Severity::warn);
      CHECK(a.gpus[static_cast<std::size_t>(c.slow)].usable); // slow is not unusable
    }
  }
}

TEST_CASE("cuda rules: cuInit failure fails the host and leaves no GPU to recommend") {
  Facts f = host(2);
  f.cuda.ran = true;
  f.cuda.library = "libcuda.so.1";
  f.cuda.library_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14";
  f.cuda.init = {"cuInit", false, false, 40, 999, "CUDA_ERROR_UNKNOWN", "cuInit: unknown error"};
  f.cuda.enumeration_steps = {step("load", 1), f.cuda.init};
  const auto a = judge(f);
  CHECK(a.verdict == Verdict::fail);
  const Finding* init = finding(a, "cuda.init-failed");
  REQUIRE(init);
  CHECK_THAT(joined(init->evidence),
             Catch::Contains("CUDA_ERROR_UNKNOWN (999): cuInit: unknown error") &&
                 Catch::Contains("libcuda.so.550.54.14"));
  CHECK(a.recommendation.cuda_visible_devices.empty());
  CHECK(a.usable_count() == 0);
  CHECK(a.gpus[0].reasons == std::vector<std::string>{"cuda.init-failed"});
}

TEST_CASE("cuda rules: a step's CUresult is named by CUDA's enum and given its meaning") {
  // a cuda.json from a driver that could not name the code ("CUresult 918"), and one named
  for (const auto& [name, code, shown, meaning] :
       {std::tuple{"CUresult 918", 918, "CUDA_ERROR_GRAPH_RECAPTURE_FAILURE (918)",
                   "recapturing a graph failed"},
        std::tuple{"CUDA_ERROR_NVLINK_UNCORRECTABLE", 220, "CUDA_ERROR_NVLINK_UNCORRECTABLE (220)",
                   "an uncorrectable NVLink error"},
        std::tuple{"CUresult 4242", 4242, "CUresult 4242 (4242)", ""}}) {
    INFO(name);
    Facts f = host(2);
    f.cuda.ran = true;
    f.cuda.library = "libcuda.so.1";
    f.cuda.init = {"cuInit", false, false, 40, code, name, ""};
    f.cuda.enumeration_steps = {step("load", 1), f.cuda.init};
    const auto a = judge(f);
    const Finding* init = finding(a, "cuda.init-failed");
    REQUIRE(init);
    const std::string ev = joined(init->evidence);
    CHECK_THAT(ev, Catch::Contains(std::string("cuInit failed after 40.0 ms: ") + shown));
    if (std::string(meaning).empty()) {
      CHECK_THAT(ev, !Catch::Contains("(CUDA: ")); // a code CUDA does not have: no meaning
    } else {
      CHECK_THAT(ev, Catch::Contains(std::string("(CUDA: ") + meaning));
    }
  }
}

TEST_CASE("cuda rules: 803, 804, stub and missing symbols each get their own row") {
  struct Case {
    int code;
    const char* id;
  };
  for (const Case c : {Case{803, "cuda.driver-mismatch"}, Case{804, "cuda.driver-mismatch"},
                       Case{34, "cuda.stub-library"}}) {
    Facts f = host(1);
    f.cuda.ran = true;
    f.cuda.library = "libcuda.so.1";
    f.cuda.driver_version = 12080;
    f.cuda.init = {"cuInit", false, false, 4, c.code, "X", ""};
    f.cuda.enumeration_steps = {f.cuda.init};
    const auto a = judge(f);
    INFO(c.code);
    const Finding* hit = finding(a, c.id);
    REQUIRE(hit);
    CHECK_FALSE(finding(a, "cuda.init-failed"));
    CHECK(a.verdict == Verdict::fail);
    if (c.code == 803) {
      CHECK_THAT(joined(hit->evidence),
                 Catch::Contains("kernel module: 550.54.14") && Catch::Contains("(CUDA 12.8)"));
    }
  }
  Facts f = host(1);
  f.cuda.ran = true;
  f.cuda.library = "libcuda.so.1";
  f.cuda.library_path = "/opt/lib/libcuda.so.1";
  f.cuda.missing_symbols = {"cuMemsetD8_v2"};
  const auto a = judge(f);
  REQUIRE(finding(a, "cuda.required-symbol-missing"));
  CHECK_THAT(joined(finding(a, "cuda.required-symbol-missing")->evidence),
             Catch::Contains("dlsym(cuMemsetD8_v2)"));
}

TEST_CASE("cuda rules: a missing library fails only where the NVIDIA driver is expected") {
  Facts f = host(1);
  f.cuda.ran = true;
  f.cuda.library = "libcuda.so.1";
  f.cuda.load_error = "libcuda.so.1: cannot open shared object file: No such file or directory";
  auto a = judge(f);
  REQUIRE(finding(a, "cuda.library-missing"));
  CHECK(finding(a, "cuda.library-missing")->severity == Severity::fail);
  CHECK(a.verdict == Verdict::fail);

  Facts bare;
  bare.kernel = parse_kernel_release("6.8.0-45-generic");
  bare.cuda = f.cuda;
  a = judge(bare);
  REQUIRE(finding(a, "cuda.library-missing"));
  CHECK(finding(a, "cuda.library-missing")->severity == Severity::info);
  CHECK(finding(a, "driver.not-loaded"));
}

TEST_CASE("cuda rules: multi-GPU failure keeps one GPU; the remedy names the kernel only when it "
          "is old") {
  for (const char* kernel : {"6.8.0-45-generic", "5.4.0-150-generic"}) {
    Facts f = host(2, kernel);
    cuda_ok(f, {0, 1});
    f.cuda.multi_gpu_ran = true;
    f.cuda.multi_gpu_ok = false;
    f.cuda.multi_gpu_devices = {0, 1};
    f.cuda.peers = {{0, 1, true, false, true, 11000, "", std::nullopt, "", std::nullopt, ""}};
    const auto a = judge(f);
    INFO(kernel);
    const Finding* hung = finding(a, "cuda.multi-gpu-hung");
    REQUIRE(hung);
    CHECK_FALSE(finding(a, "cuda.multi-gpu-failed"));
    CHECK(a.verdict == Verdict::warn);
    CHECK(a.recommendation.cuda_visible_devices == "0");
    CHECK(a.recommendation.single_gpu_only());
    CHECK_THAT(hung->remedy, Catch::Contains("NCCL_P2P_DISABLE=1") && Catch::Contains("ACS") &&
                                 Catch::Contains("IOMMU"));
    CHECK_THAT(joined(hung->evidence),
               Catch::Contains("peer copy CUDA 0 -> CUDA 1 did not finish within 11.00 s"));
    CHECK((std::string(kernel).rfind("5.4", 0) == 0) ==
          (hung->remedy.find("upgrading it") != std::string::npos));
  }
}

TEST_CASE("cuda rules: a multi-GPU child killed in its own cuInit sooner than the GPUs needed "
          "theirs is not completed, not hung; longer than that it is a hang") {
  Facts f = host(2);
  cuda_ok(f, {0, 1});
  for (auto& d : f.cuda.devices) {
    d.steps.front().duration_ms = 1800; // each GPU's own cuInit
  }
  f.cuda.timeout_s = 3;
  f.cuda.multi_gpu_ran = true;
  f.cuda.multi_gpu_ok = false;
  f.cuda.multi_gpu_devices = {0, 1};
  CudaStep killed = step("load", 1);
  CudaStep init{"cuInit", false, true, 1100, std::nullopt, "", ""};
  f.cuda.multi_gpu_steps = {killed, init};

  auto a = judge(f);
  const Finding* cut = finding(a, "cuda.multi-gpu-not-completed");
  REQUIRE(cut);
  CHECK(cut->severity == Severity::info);
  CHECK_FALSE(finding(a, "cuda.multi-gpu-hung"));
  CHECK_FALSE(finding(a, "cuda.multi-gpu-failed"));
  CHECK(a.verdict == Verdict::pass);
  CHECK(a.recommendation.cuda_visible_devices == "0,1");
  CHECK_FALSE(a.recommendation.single_gpu_only());
  CHECK_THAT(cut->message, Catch::Contains("not completed in time") && Catch::Contains("1.10 s") &&
                               Catch::Contains("1.80 s"));
  CHECK_THAT(cut->remedy, Catch::Contains("from 3 s to at least 4 s"));

  f.cuda.multi_gpu_steps.back().duration_ms = 1900; // longer than any GPU needed alone
  a = judge(f);
  CHECK_FALSE(finding(a, "cuda.multi-gpu-not-completed"));
  CHECK(finding(a, "cuda.multi-gpu-hung"));
  CHECK(a.recommendation.single_gpu_only());

  f.cuda.multi_gpu_steps.back() = {"primary_context", false, true, 100, std::nullopt, "", ""};
  a = judge(f); // past its cuInit: hung where it stopped
  CHECK_FALSE(finding(a, "cuda.multi-gpu-not-completed"));
  CHECK(finding(a, "cuda.multi-gpu-hung"));
}

TEST_CASE("cuda rules: out of memory with no holder anywhere is a failure, not in use") {
  Facts f = host(2);
  cuda_ok(f, {0, 1});
  CudaDevice& d = f.cuda.devices[1];
  d.steps = {step("cuInit", 100),
             {"primary_context", false, false, 5, 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}};
  d.usable = false;
  d.in_use = true;
  d.derive_timing();
  f.topology.gpu_processes.ran = true; // and no process holds a GPU node
  f.nvml.ran = true;
  for (int i = 0; i < 2; ++i) {
    NvmlGpu g;
    g.bus_id = bus(i);
    g.processes = std::vector<NvmlProcess>{};
    f.nvml.gpus.push_back(g);
  }
  auto a = judge(f);
  REQUIRE(finding(a, "cuda.gpu-failed"));
  CHECK(finding(a, "cuda.gpu-failed")->gpu == bus(1));
  CHECK_FALSE(finding(a, "cuda.gpu-in-use"));
  CHECK(a.recommendation.cuda_visible_devices == "0");

  d.holders = {"4242 (python)"}; // someone holds it after all: in use, kept
  a = judge(f);
  CHECK_FALSE(finding(a, "cuda.gpu-failed"));
  REQUIRE(finding(a, "cuda.gpu-in-use"));
  CHECK(a.recommendation.cuda_visible_devices == "0,1");

  d.holders.clear();
  f.nvml.ran = false; // NVML did not say: not known to be free, still in use
  a = judge(f);
  CHECK_FALSE(finding(a, "cuda.gpu-failed"));
  CHECK(finding(a, "cuda.gpu-in-use"));
}

TEST_CASE(
    "cuda rules: driver GPUs CUDA does not enumerate, and CUDA devices the driver does not list") {
  Facts f = host(3);
  cuda_ok(f, {0, 2});
  auto a = judge(f);
  const Finding* missing = finding(a, "cuda.gpu-not-enumerated");
  REQUIRE(missing);
  CHECK(missing->gpu == bus(1));
  CHECK(a.gpus.size() == 3);
  const auto it = std::find_if(a.gpus.begin(), a.gpus.end(),
                               [](const GpuAssessment& g) { return g.bus_id == bus(1); });
  REQUIRE(it != a.gpus.end());
  CHECK_FALSE(it->index);
  CHECK_FALSE(it->usable);
  CHECK(a.recommendation.cuda_visible_devices == "0,1");

  Facts g = host(1);
  cuda_ok(g, {0, 1}); // CUDA sees bus 2, which the driver does not list
  a = judge(g);
  const Finding* unlisted = finding(a, "cuda.device-not-listed-by-driver");
  REQUIRE(unlisted);
  CHECK(unlisted->gpu == bus(1));
  CHECK(a.recommendation.cuda_visible_devices == "0,1");
}

TEST_CASE("cuda rules: on WSL2 the GPUs come from CUDA") {
  Facts f;
  f.kernel = parse_kernel_release("5.15.153.1-microsoft-standard-WSL2");
  NodeInfo dxg;
  dxg.type = NodeType::char_device;
  f.devices.push_back({"dev/dxg", dxg});
  REQUIRE(f.is_wsl2());
  cuda_ok(f, {0, 1});
  multi_ok(f);
  auto a = judge(f);
  CHECK(a.verdict == Verdict::pass);
  CHECK(a.gpus.size() == 2);
  CHECK(a.gpus[0].model == "NVIDIA H100 80GB HBM3");
  CHECK(a.recommendation.cuda_visible_devices == "0,1");
  CHECK_FALSE(finding(a, "cuda.device-not-listed-by-driver"));

  // Without the CUDA probe nothing confirms a GPU there.
  Facts none = f;
  none.cuda = CudaFacts{};
  a = judge(none);
  CHECK(a.gpus.empty());
  CHECK(a.verdict == Verdict::fail);
}

namespace {
// The CUDA probe's multi-GPU child: GPUs 0 and 1 (k_a, k_b), its copy 0 -> 1 hung.
void add_hung_peer_copy(Facts& f) {
  auto& cuda = f.cuda;
  cuda.ran = true;
  cuda.source = "cuda.json";
  cuda.enumeration_complete = true;
  for (const auto& bus : {k_a, k_b}) {
    CudaDevice d;
    d.index = static_cast<int>(cuda.devices.size());
    d.bus_id = bus;
    d.usable = true;
    cuda.devices.push_back(d);
  }
  cuda.multi_gpu_ran = true;
  cuda.multi_gpu_ok = false;
  cuda.multi_gpu_devices = {0, 1};
  CudaPeerResult p;
  p.from = 0;
  p.to = 1;
  p.can_access = true;
  p.timed_out = true;
  p.duration_ms = 3000;
  cuda.peers.push_back(p);
  cuda.deadline_hit = true;
  cuda.timeout_s = 3;
}
} // namespace

TEST_CASE("the CUDA probe's multi-GPU finding names the topology cause it found") {
  auto f = two_gpus(0x001d); // SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+
  add_hung_peer_copy(f);
  const auto hung = run_rule("cuda.multi-gpu-hung", f);
  REQUIRE(hung.size() == 1);
  CHECK_THAT(
      hung[0].message,
      Catch::Contains("likely cause: ACS redirect is enabled on switch downstream port "
                      "0000:17:00.0 between GPUs 0000:18:00.0 and 0000:2a:00.0 (and 1 more)"));
  CHECK(
      std::find(
          hung[0].evidence.begin(), hung[0].evidence.end(),
          "/sys/devices/pci0000:15/0000:17:01.0/config: ACS control 0x001d at 0x14e (SrcValid+ TransBlk- "
          "ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-)") !=
      hung[0].evidence.end());

  // The same hang with ACS off and the IOMMU in passthrough: no cause is claimed.
  auto clean = two_gpus(0x0000);
  add_hung_peer_copy(clean);
  const auto unexplained = run_rule("cuda.multi-gpu-hung", clean);
  REQUIRE(unexplained.size() == 1);
  CHECK_THAT(unexplained[0].message, !Catch::Contains("likely cause"));

  // The whole child hung before any copy: every pair it covered is examined.
  auto early = two_gpus(std::nullopt, "DMA");
  add_hung_peer_copy(early);
  early.cuda.peers.clear();
  CudaStep ctx;
  ctx.name = "cuCtxCreate";
  ctx.timed_out = true;
  early.cuda.multi_gpu_steps.push_back(ctx);
  const auto before_copy = run_rule("cuda.multi-gpu-hung", early);
  REQUIRE(before_copy.size() == 1);
  CHECK_THAT(
      before_copy[0].message,
      Catch::Contains(
          "likely cause: the IOMMU translates the DMA of GPUs 0000:18:00.0 and 0000:2a:00.0"));
}

TEST_CASE("one judgement for a hang between GPUs: the best-placed GPU kept, remedies in order") {
  // ACS redirects on both downstream ports; GPU 0's own link trained narrower than it can
  auto f = two_gpus(0x001d);
  add_hung_peer_copy(f);
  f.topology.pcie.gpus[0].link.width = 8;
  f.topology.pcie.gpus[0].link.max_width = 16;
  auto hung = run_rule("cuda.multi-gpu-hung", f);
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].effect == Effect::single_gpu_only);
  CHECK(hung[0].keep == k_b); // the healthy link, not the first GPU
  CHECK(hung[0].where == "ACS 0000:17:00.0");
  const auto& remedy = hung[0].remedy;
  CHECK_THAT(remedy, Catch::StartsWith("Start the job on one GPU, GPU 1 (0000:2a:00.0") &&
                         Catch::Contains("CUDA_VISIBLE_DEVICES=1 "));
  // data-centre GPUs, the ACS port found: disabling ACS there first, NCCL_P2P_DISABLE=1 next
  REQUIRE(remedy.find("setpci -s 0000:17:00.0") != std::string::npos);
  CHECK(remedy.find("setpci -s 0000:17:00.0") < remedy.find("NCCL_P2P_DISABLE=1"));

  // consumer parts: NCCL_P2P_DISABLE=1 leads
  for (auto& g : f.gpus) {
    g.model = "NVIDIA GeForce RTX 4090";
  }
  hung = run_rule("cuda.multi-gpu-hung", f);
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].remedy.find("NCCL_P2P_DISABLE=1") < hung[0].remedy.find("setpci"));
  CHECK_THAT(hung[0].remedy, Catch::Contains("GeForce and TITAN GPUs carry no peer-to-peer"));

  // peer-to-peer forced by the job: NCCL_P2P_DISABLE=1 leads, and the variable is named
  for (auto& g : f.gpus) {
    g.model = "NVIDIA H100 80GB HBM3";
  }
  f.env = env_of({{"NCCL_P2P_LEVEL", "SYS"}});
  hung = run_rule("cuda.multi-gpu-hung", f);
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].remedy.find("NCCL_P2P_DISABLE=1") < hung[0].remedy.find("setpci"));
  CHECK_THAT(hung[0].remedy, Catch::Contains("unset NCCL_P2P_LEVEL=SYS"));
}

TEST_CASE(
    "WSL2: the job's CUDA is judged against cuDriverGetVersion when no driver version is known") {
  Facts f;
  f.kernel = parse_kernel_release("5.15.153.1-microsoft-standard-WSL2");
  f.compat.ran = true;
  f.cuda.ran = true;
  f.cuda.driver_version = 12020;
  expect(f, "12.4");
  CHECK(findings(f, "cuda.minor-version-compat").size() == 1);
  expect(f, "12.2");
  CHECK(findings(f, "cuda.minor-version-compat").empty());
  CHECK(findings(f, "cuda.driver-too-old").empty());
  expect(f, "13.0");
  REQUIRE(findings(f, "cuda.driver-too-old").size() == 1);
  CHECK(findings(f, "cuda.driver-too-old")[0].evidence[1] == "cuDriverGetVersion: 12020");
}

TEST_CASE("a CUDA version outside the table is said to be so") {
  auto f = host_with("6.8.0-45-generic", "560.35.03", DriverFlavour::open, {});
  expect(f, "12.7");
  REQUIRE(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find("floor (525.60.13) is met") !=
        std::string::npos);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::info);
  // newer than the data: said to be so, with the newest release it knows, a warning
  expect(f, "14.0");
  CHECK(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::warn);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find(
            "not judged: the job's CUDA 14.0 is newer than the data of 2026-11") !=
        std::string::npos);
  // a known release whose minimum driver the data lacks (13.5) is not "newer than the data"
  f.driver.version = v("595.45.04");
  expect(f, "13.5");
  REQUIRE(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::info);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find("newer than the data") ==
        std::string::npos);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find("(CUDA 9.0 to 13.4)") !=
        std::string::npos);
  // 13.9 of a known major: the floor is met, but it is newer than the data: a warning
  expect(f, "13.9");
  REQUIRE(findings(f, "cuda.version-not-in-matrix").size() == 1);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::warn);
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].message.find(
            "minor-version floor (580.65.06) is met") != std::string::npos);
  f.driver.version = v("560.35.03");
  expect(f, "99.9");
  CHECK(findings(f, "cuda.version-not-in-matrix")[0].severity == Severity::warn);
  CHECK(findings(f, "cuda.driver-too-old").empty());
}
