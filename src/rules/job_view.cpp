#include "gpf/rules/job_view.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {

std::optional<std::size_t> JobView::index_of(const std::string& bus_id) const {
  const auto it = index_by_bus.find(bus_id);
  return it == index_by_bus.end() ? std::nullopt : std::optional<std::size_t>(it->second);
}

bool JobView::admits(const std::string& bus_id) const {
  return admitted.count(bus_id) != 0;
}

std::string JobView::label(const std::string& bus_id) const {
  const auto name = name_by_bus.find(bus_id);
  const bool named = name != name_by_bus.end();
  if (const auto index = index_of(bus_id)) {
    return named ? fmt::format("GPU {} ({}, {})", *index, bus_id, name->second)
                 : fmt::format("GPU {} ({})", *index, bus_id);
  }
  return named ? fmt::format("GPU {} ({})", bus_id, name->second) : "GPU " + bus_id;
}

JobView derive_job_view(const Facts& facts, const Matrix& matrix) {
  JobView v;
  // Once CUDA enumerated devices, its order (under the job's CUDA_DEVICE_ORDER) is the index space;
  // its indices need CUDA_DEVICE_ORDER only when the job itself set PCI_BUS_ID (restated so the
  // recommendation stands alone). The driver's list is in PCI order.
  const bool cuda_order = facts.cuda.enumerated() && !facts.cuda.devices.empty();
  if (cuda_order) {
    for (const auto& d : facts.cuda.devices) {
      v.index_space.push_back({d.bus_id, d.uuid});
    }
  } else {
    for (const auto& gpu : facts.gpus) {
      v.index_space.push_back({gpu.bus_id, gpu.uuid});
    }
  }
  v.pci_order = !cuda_order || facts.cuda.device_order == "PCI_BUS_ID";
  v.visible = parse_visible_devices(facts.env.get("CUDA_VISIBLE_DEVICES"), v.index_space);
  for (std::size_t i = 0; i < v.index_space.size(); ++i) {
    v.index_by_bus.try_emplace(v.index_space[i].bus_id, i);
  }
  v.admitted.insert(v.visible.bus_ids.begin(), v.visible.bus_ids.end());
  v.driver = driver_view(facts);
  v.archs = gpu_archs(facts, matrix);
  v.matrix = &matrix;
  // Names for label(): the model where the driver or CUDA gave one, else a known UUID.
  for (const auto& g : v.archs) {
    if (!g.model.empty()) {
      v.name_by_bus.try_emplace(g.bus_id, g.model);
    }
  }
  for (const auto& g : v.index_space) {
    if (g.uuid) {
      v.name_by_bus.try_emplace(g.bus_id, *g.uuid);
    }
  }
  for (const auto& [bus, uuid] : facts.log.gpu_uuids) {
    v.name_by_bus.try_emplace(bus, uuid);
  }
  return v;
}

} // namespace gpf
