// Rules whose id starts with "kernel.": the Linux kernel: the 5.5 multi-GPU heuristic, the driver
// branch's kernel floor, releases that are not judged.
#include "common.hpp"

namespace gpf {
namespace {

bool kernel_not_judged(const KernelFacts& k) {
  return k.flavour == KernelFlavour::gvisor || k.flavour == KernelFlavour::wsl2;
}

} // namespace

std::span<const Rule> kernel_rules() {
  static const Rule rows[] = {
      {.id = "kernel.below-5.5-multi-gpu",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info when the multi-GPU test passed on this kernel, or when a "
                        "node-level failure leaves no GPU usable (nothing to narrow)",
       .title = "Kernel 5.5 or newer when several GPUs are used",
       .remedy =
           "Until a multi-GPU test passes, start the job on one GPU (the recommendation keeps the first usable one); "
           "for several GPUs try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU settings, or upgrade the kernel",
       .source = "docs/sources.md#the-kernel-55-warning",
       .explanation =
           "This is Hugging Face accelerate's heuristic, not an NVIDIA requirement: since PR #2077 (2023) accelerate warns on Linux kernels below 5.5.0 because multi-GPU runs were reported to hang on a 5.4 kernel (issue #1929, two otherwise identical 2x A6000 machines); "
           "no root cause was established and the maintainers only warn. "
           "The check compares the version number alone, so it ignores distribution backports: RHEL 8 (4.18), Amazon Linux 2 (4.14/5.4) and Ubuntu 20.04 GA (5.4) all trip it. "
           "Users who hit such hangs usually fixed them with NCCL_P2P_DISABLE=1, which points at PCIe peer-to-peer problems - ACS enabled on PCIe switches or the IOMMU redirecting P2P traffic - rather than at the kernel version. "
           "gVisor's fixed 4.4.0 and WSL2 kernels are not judged (kernel.release-not-judged).",
       .evidence = "uname -r (the first X.Y.Z of the release) and the number of usable GPUs.",
       .reads = {ProbeId::kernel},
       .cases = {fires("cuda-2gpu-kernel54"), silent("cuda-no-driver")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& k = c.facts.kernel;
         if (!k.version || *k.version >= Version({5, 5, 0}) || c.usable_gpus.size() < 2 ||
             k.flavour == KernelFlavour::gvisor || k.flavour == KernelFlavour::wsl2) {
           return {};
         }
         Hit hit{
             fmt::format(
                 "Kernel {} is below 5.5 and the job would use {} GPUs together: multi-GPU start-up may hang. "
                 "This is a version heuristic (accelerate's check) that ignores distribution backports; "
                 "PCIe peer-to-peer problems (ACS/IOMMU) are a common real cause",
                 k.version->str(), c.usable_gpus.size()),
             {"uname -r: " + k.release}};
         if (c.facts.cuda.multi_gpu_ok == true) {
           // Measured, not guessed: the multi-GPU test passed on this kernel, so every usable GPU
           // stays.
           hit.message = fmt::format(
               "Kernel {} is below 5.5, but the multi-GPU test passed on {} GPUs: the kernel-version heuristic does not apply here",
               k.version->str(), c.facts.cuda.multi_gpu_devices.size());
           hit.evidence.push_back(
               fmt::format("CUDA multi-GPU test: peer copies passed between CUDA devices {}",
                           fmt::join(c.facts.cuda.multi_gpu_devices, ", ")));
           hit.severity = Severity::info;
           hit.remedy =
               "Nothing to do now; "
               "if multi-GPU jobs still hang, try NCCL_P2P_DISABLE=1, check PCIe ACS/IOMMU, or upgrade the kernel";
           return {hit};
         }
         hit.effect = Effect::single_gpu_only;
         hit.headline = fmt::format("multi-GPU start-up untested on kernel {}", k.version->str());
         return {hit};
       }},
      {.id = "kernel.below-driver-floor",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The kernel is at least the oldest one the driver branch supports",
       .remedy =
           "Upgrade the kernel (or install an older driver branch that still supports this kernel)",
       .source = "docs/sources.md#kernel-versions-a-driver-supports",
       .explanation =
           "NVIDIA's README for each driver tag names the oldest supported Linux kernel: 3.10 for the 515 to 550 branches, 4.15 from 555 on (below 4.15 the 555+ kernel module refuses to build). "
           "Distribution kernels such as RHEL 8's 4.18 are inside the range of every current driver.",
       .evidence = "uname -r and the driver version.",
       .cases = {fires("compat-kernel-below-floor"), silent("compat-cuda134-driver580")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& k = c.facts.kernel;
         const DriverView& d = c.job.driver;
         if (!k.version || !d.kernel_module || kernel_not_judged(k)) {
           return {};
         }
         const auto* row = c.job.matrix->kernel_floor(d.kernel_module->major());
         if (!row || *k.version >= row->kernel_floor) {
           return {};
         }
         return {
             {fmt::format(
                  "Kernel {} is older than Linux {}, the oldest kernel driver branch R{} supports",
                  k.version->str(), row->kernel_floor_text, d.kernel_module->major()),
              {"uname -r: " + k.release, d.kernel_module_evidence}}};
       }},
      {.id = "kernel.release-not-judged",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Whether the kernel release can be judged by its number",
       .remedy = "Nothing to do; judge the host kernel where the driver runs instead",
       .source = "docs/sources.md#design-decisions-of-the-checker",
       .explanation =
           "gVisor reports a fixed, emulated 4.4.0 whatever the host runs, and under WSL2 the NVIDIA driver lives in Windows. "
           "Judging either by the Linux kernel number would call healthy systems old.",
       .evidence = "uname -r and its recognised flavour.",
       .cases = {fires("cuda-wsl2"), silent("cuda-no-driver")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& k = c.facts.kernel;
         if (k.flavour == KernelFlavour::gvisor) {
           return {
               {"The kernel release 4.4.0 is gVisor's fixed, emulated release, not the host's kernel: version-based kernel checks (the 5.5 multi-GPU heuristic, the driver's kernel floor) were not applied",
                {"uname -r: " + k.release}}};
         }
         if (k.flavour == KernelFlavour::wsl2) {
           return {
               {"WSL2: the NVIDIA driver runs in Windows and reaches the GPUs through /dev/dxg, so the Linux driver's kernel floor and the 5.5 multi-GPU heuristic do not apply to this kernel",
                {"uname -r: " + k.release}}};
         }
         return {};
       }},
  };
  return rows;
}

} // namespace gpf
