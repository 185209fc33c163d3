#include "gpf/facts/visible_devices.hpp"

#include <catch2/catch.hpp>

using namespace gpf;

namespace {
const std::vector<GpuRef> k_gpus{{"0000:18:00.0", "GPU-aaaa1111-0000"},
                                 {"0000:2a:00.0", "GPU-bbbb2222-0000"},
                                 {"0000:3a:00.0", "GPU-bbbb3333-0000"}};
}

TEST_CASE("CUDA_VISIBLE_DEVICES unset admits every GPU") {
  const auto vd = parse_visible_devices(std::nullopt, k_gpus);
  CHECK_FALSE(vd.set);
  CHECK(vd.bus_ids.size() == 3);
}

TEST_CASE("CUDA_VISIBLE_DEVICES entries as CUDA reads them") {
  struct Case {
    const char* value;
    std::vector<std::string> bus_ids;
    std::vector<std::string> ignored;
  };
  const Case cases[] = {
      {"2,0", {"0000:3a:00.0", "0000:18:00.0"}, {}},
      {"0,7,1", {"0000:18:00.0"}, {"7", "1"}},             // first invalid entry ends the list
      {"GPU-aaaa1111", {"0000:18:00.0"}, {}},              // unique prefix
      {"GPU-bbbb", {}, {"GPU-bbbb"}},                      // ambiguous prefix names nothing
      {"MIG-GPU-bbbb3333-0000/1/0", {"0000:3a:00.0"}, {}}, // MIG names its parent GPU
      {" 1 , 1 ", {"0000:2a:00.0"}, {}},                   // spaces, duplicates
      {"", {}, {}},                                        // empty: no GPU
      {"-1", {}, {"-1"}},
  };
  for (const auto& c : cases) {
    INFO(c.value);
    const auto vd = parse_visible_devices(std::string(c.value), k_gpus);
    CHECK(vd.set);
    CHECK(vd.bus_ids == c.bus_ids);
    CHECK(vd.ignored == c.ignored);
  }
}
