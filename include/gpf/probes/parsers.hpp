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
// /sys/kernel/security/lockdown ("none [integrity] confidentiality") → the bracketed, active mode;
// nullopt when no mode is bracketed.
std::optional<std::string> parse_lockdown(std::string_view text);
// The SecureBoot EFI variable as efivarfs gives it: 4 attribute bytes, then the value (1 = on,
// 0 = off); nullopt when it holds fewer than 5 bytes or another value.
std::optional<bool> parse_secure_boot_variable(std::string_view bytes);
// A kernel module file name → the NVIDIA module it holds ("nvidia-uvm.ko.zst" → "nvidia-uvm",
// "nvidia_drm.ko" → "nvidia-drm"); nullopt for any other module (nvidiafb.ko, forcedeth.ko).
std::optional<std::string> nvidia_module_name(std::string_view file_name);
// The last `count` lines of a build log, without blank lines; its first compiler errors first.
std::vector<std::string> build_log_tail(std::string_view text, std::size_t count);

} // namespace gpf
