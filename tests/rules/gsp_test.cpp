// The gsp.* rows (src/rules/gsp.cpp) on facts built in code: the GSP firmware file each GPU
// loads.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

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
