// Rules whose id starts with "process.": processes already on a GPU before the job starts. Facts:
// proc(5) (/proc/pid/fd), https://man7.org/linux/man-pages/man5/proc.5.html
#include "common.hpp"
#include "gpu_state.hpp"

namespace gpf {

std::span<const Rule> process_rules() {
  static const Rule rows[] = {
      {.id = "process.holds-gpu",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from =
           "info unless the node is expected to be idle (--expect-idle) or NVML lists the "
           "process holding GPU memory",
       .title = "No other process holds a GPU (when the node is expected to be idle)",
       .remedy =
           "Stop the processes in the evidence (or wait for them), or pick other GPUs with CUDA_VISIBLE_DEVICES",
       .source = "https://man7.org/linux/man-pages/man5/proc.5.html",
       .explanation =
           "A process that has /dev/nvidiaN open holds a context (and memory) on that GPU: a leftover of an earlier job, a monitoring agent, or another user's job. NVIDIA's daemons that keep the nodes open by design (nvidia-persistenced, nv-fabricmanager, nv-hostengine, dcgm-exporter, nvidia-smi) are not reported, the same list `--skip-busy` ignores. On a node that is meant to be idle before a job (`--expect-idle`, or a scheduler's prolog), or where NVML lists the process holding GPU memory that the job would share, that is a warning naming them; otherwise it is information. With `--expect-idle` the GPU also leaves the recommended CUDA_VISIBLE_DEVICES: the job was promised idle GPUs, so it gets the others (the GPU is in use, not broken). A process that only NVML lists (outside this PID namespace) is nvml.processes-present, judged the same way. Processes are matched by the device number of the open file (major 195, minor N), not by the path, which is the path in the process's own mount namespace. Inside a container's PID namespace other processes of the host are invisible, so an empty list there proves nothing.",
       .evidence =
           "proc/<pid>/fd links (stat: character device 195:N), proc/<pid>/comm, and the GPUs' minors (proc/driver/nvidia/gpus/*/information).",
       .cases = {fires("proc-stray-gpu3", "0000:5d:00.0"), silent("proc-only")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& procs = c.facts.topology.gpu_processes;
         std::vector<Hit> hits;
         const bool host_table = sees_host_processes(c.facts.topology.services);
         for (const auto& h : procs.holders) {
           if (h.minors.empty() || h.nvidia_daemon) {
             continue; // only nvidiactl / nvidia-modeset, or an NVIDIA daemon
           }
           std::vector<std::string> gpus;
           std::optional<std::string> only;
           for (const auto minor : h.minors) {
             const std::string* bus = c.job.bus_of_minor(minor);
             gpus.push_back(bus ? c.job.label(*bus) : fmt::format("/dev/nvidia{}", minor));
             if (bus && h.minors.size() == 1) {
               only = *bus;
             }
           }
           // NVML's figure for the same pid, where it listed it: the memory the job would share.
           bool holds_memory = false;
           std::vector<std::string> evidence = h.fds;
           for (const auto minor : h.minors) {
             const std::string* bus = c.job.bus_of_minor(minor);
             for (const auto& u : bus ? c.job.state(*bus).users : std::vector<GpuUser>{}) {
               if (u.pid == static_cast<unsigned>(h.pid) && u.in_nvml) {
                 holds_memory = holds_memory || u.holds_memory();
                 evidence.push_back(fmt::format("{}: nvmlDeviceGetComputeRunningProcesses: {}",
                                                *bus, gpu_user_text(u)));
               }
             }
           }
           Hit hit{fmt::format("pid {} ({}) has {} open{}", h.pid, h.comm.empty() ? "?" : h.comm,
                               join(gpus),
                               host_table ? ""
                                          : " (this is a container's PID namespace: processes "
                                            "outside it are invisible)"),
                   std::move(evidence)};
           hit.gpu = only;
           hit.effect = gpu_user_effect(c);
           hit.severity = gpu_user_severity(c, holds_memory);
           hit.remedy = fmt::format("Stop pid {} ({}) if it is a leftover (`kill {}`), or choose "
                                    "other GPUs for the job",
                                    h.pid, h.comm.empty() ? "?" : h.comm, h.pid);
           if (hit.severity == Severity::info) {
             hit.remedy = "Nothing to do unless the node should be idle (then run with "
                          "--expect-idle, and stop the process)";
           }
           if (hit.effect != Effect::none && !only) {
             // a process on several GPUs: the finding once per GPU, each leaves the recommendation
             for (const auto minor : h.minors) {
               if (const std::string* bus = c.job.bus_of_minor(minor)) {
                 hits.push_back(hit);
                 hits.back().gpu = *bus;
               }
             }
             continue;
           }
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
