#include "gpf/rules/compat_view.hpp"

#include <unordered_map>
#include <unordered_set>

#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {

std::vector<GpuArch> gpu_archs(const Facts& facts, const Matrix& matrix) {
  std::vector<GpuArch> out;
  // each CUDA device's bus id normalised once, not once per GPU (quadratic at 2000 GPUs)
  std::unordered_map<std::string, const CudaDevice*> by_bus;
  for (const auto& d : facts.cuda.devices) {
    if (const auto bus = normalize_bus_id(d.bus_id)) {
      by_bus.try_emplace(*bus, &d);
    }
  }
  const auto cuda_device = [&by_bus](const std::string& bus) -> const CudaDevice* {
    const auto it = by_bus.find(bus);
    return it == by_bus.end() ? nullptr : it->second;
  };
  const auto fill = [&matrix](GpuArch& g, const CudaDevice* dev) {
    if (!g.model.empty()) {
      g.model_row = matrix.gpu_model(g.model);
    }
    if (dev && dev->cc_major && dev->cc_minor && *dev->cc_major >= 0 && *dev->cc_minor >= 0) {
      g.cc = Version(
          {static_cast<unsigned long>(*dev->cc_major), static_cast<unsigned long>(*dev->cc_minor)});
      g.cc_evidence = fmt::format("CUDA device {} ({}): compute capability {}", dev->index,
                                  dev->bus_id, g.cc->str());
    } else if (g.model_row) {
      g.cc = g.model_row->cc;
      g.cc_evidence =
          fmt::format("/proc/driver/nvidia/gpus/{}/information: Model: {}", g.bus_id, g.model);
    }
    if (g.cc) {
      g.driver_row = matrix.driver_arch(*g.cc);
      if (const auto* row = matrix.cuda_arch(*g.cc)) {
        g.arch = row->arch;
      } else if (g.driver_row) {
        g.arch = g.driver_row->arch;
      }
    }
  };
  for (const auto& gpu : facts.gpus) {
    GpuArch g;
    g.bus_id = gpu.bus_id;
    g.model = gpu.model.value_or("");
    fill(g, cuda_device(gpu.bus_id));
    out.push_back(std::move(g));
  }
  std::unordered_set<std::string> driver_buses;
  for (const auto& gpu : facts.gpus) {
    driver_buses.insert(gpu.bus_id);
  }
  for (const auto& dev : facts.cuda.devices) {
    const auto bus = normalize_bus_id(dev.bus_id);
    if (!bus || driver_buses.count(*bus) != 0) {
      continue;
    }
    GpuArch g;
    g.bus_id = *bus;
    g.model = dev.name.value_or("");
    fill(g, &dev);
    out.push_back(std::move(g));
  }
  return out;
}

DriverView driver_view(const Facts& facts) {
  DriverView v;
  const auto& d = facts.driver;
  if (d.version) {
    v.kernel_module = d.version;
    v.kernel_module_text = d.version_text;
    v.kernel_module_evidence = d.version_line.empty()
                                   ? fmt::format("/{}: {}", d.version_source, d.version_text)
                                   : "/proc/driver/nvidia/version: " + d.version_line;
  }
  const auto& lib = facts.compat.libcuda;
  v.forward_compat = lib.in_compat && !lib.in_stubs && lib.version && v.kernel_module &&
                     *lib.version > *v.kernel_module;
  if (v.forward_compat) {
    v.effective = lib.version;
    v.effective_text = lib.version_text;
  } else if (v.kernel_module) {
    v.effective = v.kernel_module;
    v.effective_text = v.kernel_module_text;
  }
  if (facts.cuda.ran && facts.cuda.driver_version && *facts.cuda.driver_version > 0) {
    v.cuda_reported = Version::from_cuda_number(*facts.cuda.driver_version);
  }
  return v;
}

std::string library_evidence(const DriverLibrary& lib) {
  if (!lib.path) {
    return lib.soname + ": not found";
  }
  std::string out = lib.soname + ": " + *lib.path;
  if (lib.resolved && *lib.resolved != *lib.path) {
    out += " -> " + *lib.resolved;
  }
  return out + " (via " + lib.via + ")";
}

} // namespace gpf
