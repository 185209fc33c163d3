#pragma once
// Process names as the kernel keeps them, and NVIDIA's management daemons as data with a source per
// row: programs that hold GPU device nodes on an idle node and are not a job (the gpu-processes
// probe, process.holds-gpu and the CUDA probe's --skip-busy leave them out).
#include <span>
#include <string_view>

namespace gpf {

// Whether a proc/<pid>/comm value names program: the kernel keeps 15 bytes of the name
// ("nv-fabricmanager" shows as "nv-fabricmanage", "nvidia-persistenced" as "nvidia-persiste";
// TASK_COMM_LEN in include/linux/sched.h).
bool comm_names(std::string_view comm, std::string_view program);

struct NvidiaDaemon {
  std::string_view program; // the executable's name; proc/<pid>/comm shows its first 15 bytes
  std::string_view what;
  std::string_view source;
};

std::span<const NvidiaDaemon> nvidia_management_daemons();

// Whether a proc/<pid>/comm value is one of NVIDIA's management daemons, which hold GPU device
// nodes on an idle node (persistenced, Fabric Manager, DCGM's host engine and exporter,
// nvidia-smi): not a job.
bool nvidia_management_daemon(std::string_view comm);

// The daemon whose installed executable exe is (proc/<pid>/exe's target: the program's own name
// in a system directory, /usr/bin, /usr/sbin, /bin, /sbin or /usr/local/{bin,sbin}; a
// " (deleted)" suffix ignored); nullptr for any other file. A process's comm is set by the
// process itself (prctl PR_SET_NAME), its executable is not.
const NvidiaDaemon* nvidia_daemon_executable(std::string_view exe);

} // namespace gpf
