// Probe "cuda": chooses skip / replay / live (cuda_probe.hpp) and sums the outcome up in the
// probe status. Reads the host only through Host: cuda.json and the job environment. Which
// processes hold a GPU it takes from the gpu-processes probe, which ran before it.
#include "gpf/facts/cuda_json.hpp"
#include "gpf/facts/multi_gpu_cut.hpp"
#include "gpf/probes/cuda_probe.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"
#include "gpf/util/plural.hpp"

#include "probes/cuda/live_probe.hpp"
#include "probes/cuda/memory_room.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpf {
namespace {

constexpr std::size_t k_cuda_json_cap = 8 << 20;

std::string step_summary(const CudaStep& s) {
  if (s.timed_out) {
    return fmt::format("{} did not finish before the deadline", s.name);
  }
  return fmt::format("{} failed: {}", s.name, s.error_name.empty() ? s.error_text : s.error_name);
}

std::string summary(const CudaFacts& c) {
  if (!c.load_error.empty()) {
    return fmt::format("{} could not be loaded", c.library);
  }
  if (!c.missing_symbols.empty()) {
    return fmt::format("{} lacks {}", c.library, fmt::join(c.missing_symbols, ", "));
  }
  if (!c.enumeration_complete) {
    const auto bad = std::find_if(c.enumeration_steps.begin(), c.enumeration_steps.end(),
                                  [](const CudaStep& s) { return !s.ok; });
    return bad != c.enumeration_steps.end() ? "CUDA enumeration: " + step_summary(*bad)
                                            : "CUDA enumeration did not finish: " + c.child_error;
  }
  const auto usable = std::count_if(c.devices.begin(), c.devices.end(),
                                    [](const CudaDevice& d) { return d.usable; });
  const auto in_use = std::count_if(c.devices.begin(), c.devices.end(),
                                    [](const CudaDevice& d) { return d.in_use; });
  const std::string multi = !c.multi_gpu_ran           ? "not run"
                            : c.multi_gpu_ok == true   ? "passed"
                            : multi_gpu_cut_in_init(c) ? "not completed in time"
                                                       : "failed";
  const std::string devices = counted(c.devices.size(), "CUDA device");
  if (in_use > 0) {
    return fmt::format("{}, {} passed, {} in use by other processes; multi-GPU test {}", devices,
                       usable, in_use, multi);
  }
  return fmt::format("{}, {} passed; multi-GPU test {}", devices, usable, multi);
}

// GPU minor -> "PID (comm)" of each process holding it, from facts.topology.gpu_processes (matched
// by the device number 195:N behind each fd, never the link's text). The same processes as
// process.holds-gpu: NVIDIA's management daemons, which keep every node open on an idle node, and
// holders of only nvidiactl / nvidia-modeset are left out. Empty when that probe did not run.
std::map<unsigned, std::vector<std::string>> gpu_holders(const GpuProcessFacts& procs) {
  std::map<unsigned, std::vector<std::string>> holders;
  for (const auto& h : procs.holders) {
    if (h.minors.empty() || h.nvidia_daemon) {
      continue;
    }
    for (const unsigned minor : h.minors) {
      holders[minor].push_back(fmt::format("{} ({})", h.pid, h.comm.empty() ? "?" : h.comm));
    }
  }
  return holders;
}

// GPUs CUDA found in use get the processes holding their device node, when the process table says.
void attach_holders(Facts& facts) {
  if (std::none_of(facts.cuda.devices.begin(), facts.cuda.devices.end(),
                   [](const CudaDevice& d) { return d.in_use; })) {
    return;
  }
  const auto holders = gpu_holders(facts.topology.gpu_processes);
  for (auto& d : facts.cuda.devices) {
    const auto gpu = std::find_if(facts.gpus.begin(), facts.gpus.end(),
                                  [&](const GpuFacts& g) { return g.bus_id == d.bus_id; });
    if (!d.in_use || gpu == facts.gpus.end() || !gpu->device_minor) {
      continue;
    }
    if (const auto it = holders.find(*gpu->device_minor); it != holders.end()) {
      d.holders = it->second;
    }
  }
}

// The optional bandwidth step: asked for unless --no-bandwidth, started only when its estimate fits
// the budget left after the stage's own deadline. It runs inside that deadline (the copies take
// milliseconds on a working link), which stays the stage's bound.
void plan_bandwidth(const Host& host, const ProbeOptions& options, const Facts& facts,
                    cuda::LiveProbeInput& in) {
  for (const auto& [minor, procs] : gpu_holders(facts.topology.gpu_processes)) {
    for (const auto& gpu : facts.gpus) {
      if (gpu.device_minor == minor) {
        in.busy[gpu.bus_id] = fmt::format("{}", fmt::join(procs, ", "));
      }
    }
  }
  if (options.no_bandwidth) {
    in.bandwidth_not_checked = "--no-bandwidth";
    return;
  }
  cuda::BandwidthRequest r{true, cuda::k_bandwidth_bytes, cuda::k_peer_bandwidth_bytes,
                           cuda::k_bandwidth_repeats};
  // The driver's GPU count; where it lists none (WSL2), CUDA's pairs are not known yet: 8 assumed.
  const double estimate = cuda::bandwidth_estimate_s(r, facts.gpus.empty() ? 8 : facts.gpus.size());
  if (const auto left = options.budget_left_s()) {
    // --nccl runs after this stage under its own deadline: that time is kept for it
    const double after_stage =
        *left - options.cuda_timeout_s - (options.nccl ? options.nccl_timeout_s : 0);
    if (!stages_within({{"bandwidth", estimate}}, after_stage).front()) {
      in.bandwidth_not_checked =
          fmt::format("budget: its estimate of {:.1f} s does not fit the {:.1f} s left of --budget "
                      "{:g} after the CUDA stage's deadline{}",
                      estimate, std::max(0.0, after_stage), *options.budget_s,
                      options.nccl ? " and the NCCL test's" : "");
      return;
    }
  }
  // The pinned buffers sized to the memory cgroup's room: the live stage's other children first,
  // then what is left shared among the GPUs; too little for a meaningful copy leaves the step out
  // (never an OOM kill, which would end the check without a verdict).
  if (const auto room = cuda::cgroup_memory_room(host)) {
    const std::size_t gpus = std::max<std::size_t>(facts.gpus.size(), 1);
    const std::uint64_t others = cuda::host_memory_need_bytes(gpus, false);
    const std::uint64_t share = room->bytes > others ? (room->bytes - others) / gpus : 0;
    if (share < r.bytes) {
      const std::size_t fit = static_cast<std::size_t>(share) & ~((std::size_t{1} << 20) - 1);
      if (fit < cuda::k_bandwidth_min_bytes) {
        in.bandwidth_not_checked = fmt::format(
            "memory: the live stage needs about {} MiB without it on {}, and this memory cgroup "
            "leaves {} MiB ({}): no room for {} MiB of pinned buffers per GPU",
            others >> 20, counted(gpus, "GPU"), room->bytes >> 20, room->evidence,
            cuda::k_bandwidth_min_bytes >> 20);
        return;
      }
      r.bytes = fit;
    }
  }
  in.bandwidth = r;
}

// The active step: asked for unless --no-active; like the bandwidth step, started only when its
// time fits the budget left after the stage's deadline (and the bandwidth step's estimate).
void plan_active(const ProbeOptions& options, cuda::LiveProbeInput& in) {
  if (options.no_active) {
    in.active_not_checked = "--no-active";
    return;
  }
  cuda::ActiveRequest r{true, options.active_seconds, cuda::k_active_memory_fraction,
                        cuda::k_active_memory_cap};
  if (const auto left = options.budget_left_s()) {
    const double bandwidth =
        in.bandwidth.run ? cuda::bandwidth_estimate_s(
                               in.bandwidth, in.driver_gpus.empty() ? 8 : in.driver_gpus.size())
                         : 0;
    const double after_stage =
        *left - options.cuda_timeout_s - (options.nccl ? options.nccl_timeout_s : 0) - bandwidth;
    if (!stages_within({{"active", r.seconds}}, after_stage).front()) {
      in.active_not_checked =
          fmt::format("budget: its {:g} s per GPU does not fit the {:.1f} s left of --budget {:g} "
                      "after the CUDA stage's deadline{}",
                      r.seconds, std::max(0.0, after_stage), *options.budget_s,
                      in.bandwidth.run ? " and the bandwidth step's estimate" : "");
      return;
    }
  }
  in.active = r;
}

} // namespace

ProbeStatus probe_cuda(const Host& host, const ProbeOptions& options, Facts& facts) {
  ProbeStatus status;
  if (options.no_cuda) {
    return status.skip("--no-cuda");
  }
  if (!host.is_live() && !options.libcuda) {
    if (!host.exists("cuda.json")) {
      return status.skip("the snapshot has no cuda.json (a live probe against it needs --libcuda)");
    }
    auto content = host.read_file("cuda.json", k_cuda_json_cap);
    if (!content) {
      return status.fail("cuda.json: " + content.error().message);
    }
    if (content->truncated) {
      return status.fail(fmt::format("cuda.json: larger than {} bytes", k_cuda_json_cap));
    }
    auto parsed = parse_cuda_json(content->data);
    if (!parsed) {
      return status.fail("cuda.json: " + parsed.error().message);
    }
    facts.cuda = std::move(parsed).value();
    facts.cuda.source = "cuda.json";
    if (!facts.cuda.ran) {
      return status.skip("cuda.json records that the CUDA probe did not run");
    }
    status.message = "replayed cuda.json: " + summary(facts.cuda);
    if (facts.cuda.steps_not_kept > 0) {
      status.cut.push_back(fmt::format("cuda.json ({} steps beyond the first {} of a list)",
                                       facts.cuda.steps_not_kept, k_max_replayed_steps));
    }
    return status;
  }

  if (options.skip_busy) {
    // A periodic check must not create contexts or allocate memory on a job's GPUs.
    if (const auto holders = gpu_holders(facts.topology.gpu_processes); !holders.empty()) {
      std::vector<std::string> held;
      for (const auto& [minor, procs] : holders) {
        held.push_back(fmt::format("dev/nvidia{} by {}", minor, fmt::join(procs, ", ")));
      }
      return status.skip(fmt::format("--skip-busy: GPUs in use ({})", fmt::join(held, "; ")));
    }
  }
  if (auto over = stage_over_budget(options, options.cuda_timeout_s)) {
    return status.skip(*over);
  }
  cuda::LiveProbeInput input;
  input.library = options.libcuda.value_or("libcuda.so.1");
  input.timeout_s = options.cuda_timeout_s;
  for (const auto& gpu : facts.gpus) {
    input.driver_gpus.push_back({gpu.bus_id, gpu.uuid});
  }
  plan_bandwidth(host, options, facts, input);
  plan_active(options, input);
  input.job_visible_devices = host.environment().get("CUDA_VISIBLE_DEVICES");
  input.job_device_order = host.environment().get("CUDA_DEVICE_ORDER");
  // Live children may run into the deadline: say what is going on (no GPU listed, as on WSL2:
  // CUDA's enumeration says how many there are).
  const auto n = facts.gpus.size();
  report_progress(fmt::format("probing CUDA{}\u2026 (deadline {:g} s)",
                              n == 0 ? std::string() : " on " + counted(n, "GPU"),
                              options.cuda_timeout_s));
  auto result = cuda::run_live_probe(input);
  if (!result) {
    return status.fail(result.error().message);
  }
  facts.cuda = std::move(result).value();
  attach_holders(facts);
  status.message = summary(facts.cuda);
  return status;
}

namespace {
// After gpu-processes: --skip-busy and each busy GPU's holders come from it, and it must not see
// the checker's own children.
const ProbeRegistration k_row{{.name = "cuda",
                               .what = "CUDA start-up",
                               .order = 1500,
                               .run = probe_cuda,
                               .after = "gpu-processes"}};
} // namespace

} // namespace gpf
