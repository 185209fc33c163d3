#pragma once
// The probes of the pipeline, in the order they run. Each reads through the Host only.
#include "gpf/probes/pipeline.hpp"

namespace gpf {

ProbeStatus probe_kernel(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_modules(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_driver(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_devices(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_kernel_log(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_compat(const Host& host, const ProbeOptions& options, Facts& facts);
// Multi-GPU start-up (topology_facts.hpp): PCIe/ACS, IOMMU, /dev/shm, daemons, GSP firmware, MIG.
ProbeStatus probe_pcie(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_iommu(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_shm(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_services(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_firmware(const Host& host, const ProbeOptions& options, Facts& facts);
ProbeStatus probe_mig(const Host& host, const ProbeOptions& options, Facts& facts);
// RDMA devices and their ports, and the one nearest each GPU (after pcie).
ProbeStatus probe_rdma(const Host& host, const ProbeOptions& options, Facts& facts);
// Processes holding NVIDIA device nodes (by device number), with their state.
ProbeStatus probe_gpu_processes(const Host& host, const ProbeOptions& options, Facts& facts);

} // namespace gpf
