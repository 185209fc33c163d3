// The probes' names by handle (include/gpf/facts/probe_ids.hpp).
#include "gpf/facts/probe_ids.hpp"

#include "gpf/util/enum_names.hpp"

namespace gpf {

std::string_view probe_id_name(ProbeId id) {
  static constexpr auto k_names = enum_names<k_last_probe_id>(
      {"kernel", "modules", "module-load", "compat", "kernel-log", "driver", "devices", "iommu",
       "pcie", "mig", "firmware", "services", "rdma", "shm", "gpu-processes", "nvml", "cuda",
       "nccl"});
  return k_names(id);
}

std::vector<std::string_view> ProbeSet::names() const {
  std::vector<std::string_view> out;
  for (unsigned i = 0; i <= static_cast<unsigned>(k_last_probe_id); ++i) {
    if (contains(static_cast<ProbeId>(i))) {
      out.push_back(probe_id_name(static_cast<ProbeId>(i)));
    }
  }
  return out;
}

std::string ProbeSet::text() const {
  std::string out;
  for (const auto name : names()) {
    if (!out.empty()) {
      out += ' ';
    }
    out += name;
  }
  return out;
}

} // namespace gpf
