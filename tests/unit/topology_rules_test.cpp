// The topology rows on facts built in the test: what fires, what stays quiet, which severity, and
// the cause named for a peer-to-peer failure. Fixture snapshots cover the same rows end to end
// (topology_fixtures_test.cpp).
#include "gpf/report/report.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/topology.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

using namespace gpf;

namespace {

const std::string k_a = "0000:18:00.0";
const std::string k_b = "0000:2a:00.0";

Environment env_of(std::map<std::string, std::string> vars) {
  return Environment(std::move(vars));
}

std::vector<Hit> run_rule(std::string_view id, const Facts& facts,
                          std::set<std::string> usable = {}) {
  const Rule* rule = find_rule(id);
  REQUIRE(rule);
  if (usable.empty()) {
    for (const auto& g : facts.gpus) {
      usable.insert(g.bus_id);
    }
  }
  const CheckOptions options;
  const std::vector<std::string> recommended;
  const JobView job = derive_job_view(facts, Matrix::get());
  RuleContext ctx{facts, job, options, usable, recommended};
  ctx.rule = rule;
  return rule->check(ctx);
}

PciBridge bridge(const std::string& bus, unsigned port_type, std::optional<unsigned> acs_control,
                 AcsState state = AcsState::present) {
  PciBridge b;
  b.bus_id = bus;
  b.path = "sys/devices/pci0000:15/" + bus;
  b.config.size = 4096;
  b.config.port_type = static_cast<std::uint8_t>(port_type);
  b.config.acs_state = acs_control ? AcsState::present : state;
  if (acs_control) {
    AcsControl acs;
    acs.control = static_cast<std::uint16_t>(*acs_control);
    acs.offset = 0x148;
    b.config.acs = acs;
  }
  return b;
}

// Two H100s under one switch (root port 15:01.0, upstream 16:00.0, downstream 17:00.0 / 17:01.0);
// downstream ports with the given ACS control; IOMMU groups of type group_type.
Facts two_gpus(std::optional<unsigned> acs_control, const std::string& group_type = "identity") {
  Facts f;
  for (const auto& bus : {k_a, k_b}) {
    GpuFacts g;
    g.bus_id = bus;
    g.model = "NVIDIA H100 80GB HBM3";
    g.uuid = "GPU-" + bus;
    f.gpus.push_back(g);
  }
  auto& t = f.topology;
  t.pcie.ran = true;
  t.pcie.bridges.emplace("0000:15:01.0", bridge("0000:15:01.0", 4, acs_control));
  t.pcie.bridges.emplace("0000:16:00.0", bridge("0000:16:00.0", 5, std::nullopt, AcsState::absent));
  t.pcie.bridges.emplace("0000:17:00.0", bridge("0000:17:00.0", 6, acs_control));
  t.pcie.bridges.emplace("0000:17:01.0", bridge("0000:17:01.0", 6, acs_control));
  int group = 30;
  for (const auto& [bus, down] :
       {std::pair{k_a, std::string("0000:17:00.0")}, std::pair{k_b, std::string("0000:17:01.0")}}) {
    GpuPciPath p;
    p.bus_id = bus;
    p.path = "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/" + down + "/" + bus;
    p.root = "pci0000:15";
    p.bridges = {"0000:15:01.0", "0000:16:00.0", down};
    p.device_id = 0x2330;
    p.iommu_group = std::to_string(group);
    t.iommu.group_type[std::to_string(group++)] = group_type;
    t.pcie.gpus.push_back(p);
  }
  t.iommu.ran = true;
  t.iommu.groups = 2;
  t.iommu.cmdline = "ro quiet";
  t.iommu.hypervisor = false;
  return f;
}

} // namespace

TEST_CASE("ACS redirect: each downstream port between the GPUs, not the bridges above both") {
  const auto hits = run_rule("pcie.acs-redirect", two_gpus(0x001D));
  REQUIRE(hits.size() == 2);
  CHECK(hits[0].message.find("switch downstream port 0000:17:00.0 above GPU 0000:18:00.0") !=
        std::string::npos);
  CHECK(hits[0].evidence.at(0).find(
            "ACS control 0x001d at 0x14e (SrcValid+ TransBlk- ReqRedir+ CmpltRedir+") !=
        std::string::npos);
  CHECK(hits[0].remedy.find("setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000") != std::string::npos);
  CHECK(hits[1].message.find("0000:17:01.0") != std::string::npos);
  CHECK(run_rule("pcie.acs-redirect", two_gpus(0x0011))
            .empty()); // SrcValid+ UpstreamFwd+ only: no redirect
  CHECK(run_rule("pcie.acs-redirect", two_gpus(std::nullopt)).empty());
}

TEST_CASE("ACS is judged only between GPUs the job uses together") {
  auto f = two_gpus(0x001D);
  CHECK(run_rule("pcie.acs-redirect", f, {k_a}).empty()); // the other GPU is unusable
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1"}});
  CHECK(run_rule("pcie.acs-redirect", f).empty());
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1,0"}});
  CHECK(run_rule("pcie.acs-redirect", f).size() == 2);
}

TEST_CASE("GPUs under different host bridges: every bridge on both paths is between them") {
  auto f = two_gpus(0x0004);
  auto& second = f.topology.pcie.gpus[1];
  second.root = "pci0000:26";
  second.bridges = {"0000:26:01.0"};
  f.topology.pcie.bridges.emplace("0000:26:01.0", bridge("0000:26:01.0", 4, 0x0004));
  const auto between = bridges_between(f.topology, k_a, k_b);
  CHECK(between ==
        std::vector<std::string>{"0000:15:01.0", "0000:16:00.0", "0000:17:00.0", "0000:26:01.0"});
  CHECK(shared_bridge(f.topology, k_a, k_b).empty());
  CHECK(run_rule("pcie.acs-redirect", f).size() == 3); // both root ports and the downstream port
  const auto pairs = run_rule("pcie.gpu-pairs-share-switch", f);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].message.find("No two GPUs share") == 0);
}

TEST_CASE("unreadable ACS is reported as not checked, only for bridges between the GPUs") {
  auto f = two_gpus(std::nullopt);
  CHECK(run_rule("pcie.acs-not-checked", f).empty());
  f.topology.pcie.bridges.at("0000:17:00.0").config.acs_state = AcsState::unknown;
  f.topology.pcie.bridges.at("0000:17:00.0").config.note = "only the 64-byte header is readable";
  f.topology.pcie.bridges.at("0000:15:01.0").config.acs_state =
      AcsState::unknown; // above both: irrelevant
  const auto hits = run_rule("pcie.acs-not-checked", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("1 bridge between") != std::string::npos);
  CHECK(hits[0].evidence ==
        std::vector<std::string>{
            "/sys/devices/pci0000:15/0000:17:00.0/config: only the 64-byte header is readable"});
}

// The tree answers what a loop over every pair answers (the rules used to loop; 2000 GPUs made
// that 61 s): random forests of host bridges, root ports, switches and GPUs at any depth,
// including GPUs right on a host bridge and GPUs with an unknown path.
TEST_CASE("the PCIe tree agrees with the pair-by-pair answer on random topologies") {
  std::mt19937 rng(20261202);
  for (int round = 0; round < 300; ++round) {
    TopologyFacts t;
    std::vector<std::string> gpus;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      GpuPciPath p;
      p.bus_id = fmt::format("0000:{:02x}:00.0", 0x80 + i);
      p.root = fmt::format("pci0000:{:02x}", rng() % 2);
      p.path = "sys/devices/" + p.root + "/" + p.bus_id;
      // up to 3 bridges, each one of two below its parent (named by the way down, so the same
      // name is the same bridge): pairs share prefixes often
      const int depth = static_cast<int>(rng() % 4);
      std::string way = p.root + "/";
      for (int d = 0; d < depth; ++d) {
        way += static_cast<char>('0' + rng() % 2);
        p.bridges.push_back(way);
      }
      if (rng() % 10 == 0) {
        p.error = "unknown"; // left out, like a GPU whose sysfs path was not found
      }
      t.pcie.gpus.push_back(p);
      gpus.push_back(p.bus_id);
    }
    const PcieTree tree = place_gpus(t, gpus);
    std::set<std::string> between_any;
    std::map<std::string, std::set<std::string>> groups;
    std::size_t known = 0;
    std::size_t apart = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        const auto between = bridges_between(t, gpus[i], gpus[j]);
        const auto shared = shared_bridge(t, gpus[i], gpus[j]);
        between_any.insert(between.begin(), between.end());
        if (between.empty() && shared.empty()) {
          continue;
        }
        ++known;
        if (shared.empty()) {
          ++apart;
        } else {
          groups[shared].insert({gpus[i], gpus[j]});
        }
      }
    }
    INFO("round " << round);
    CHECK(tree.known_pairs() == known);
    CHECK(tree.pairs_apart() == apart);
    std::map<std::string, std::set<std::string>> tree_groups;
    for (const auto& [bridge, members] : tree.shared_groups()) {
      tree_groups[bridge] = {members.begin(), members.end()};
    }
    CHECK(tree_groups == groups);
    for (const auto& [bridge, below] : tree.under) {
      CHECK(tree.between_some_pair(bridge) == (between_any.count(bridge) != 0));
    }
  }
}

TEST_CASE(
    "the IOMMU: group type first, the command line when the type is unknown, a VM is explained") {
  CHECK(run_rule("iommu.not-passthrough", two_gpus(std::nullopt, "identity")).empty());
  auto dma = two_gpus(std::nullopt, "DMA-FQ");
  auto hits = run_rule("iommu.not-passthrough", dma);
  REQUIRE(hits.size() == 1);
  CHECK_FALSE(hits[0].severity);
  CHECK(hits[0].evidence.at(0) ==
        "/sys/kernel/iommu_groups/30/type: DMA-FQ — GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3)");
  CHECK(run_rule("iommu.not-passthrough", dma, {k_a}).empty()); // one GPU: no peer-to-peer

  dma.topology.iommu.hypervisor = true;
  hits = run_rule("iommu.not-passthrough", dma);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].severity == Severity::info);
  CHECK(hits[0].message.find("virtual machine") != std::string::npos);

  auto untyped = two_gpus(std::nullopt);
  untyped.topology.iommu.group_type.clear();
  CHECK(run_rule("iommu.not-passthrough", untyped).size() == 1); // groups, no iommu=pt
  untyped.topology.iommu.cmdline_passthrough = true;
  CHECK(run_rule("iommu.not-passthrough", untyped).empty());
  untyped.topology.iommu.cmdline_passthrough = false;
  untyped.topology.iommu.cmdline.reset();
  CHECK(run_rule("iommu.not-passthrough", untyped).empty()); // unknown is not a finding
  untyped.topology.iommu.groups = 0;
  untyped.topology.iommu.cmdline = "ro";
  CHECK(run_rule("iommu.not-passthrough", untyped).empty()); // no IOMMU at all
}

TEST_CASE("the cause named for a peer-to-peer failure") {
  auto f = two_gpus(0x0004, "DMA");
  const auto causes = p2p_causes(f, k_a, k_b);
  REQUIRE(causes.size() == 3);
  CHECK(
      causes[0] ==
      "ACS redirect is enabled on switch downstream port 0000:17:00.0 between GPUs 0000:18:00.0 and 0000:2a:00.0");
  CHECK(
      causes[2] ==
      "the IOMMU translates the DMA of GPUs 0000:18:00.0 and 0000:2a:00.0 (not in passthrough mode)");
  f.topology.iommu.hypervisor = true;
  CHECK(p2p_causes(f, k_a, k_b).size() == 2);
  CHECK(p2p_causes(two_gpus(0x0000), k_a, k_b).empty());
  CHECK(p2p_causes(two_gpus(0x0004), k_a, "0000:99:00.0").empty()); // a GPU without a known path
}

TEST_CASE("/dev/shm: below 1 GiB with two GPUs, or missing") {
  auto f = two_gpus(std::nullopt);
  f.topology.shm.ran = true;
  f.topology.shm.size_bytes = 64u << 20;
  f.topology.shm.available_bytes = 60u << 20;
  f.topology.shm.mount_line = "shm /dev/shm tmpfs rw,size=65536k 0 0";
  auto hits = run_rule("shm.too-small", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("/dev/shm is 64 MiB and 2 GPUs") == 0);
  CHECK(hits[0].evidence ==
        std::vector<std::string>{"statvfs(/dev/shm): size 67108864 bytes, 62914560 bytes available",
                                 "/proc/mounts: shm /dev/shm tmpfs rw,size=65536k 0 0"});
  CHECK(run_rule("shm.too-small", f, {k_a}).empty());
  f.topology.shm.size_bytes = 1ull << 30;
  CHECK(run_rule("shm.too-small", f).empty());
  f.topology.shm.size_bytes.reset(); // not measured
  CHECK(run_rule("shm.too-small", f).empty());
  f.topology.shm.exists = false;
  hits = run_rule("shm.too-small", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("does not exist") != std::string::npos);
}

TEST_CASE("memlock matters only where RDMA devices exist") {
  auto f = two_gpus(std::nullopt);
  f.topology.shm.memlock_soft = 65536;
  f.topology.shm.memlock_line = "Max locked memory 65536 65536 bytes";
  CHECK(run_rule("limits.memlock-low", f).empty());
  f.topology.rdma.ran = true;
  RdmaDevice nic;
  nic.name = "mlx5_0";
  f.topology.rdma.devices.push_back(nic);
  const auto hits = run_rule("limits.memlock-low", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("64 KiB") != std::string::npos);
  f.topology.shm.memlock_soft.reset();
  f.topology.shm.memlock_unlimited = true;
  CHECK(run_rule("limits.memlock-low", f).empty());
}

TEST_CASE("Fabric Manager: missing, unchecked in a container, wrong version") {
  auto f = two_gpus(std::nullopt);
  auto& s = f.topology.services;
  s.ran = true;
  s.process_table = true;
  s.init_comm = "systemd";
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).empty()); // no NVSwitch
  s.nvswitch_nodes = {"dev/nvidia-nvswitch0"};
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).size() == 1);
  CHECK(run_rule("nvswitch.fabric-manager-unchecked", f).empty());
  s.init_comm = "bash";
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).empty());
  CHECK(run_rule("nvswitch.fabric-manager-unchecked", f).size() == 1);
  s.init_comm = "systemd";
  s.fabric_manager = {{1450, "nv-fabricmanage"}};
  CHECK(run_rule("nvswitch.fabric-manager-missing", f).empty());
  f.driver.version = Version({550, 54, 14});
  f.driver.version_text = "550.54.14";
  f.driver.version_source = "proc/driver/nvidia/version";
  s.fabric_manager_version = "550.54.14";
  CHECK(run_rule("nvswitch.fabric-manager-version", f).empty());
  s.fabric_manager_version = "550.54.15";
  const auto hits = run_rule("nvswitch.fabric-manager-version", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("550.54.15 does not match the driver 550.54.14") != std::string::npos);
}

TEST_CASE("persistence: only with a slow CUDA start measured and no daemon on the host") {
  auto f = two_gpus(std::nullopt);
  auto& s = f.topology.services;
  s.ran = true;
  s.process_table = true;
  s.init_comm = "systemd";
  CHECK(run_rule("persistence.not-running", f).empty()); // the CUDA probe did not run
  f.cuda.ran = true;
  f.cuda.init.name = "cuInit";
  f.cuda.init.ok = true;
  f.cuda.init.duration_ms = 250;
  CHECK(run_rule("persistence.not-running", f).empty()); // fast
  CudaDevice d;
  d.index = 0;
  d.bus_id = k_a;
  d.steps = {{"cuInit", true, false, 2100, std::nullopt, "", ""},
             {"primary_context", true, false, 900, std::nullopt, "", ""}};
  d.derive_timing();
  f.cuda.devices.push_back(d);
  auto hits = run_rule("persistence.not-running", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].evidence.at(0) ==
        "GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3): cuInit + primary context 3000 ms");
  s.persistenced = {{812, "nvidia-persiste"}};
  CHECK(run_rule("persistence.not-running", f).empty());
  s.persistenced.clear();
  s.init_comm = "python3"; // a container cannot see the host's daemons
  CHECK(run_rule("persistence.not-running", f).empty());
}

TEST_CASE("GSP firmware: the file each GPU loads, judged with the open module or GSP in use") {
  auto f = two_gpus(std::nullopt);
  f.driver.loaded = true;
  f.driver.version_text = "550.54.14";
  f.driver.version_source = "proc/driver/nvidia/version";
  f.driver.flavour = DriverFlavour::open;
  f.topology.firmware.ran = true;
  f.topology.firmware.dirs_checked = {"lib/firmware/nvidia/550.54.14"};
  f.topology.firmware.files = {"gsp_tu10x.bin"};
  f.topology.firmware.found_in = "lib/firmware/nvidia/550.54.14";
  auto hits = run_rule("gsp.firmware-files-missing", f);
  REQUIRE(hits.size() == 1);
  CHECK(
      hits[0].message.find(
          "GSP firmware gsp_ga10x.bin for driver 550.54.14 is missing: GPUs 0000:18:00.0, 0000:2a:00.0") ==
      0);
  CHECK(hits[0].remedy.find("/lib/firmware/nvidia/550.54.14/gsp_ga10x.bin") != std::string::npos);

  f.topology.firmware.files = {"gsp_ga10x.bin", "gsp_tu10x.bin"};
  CHECK(run_rule("gsp.firmware-files-missing", f).empty());

  f.topology.firmware.files.clear();
  f.driver.flavour = DriverFlavour::proprietary; // proprietary without GSP in use: not judged
  CHECK(run_rule("gsp.firmware-files-missing", f).empty());
  f.gpus[0].firmware = "550.54.14"; // this GPU runs GSP firmware
  CHECK(run_rule("gsp.firmware-files-missing", f).size() == 1);

  f.driver.flavour = DriverFlavour::open;
  f.gpus[0].firmware.reset();
  for (auto& p : f.topology.pcie.gpus) {
    p.device_id = 0x1DB4; // V100: no GSP
  }
  CHECK(run_rule("gsp.firmware-files-missing", f).empty());
  for (auto& p : f.topology.pcie.gpus) {
    p.device_id.reset(); // unknown id: any gsp_*.bin will do
  }
  hits = run_rule("gsp.firmware-files-missing", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("(gsp_*.bin)") != std::string::npos);
  f.topology.firmware.files = {"gsp_tu10x.bin"};
  CHECK(run_rule("gsp.firmware-files-missing", f).empty());
  f.topology.firmware.ran = false; // no lib/firmware (a container): not judged
  f.topology.firmware.files.clear();
  CHECK(run_rule("gsp.firmware-files-missing", f).empty());
}

TEST_CASE("CUDA_VISIBLE_DEVICES duplicates: by GPU, MIG instances of one GPU differ") {
  auto f = two_gpus(std::nullopt);
  const auto dup = [&](const std::string& value) {
    f.env = env_of({{"CUDA_VISIBLE_DEVICES", value}});
    return run_rule("env.cuda-visible-devices-duplicate", f);
  };
  CHECK(dup("0,1").empty());
  auto hits = dup("0,1,GPU-0000:18");
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].evidence.at(1) ==
        "GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3) is named by \"0\" and \"GPU-0000:18\"");
  CHECK(dup("1, 1").size() == 1);
  CHECK(dup("0,7,0").empty()); // 7 ends the list for CUDA: the second 0 is never read
  CHECK(dup("MIG-GPU-0000:18:00.0/1/0,MIG-GPU-0000:18:00.0/2/0").empty());
  CHECK(dup("MIG-GPU-0000:18:00.0/1/0,MIG-GPU-0000:18:00.0/1/0").size() == 1);
  CHECK(dup("").empty());
}

TEST_CASE("device order: mixed models without PCI_BUS_ID, when GPUs are named by index") {
  auto f = two_gpus(std::nullopt);
  CHECK(run_rule("env.device-order-ambiguous", f).empty()); // one model
  f.gpus[1].model = "NVIDIA L40S";
  CHECK(run_rule("env.device-order-ambiguous", f)
            .empty()); // unset: every GPU is used, only the numbering differs
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1"}});
  const auto hits = run_rule("env.device-order-ambiguous", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].evidence == std::vector<std::string>{"CUDA_DEVICE_ORDER is not set (FASTEST_FIRST)",
                                                     "CUDA_VISIBLE_DEVICES=1"});
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "GPU-0000:2a"}});
  CHECK(run_rule("env.device-order-ambiguous", f).empty());
  f.env = env_of({{"CUDA_VISIBLE_DEVICES", "1"}, {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}});
  CHECK(run_rule("env.device-order-ambiguous", f).empty());
}

TEST_CASE("environment flags: set, unset, empty, zero") {
  struct Case {
    const char* id;
    const char* name;
    const char* value;
    bool fires;
  };
  const Case cases[] = {
      {"env.cuda-injection", "CUDA_INJECTION64_PATH", "/opt/tool/libinj.so", true},
      {"env.cuda-injection", "CUDA_INJECTION64_PATH", "", false},
      {"env.launch-blocking", "CUDA_LAUNCH_BLOCKING", "1", true},
      {"env.launch-blocking", "CUDA_LAUNCH_BLOCKING", "0", false},
      {"env.nccl-p2p-disabled", "NCCL_P2P_DISABLE", "1", true},
      {"env.nccl-p2p-disabled", "NCCL_P2P_DISABLE", "0", false},
      {"env.nccl-shm-disabled", "NCCL_SHM_DISABLE", "1", true},
      {"env.nccl-shm-disabled", "NCCL_SHM_DISABLE", " ", false},
  };
  for (const auto& c : cases) {
    INFO(c.name << "=" << c.value);
    auto f = two_gpus(std::nullopt);
    CHECK(run_rule(c.id, f).empty());
    f.env = env_of({{c.name, c.value}});
    const auto hits = run_rule(c.id, f);
    CHECK(hits.size() == (c.fires ? 1u : 0u));
    if (c.fires) {
      CHECK(hits[0].evidence.at(0) == std::string(c.name) + "=" + c.value);
    }
  }
}

TEST_CASE("compute modes from the CUDA probe: exclusive is info, prohibited drops the GPU") {
  auto f = two_gpus(std::nullopt);
  for (int mode : {0, 3, 2}) {
    CudaDevice d;
    d.index = static_cast<int>(f.cuda.devices.size());
    d.bus_id = "0000:0" + std::to_string(mode) + ":00.0";
    d.compute_mode = mode;
    f.cuda.devices.push_back(d);
  }
  f.cuda.devices.push_back(CudaDevice{}); // attribute unknown
  const auto exclusive = run_rule("gpu.compute-mode-exclusive", f);
  REQUIRE(exclusive.size() == 1);
  CHECK(exclusive[0].gpu == "0000:03:00.0");
  CHECK(exclusive[0].evidence.at(0) ==
        "CUDA 1 (0000:03:00.0): CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 3 (EXCLUSIVE_PROCESS)");
  const auto prohibited = run_rule("gpu.compute-mode-prohibited", f);
  REQUIRE(prohibited.size() == 1);
  CHECK(prohibited[0].gpu == "0000:02:00.0");
  CHECK(prohibited[0].effect == Effect::gpu_unusable);
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

TEST_CASE("a hang NCCL saw is judged as the one CUDA saw: warn, one GPU, the transport named") {
  auto f = two_gpus(0x001d);
  auto& n = f.nccl;
  n.ran = true;
  n.library = "libnccl.so.2";
  n.library_from = "loader";
  n.version = "2.21.5";
  n.gpus = {k_a, k_b};
  n.timeout_s = 5;
  n.transports = {"0[0] -> 1[1] via P2P/CUMEM", "1[1] -> 0[0] via P2P/CUMEM"};
  NcclStep init;
  init.name = std::string(k_nccl_init_step);
  init.ok = true;
  NcclStep all_reduce;
  all_reduce.name = std::string(k_nccl_all_reduce_step);
  all_reduce.timed_out = true;
  all_reduce.duration_ms = 5000;
  n.steps = {init, all_reduce};
  const Rule* rule = find_rule("nccl.all-reduce-hung");
  REQUIRE(rule);
  CHECK(rule->severity == Severity::warn);
  const auto hung = run_rule("nccl.all-reduce-hung", f);
  REQUIRE(hung.size() == 1);
  CHECK(hung[0].effect == Effect::single_gpu_only);
  CHECK(hung[0].keep == k_a);
  CHECK(hung[0].where == "ACS 0000:17:00.0");
  CHECK_THAT(hung[0].message, Catch::Contains("NCCL P2P/CUMEM"));
  CHECK_THAT(hung[0].remedy, Catch::Contains("CUDA_VISIBLE_DEVICES=0 ") &&
                                 Catch::Contains("NCCL_P2P_DISABLE=1 gpu-preflight --nccl="));

  // judged whole: a warning that keeps one GPU; --min-gpus 2 makes it a fail naming the port
  CheckOptions two;
  two.min_gpus = 2;
  const auto rules = gpf::test::rule_subset({"nccl.all-reduce-hung", "gpu.too-few-usable"});
  const Assessment warn = assess(f, rules, CheckOptions{});
  const Assessment fail = assess(f, rules, two);
  CHECK(warn.verdict == Verdict::warn);
  CHECK(warn.recommendation.devices == 1);
  CHECK(fail.verdict == Verdict::fail);
  REQUIRE(fail.primary_cause());
  CHECK(fail.primary_cause()->id == "nccl.all-reduce-hung");
  CHECK(cause_label(*fail.primary_cause()) == "nccl.all-reduce-hung ACS 0000:17:00.0");
}

namespace {

// A GB200 compute tray: the driver loaded, one GB200, a PCI bus read without an NVSwitch.
Facts gb200_tray() {
  Facts f;
  f.driver.loaded = true;
  GpuFacts gpu;
  gpu.bus_id = k_a;
  gpu.model = "NVIDIA GB200";
  f.gpus.push_back(gpu);
  f.topology.pcie.ran = true;
  f.topology.pcie.devices_seen = 12;
  return f;
}

} // namespace

TEST_CASE("a GB200 compute tray without NVSwitch: the fabric remedy names IMEX, not the host FM") {
  Facts f = gb200_tray();
  f.nvml.ran = true;
  f.nvml.init_code = 0;
  NvmlGpu g;
  g.bus_id = k_a;
  g.fabric_state = 1; // not started
  f.nvml.gpus.push_back(g);
  auto hits = run_rule("nvml.fabric-incomplete", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.find("Do not start nvidia-fabricmanager") != std::string::npos);
  CHECK(hits[0].remedy.find("IMEX service (nvidia-imex)") != std::string::npos);
  CHECK(hits[0].remedy.find("/dev/nvidia-caps-imex-channels/channel0") != std::string::npos);
  CHECK(std::any_of(hits[0].evidence.begin(), hits[0].evidence.end(), [](const std::string& e) {
    return e.find("no NVSwitch") != std::string::npos;
  }));
  // an HGX node with its NVSwitches on the bus keeps the Fabric Manager remedy (the row's own)
  f.topology.pcie.nvswitches = {"0000:00:05.0"};
  hits = run_rule("nvml.fabric-incomplete", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.empty());
  // so does a GPU that is not a GB200/GB300 (a VM whose NVSwitches are not passed through)
  f.topology.pcie.nvswitches.clear();
  f.gpus[0].model = "NVIDIA H100 80GB HBM3";
  hits = run_rule("nvml.fabric-incomplete", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].remedy.empty());
}

TEST_CASE("IMEX on a GB200 compute tray: the channel's remedy carries the major, or names the "
          "disabled driver option; the daemon is judged only on the host's process table") {
  Facts f = gb200_tray();
  auto& s = f.topology.services;
  s.ran = true;
  s.process_table = true;
  s.init_comm = "systemd";
  s.proc_devices_read = true;
  s.imex_devices_line = "234 nvidia-caps-imex-channels";
  s.imex_major = 234;

  auto hits = run_rule("imex.channel-missing", f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy,
             Catch::Contains("mknod /dev/nvidia-caps-imex-channels/channel0 c 234 0"));
  CHECK_THAT(hits[0].evidence.at(1), Catch::Contains("234 nvidia-caps-imex-channels"));
  // no line in proc/devices: the driver has IMEX channels disabled, which mknod cannot fix
  s.imex_devices_line.reset();
  s.imex_major.reset();
  hits = run_rule("imex.channel-missing", f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy, Catch::Contains("NVreg_ImexChannelCount=0"));
  // a channel exists: silent
  s.imex_channels = {"dev/nvidia-caps-imex-channels/channel0"};
  CHECK(run_rule("imex.channel-missing", f).empty());

  hits = run_rule("imex.service-not-running", f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].evidence.back(), Catch::Contains("no nvidia-imex process"));
  // a container's own process table proves nothing about the host's daemons
  s.init_comm = "bash";
  CHECK(run_rule("imex.service-not-running", f).empty());
  s.init_comm = "systemd";
  s.imex.push_back({4711, "nvidia-imex"});
  CHECK(run_rule("imex.service-not-running", f).empty());

  // an HGX node (NVSwitches on its bus) or another GPU: not a compute tray, neither rule speaks
  s.imex.clear();
  s.imex_channels.clear();
  f.topology.pcie.nvswitches = {"0000:00:05.0"};
  CHECK(run_rule("imex.channel-missing", f).empty());
  CHECK(run_rule("imex.service-not-running", f).empty());
  f.topology.pcie.nvswitches.clear();
  f.gpus[0].model = "NVIDIA H100 80GB HBM3";
  CHECK(run_rule("imex.channel-missing", f).empty());
  CHECK(run_rule("imex.service-not-running", f).empty());
}
