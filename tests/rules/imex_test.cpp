// The imex.* rows (src/rules/imex.cpp) on facts built in code: IMEX channels and the daemon on a
// GB200 compute tray.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

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

namespace {

// One live CUDA device on the tray's GPU whose fabric allocation went as given.
void fabric_result(Facts& f, std::optional<int> attribute, bool allocated,
                   std::optional<int> code = std::nullopt, std::string name = "") {
  f.cuda.ran = true;
  f.cuda.source = "live";
  f.cuda.enumeration_complete = true;
  CudaDevice d;
  d.bus_id = k_a;
  d.usable = true;
  d.fabric.asked = true;
  d.fabric.attribute = attribute;
  d.fabric.tried = attribute == 1;
  d.fabric.allocated = allocated;
  d.fabric.granularity = 2u << 20;
  if (d.fabric.refused()) {
    d.fabric.call = "cuMemCreate";
    d.fabric.error_code = code;
    d.fabric.error_name = std::move(name);
  }
  f.cuda.devices = {d};
}

// A tray whose host side is ready: a channel this user may open, the daemon running.
Facts ready_tray() {
  Facts f = gb200_tray();
  auto& s = f.topology.services;
  s.ran = true;
  s.process_table = true;
  s.init_comm = "systemd";
  s.proc_devices_read = true;
  s.imex_devices_line = "234 nvidia-caps-imex-channels";
  s.imex_major = 234;
  s.imex_channels = {"dev/nvidia-caps-imex-channels/channel0"};
  s.imex.push_back({4711, "nvidia-imex"});
  NodeInfo node;
  node.type = NodeType::char_device;
  node.major = 234;
  node.minor = 0;
  node.mode = 0666;
  node.rw_access = true;
  f.devices.push_back({"dev/nvidia-caps-imex-channels/channel0", node});
  return f;
}

} // namespace

TEST_CASE("A refused fabric allocation: one finding per cause, the remedy from the host facts") {
  Facts f = ready_tray();
  const char* id = "imex.fabric-allocation-refused";

  // allocated, or fabric handles not supported (nothing tried), or not asked: silent
  fabric_result(f, 1, true);
  CHECK(run_rule(id, f).empty());
  fabric_result(f, 0, false);
  CHECK(run_rule(id, f).empty());
  fabric_result(f, std::nullopt, false);
  CHECK(run_rule(id, f).empty());
  // memory another process holds is not the fabric's doing
  fabric_result(f, 1, false, 2, "CUDA_ERROR_OUT_OF_MEMORY");
  CHECK(run_rule(id, f).empty());

  // refused although the host shows a channel and the daemon: the GPU, the call, the CUresult by
  // name with CUDA's meaning (the driver gave no name: the catalog's), the attribute
  fabric_result(f, 1, false, 800, "CUresult 800");
  auto hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].evidence.at(0), Catch::Contains("GPU 0 (0000:18:00.0, NVIDIA GB200)"));
  CHECK_THAT(hits[0].evidence.at(0),
             Catch::Contains("CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 1"));
  CHECK_THAT(hits[0].evidence.at(0),
             Catch::Contains("cuMemCreate of one 2 MiB granule requesting a fabric handle"));
  CHECK_THAT(hits[0].evidence.at(0),
             Catch::Contains("CUDA_ERROR_NOT_PERMITTED (800) (CUDA: the operation is not "
                             "permitted)"));
  CHECK_THAT(hits[0].remedy, Catch::Contains("nvidia-imex-ctl -N"));

  // the channel exists but this user cannot open it: permissions
  f.devices.back().info.rw_access = false;
  f.devices.back().info.mode = 0600;
  hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy, Catch::Contains("Let the job's user open the IMEX channel: "
                                             "/dev/nvidia-caps-imex-channels/channel0"));
  CHECK_THAT(hits[0].evidence.back(), Catch::Contains("mode 0600; this user cannot open it"));
  // and no host-side row explains it
  CHECK(run_rule("imex.channel-missing", f).empty());
  CHECK(run_rule("imex.service-not-running", f).empty());

  // no channel on a compute tray: imex.channel-missing reports it, with the refusal as its
  // evidence, and this row stays silent
  f.devices.clear();
  f.topology.services.imex_channels.clear();
  CHECK(run_rule(id, f).empty());
  hits = run_rule("imex.channel-missing", f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].evidence.back(), Catch::Contains("CUDA_ERROR_NOT_PERMITTED (800)"));

  // the same without a compute tray (another model): this row, with imex.channel-missing's
  // remedy and the major
  f.gpus[0].model = "NVIDIA GH200 480GB";
  CHECK(run_rule("imex.channel-missing", f).empty());
  hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy,
             Catch::Contains("mknod /dev/nvidia-caps-imex-channels/channel0 c 234 0"));

  // the channel present, the daemon not running: imex.service-not-running on a tray carries it
  f.gpus[0].model = "NVIDIA GB200";
  f = ready_tray();
  fabric_result(f, 1, false, 800, "CUDA_ERROR_NOT_PERMITTED");
  f.topology.services.imex.clear();
  CHECK(run_rule(id, f).empty());
  hits = run_rule("imex.service-not-running", f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].evidence.back(), Catch::Contains("cuMemCreate"));
  // not a tray: this row names the daemon
  f.gpus[0].model = "NVIDIA GH200 480GB";
  hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy, Catch::Contains("systemctl enable --now nvidia-imex"));
  // NVSwitches on the host without the Fabric Manager: the host Fabric Manager, and only there
  f.topology.services.nvswitch_nodes = {"dev/nvidia-nvswitch0"};
  hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy, Catch::Contains("nvidia-fabricmanager"));
  f.topology.services.fabric_manager.push_back({99, "nv-fabricmanage"});
  hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy, !Catch::Contains("fabricmanager"));
  // a container's process table: check the daemon on the host
  f.topology.services.init_comm = "bash";
  hits = run_rule(id, f);
  REQUIRE(hits.size() == 1);
  CHECK_THAT(hits[0].remedy, Catch::Contains("On the host"));
}
