// Joins the per-prefix rule tables into the one built-in table. The order is the evaluation order
// and, within a severity, the order of the findings: root causes (driver, modules, nodes) first,
// and the CUDA probe's symptoms after the topology and NVML causes that explain them.
#include "common.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/util/enum_names.hpp"

#include <vector>

namespace gpf {

std::span<const Rule> builtin_rules() {
  static const std::vector<Rule> table = [] {
    std::vector<Rule> all;
    for (auto part :
         {driver_rules(), module_rules(),      devnode_rules(), gpu_rules(),     kernel_rules(),
          env_rules(),    probe_rules(),       xid_rules(),     rminit_rules(),  gsp_rules(),
          log_rules(),    hang_rules(),        pcie_rules(),    iommu_rules(),   shm_rules(),
          limits_rules(), ib_rules(),          rdma_rules(),    process_rules(), nvswitch_rules(),
          imex_rules(),   persistence_rules(), nvml_rules(),    cuda_rules(),    nccl_rules()}) {
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }();
  return table;
}

const Rule* find_rule(std::string_view id) {
  for (const auto& rule : builtin_rules()) {
    if (rule.id == id) {
      return &rule;
    }
  }
  return nullptr;
}

constexpr auto k_severity_names = enum_names<Severity::fail>({"info", "warn", "fail"});

std::string_view severity_name(Severity s) {
  return k_severity_names(s);
}

std::optional<Severity> parse_severity(std::string_view s) {
  return k_severity_names.parse(s);
}

} // namespace gpf
