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

TEST_CASE("MIG entries of CUDA_VISIBLE_DEVICES") {
  const auto m = parse_mig_reference(" MIG-GPU-8932f937-d72c-4106-c12f-20bd9faed9f6/3/0 ");
  REQUIRE(m);
  CHECK(m->gpu_uuid == "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  CHECK(m->gpu_instance == 3u);
  CHECK(m->compute_instance == 0u);
  CHECK_FALSE(parse_mig_reference("MIG-8932f937-d72c-4106-c12f-20bd9faed9f6")); // the MIG-UUID form
  CHECK_FALSE(parse_mig_reference("MIG-GPU-8932f937/3"));
  CHECK_FALSE(parse_mig_reference("MIG-GPU-8932f937/x/0"));
  CHECK_FALSE(parse_mig_reference("GPU-8932f937"));
  CHECK_FALSE(parse_mig_reference("0"));
}
