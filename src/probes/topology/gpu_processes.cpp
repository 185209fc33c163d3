// Probe "gpu-processes": processes that hold an NVIDIA device node open, with their state. Lists
// proc/<pid>/fd of every process; an fd whose link text names "nvidia" is then stat()ed (through
// the link, so the device of the process's own mount namespace is seen) and counts when it is a
// character device of major 195: the GPU is its minor. The link's text alone is not trusted: on
// GPU Operator hosts it reads /run/nvidia/driver/dev/nvidia0, and in a container /dev/nvidiaN may
// be another GPU of the host. Facts: proc(5) (/proc/pid/fd, /proc/pid/status State);
// https://man7.org/linux/man-pages/man5/proc.5.html; the NVIDIA device numbers:
// docs/sources.md#device-nodes. A holder is one of NVIDIA's management daemons only by its
// executable, proc/<pid>/exe (a link: its target is read, never the file).
#include "gpf/knowledge/process_names.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {
namespace {

constexpr unsigned k_nvidia_major = 195;
constexpr unsigned k_first_control_minor = 254; // 254 nvidia-modeset, 255 nvidiactl
constexpr std::size_t k_max_fd_lines = 8;
// Per process, the descriptors examined (lowest numbers first: a CUDA process opens the device
// nodes early); a process with more is named in the probe's cut list, the first few of them.
constexpr std::size_t k_max_fds = 4096;
constexpr std::size_t k_max_cut_lines = 16;

bool is_pid(std::string_view name) {
  return !name.empty() && name.size() <= 10 &&
         name.find_first_not_of("0123456789") == std::string_view::npos;
}

// "State:\tD (disk sleep)" -> 'D'; '?' when absent.
char status_state(std::string_view status) {
  for (auto line : split_lines(status)) {
    if (starts_with(line, "State:")) {
      const auto v = trim(line.substr(6));
      return v.empty() ? '?' : v.front();
    }
  }
  return '?';
}

} // namespace

ProbeStatus probe_gpu_processes(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  GpuProcessFacts& out = facts.topology.gpu_processes;
  if (!host.is_directory("proc")) {
    return status.skip("/proc does not exist");
  }
  auto pids = host.list_dir("proc");
  if (!pids) {
    return status.fail("proc: " + pids.error().message);
  }
  // The checker itself holds no NVIDIA node yet: the CUDA and NVML stages start after this probe.
  std::size_t cut_processes = 0;
  for (const auto& name : *pids) {
    if (!is_pid(name)) {
      continue;
    }
    ++out.processes;
    const std::string dir = "proc/" + name + "/fd";
    // the lowest-numbered descriptors where there are more than k_max_fds, in one partial sort
    std::size_t listed_count = 0;
    const auto lowest = [&](std::vector<std::string> fds) {
      listed_count = fds.size();
      if (fds.size() <= k_max_fds) {
        return fds;
      }
      std::vector<std::pair<unsigned long, const std::string*>> by_number;
      by_number.reserve(fds.size());
      for (const auto& fd : fds) {
        by_number.emplace_back(parse_uint(fd).value_or(~0ul), &fd);
      }
      std::nth_element(by_number.begin(), by_number.begin() + k_max_fds, by_number.end());
      std::vector<std::string> kept;
      for (std::size_t i = 0; i < k_max_fds; ++i) {
        kept.push_back(*by_number[i].second);
      }
      return kept;
    };
    auto links = host.dir_links(dir, lowest);
    if (!links) {
      if (!host.absent(dir)) {
        ++out.unreadable; // another user's process without root, or hidepid
      }
      continue;
    }
    const auto& fds = links->names;
    if (listed_count > fds.size() && ++cut_processes <= k_max_cut_lines) {
      status.cut.push_back(
          fmt::format("{} (the lowest {} of {} descriptors)", dir, k_max_fds, listed_count));
    }
    GpuHolder holder;
    bool holds = false;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      const auto& target = links->targets[i];
      if (!target || target->find("nvidia") == std::string::npos) {
        continue;
      }
      const std::string path = dir + "/" + fds[i];
      const NodeInfo node = host.stat_node(path);
      if (node.type != NodeType::char_device || node.major != k_nvidia_major || !node.minor) {
        continue;
      }
      holds = true;
      if (*node.minor < k_first_control_minor) {
        holder.minors.push_back(*node.minor);
      }
      if (holder.fds.size() < k_max_fd_lines) {
        holder.fds.push_back(fmt::format("/{} -> {} ({}:{})", path, quote_evidence(*target, 120),
                                         *node.major, *node.minor));
      }
    }
    if (!holds) {
      continue;
    }
    std::sort(holder.minors.begin(), holder.minors.end());
    holder.minors.erase(std::unique(holder.minors.begin(), holder.minors.end()),
                        holder.minors.end());
    holder.pid = static_cast<int>(parse_uint(name).value_or(0));
    if (auto comm = host.read_file("proc/" + name + "/comm", 64)) {
      holder.comm = std::string(trim(to_valid_utf8(comm->data)));
    }
    // one of NVIDIA's daemons by its executable (proc/<pid>/exe), not by the name it gives itself:
    // a leftover job renamed "nvidia-persistenced" is still a leftover
    const auto exe = host.read_link("proc/" + name + "/exe");
    const NvidiaDaemon* daemon = exe ? nvidia_daemon_executable(*exe) : nullptr;
    holder.nvidia_daemon = daemon != nullptr && comm_names(holder.comm, daemon->program);
    if (auto st = host.read_file("proc/" + name + "/status", 4096)) {
      holder.state = status_state(st->data);
    }
    out.holders.push_back(std::move(holder));
  }
  out.ran = true;
  if (cut_processes > k_max_cut_lines) {
    status.cut.push_back(fmt::format("and {} more processes with more than {} descriptors",
                                     cut_processes - k_max_cut_lines, k_max_fds));
  }
  if (out.processes == 0) {
    status.skip("proc lists no processes");
  }
  return status;
}

namespace {
const ProbeRegistration k_row{
    {"gpu-processes", "processes on the GPUs", 1400, probe_gpu_processes}};
} // namespace

} // namespace gpf
