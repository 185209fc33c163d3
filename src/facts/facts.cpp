#include "gpf/facts/facts.hpp"

namespace gpf {

const ProbeStatus* Facts::probe(std::string_view name) const {
  for (const auto& p : probes) {
    if (p.name == name) {
      return &p;
    }
  }
  return nullptr;
}

const GpuFacts* Facts::gpu_by_bus(std::string_view bus_id) const {
  for (const auto& g : gpus) {
    if (g.bus_id == bus_id) {
      return &g;
    }
  }
  return nullptr;
}

const DeviceNodeFact* Facts::device(std::string_view path) const {
  for (const auto& d : devices) {
    if (d.path == path) {
      return &d;
    }
  }
  return nullptr;
}

bool Facts::is_wsl2() const {
  const auto* dxg = device("dev/dxg");
  return kernel.flavour == KernelFlavour::wsl2 && dxg && dxg->info.exists();
}

} // namespace gpf
