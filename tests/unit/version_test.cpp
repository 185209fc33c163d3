#include "gpf/util/version.hpp"

#include <catch2/catch.hpp>

using gpf::Version;

TEST_CASE("versions compare per component as numbers") {
  struct Case {
    const char* a;
    const char* b;
    int order; // -1 a<b, 0 equal, 1 a>b
  };
  const Case cases[] = {
      {"570.26", "570.124.06", -1}, {"525.60.13", "525.60.13", 0}, {"525.60.12", "525.60.13", -1},
      {"455.32", "455.32.0", 0},    {"5.4.0", "5.5", -1},          {"10.0", "9.2", 1},
      {"580.65.06", "580.65.6", 0}, {"4.18.0", "5.5.0", -1},
  };
  for (const auto& c : cases) {
    INFO(c.a << " vs " << c.b);
    const auto a = Version::parse(c.a);
    const auto b = Version::parse(c.b);
    REQUIRE(a);
    REQUIRE(b);
    const auto cmp = *a <=> *b;
    CHECK((cmp < 0 ? -1 : cmp > 0 ? 1 : 0) == c.order);
  }
}

TEST_CASE("version parse stops at non-version text") {
  CHECK(Version::parse("5.15.0-91-generic")->str() == "5.15.0");
  CHECK(Version::parse("4.18.0-553.el8_10.x86_64")->str() == "4.18.0");
  CHECK(Version::parse("6.1.0-rc3")->str() == "6.1.0");
  CHECK_FALSE(Version::parse("garbage"));
  CHECK_FALSE(Version::parse(""));
  CHECK(Version::parse("99999999999999999999.1")); // does not overflow or throw
}

TEST_CASE("version find_in finds the first dotted number") {
  CHECK(Version::find_in("NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct")->str() == "384.98");
  CHECK_FALSE(Version::find_in("no version here 12"));
}

TEST_CASE("version parse_exact takes only a whole dotted number") {
  CHECK(Version::parse_exact("535.261.03")->str() == "535.261.3");
  CHECK(Version::parse_exact("12.2")->str() == "12.2");
  CHECK(Version::parse_exact("550")->str() == "550");
  for (const char* bad : {"", "1..2", "1.", ".1", "v1", "5.4.0-150-generic", "12.2 ", "12,2"}) {
    INFO(bad);
    CHECK_FALSE(Version::parse_exact(bad));
  }
}

TEST_CASE("version from and to CUDA's integer form") {
  CHECK(Version::from_cuda_number(12020).str() == "12.2");
  CHECK(Version::from_cuda_number(11080) == *Version::parse("11.8"));
  CHECK(Version::from_cuda_number(-1) == *Version::parse("0.0"));
  CHECK(Version::parse("12.4")->cuda_number() == 12040);
  CHECK(Version::from_cuda_number(Version::parse("13.0")->cuda_number()).str() == "13.0");
}
