#pragma once
// The probes by handle, for what a rule row reads (`.reads`, include/gpf/rules/rule.hpp): a
// misspelt probe does not compile, and every handle names a registered probe
// (tests/unit/rule_table_test.cpp). The names are the probes' own (ProbeStatus::name).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

enum class ProbeId : std::uint8_t {
  kernel,
  modules,
  module_load,
  compat,
  kernel_log,
  driver,
  devices,
  iommu,
  pcie,
  mig,
  firmware,
  services,
  rdma,
  shm,
  gpu_processes,
  nvml,
  cuda,
  nccl,
};
inline constexpr ProbeId k_last_probe_id = ProbeId::nccl;

std::string_view probe_id_name(ProbeId id);

// A set of probes, written as a list: `.reads = {ProbeId::nvml, ProbeId::cuda}`.
class ProbeSet {
public:
  constexpr ProbeSet() = default;
  constexpr ProbeSet(std::initializer_list<ProbeId> ids) {
    for (const ProbeId id : ids) {
      m_bits |= std::uint32_t{1} << static_cast<unsigned>(id);
    }
  }
  constexpr bool empty() const { return m_bits == 0; }
  constexpr bool contains(ProbeId id) const { return (m_bits >> static_cast<unsigned>(id)) & 1u; }
  // The members' names in ProbeId order.
  std::vector<std::string_view> names() const;
  // "kernel-log nvml": the names joined with spaces ("" for none).
  std::string text() const;

private:
  std::uint32_t m_bits = 0;
};

} // namespace gpf
