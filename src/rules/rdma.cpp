// Rules whose id starts with "rdma.": whether GPUDirect RDMA (NIC <-> GPU memory without a copy
// through host memory) is possible for a multi-node job, and how near each GPU's NIC is. Facts:
// NVIDIA GPUDirect RDMA guide (nvidia-peermem, DMA-BUF),
// https://docs.nvidia.com/cuda/gpudirect-rdma/index.html
#include "common.hpp"

namespace gpf {
namespace {

constexpr std::string_view k_gdr_source = "https://docs.nvidia.com/cuda/gpudirect-rdma/index.html";

bool has_rdma_devices(const Facts& f) {
  return f.topology.rdma.ran && !f.topology.rdma.devices.empty();
}

bool peermem_loaded(const Facts& f) {
  return f.modules.loaded.count("nvidia_peermem") != 0 ||
         f.modules.loaded.count("nv_peer_mem") != 0;
}

// DMA-BUF lets NCCL register GPU memory with the NIC without a peer-memory module: the open kernel
// module on a 5.12 or newer kernel. nullopt: unknown (flavour or kernel unknown).
std::optional<bool> dmabuf_available(const Facts& f) {
  if (f.driver.flavour == DriverFlavour::unknown || !f.kernel.version) {
    return std::nullopt;
  }
  return f.driver.flavour == DriverFlavour::open && *f.kernel.version >= Version({5, 12});
}

std::string rdma_devices_text(const Facts& f) {
  return join(f.topology.rdma.device_names());
}

} // namespace

std::span<const Rule> rdma_rules() {
  static const Rule rows[] = {
      {.id = "rdma.peer-memory-missing",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info when the open kernel module on a 5.12+ kernel offers DMA-BUF instead",
       .title =
           "GPUDirect RDMA is possible: a peer-memory module is loaded, or DMA-BUF is available",
       .remedy = "Load the peer-memory module: `sudo modprobe nvidia-peermem`",
       .source = k_gdr_source,
       .explanation =
           "For a NIC to read and write GPU memory directly (GPUDirect RDMA), the NIC driver must be able to pin GPU memory: through the nvidia_peermem module (or the legacy nv_peer_mem of MLNX_OFED), or through the kernel's DMA-BUF, which the open NVIDIA kernel module supports on kernels 5.12 and newer and which NVIDIA now recommends. Without either, NCCL stages every inter-node transfer through host memory: the job runs, much slower. With the open module on a 5.12+ kernel a missing peer-memory module is information only.",
       .evidence =
           "sys/class/infiniband (RDMA devices), proc/modules (nvidia_peermem, nv_peer_mem), the driver's flavour (proc/driver/nvidia/version) and the kernel release.",
       .reads = {ProbeId::rdma, ProbeId::modules},
       .cases = {fires("cause-peermem-symbols"), silent("cause-iommu-fault-p2p")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const Facts& f = c.facts;
         const auto* modules = f.probe("modules");
         if (f.gpus.empty() || !has_rdma_devices(f) || peermem_loaded(f) || !modules ||
             modules->state != ProbeState::ok) {
           return {};
         }
         const auto dmabuf = dmabuf_available(f);
         const std::string flavour = f.driver.flavour == DriverFlavour::open ? "open"
                                     : f.driver.flavour == DriverFlavour::proprietary
                                         ? "proprietary"
                                         : "unknown";
         std::vector<std::string> evidence{
             fmt::format("/sys/class/infiniband: {}", rdma_devices_text(f)),
             "/proc/modules: neither nvidia_peermem nor nv_peer_mem",
             fmt::format("driver {} ({} kernel module), kernel {}", f.driver.version_text, flavour,
                         f.kernel.release)};
         if (dmabuf == true) {
           Hit hit{
               "No peer-memory module is loaded, but the open kernel module on this kernel offers DMA-BUF: NCCL can use GPUDirect RDMA without it",
               std::move(evidence)};
           hit.severity = Severity::info;
           hit.remedy =
               "Nothing to do (NCCL uses DMA-BUF by default); load nvidia-peermem only for software that needs it";
           return {hit};
         }
         Hit hit{"", std::move(evidence)};
         if (!dmabuf || f.driver.flavour == DriverFlavour::proprietary) {
           hit.message = fmt::format(
               "RDMA devices ({}) but no peer-memory module (nvidia_peermem, nv_peer_mem), and DMA-BUF is not available ({}): NCCL stages inter-node transfers through host memory",
               rdma_devices_text(f),
               !dmabuf ? "driver flavour or kernel unknown" : "the proprietary kernel module");
         } else {
           hit.message = fmt::format(
               "RDMA devices ({}) but no peer-memory module (nvidia_peermem, nv_peer_mem), and DMA-BUF is not available (kernel {} is older than 5.12): NCCL stages inter-node transfers through host memory",
               rdma_devices_text(f), f.kernel.release);
         }
         hit.remedy =
             "Load the peer-memory module of this driver: `sudo modprobe nvidia-peermem` (and add it to /etc/modules-load.d/ to keep it); or move to the open kernel module on a 5.12+ kernel, which uses DMA-BUF";
         // The kernel log says why a peer-memory module did not load: it was built against
         // another NVIDIA driver (or kernel) than the one running.
         EventPtrs refused;
         for (const auto& e : f.log.host_events) {
           if (e.kind == LogEventKind::module_symbol &&
               (e.detail == "nv_peer_mem" || e.detail == "nvidia_peermem")) {
             refused.push_back(&e);
           }
         }
         if (!refused.empty()) {
           hit.message +=
               fmt::format("; the kernel log says why it did not load: {}", describe(refused));
           for (auto& line : evidence_of(refused)) {
             hit.evidence.push_back(std::move(line));
           }
           hit.remedy = fmt::format(
               "{0} was built against another NVIDIA driver than the running {1}: rebuild it "
               "against this driver (MLNX_OFED's nv_peer_mem: reinstall its package after the "
               "driver, `dkms install nv_peer_mem`), or use the nvidia-peermem module that ships "
               "with driver {1} (`sudo modprobe nvidia-peermem`, after unloading nv_peer_mem)",
               refused.front()->detail,
               f.driver.version_text.empty() ? std::string("driver") : f.driver.version_text);
         }
         return {hit};
       }},
      {.id = "rdma.peermem-version",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "nvidia_peermem is the same version as the nvidia module",
       .remedy = "Reload nvidia-peermem from the installed driver",
       .source = k_gdr_source,
       .explanation =
           "nvidia_peermem ships with the driver and calls into the nvidia module; one left from another driver version (a driver update without a reboot, or a module built by hand) fails GPUDirect RDMA registration, and multi-node jobs fail or fall back. The legacy nv_peer_mem has version numbers of its own and is not compared.",
       .evidence = "sys/module/nvidia_peermem/version and the nvidia module's version.",
       .cases = {fires("rdma-peermem-mismatch"), silent("rdma-dmabuf")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const Facts& f = c.facts;
         const auto& pm = f.topology.rdma.peermem_version;
         if (!pm || f.driver.version_text.empty() ||
             f.modules.loaded.count("nvidia_peermem") == 0) {
           return {};
         }
         const auto ours = Version::parse(*pm);
         if (ours && f.driver.version && *ours == *f.driver.version) {
           return {};
         }
         Hit hit{
             fmt::format(
                 "nvidia_peermem {} is loaded with the nvidia module {}: GPUDirect RDMA registration fails for multi-node jobs",
                 *pm, f.driver.version_text),
             {fmt::format("/sys/module/nvidia_peermem/version: {}", *pm),
              fmt::format("{}: {}",
                          f.driver.version_source.empty() ? "driver version"
                                                          : f.driver.version_source,
                          f.driver.version_text)}};
         hit.remedy = fmt::format(
             "Reload the peer-memory module of driver {0}: `sudo rmmod nvidia_peermem && sudo modprobe nvidia-peermem` (reinstall the driver {0} package if modprobe loads {1} again)",
             f.driver.version_text, *pm);
         return {hit};
       }},
      {.id = "rdma.nic-other-socket",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Each GPU has an RDMA NIC on its own CPU socket",
       .remedy =
           "Nothing to do for a single-node job; for multi-node jobs prefer nodes whose GPUs each have a NIC under the same PCIe switch or socket",
       .source = k_gdr_source,
       .explanation =
           "GPUDirect RDMA performs best between a GPU and a NIC under the same PCIe switch; across the CPU sockets' interconnect it is slow, and NCCL may not use it at all (NCCL_NET_GDR_LEVEL). The nearest NIC of every GPU is in the JSON facts (topology.rdma.nearest_nic); a GPU whose nearest NIC sits on another NUMA node is reported here.",
       .evidence =
           "The PCIe paths (sysfs) of the GPUs and of the RDMA devices' PCI functions, and their numa_node files.",
       .cases = {fires("rdma-nic-other-socket"), silent("ib-hgx-healthy")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<std::string> far;
         std::vector<std::string> evidence;
         std::size_t dropped = 0;
         for (const auto& n : c.facts.topology.rdma.nearest) {
           if (!n.gpu_numa_node || !n.nic_numa_node || *n.gpu_numa_node < 0 ||
               *n.nic_numa_node < 0 || *n.gpu_numa_node == *n.nic_numa_node) {
             continue;
           }
           far.push_back(c.job.label(n.gpu));
           add_capped(evidence,
                      fmt::format("GPU {} numa_node {}; nearest NIC {} ({}) numa_node {}", n.gpu,
                                  *n.gpu_numa_node, n.nic, n.nic_bus_id, *n.nic_numa_node),
                      dropped);
         }
         if (far.empty()) {
           return {};
         }
         if (dropped > 0) {
           evidence.push_back(fmt::format("... and {} more", dropped));
         }
         return {{fmt::format("{} {} no RDMA NIC on {} own NUMA node: {}",
                              counted(far.size(), "GPU"), far.size() == 1 ? "has" : "have",
                              far.size() == 1 ? "its" : "their", join(far)),
                  std::move(evidence)}};
       }},
  };
  return rows;
}

} // namespace gpf
