#include "gpf/facts/visible_devices.hpp"

#include "gpf/util/text.hpp"
#include "gpf/util/uuid_index.hpp"

#include <algorithm>
#include <unordered_set>

namespace gpf {
namespace {

// The GPU an entry names, or nullopt. UUID prefixes must be unique.
std::optional<std::string> resolve_entry(std::string_view entry, const std::vector<GpuRef>& gpus,
                                         const UuidIndex& uuids) {
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
  if (auto at = uuids.unique(uuid)) {
    return gpus[*at].bus_id;
  }
  // A MIG-<uuid> that no listed device carries: its GPU is unknown here, not absent.
  if (mig && !starts_with(entry, "MIG-GPU-")) {
    return std::string();
  }
  return std::nullopt; // none, or an ambiguous prefix
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
  UuidIndex uuids; // one index, not a scan of every GPU per entry
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].uuid) {
      uuids.add(*gpus[i].uuid, i);
    }
  }
  uuids.build();
  std::unordered_set<std::string> admitted;
  const auto entries = split(*value, ',');
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto bus = resolve_entry(trim(entries[i]), gpus, uuids);
    if (!bus) {
      for (std::size_t k = i; k < entries.size(); ++k) {
        vd.ignored.emplace_back(trim(entries[k]));
      }
      break;
    }
    vd.entries.emplace_back(trim(entries[i]), *bus);
    vd.mig = vd.mig || starts_with(trim(entries[i]), "MIG-");
    if (!bus->empty() && admitted.insert(*bus).second) {
      vd.bus_ids.push_back(*bus);
    }
  }
  return vd;
}

std::optional<MigReference> parse_mig_reference(std::string_view entry) {
  entry = trim(entry);
  if (!starts_with(entry, "MIG-GPU-")) {
    return std::nullopt;
  }
  const auto parts = split(entry.substr(4), '/');
  if (parts.size() != 3) {
    return std::nullopt;
  }
  const auto gi = parse_uint(parts[1]);
  const auto ci = parse_uint(parts[2]);
  if (!gi || !ci || parts[0].size() <= 4) {
    return std::nullopt;
  }
  return MigReference{std::string(parts[0]), static_cast<unsigned>(*gi),
                      static_cast<unsigned>(*ci)};
}

} // namespace gpf
