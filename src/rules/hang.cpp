// Rules whose id starts with "hang.": a wedged NVIDIA driver. The kernel's hung-task detector
// reports a task blocked in uninterruptible sleep for longer than kernel.hung_task_timeout_secs
// with its call trace; a trace in the NVIDIA modules means the driver has been stuck on this
// boot, and CUDA calls on the node may hang. Facts: the kernel's hung-task detector,
// https://github.com/torvalds/linux/blob/master/kernel/hung_task.c
#include "common.hpp"

namespace gpf {

std::span<const Rule> hang_rules() {
  static const Rule rows[] = {
      {.id = "hang.driver-stuck",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info when a driver reload came after it",
       .title = "No task has been stuck in the NVIDIA driver on this boot",
       .remedy =
           "Drain the node and reboot it (or stop every GPU process and reload the NVIDIA modules): the driver has been stuck, and CUDA calls on this node may hang",
       .source = "https://github.com/torvalds/linux/blob/master/kernel/hung_task.c",
       .explanation =
           "The kernel reports a task that sat in uninterruptible sleep for longer than kernel.hung_task_timeout_secs as `INFO: task <name>:<pid> blocked for more than N seconds`, followed by its call trace. When the trace runs through the NVIDIA modules (functions tagged [nvidia], [nvidia_uvm], ...), the driver itself was stuck: the next CUDA call on the node may hang the same way, and the stuck task usually cannot be killed. Only the current boot counts; a driver reload after it makes it information.",
       .evidence =
           "The hung-task line and the first call-trace line in the NVIDIA modules, from the current boot's kernel log.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::hung_task}),
       .cases = {fires("log-hung-task-uvm"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> { return host_events_rule(c, true); }},
      {.id = "hang.process-in-d-state",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "No process with an NVIDIA device open is stuck in uninterruptible sleep",
       .remedy =
           "Drain the node and reboot it: a process stuck in the driver cannot be killed, and CUDA calls on this node may hang the same way",
       .source = "https://man7.org/linux/man-pages/man5/proc.5.html",
       .explanation =
           "A process in uninterruptible sleep (State: D in /proc/<pid>/status) that has an NVIDIA device node open is usually waiting inside the driver. A short D state happens during normal I/O, so this is a warning, not a failure; seen together with a hang.driver-stuck finding the driver is wedged.",
       .evidence =
           "proc/<pid>/status (State: D) and proc/<pid>/fd links to character devices of major 195.",
       .cases = {fires("proc-d-state-nvidia"), silent("proc-only")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& h : c.facts.topology.gpu_processes.holders) {
           if (h.state != 'D') {
             continue;
           }
           auto evidence = h.fds;
           evidence.insert(evidence.begin(), fmt::format("/proc/{}/status: State: D", h.pid));
           Hit hit{fmt::format("pid {} ({}) is in uninterruptible sleep (D) with an NVIDIA device "
                               "open: the driver may be stuck",
                               h.pid, h.comm.empty() ? "?" : h.comm),
                   std::move(evidence)};
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
