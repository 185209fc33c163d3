#pragma once
// Pure parse functions of the foundation probes: text in, typed facts out. They never throw and
// never read the host; the probes in src/probes/ do the reading. Tested on inline strings.
#include "gpf/facts/facts.hpp"

#include <string_view>

namespace gpf {

// uname -r text → version and flavour. Garbage gives version nullopt and flavour unknown.
KernelFacts parse_kernel_release(std::string_view release);

// /proc/driver/nvidia/version (first line "NVRM version: ...") → version, flavour, the line.
// Returns false when no version could be found.
bool parse_driver_version_file(std::string_view text, DriverFacts& out);
// /sys/module/nvidia/version: just the version.
bool parse_module_version_file(std::string_view text, DriverFacts& out);
// /proc/driver/nvidia/params: "Name: value" lines (strings quoted) → map, values unquoted.
std::map<std::string, std::string> parse_params(std::string_view text);
// /proc/driver/nvidia/registry: `Binary: "k1, k2"`.
RegistryFacts parse_registry(std::string_view text);
// /proc/driver/nvidia/gpus/<bus>/information → the GPU's fields (bus_id is not touched).
void parse_gpu_information(std::string_view text, GpuFacts& out);
// /proc/modules → module names (first field of each line).
ModuleFacts parse_modules(std::string_view text);

} // namespace gpf
