// The GSP firmware table of the knowledge layer: its rows, and the file a GPU loads by device id.
#include "gpf/knowledge/gsp_firmware.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("the GSP firmware table covers the ids from 0 without gaps, each row sourced") {
  const auto rows = gsp_firmware_table();
  REQUIRE(!rows.empty());
  CHECK(rows.front().first == 0x0000);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    INFO(std::hex << r.first << "-" << r.last);
    CHECK(r.first <= r.last);
    if (i > 0) {
      CHECK(r.first == rows[i - 1].last + 1);
    }
    CHECK(r.source.rfind("https://", 0) == 0);
    CHECK_FALSE(r.family.empty());
    CHECK((r.file.empty() || (r.file.rfind("gsp_", 0) == 0 && r.file.size() > 8 &&
                              r.file.substr(r.file.size() - 4) == ".bin")));
  }
}

TEST_CASE("which GSP firmware file a GPU loads, by PCI device id") {
  struct Case {
    std::uint16_t id;
    std::optional<std::string> file;
  };
  const Case cases[] = {
      {0x1DB4, ""},              // V100 (Volta): no GSP
      {0x1B06, ""},              // GTX 1080 Ti (Pascal)
      {0x1EB8, "gsp_tu10x.bin"}, // T4 (Turing)
      {0x2182, "gsp_tu10x.bin"}, // GTX 1660 Ti (TU116)
      {0x20B0, "gsp_tu10x.bin"}, // A100 SXM (GA100)
      {0x2204, "gsp_ga10x.bin"}, // RTX 3090 (GA102)
      {0x2330, "gsp_ga10x.bin"}, // H100 SXM (GH100)
      {0x26B9, "gsp_ga10x.bin"}, // L40S (AD102)
      {0x2901, "gsp_ga10x.bin"}, // B200 (GB100)
      {0x2B85, "gsp_ga10x.bin"}, // RTX 5090 (GB202)
      {0x3182, std::nullopt},    // beyond the table: unknown
  };
  for (const auto& c : cases) {
    INFO(std::hex << c.id);
    CHECK(gsp_firmware_for_device(c.id) == c.file);
  }
}
