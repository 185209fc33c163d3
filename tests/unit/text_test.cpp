#include "gpf/util/tenths.hpp"
#include "gpf/util/text.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("every PCI address form normalises to dddd:bb:dd.f") {
  const std::pair<const char*, const char*> cases[] = {
      {"PCI:0000:3b:00", "0000:3b:00.0"}, {"0000:3b:00.0", "0000:3b:00.0"},
      {"0000:3B:00.0", "0000:3b:00.0"},   {"00000000:3b:00.0", "0000:3b:00.0"},
      {"3b:00.0", "0000:3b:00.0"},        {"0000:3b:00", "0000:3b:00.0"},
      {"0001:af:1f.7", "0001:af:1f.7"},
  };
  for (const auto& [in, out] : cases) {
    INFO(in);
    REQUIRE(normalize_bus_id(in));
    CHECK(*normalize_bus_id(in) == out);
  }
}

TEST_CASE("garbage PCI addresses are rejected") {
  for (const char* bad :
       {"", "zz:00.0", "0000:3b:00.9", "0000:3b:20.0", "1:2:3:4", "0000:3bb:00.0", "PCI:"}) {
    INFO(bad);
    CHECK_FALSE(normalize_bus_id(bad));
  }
}

TEST_CASE("to_valid_utf8 replaces invalid bytes and NUL, keeps valid text") {
  CHECK(to_valid_utf8("plain") == "plain");
  CHECK(to_valid_utf8("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(to_valid_utf8("a\xFF"
                      "b") == "a\xEF\xBF\xBD"
                              "b");
  CHECK(to_valid_utf8(std::string("a\0b", 3)) == "a\xEF\xBF\xBD"
                                                 "b");
  CHECK(to_valid_utf8("\xC3") == "\xEF\xBF\xBD"); // truncated sequence
  CHECK(to_valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"); // surrogate
  CHECK(to_valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                 // overlong
}

TEST_CASE("quote_evidence caps length on a character boundary") {
  const std::string long_text(2000, 'x');
  CHECK(quote_evidence(long_text, 100).size() == 100 + 3);
  CHECK(quote_evidence("\xC3\xA9\xC3\xA9", 3) == "\xC3\xA9\xE2\x80\xA6");
}

TEST_CASE("printable shows control characters instead of obeying them") {
  CHECK(printable("plain \xC3\xA9 text\twith tab") == "plain \xC3\xA9 text\twith tab");
  CHECK(printable("\x1b[2Jclear") == "\\x1b[2Jclear");
  CHECK(printable("one\nPASS forged\r") == "one\\x0aPASS forged\\x0d");
  CHECK(printable("del\x7f") == "del\\x7f");
  CHECK(printable("csi \xC2\x9b 2J") == "csi \\u009b 2J"); // C1 CSI, U+009B
  CHECK(printable("nbsp \xC2\xA0") == "nbsp \xC2\xA0");    // U+00A0 is not a control
  CHECK(printable("bad \xFF") == "bad \xEF\xBF\xBD");      // invalid UTF-8 repaired first
}

TEST_CASE("split_lines drops CR and the final empty line") {
  const auto lines = split_lines("a\r\nb\n\nc\n");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "a");
  CHECK(lines[2].empty());
  CHECK(lines[3] == "c");
}

TEST_CASE("tenths: one fraction digit at most, printed without a needless .0") {
  CHECK(parse_tenths("16.0") == 160u);
  CHECK(parse_tenths(" 2.5\n") == 25u);
  CHECK(parse_tenths("400") == 4000u);
  CHECK_FALSE(parse_tenths("2.55"));
  CHECK_FALSE(parse_tenths(".5"));
  CHECK_FALSE(parse_tenths("1234567"));
  CHECK(tenths_text(4000) == "400");
  CHECK(tenths_text(25) == "2.5");
}
