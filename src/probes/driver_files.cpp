// Probe "driver": proc/driver/nvidia/{version,params,registry,gpus/*/information} and the
// fallback sys/module/nvidia/version. Formats:
// https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-procfs.c
#include "gpf/probes/parsers.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>

namespace gpf {
namespace {
constexpr std::string_view k_proc_dir = "proc/driver/nvidia";
constexpr std::size_t k_small_file_cap = 64 * 1024;
} // namespace

ProbeStatus probe_driver(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  DriverFacts& driver = facts.driver;
  driver.loaded = host.is_directory(k_proc_dir);
  if (!driver.loaded && !host.absent(k_proc_dir)) {
    // There but not to be looked at (a parent without search permission, EMFILE, an error a
    // snapshot recorded): whether the driver is loaded is unknown, never "not loaded".
    const auto listing = host.list_dir(k_proc_dir);
    return status.fail(std::string(k_proc_dir) + ": " +
                       (listing ? std::string("not a directory") : listing.error().message));
  }
  if (!driver.loaded) {
    return status.skip(
        facts.kernel.flavour == KernelFlavour::wsl2 && host.exists("dev/dxg")
            ? "WSL2: the driver lives in Windows; /proc/driver/nvidia does not exist by design"
            : "NVIDIA driver not loaded: /proc/driver/nvidia does not exist");
  }

  const std::string version_path = std::string(k_proc_dir) + "/version";
  if (auto v = host.read_file(version_path, k_small_file_cap)) {
    if (parse_driver_version_file(v->data, driver)) {
      driver.version_source = version_path;
    } else {
      status.fail_also(version_path + ": no driver version in \"" +
                       quote_evidence(trim(v->data), 120) + "\"");
    }
  } else if (!host.absent(version_path)) {
    // Absent is not unreadable: a snapshot (or a container's /proc) without the file has the
    // driver's version from sys/module/nvidia/version below, or none; only a file that exists
    // and cannot be read fails the probe.
    status.fail_also(version_path + ": " + v.error().message);
  }
  if (!driver.version) {
    if (auto v = host.read_file("sys/module/nvidia/version", k_small_file_cap);
        v && parse_module_version_file(v->data, driver)) {
      driver.version_source = "sys/module/nvidia/version";
    }
  }

  const std::string params_path = std::string(k_proc_dir) + "/params";
  if (auto p = host.read_file(params_path, k_small_file_cap)) {
    driver.params = parse_params(p->data);
    if (auto it = driver.params.find("EnableGpuFirmware"); it != driver.params.end()) {
      driver.enable_gpu_firmware = parse_uint(it->second);
    }
  } else if (!host.absent(params_path)) {
    status.fail_also(params_path + ": " + p.error().message);
  }

  const std::string registry_path = std::string(k_proc_dir) + "/registry";
  if (auto r = host.read_file(registry_path, k_small_file_cap)) {
    driver.registry = parse_registry(r->data);
  } else if (!host.absent(registry_path)) { // some driver builds and snapshots have none
    status.fail_also(registry_path + ": " + r.error().message);
  }

  const std::string gpus_path = std::string(k_proc_dir) + "/gpus";
  auto names = host.list_dir(gpus_path);
  if (!names) {
    status.fail_also(gpus_path + ": " + names.error().message);
    return status;
  }
  for (const auto& name : *names) {
    GpuFacts gpu;
    auto bus = normalize_bus_id(name);
    if (!bus) {
      continue; // not a GPU directory
    }
    gpu.bus_id = *bus;
    const std::string info_path = gpus_path + "/" + name + "/information";
    if (auto info = host.read_file(info_path, k_small_file_cap)) {
      parse_gpu_information(info->data, gpu);
      if (!gpu.model && !gpu.device_minor) {
        gpu.error = info_path + ": no Model or Device Minor field";
      }
    } else {
      gpu.error = info_path + ": " + info.error().message;
      gpu.unreadable = true;
    }
    facts.gpus.push_back(std::move(gpu));
  }
  std::sort(facts.gpus.begin(), facts.gpus.end(),
            [](const GpuFacts& a, const GpuFacts& b) { return a.bus_id < b.bus_id; });
  return status;
}

namespace {
const ProbeRegistration k_row{{"driver", "driver files", 300, probe_driver}};
} // namespace

} // namespace gpf
