#pragma once
// The probes of the pipeline and the registry of their rows. Each reads through the Host only.
#include "gpf/probes/pipeline.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// One row of the pipeline, registered from its probe's own .cpp: the name reports and snapshots
// know it by, what it checks in a user's words (the report's "not checked" line), its place and
// its function(s). Rows run by ascending order, so a probe may use the facts of lower orders
// (devices needs the GPUs' minors; rdma the PCIe paths; cuda starts a child per driver GPU whose
// UUID is known). A probe in two phases starts just before another row, so that its children work
// beside that probe's (nvml's beside cuda's), and finishes at its own place.
struct ProbeRow {
  std::string_view name;
  std::string_view what;
  int order = 0;
  ProbeFn run = nullptr; // one phase: the whole probe, at its place
  // Two phases: start runs just before the row named start_before, and what it returns is handed
  // to finish at this row's place.
  ProbeStartFn start = nullptr;
  std::string_view start_before{};
  ProbeFinishFn finish = nullptr;
  // A row that must have run before this probe's first phase: its facts are read, or it must not
  // see this probe's children (gpu-processes before any child of the checker exists).
  std::string_view after{};
};

// Adds a row to the pipeline at static initialisation. At namespace scope in the probe's .cpp:
//   const ProbeRegistration k_row{{"x", "what it checks", 650, probe_x}};
struct ProbeRegistration {
  explicit ProbeRegistration(const ProbeRow& row);
};

// Every registered row, by ascending order (tests/unit/fixtures_test.cpp checks names and places).
const std::vector<ProbeRow>& probe_rows();

// What is wrong with the registered rows, "" when nothing: a row with neither one phase nor two, a
// name twice, a start after its own row or before a row that does not exist, an `after` row that
// does not run before the first phase. collect_facts refuses to run such a pipeline (a checker
// bug: exit 2) and a test keeps it empty.
std::string probe_rows_problem();

// The functions of the probes registered before the registry (their rows are in their .cpp files).

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
