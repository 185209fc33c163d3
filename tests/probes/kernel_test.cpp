// The kernel probe's parser (src/probes/parsers.cpp): kernel releases, their version and
// flavour, on inline strings.
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
