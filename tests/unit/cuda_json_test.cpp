// cuda.json: written from facts, read back to the same facts; bad input is an error naming the
// member, never a crash.
#include "gpf/facts/cuda_json.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

using namespace gpf;

namespace {

CudaFacts sample() {
  CudaFacts c;
  c.ran = true;
  c.source = "live";
  c.library = "libcuda.so.1";
  c.library_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14";
  c.driver_version = 12040;
  c.device_order = "PCI_BUS_ID";
  c.timeout_s = 30;
  c.wall_ms = 1234.5;
  c.enumeration_complete = true;
  c.init = {"cuInit", true, false, 210.5, std::nullopt, "", ""};
  c.enumeration_steps = {{"load", true, false, 3.0, std::nullopt, "", ""}, c.init};
  for (int i = 0; i < 2; ++i) {
    CudaDevice d;
    d.index = i;
    d.bus_id = i == 0 ? "0000:3b:00.0" : "0000:86:00.0";
    d.uuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f" + std::to_string(i);
    d.name = "NVIDIA H100 80GB HBM3";
    d.cc_major = 9;
    d.cc_minor = 0;
    d.total_mem_bytes = 85520809984ULL;
    d.compute_mode = 0;
    d.visible_as = *d.uuid;
    d.steps = {{"cuInit", true, false, 200, std::nullopt, "", ""}};
    d.usable = i == 0;
    if (i == 1) {
      d.steps.push_back({"primary_context", false, true, 18000, std::nullopt, "", ""});
    }
    d.derive_timing();
    c.devices.push_back(d);
  }
  c.multi_gpu_ran = true;
  c.multi_gpu_ok = false;
  c.multi_gpu_devices = {0, 1};
  c.peers = {{0, 1, true, false, false, 5.5, "CUDA_ERROR_ILLEGAL_ADDRESS", 700,
              "cuMemcpyPeer: an illegal memory access", std::nullopt, ""},
             {1, 0, true, false, true, 9000, "", std::nullopt, "", std::nullopt, ""}};
  return c;
}

} // namespace

TEST_CASE("cuda.json round trip keeps every fact") {
  const CudaFacts c = sample();
  const auto text = cuda_facts_json(c).dump(2);
  auto back = parse_cuda_json(text);
  REQUIRE(back);
  const CudaFacts& r = *back;
  CHECK(r.ran);
  CHECK(r.library_path == c.library_path);
  CHECK(r.driver_version == 12040);
  CHECK(r.device_order == "PCI_BUS_ID");
  CHECK(r.enumeration_complete);
  CHECK(r.init.name == "cuInit");
  CHECK(r.init.duration_ms == Approx(210.5));
  REQUIRE(r.devices.size() == 2);
  CHECK(r.devices[1].bus_id == "0000:86:00.0");
  CHECK(r.devices[1].uuid == c.devices[1].uuid);
  CHECK(r.devices[1].cc_major == 9);
  CHECK(r.devices[1].total_mem_bytes == 85520809984ULL);
  CHECK_FALSE(r.devices[1].usable);
  REQUIRE(r.devices[1].steps.size() == 2);
  CHECK(r.devices[1].steps[1].timed_out);
  CHECK(r.multi_gpu_ok == false);
  REQUIRE(r.peers.size() == 2);
  CHECK(r.peers[0].error_code == 700);
  CHECK(r.peers[1].timed_out);
  // Writing the read-back facts gives the same document.
  CHECK(cuda_facts_json(r).dump() == cuda_facts_json(c).dump());
}

TEST_CASE("cuda.json carries the CUDA version and the multi-GPU matrix") {
  const auto j = cuda_facts_json(sample());
  CHECK(j.at("driver_cuda_version") == "12.4");
  CHECK(j.at("devices").at(0).at("compute_capability") == "9.0");
  const auto& m = j.at("multi_gpu").at("matrix");
  CHECK(m.dump() == R"([["-","failed"],["hung","-"]])");
}

TEST_CASE("cuda.json: bad input is an error naming the member") {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"", "not valid JSON"},
      {"{\"devices\": [", "not valid JSON"},
      {"[]", "not an object"},
      {"{\"schema_version\": 7}", "schema_version 7"},
      {"{\"ran\": \"yes\"}", "ran is not true or false"},
      {"{\"devices\": {}}", "devices is not an array"},
      {"{\"devices\": [{\"bus_id\": 17}]}", "devices[0].bus_id is not a string"},
      {"{\"devices\": [{\"steps\": [{\"duration_ms\": -1}]}]}", "devices[0].steps[0].duration_ms"},
      {"{\"driver_version\": 99999999999}", "driver_version is not an integer"},
      {"{\"devices\": [{}, {}], \"multi_gpu\": {\"devices\": [0, 5]}}",
       "names CUDA device 5 but only 2"},
      {"{\"multi_gpu\": {\"peers\": [3]}}", "multi_gpu.peers[0] is not an object"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto r = parse_cuda_json(c.text);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::Contains(c.error));
  }
}

TEST_CASE("cuda.json: unknown members are ignored, missing ones keep defaults") {
  auto r = parse_cuda_json("{\"future\": 1, \"load_error\": \"x\"}");
  REQUIRE(r);
  CHECK(r->ran);
  CHECK(r->load_error == "x");
  CHECK_FALSE(r->enumeration_complete);
  CHECK(r->devices.empty());
  auto s = parse_cuda_json("{\"ran\": false}");
  REQUIRE(s);
  CHECK_FALSE(s->ran);
}

TEST_CASE("cuda.json: long step lists are cut on reading, keeping the first failure") {
  CudaFacts c = sample();
  c.enumeration_steps.clear();
  for (int i = 0; i < 1000; ++i) {
    c.enumeration_steps.push_back(
        {"step" + std::to_string(i), true, false, 1, std::nullopt, "", ""});
  }
  c.enumeration_steps[600] = {"cuDeviceGet", false, false, 1, 101, "CUDA_ERROR_INVALID_DEVICE", ""};
  c.enumeration_steps[700] = {"cuDeviceGet", false, false, 1, 999, "CUDA_ERROR_UNKNOWN", ""};
  c.devices[1].steps.assign(300, c.devices[1].steps.front());
  auto back = parse_cuda_json(cuda_facts_json(c).dump());
  REQUIRE(back);
  const auto& steps = back->enumeration_steps;
  REQUIRE(steps.size() == k_max_replayed_steps + 1);
  CHECK(steps[k_max_replayed_steps - 1].name == "step255");
  CHECK(steps.back().error_code == 101); // the first failure beyond the cut, not a later one
  CHECK(back->devices[0].steps.size() == 1);
  CHECK(back->devices[1].steps.size() == k_max_replayed_steps);
  CHECK(back->steps_not_kept == (1000 - k_max_replayed_steps - 1) + (300 - k_max_replayed_steps));
}

namespace {

CudaStep timed(const char* name, double ms, bool ok = true) {
  return {name, ok, false, ms, std::nullopt, ok ? "" : "CUDA_ERROR_UNKNOWN", ""};
}

} // namespace

TEST_CASE("CUDA init and start-up times: computed once from the steps, none when one is missing") {
  CudaDevice d;
  d.steps = {timed("load", 2),       timed("cuInit", 100),
             timed("device_get", 3), timed("primary_context", 150),
             timed("alloc", 40),     timed("copy_roundtrip", 7)};
  d.derive_timing();
  CHECK(d.init_ms == Approx(250));    // cuInit + primary_context
  CHECK(d.startup_ms == Approx(255)); // + load + device_get; alloc and copy are not start-up

  const auto derived = [](std::vector<CudaStep> steps) {
    CudaDevice e;
    e.steps = std::move(steps);
    e.derive_timing();
    return std::pair{e.init_ms, e.startup_ms};
  };
  // no device_get: the init time stands, the start-up time is unknown rather than too short
  auto [init, startup] =
      derived({timed("load", 2), timed("cuInit", 100), timed("primary_context", 150)});
  CHECK(init == Approx(250));
  CHECK_FALSE(startup);
  // a failed or hung context is how long it ran until it stopped: no figure
  std::tie(init, startup) = derived({timed("load", 2), timed("cuInit", 100), timed("device_get", 3),
                                     timed("primary_context", 1195, false)});
  CHECK_FALSE(init);
  CHECK_FALSE(startup);
  CudaStep hung = timed("primary_context", 17400, false);
  hung.timed_out = true;
  std::tie(init, startup) = derived({timed("cuInit", 100), hung});
  CHECK_FALSE(init);
  // a step twice (a second device_get for a wrong device) is not one start-up
  std::tie(init, startup) = derived({timed("load", 2), timed("cuInit", 100), timed("device_get", 3),
                                     timed("primary_context", 150), timed("device_get", 3)});
  CHECK(init == Approx(250));
  CHECK_FALSE(startup);
  std::tie(init, startup) = derived({});
  CHECK_FALSE(init);
  CHECK_FALSE(startup);
}

TEST_CASE("cuda.json: the times are written, and recomputed from the steps on reading") {
  CudaFacts c = sample();
  c.devices[0].steps = {timed("load", 2), timed("cuInit", 100), timed("device_get", 3),
                        timed("primary_context", 150)};
  c.devices[0].derive_timing();
  auto j = cuda_facts_json(c);
  CHECK(j.at("devices").at(0).at("init_ms") == 250);
  CHECK(j.at("devices").at(0).at("startup_ms") == 255);
  CHECK(j.at("devices").at(1).at("init_ms").is_null()); // its context hung
  CHECK(j.at("devices").at(1).at("startup_ms").is_null());
  // a file's own figures are not trusted: the steps decide (a snapshot edited by hand, or one
  // written before the figures existed)
  j["devices"][0]["startup_ms"] = 1;
  j["devices"][1]["init_ms"] = 99;
  j["devices"][0].erase("init_ms");
  auto back = parse_cuda_json(j.dump());
  REQUIRE(back);
  CHECK(back->devices[0].init_ms == Approx(250));
  CHECK(back->devices[0].startup_ms == Approx(255));
  CHECK_FALSE(back->devices[1].init_ms);
}

namespace {

// Every member of `old` is in `now` with the same value: a file written by an older version
// reads back without losing what it said.
void check_kept(const nlohmann::json& old, const nlohmann::json& now, const std::string& path) {
  INFO(path);
  if (old.is_object()) {
    REQUIRE(now.is_object());
    for (const auto& [key, value] : old.items()) {
      REQUIRE(now.contains(key));
      check_kept(value, now.at(key), path + "." + key);
    }
  } else if (old.is_array()) {
    REQUIRE(now.is_array());
    REQUIRE(now.size() == old.size());
    for (std::size_t i = 0; i < old.size(); ++i) {
      check_kept(old[i], now[i], path + "[" + std::to_string(i) + "]");
    }
  } else if (old.is_number()) {
    CHECK(now.get<double>() == Approx(old.get<double>()));
  } else {
    CHECK(now == old);
  }
}

// Every member of the CUDA facts set away from its default (a failed step and a failed peer
// copy carry their error members, which are written only for failures).
CudaFacts every_member() {
  CudaFacts c;
  c.ran = true;
  c.source = "live";
  c.library = "/opt/libcuda.so.1";
  c.library_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.14";
  c.load_error = "dlopen: no";
  c.missing_symbols = {"cuInit"};
  c.missing_optional_symbols = {"cuMemcpyPeer"};
  c.driver_version = 12040;
  c.init = {"cuInit", true, false, 210.5, std::nullopt, "", ""};
  c.enumeration_steps = {{"load", true, false, 3.0, std::nullopt, "", ""}, c.init};
  c.device_order = "PCI_BUS_ID";
  CudaDevice d;
  d.index = 0;
  d.bus_id = "0000:3b:00.0";
  d.uuid = "GPU-8932f937-d72c-4106-c12f-20bd9faed9f0";
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.total_mem_bytes = 85520809984ULL;
  d.compute_mode = 3;
  d.steps = {{"load", true, false, 2, std::nullopt, "", ""},
             {"cuInit", true, false, 100, std::nullopt, "", ""},
             {"device_get", true, false, 3, std::nullopt, "", ""},
             {"primary_context", false, true, 17400, 46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
              "cuDevicePrimaryCtxRetain: busy"}};
  d.usable = false;
  d.in_use = true;
  d.holders = {"4242 (python3)"};
  d.visible_as = *d.uuid;
  d.derive_timing();
  c.devices = {d, d};
  c.devices[1].index = 1;
  c.devices[1].bus_id = "0000:86:00.0";
  c.devices[1].steps.back() = {"primary_context", true, false, 150, std::nullopt, "", ""};
  c.devices[1].usable = true;
  c.devices[1].in_use = false;
  c.devices[1].holders.clear();
  c.devices[1].derive_timing();
  c.devices[1].h2d_gbps = 24.5;
  c.devices[1].d2h_gbps = 25.75;
  c.devices[0].bandwidth_not_checked = "in use by 4242 (python3)";
  c.devices[1].active.ran = true;
  c.devices[1].active.first_kernel_ms = 12.5;
  c.devices[1].active.memory_bytes = 1ull << 30;
  c.devices[1].active.patterns = {"address", "random (seed 0x00000001)"};
  c.devices[1].active.memory_mismatches = 3;
  c.devices[1].active.memory_errors = {{"address", 0x48d0, 0x7f0000048d0ull, 0x1234, 0x1214}};
  c.devices[1].active.checksum = "0123456789abcdef";
  c.devices[1].active.integer_mismatches = 1;
  c.devices[1].active.integer_error = "thread 77: expected 0x00000001, got 0x00001001";
  c.devices[0].fabric = {true,
                         1,
                         true,
                         false,
                         "",
                         2u << 20,
                         "cuMemCreate",
                         800,
                         "CUDA_ERROR_NOT_PERMITTED",
                         "operation not permitted"};
  c.devices[1].fabric = {true, 0, false, false, "no fabric handles", 0, "", std::nullopt, "", ""};
  c.active = {true, 2, 0.25, 2ull << 30, ""};
  c.multi_gpu_ran = true;
  c.multi_gpu_ok = false;
  c.multi_gpu_devices = {0, 1};
  c.multi_gpu_steps = {{"ctx 0", true, false, 4, std::nullopt, "", ""}};
  c.peers = {
      {0, 1, true, false, true, 5.5, "CUDA_ERROR_ILLEGAL_ADDRESS", 700, "illegal", std::nullopt,
       ""},
      {1, 0, true, true, false, 9, "", std::nullopt, "", 47.125, "bandwidth not measured: test"}};
  c.bandwidth = {true, 128u << 20, 64u << 20, 3, ""};
  c.deadline_hit = true;
  c.timeout_s = 30;
  c.wall_ms = 1234.5;
  c.child_error = "the enumeration child died";
  c.isolation = ChildIsolation{false, "prctl: not permitted"};
  c.enumeration_complete = true;
  return c;
}

} // namespace

TEST_CASE("cuda.json: one field list writes and reads every member of the CUDA facts") {
  const CudaFacts c = every_member();
  REQUIRE(c.devices[0].startup_ms == std::nullopt); // its context failed
  REQUIRE(c.devices[1].startup_ms == Approx(255));
  const auto back = parse_cuda_json(cuda_facts_json(c).dump());
  REQUIRE(back);
  CHECK(*back == c);
  // one member at a time, so that a failure names it
  CHECK(back->devices == c.devices);
  CHECK(back->peers == c.peers);
  CHECK(back->isolation == c.isolation);
  CHECK(back->multi_gpu_steps == c.multi_gpu_steps);
}

TEST_CASE("cuda.json: files of an older version still read, keeping every member they have") {
  for (const char* fixture : {"cuda-replay-gpu-hung", "topo-acs-p2p-hang"}) {
    INFO(fixture);
    std::ifstream in(std::string(GPF_SOURCE_DIR) + "/tests/fixtures/" + fixture + "/cuda.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(!text.empty());
    const auto facts = parse_cuda_json(text);
    REQUIRE(facts);
    CHECK_FALSE(facts->devices.empty());
    check_kept(nlohmann::json::parse(text), nlohmann::json::parse(cuda_facts_json(*facts).dump()),
               "cuda.json");
  }
}
