// The driver probe's parsers (src/probes/parsers.cpp): the version files, params, registry and
// gpus/*/information under proc/driver/nvidia, on inline strings.
#include "gpf/probes/parsers.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("driver version file: open and proprietary flavours") {
  DriverFacts open;
  REQUIRE(parse_driver_version_file(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  "
      "(dvs-builder@U16)  Thu Feb 22 01:25:25 UTC 2024\nGCC version:  gcc version 12.3.0\n",
      open));
  CHECK(open.version_text == "550.54.14");
  CHECK(open.flavour == DriverFlavour::open);

  DriverFacts arm;
  REQUIRE(parse_driver_version_file(
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build", arm));
  CHECK(arm.version_text == "570.86.15");

  DriverFacts prop;
  REQUIRE(parse_driver_version_file(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.161.07  Sat Feb 17 2024\n", prop));
  CHECK(prop.version_text == "535.161.07");
  CHECK(prop.flavour == DriverFlavour::proprietary);

  DriverFacts two_part;
  REQUIRE(parse_driver_version_file("NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.26  Fri",
                                    two_part));
  CHECK(two_part.version_text == "570.26");

  DriverFacts junk;
  CHECK_FALSE(parse_driver_version_file(std::string("\0\x01junk", 6), junk));
  CHECK_FALSE(parse_driver_version_file("NVRM version: something else", junk));
}

TEST_CASE("module version file holds only the version") {
  DriverFacts d;
  CHECK(parse_module_version_file("550.54.14\n", d));
  CHECK(d.version_text == "550.54.14");
  CHECK_FALSE(parse_module_version_file("garbage 1.2", d));
}

TEST_CASE("params: numbers and quoted strings, unknown keys kept") {
  const auto p =
      parse_params("EnableGpuFirmware: 18\nDeviceFileMode: 438\nRegistryDwords: \"RmFoo=1\"\n"
                   "ExcludedGpus: \"\"\nFutureKey: 7\nno colon\n: empty key\n");
  CHECK(p.at("EnableGpuFirmware") == "18");
  CHECK(p.at("RegistryDwords") == "RmFoo=1");
  CHECK(p.at("ExcludedGpus").empty());
  CHECK(p.at("FutureKey") == "7");
  CHECK(p.size() == 5);
}

TEST_CASE("registry: the Binary list") {
  auto empty = parse_registry("Binary: \"\"\n");
  CHECK(empty.parsed);
  CHECK(empty.binary_keys.empty());
  auto two = parse_registry("Binary: \"RmA, RmB\"\n");
  REQUIRE(two.binary_keys.size() == 2);
  CHECK(two.binary_keys[1] == "RmB");
  CHECK_FALSE(parse_registry("Binary: \"unterminated\n").parsed);
  CHECK_FALSE(parse_registry("RMEdgeTrigger=1").parsed);
}

TEST_CASE("gpu information: every field, tabs as the driver prints them") {
  GpuFacts g;
  parse_gpu_information(
      "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\nGPU UUID: \t GPU-abc\nVideo BIOS: \t 96.00.89.00.01\n"
      "Bus Type: \t PCIe\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 3\nGPU Firmware: \t 550.54.14\n"
      "GPU Excluded:\t Yes\n",
      g);
  CHECK(g.model == "NVIDIA H100 80GB HBM3");
  CHECK(g.uuid == "GPU-abc");
  CHECK(g.vbios == "96.00.89.00.01");
  CHECK(g.bus_location == "0000:18:00.0");
  CHECK(g.device_minor == 3u);
  CHECK(g.firmware == "550.54.14");
  CHECK(g.excluded == true);

  GpuFacts partial; // UUID omitted, no firmware line (pre-590 without GSP), minor garbage
  parse_gpu_information("Model: \t\t Tesla V100\nDevice Minor: \t x\n", partial);
  CHECK(partial.model == "Tesla V100");
  CHECK_FALSE(partial.uuid);
  CHECK_FALSE(partial.device_minor);
  CHECK_FALSE(partial.excluded);
}
