#include "gpf/probes/parsers.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("kernel releases: version and flavour") {
  struct Case {
    const char* release;
    const char* version; // nullptr = unparseable
    KernelFlavour flavour;
    const char* detail;
  };
  const Case cases[] = {
      {"5.15.0-91-generic", "5.15.0", KernelFlavour::ubuntu, "generic"},
      {"5.4.0-1103-aws", "5.4.0", KernelFlavour::ubuntu, "aws"},
      {"6.5.0-1016-azure", "6.5.0", KernelFlavour::ubuntu, "azure"},
      {"6.8.0-1015-gcp", "6.8.0", KernelFlavour::ubuntu, "gcp"},
      {"4.18.0-553.el8_10.x86_64", "4.18.0", KernelFlavour::rhel, "el8_10"},
      {"3.10.0-1160.el7.x86_64", "3.10.0", KernelFlavour::rhel, "el7"},
      {"6.6.8-1.elrepo.el7_.x86_64", "6.6.8", KernelFlavour::rhel,
       "el7"}, // ".elrepo" is no tag; "_" without digits stays out
      {"5.14.0-427.13.1.el9_4.x86_64", "5.14.0", KernelFlavour::rhel, "el9_4"},
      {"5.10.213-201.855.amzn2.x86_64", "5.10.213", KernelFlavour::amazon, "amzn2"},
      {"6.1.79-99.164.amzn2023.x86_64", "6.1.79", KernelFlavour::amazon, "amzn2023"},
      {"5.15.153.1-microsoft-standard-WSL2", "5.15.153.1", KernelFlavour::wsl2,
       "microsoft-standard-WSL2"},
      {"4.4.0", "4.4.0", KernelFlavour::gvisor, "gVisor (fixed 4.4.0)"},
      {"6.1.0-18-amd64", "6.1.0", KernelFlavour::debian, "amd64"},
      {"6.10.0-rc3", "6.10.0", KernelFlavour::generic, ""},
      {"6.18.44-fc-v782", "6.18.44", KernelFlavour::generic, ""},
  };
  for (const auto& c : cases) {
    INFO(c.release);
    const auto k = parse_kernel_release(c.release);
    REQUIRE(k.version);
    CHECK(k.version->str() == c.version);
    CHECK(k.flavour == c.flavour);
    CHECK(k.flavour_detail == c.detail);
  }
  CHECK(parse_kernel_release("6.10.0-rc3").release_candidate);
}

TEST_CASE("odd kernel strings never crash and are marked unparseable") {
  for (const char* bad : {"", "garbage", "5", "\xff\xfe", "-5.4"}) {
    INFO(bad);
    const auto k = parse_kernel_release(bad);
    CHECK_FALSE(k.version);
    CHECK(k.flavour == KernelFlavour::unknown);
  }
  const std::string huge(100000, '9');
  CHECK(parse_kernel_release(huge).release.size() <= 256 + 3);
}

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

TEST_CASE("proc/modules: module names") {
  const auto m = parse_modules("nvidia_uvm 1 0 - Live 0x0\nnouveau 2 0 - Live 0x0\n\n");
  CHECK(m.has("nvidia_uvm"));
  CHECK(m.has("nouveau"));
  CHECK_FALSE(m.has("nvidia"));
}
