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
