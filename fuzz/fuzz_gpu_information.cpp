// libFuzzer target: proc/driver/nvidia/gpus/*/information.
// Properties: no crash; every string kept is valid UTF-8.
#include "fuzz_support.hpp"

#include "gpf/probes/parsers.hpp"

namespace {
void check(const std::optional<std::string>& s, const char* what) {
  if (s) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(*s), what);
  }
}
} // namespace

GPF_FUZZ_TARGET(gpu_information) {
  gpf::GpuFacts gpu;
  gpu.bus_id = "0000:01:00.0";
  gpf::parse_gpu_information(gpf::fuzz::as_text(data, size), gpu);
  check(gpu.model, "model is valid UTF-8");
  check(gpu.uuid, "uuid is valid UTF-8");
  check(gpu.vbios, "vbios is valid UTF-8");
  check(gpu.firmware, "firmware is valid UTF-8");
  check(gpu.bus_location, "bus location is valid UTF-8");
  return 0;
}
