#include "gpf/facts/visible_devices.hpp"

#include "gpf/util/text.hpp"

#include <algorithm>

namespace gpf {
namespace {

// The GPU an entry names, or nullopt. UUID prefixes must be unique.
std::optional<std::string> resolve_entry(std::string_view entry, const std::vector<GpuRef>& gpus) {
  if (entry.empty()) {
    return std::nullopt;
  }
  if (auto index = parse_uint(entry)) {
    return *index < gpus.size() ? std::optional(gpus[*index].bus_id) : std::nullopt;
  }
  std::string_view uuid = entry;
  const bool mig = starts_with(uuid, "MIG-");
  if (starts_with(uuid, "MIG-GPU-")) {
    uuid.remove_prefix(4);
    uuid = uuid.substr(0, uuid.find('/')); // MIG-<GPU-UUID>/<gi>/<ci> names its parent GPU
  } else if (!mig && !starts_with(uuid, "GPU-")) {
    return std::nullopt;
  }
  const std::string prefix = to_lower(uuid);
  std::optional<std::string> match;
  for (const auto& gpu : gpus) {
    if (gpu.uuid && starts_with(to_lower(*gpu.uuid), prefix)) {
      if (match) {
        return std::nullopt; // ambiguous prefix
      }
      match = gpu.bus_id;
    }
  }
  // A MIG-<uuid> that no listed device carries: its GPU is unknown here, not absent.
  return !match && mig && !starts_with(entry, "MIG-GPU-") ? std::optional<std::string>("") : match;
}

} // namespace

VisibleDevices parse_visible_devices(const std::optional<std::string>& value,
                                     const std::vector<GpuRef>& gpus) {
  VisibleDevices vd;
  if (!value) {
    for (const auto& g : gpus) {
      vd.bus_ids.push_back(g.bus_id);
    }
    return vd;
  }
  vd.set = true;
  vd.raw = *value;
  if (trim(*value).empty()) {
    return vd;
  }
  const auto entries = split(*value, ',');
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto bus = resolve_entry(trim(entries[i]), gpus);
    if (!bus) {
      for (std::size_t k = i; k < entries.size(); ++k) {
        vd.ignored.emplace_back(trim(entries[k]));
      }
      break;
    }
    vd.entries.emplace_back(trim(entries[i]), *bus);
    vd.mig = vd.mig || starts_with(trim(entries[i]), "MIG-");
    if (!bus->empty() &&
        std::find(vd.bus_ids.begin(), vd.bus_ids.end(), *bus) == vd.bus_ids.end()) {
      vd.bus_ids.push_back(*bus);
    }
  }
  return vd;
}

} // namespace gpf
