// The modules probe's parser (src/probes/parsers.cpp): module names in proc/modules.
#include "gpf/probes/parsers.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

TEST_CASE("proc/modules: module names") {
  const auto m = parse_modules("nvidia_uvm 1 0 - Live 0x0\nnouveau 2 0 - Live 0x0\n\n");
  CHECK(m.has("nvidia_uvm"));
  CHECK(m.has("nouveau"));
  CHECK_FALSE(m.has("nvidia"));
}
