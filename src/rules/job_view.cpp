#include "gpf/rules/job_view.hpp"
#include "gpf/rules/topology.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>

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

const GpuState& JobView::state(const std::string& bus_id) const {
  static const GpuState k_none;
  const auto it = state_by_bus.find(bus_id);
  return it == state_by_bus.end() ? k_none : it->second;
}

const std::string* JobView::bus_of_minor(unsigned minor) const {
  const auto it = bus_by_minor.find(minor);
  return it == bus_by_minor.end() ? nullptr : &it->second;
}

namespace {

// The processes on each GPU, from proc's holders (by the GPU's minor) and NVML's compute
// processes, one entry per pid. A pid proc names as one of NVIDIA's daemons is left out of NVML's
// list too.
void merge_gpu_users(const Facts& facts,
                     const std::unordered_map<unsigned, std::string>& bus_by_minor,
                     std::unordered_map<std::string, GpuState>& state) {
  std::unordered_set<unsigned> daemons;
  std::unordered_map<std::string, std::map<unsigned, GpuUser>> users;
  for (const auto& h : facts.topology.gpu_processes.holders) {
    const auto pid = static_cast<unsigned>(h.pid);
    if (h.nvidia_daemon) {
      daemons.insert(pid);
      continue;
    }
    for (const auto minor : h.minors) {
      if (const auto it = bus_by_minor.find(minor); it != bus_by_minor.end()) {
        auto& u = users[it->second][pid];
        u.pid = pid;
        u.comm = h.comm;
        u.in_proc = true;
      }
    }
  }
  const auto& nvml = facts.nvml;
  if (nvml.ran && nvml.init_ok()) {
    for (const auto& g : nvml.gpus) {
      if (g.bus_id.empty() || !g.processes) {
        continue;
      }
      for (const auto& p : *g.processes) {
        if (daemons.count(p.pid) != 0) {
          continue;
        }
        auto& u = users[g.bus_id][p.pid];
        u.pid = p.pid;
        u.used_bytes = p.used_bytes;
        u.in_nvml = true;
      }
    }
  }
  for (auto& [bus, by_pid] : users) {
    auto& list = state[bus].users;
    for (auto& [pid, u] : by_pid) {
      list.push_back(std::move(u));
    }
  }
}

// Each GPU's settings from CUDA, sysfs and NVML, in the order GpuState documents.
std::unordered_map<std::string, GpuState>
merge_gpu_state(const Facts& facts, const std::unordered_map<unsigned, std::string>& bus_by_minor) {
  std::unordered_map<std::string, GpuState> state;
  for (const auto& d : facts.cuda.devices) {
    if (d.compute_mode && !d.bus_id.empty()) {
      state[d.bus_id].compute_mode.push_back({*d.compute_mode, "cuda"});
    }
  }
  for (const auto& path : facts.topology.pcie.gpus) {
    for (const auto& hop : pcie_hops(facts.topology, {path.bus_id})) {
      const auto width = hop.width();
      const auto could = hop.could_width();
      if (hop.lower == path.bus_id && width && could) {
        state[path.bus_id].link_width.push_back({{*width, *could}, "sysfs"});
      }
    }
  }
  merge_gpu_users(facts, bus_by_minor, state);
  const auto& nvml = facts.nvml;
  if (nvml.ran && nvml.init_ok()) {
    for (const auto& g : nvml.gpus) {
      if (g.bus_id.empty()) {
        continue;
      }
      auto& s = state[g.bus_id];
      if (g.compute_mode) {
        s.compute_mode.push_back({*g.compute_mode, "nvml"});
      }
      if (g.pcie_width && g.pcie_width_max) {
        s.link_width.push_back({{*g.pcie_width, *g.pcie_width_max}, "nvml"});
      }
      if (g.persistence_mode) {
        s.persistence_mode.push_back({*g.persistence_mode, "nvml"});
      }
    }
  }
  return state;
}

} // namespace

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
  for (const auto& g : facts.gpus) {
    if (g.device_minor && !g.bus_id.empty()) {
      v.bus_by_minor.try_emplace(*g.device_minor, g.bus_id);
    }
  }
  v.state_by_bus = merge_gpu_state(facts, v.bus_by_minor);
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
