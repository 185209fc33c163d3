// Probe "iommu": whether an IOMMU translates the GPUs' DMA (which routes peer-to-peer traffic
// through the root complex). Reads sys/kernel/iommu_groups (and the `type` of the GPUs' groups:
// "identity" is passthrough, "DMA"/"DMA-FQ" translate; Linux 5.11+), sys/class/iommu, proc/cmdline
// and the hypervisor flag of proc/cpuinfo. Runs after "pcie", which found the GPUs' groups.
// Facts: NCCL troubleshooting (IOMMU, iommu=pt),
// https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
#include "gpf/probes/probes.hpp"
#include "gpf/probes/topology_parsers.hpp"
#include "gpf/util/credentials.hpp"
#include "gpf/util/text.hpp"

namespace gpf {
namespace {
constexpr std::string_view k_groups = "sys/kernel/iommu_groups";
constexpr std::size_t k_cmdline_cap = 64 * 1024;
constexpr std::size_t k_cpuinfo_cap = 64 * 1024; // the first processor's block holds the flags
} // namespace

ProbeStatus probe_iommu(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  IommuFacts& iommu = facts.topology.iommu;
  iommu.ran = true;
  std::vector<std::string> problems;
  if (host.is_directory(k_groups)) {
    if (auto groups = host.list_dir(k_groups)) {
      iommu.groups = groups->size();
    } else {
      problems.push_back(std::string(k_groups) + ": " + groups.error().message);
    }
  }
  if (auto units = host.list_dir("sys/class/iommu")) {
    iommu.units = *units;
  }
  for (const auto& gpu : facts.topology.pcie.gpus) {
    if (!gpu.iommu_group || iommu.group_type.count(*gpu.iommu_group) != 0) {
      continue;
    }
    if (auto type = host.read_file(std::string(k_groups) + "/" + *gpu.iommu_group + "/type", 64)) {
      iommu.group_type[*gpu.iommu_group] = std::string(trim(to_valid_utf8(type->data)));
    }
  }
  if (auto cmdline = host.read_file("proc/cmdline", k_cmdline_cap)) {
    iommu.cmdline = without_credentials(trim(to_valid_utf8(cmdline->data)));
    const auto parsed = parse_iommu_cmdline(*iommu.cmdline);
    iommu.cmdline_options = parsed.options;
    iommu.cmdline_passthrough = parsed.passthrough;
    iommu.cmdline_off = parsed.off;
  } else {
    problems.push_back("proc/cmdline: " + cmdline.error().message);
  }
  if (auto cpuinfo = host.read_file("proc/cpuinfo", k_cpuinfo_cap)) {
    iommu.hypervisor = cpuinfo_hypervisor(cpuinfo->data);
  }
  if (!problems.empty()) {
    const bool present = (iommu.groups && *iommu.groups > 0) || !iommu.units.empty();
    const bool judged = !iommu.group_type.empty() || iommu.cmdline;
    // an IOMMU that cannot be judged is an error; no IOMMU and no cmdline (an old or hand-made
    // snapshot) is a skip that says why
    status.state = present && !judged ? ProbeState::error
                   : present          ? ProbeState::ok
                                      : ProbeState::skipped;
    status.message = problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) {
      status.message += "; " + problems[i];
    }
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"iommu", "IOMMU", 800, probe_iommu}};
} // namespace

} // namespace gpf
