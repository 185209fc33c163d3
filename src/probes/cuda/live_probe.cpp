// The live CUDA stage's schedule. Time 0: the enumeration child, plus one child per driver GPU
// whose UUID is known (CUDA_VISIBLE_DEVICES=<UUID> needs no enumeration), plus (two or more such
// GPUs) the multi-GPU child, which runs cuInit and waits for its list of GPUs. When enumeration is
// done: children for CUDA devices not covered yet, and the multi-GPU child's list (every GPU the
// job admits). When the per-GPU children are done (or their share of the time is up): its result
// counts when every one of its GPUs passed; otherwise a new multi-GPU child over those that did.
// At the deadline every child still running is SIGKILLed; none is ever waited for without one.
#include "probes/cuda/live_probe.hpp"

#include "gpf/util/checker_failure.hpp"
#include "gpf/util/plural.hpp"
#include "gpf/util/text.hpp"
#include "probes/child/interrupt.hpp"
#include "probes/cuda/child_work.hpp"
#include "probes/cuda/protocol.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

namespace gpf::cuda {
namespace {

constexpr auto k_settle_grace = std::chrono::milliseconds(250);

struct GpuChild {
  std::size_t id = 0;
  std::string visible_as;        // CUDA_VISIBLE_DEVICES of the child
  std::optional<int> cuda_index; // the enumerated device it tests, once known
};

bool is_gpu_uuid(const std::optional<std::string>& uuid) {
  return uuid && starts_with(to_lower(*uuid), "gpu-");
}

bool same_uuid(const std::optional<std::string>& a, const std::string& b) {
  return a && to_lower(*a) == to_lower(b);
}

// A failing step that stands for a child that ended without a failing step of its own.
CudaStep child_step(const Transcript& t) {
  CudaStep s;
  s.name = "child";
  s.timed_out = t.timed_out;
  if (!s.timed_out) {
    s.error_name = "CHILD_DIED";
    s.error_text = t.child_error;
  }
  return s;
}

void apply_enumeration(const Transcript& t, CudaFacts& f) {
  f.enumeration_steps = t.steps;
  for (const auto& s : t.steps) {
    if (s.name == "cuInit") {
      f.init = s;
    }
  }
  f.driver_version = t.driver_version;
  f.library_path = t.library_path;
  f.load_error = t.load_error;
  f.missing_symbols = t.missing_required;
  f.missing_optional_symbols = t.missing_optional;
  f.devices = t.devices;
  for (std::size_t i = 0; i < f.devices.size(); ++i) {
    f.devices[i].index = static_cast<int>(i);
  }
  f.deadline_hit = f.deadline_hit || t.timed_out;
  if (!t.done) {
    f.child_error = t.child_error;
  }
  f.enumeration_complete =
      t.done && t.all_steps_ok() && f.init.ok && f.load_error.empty() && f.missing_symbols.empty();
}

// CUDA_ERROR_DEVICE_UNAVAILABLE (46: exclusive-process mode held by another process, or busy) or
// CUDA_ERROR_OUT_OF_MEMORY (2: another process holds the memory) at the first failing step, when
// that step is creating the context or the test allocation: the GPU works but is taken.
// https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUresult)
bool refused_as_busy(const std::vector<CudaStep>& steps) {
  constexpr int k_out_of_memory = 2;
  constexpr int k_device_unavailable = 46;
  const auto bad =
      std::find_if(steps.begin(), steps.end(), [](const CudaStep& s) { return !s.ok; });
  if (bad == steps.end() || bad->timed_out || !bad->error_code) {
    return false;
  }
  const bool busy_code =
      *bad->error_code == k_device_unavailable || *bad->error_code == k_out_of_memory;
  return busy_code && (bad->name == "primary_context" || bad->name == "alloc");
}

// The per-GPU child's steps become the device's; it is usable only when every step passed and
// the child tested the GPU it was meant to.
void apply_gpu(const Transcript& t, const std::string& visible_as, CudaDevice& d) {
  d.visible_as = visible_as;
  d.steps = t.steps;
  d.active = t.active;
  d.fabric = t.fabric;
  d.h2d_gbps = t.h2d_gbps;
  d.d2h_gbps = t.d2h_gbps;
  if (!t.bandwidth_not_checked.empty()) {
    d.bandwidth_not_checked = t.bandwidth_not_checked;
  }
  if (!t.done && t.all_steps_ok()) {
    d.steps.push_back(child_step(t));
  }
  if (!t.devices.empty() && t.devices.front().bus_id != d.bus_id) {
    CudaStep wrong;
    wrong.name = "device_get";
    wrong.error_name = "WRONG_DEVICE";
    wrong.error_text = fmt::format("CUDA_VISIBLE_DEVICES={} showed the child {} instead of {}",
                                   visible_as, t.devices.front().bus_id, d.bus_id);
    d.steps.push_back(std::move(wrong));
  }
  // A GPU whose memory or integer arithmetic the active step found wrong is not usable (and not
  // tested with the others); its own rules say why. The checksum is judged across GPUs by rules.
  d.usable = t.done &&
             std::all_of(d.steps.begin(), d.steps.end(), [](const CudaStep& s) { return s.ok; }) &&
             !d.active.memory_bad() && d.active.integer_mismatches == 0;
  d.in_use = !d.usable && t.done && refused_as_busy(d.steps);
  d.derive_timing();
}

std::vector<EnvOverride> job_env(const LiveProbeInput& in, std::optional<std::string> visible) {
  return {{"CUDA_DEVICE_ORDER", in.job_device_order}, {"CUDA_VISIBLE_DEVICES", std::move(visible)}};
}

// A child ended by a signal this process did not send (child::ChildEnd::killed_from_outside):
// most often the kernel's OOM killer, the memory cgroup's limit reached by the pinned buffers of
// the bandwidth step. Neither the GPU's nor the driver's doing, so never a verdict about a GPU:
// the checker could not do its job (exit 2).
void refuse_outside_kill(const ChildGroup& group, std::size_t id, const BandwidthRequest& bw,
                         std::size_t gpus) {
  const auto killed = child::outside_kill_text(group.end(id));
  if (!killed) {
    return;
  }
  const std::string pinned =
      bw.run
          ? fmt::format(", {} MiB of it the bandwidth step's pinned buffers (each GPU child pins "
                        "{} MiB; --no-bandwidth leaves them out)",
                        (gpus * bw.bytes) >> 20, bw.bytes >> 20)
          : std::string();
  throw CheckerFailure(fmt::format(
      "the CUDA child ({}) was {} The live stage needs about {} MiB of host memory on {}{}: raise "
      "the memory limit (docs/cuda-probe.md#memory). Or another process killed it. No verdict "
      "about the GPU",
      group.label(id), *killed, host_memory_need_bytes(gpus, bw.run) >> 20, counted(gpus, "GPU"),
      pinned));
}

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

double bandwidth_estimate_s(const BandwidthRequest& r, std::size_t gpus) {
  const double rate = k_bandwidth_estimate_gbps * 1e9;
  const double host = static_cast<double>(2 * r.repeats + 1) * static_cast<double>(r.bytes) / rate;
  const double pairs = gpus > 1 ? static_cast<double>(gpus * (gpus - 1)) : 0;
  return host + pairs * r.repeats * static_cast<double>(r.peer_bytes) / rate;
}

std::size_t host_memory_need_bytes(std::size_t gpus, bool bandwidth) {
  const std::size_t cuda_children = gpus + 2; // enumeration, one per GPU, multi-GPU
  const std::size_t nvml_children = gpus + 1; // system, one per GPU
  return k_checker_host_bytes + cuda_children * k_cuda_child_host_bytes +
         nvml_children * k_nvml_child_host_bytes + (bandwidth ? gpus * k_bandwidth_bytes : 0);
}

Result<CudaFacts> run_live_probe(const LiveProbeInput& in) {
  CudaFacts f;
  f.ran = true;
  f.source = "live";
  f.library = in.library;
  f.timeout_s = in.timeout_s;
  f.device_order = in.job_device_order.value_or("");
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(in.timeout_s));
  const std::string library = in.library;

  const child::InterruptGuard interrupt_guard(
      child::DriverStage::cuda);     // declared first: restored after the group has settled
  std::deque<child::Letter> letters; // one per multi-GPU child, made before its fork
  ChildGroup group = make_child_group();
  // Enumeration sees every GPU (no CUDA_VISIBLE_DEVICES) in the job's CUDA_DEVICE_ORDER: its
  // indices are the ones a recommendation without CUDA_VISIBLE_DEVICES refers to.
  auto enumeration = group.spawn({"enumeration", job_env(in, std::nullopt),
                                  [library](LineWriter& out) { enumeration_child(library, out); }});
  if (!enumeration) {
    throw CheckerFailure("cannot start the CUDA enumeration child: " + enumeration.error().message);
  }
  const std::size_t enum_id = *enumeration;

  f.bandwidth = {in.bandwidth.run, in.bandwidth.bytes, in.bandwidth.peer_bytes,
                 in.bandwidth.repeats, in.bandwidth_not_checked};
  // A GPU another process holds is tested but not timed: its figures would be the other
  // process's traffic as much as its link, and the copies would slow that process down.
  const auto request_for = [&](const std::string& bus_id) {
    BandwidthRequest r = in.bandwidth;
    r.run = r.run && in.busy.count(bus_id) == 0;
    return r;
  };
  f.active = {in.active.run, in.active.seconds, in.active.memory_fraction,
              static_cast<unsigned long long>(in.active.memory_cap), in.active_not_checked};
  // Never our kernels on a GPU a job holds.
  // The per-GPU children's deadline is never before start + k_per_gpu_share x the stage's time:
  // the step stops starting work k_active_margin_s before that.
  const auto active_not_after =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                  std::max(0.0, in.timeout_s * k_per_gpu_share - k_active_margin_s)));
  const auto active_for = [&](const std::string& bus_id) {
    ActiveRequest r = in.active;
    r.run = r.run && in.busy.count(bus_id) == 0;
    r.not_after = active_not_after;
    return r;
  };
  std::vector<GpuChild> gpu_children;
  const auto start_gpu_child = [&](const std::string& visible_as, std::optional<int> cuda_index,
                                   const std::string& bus_id) {
    auto id = group.spawn({"gpu " + visible_as, job_env(in, visible_as),
                           [library, request = request_for(bus_id), active = active_for(bus_id)](
                               LineWriter& out) { gpu_child(library, request, active, out); }});
    if (!id) {
      // this process's own limits (RLIMIT_NPROC, memory), not the GPU's fault
      throw CheckerFailure("cannot start the CUDA child for GPU " + visible_as + ": " +
                           id.error().message);
    }
    gpu_children.push_back({*id, visible_as, cuda_index});
  };
  for (const auto& gpu : in.driver_gpus) {
    if (is_gpu_uuid(gpu.uuid)) {
      start_gpu_child(*gpu.uuid, std::nullopt, gpu.bus_id);
    }
  }

  // A multi-GPU child that sees `visible` (CUDA_VISIBLE_DEVICES, in order): cuInit at once, then
  // the GPUs its plan names.
  const TimingUntil timing_until = deadline - std::chrono::duration_cast<Clock::duration>(
                                                  std::chrono::duration<double>(k_timing_margin_s));
  const auto spawn_multi = [&](const std::vector<std::string>& visible) {
    child::Letter* letter = &letters.emplace_back(); // the child's copy of the parent's memory
    auto id = group.spawn(
        {"multi-gpu", job_env(in, fmt::format("{}", fmt::join(visible, ","))),
         [library, letter, deadline, request = in.bandwidth, timing_until](LineWriter& out) {
           multi_gpu_child(library, *letter, deadline, request, timing_until, out);
         }});
    if (!id) {
      throw CheckerFailure("cannot start the multi-GPU CUDA child: " + id.error().message);
    }
    return std::pair(*id, letter);
  };
  // Started now over every driver GPU by UUID: its cuInit (seconds on a node without persistence
  // mode) runs beside the others' instead of after enumeration.
  std::vector<std::string> waiting_visible;
  for (const auto& gpu : in.driver_gpus) {
    if (is_gpu_uuid(gpu.uuid)) {
      waiting_visible.push_back(*gpu.uuid);
    }
  }
  std::optional<std::pair<std::size_t, child::Letter*>> waiting;
  if (waiting_visible.size() >= 2) {
    waiting = spawn_multi(waiting_visible);
  }

  if (!group.pump_until(deadline, [&] { return group.finished(enum_id); })) {
    group.kill_at_deadline(enum_id);
    f.deadline_hit = true;
  }
  refuse_outside_kill(group, enum_id, in.bandwidth, in.driver_gpus.size());
  apply_enumeration(transcript(group, enum_id), f);
  f.isolation = group.isolation(enum_id);
  if (!f.enumeration_complete) {
    group.settle(k_settle_grace);
    f.wall_ms = ms_between(start, Clock::now());
    return f;
  }

  // Pair each CUDA device with a child already testing it (same UUID), or start one.
  for (auto& d : f.devices) {
    auto it = std::find_if(gpu_children.begin(), gpu_children.end(), [&](const GpuChild& c) {
      return !c.cuda_index && d.uuid && same_uuid(d.uuid, c.visible_as);
    });
    if (it != gpu_children.end()) {
      it->cuda_index = d.index;
      continue;
    }
    const std::string visible_as = is_gpu_uuid(d.uuid) ? *d.uuid : std::to_string(d.index);
    start_gpu_child(visible_as, d.index, d.bus_id); // throws CheckerFailure when it cannot fork
  }
  for (const auto& c : gpu_children) {
    if (!c.cuda_index) {
      group.stop(c.id); // a driver GPU CUDA does not list: the rules report it from the facts
    }
  }

  const std::vector<std::string> admitted = [&] {
    std::vector<GpuRef> refs;
    for (const auto& d : f.devices) {
      refs.push_back({d.bus_id, d.uuid});
    }
    return parse_visible_devices(in.job_visible_devices, refs).bus_ids;
  }();
  const bool peer_possible =
      admitted.size() >= 2 &&
      std::none_of(f.missing_optional_symbols.begin(), f.missing_optional_symbols.end(),
                   [](const std::string& s) {
                     return s == "cuDeviceCanAccessPeer" || s == "cuCtxEnablePeerAccess" ||
                            s == "cuMemcpyPeer";
                   });
  // The plan for GPUs `devices` (CUDA indices) of a child that sees `visible` (GPU names, in its
  // order); nullopt when one of them is not among those.
  const auto plan_for =
      [&](const std::vector<int>& devices,
          const std::vector<std::string>& visible) -> std::optional<MultiGpuPlan> {
    MultiGpuPlan plan;
    for (int i : devices) {
      const CudaDevice& d = f.devices[static_cast<std::size_t>(i)];
      const auto at = std::find_if(visible.begin(), visible.end(), [&](const std::string& name) {
        return same_uuid(d.uuid, name) || name == std::to_string(i);
      });
      if (at == visible.end()) {
        return std::nullopt;
      }
      plan.gpus.push_back(
          {static_cast<int>(at - visible.begin()), i, in.busy.count(d.bus_id) == 0});
    }
    return plan;
  };
  // A multi-GPU child over `devices`, by UUID when every one is known, sent its plan at once.
  const auto start_multi = [&](const std::vector<int>& devices) {
    const bool by_uuid = std::all_of(devices.begin(), devices.end(), [&](int i) {
      return is_gpu_uuid(f.devices[static_cast<std::size_t>(i)].uuid);
    });
    std::vector<std::string> names;
    for (int i : devices) {
      names.push_back(by_uuid ? *f.devices[static_cast<std::size_t>(i)].uuid : std::to_string(i));
    }
    const auto [id, letter] = spawn_multi(names);
    letter->send(encode_plan(*plan_for(devices, names)));
    return id;
  };
  // The GPUs the job may use together, in CUDA order.
  std::vector<int> admitted_indices;
  for (const auto& d : f.devices) {
    if (std::find(admitted.begin(), admitted.end(), d.bus_id) != admitted.end()) {
      admitted_indices.push_back(d.index);
    }
  }
  // Started at once beside the per-GPU children, so that on a healthy node the stage takes about
  // one GPU's start-up plus the peer copies. Its result counts only when every one of its GPUs
  // then passes its own test; otherwise it is stopped and run again on the GPUs that passed.
  std::optional<std::size_t> early_multi;
  if (peer_possible && admitted_indices.size() >= 2) {
    const auto plan = waiting ? plan_for(admitted_indices, waiting_visible) : std::nullopt;
    if (plan && waiting->second->send(encode_plan(*plan))) {
      early_multi = waiting->first;
    } else {
      early_multi = start_multi(admitted_indices);
    }
  }
  if (waiting && early_multi != waiting->first) {
    group.stop(waiting->first); // not needed, or it cannot see every GPU the job admits
  }

  const auto now = Clock::now();
  const auto gpu_deadline =
      peer_possible
          ? now + std::chrono::duration_cast<Clock::duration>((deadline - now) * k_per_gpu_share)
          : deadline;
  const auto all_gpus_finished = [&] {
    return std::all_of(gpu_children.begin(), gpu_children.end(),
                       [&](const GpuChild& c) { return !c.cuda_index || group.finished(c.id); });
  };
  if (!group.pump_until(gpu_deadline, all_gpus_finished)) {
    for (const auto& c : gpu_children) {
      if (c.cuda_index && !group.finished(c.id)) {
        group.kill_at_deadline(c.id);
        f.deadline_hit = true;
      }
    }
  }
  for (const auto& c : gpu_children) {
    if (c.cuda_index) {
      refuse_outside_kill(group, c.id,
                          request_for(f.devices[static_cast<std::size_t>(*c.cuda_index)].bus_id),
                          f.devices.size());
      CudaDevice& d = f.devices[static_cast<std::size_t>(*c.cuda_index)];
      apply_gpu(transcript(group, c.id), c.visible_as, d);
      if (const auto busy = in.busy.find(d.bus_id); in.bandwidth.run && busy != in.busy.end()) {
        d.bandwidth_not_checked = fmt::format("in use by {}", busy->second);
      }
      if (const auto busy = in.busy.find(d.bus_id); in.active.run && busy != in.busy.end()) {
        d.active.not_checked = fmt::format("in use by {}", busy->second);
      }
    }
  }

  // The multi-GPU test's GPUs: those that passed and that the job's CUDA_VISIBLE_DEVICES admits.
  std::vector<int> candidates;
  for (int i : admitted_indices) {
    if (f.devices[static_cast<std::size_t>(i)].usable) {
      candidates.push_back(i);
    }
  }
  std::optional<std::size_t> multi;
  if (early_multi && candidates == admitted_indices) {
    multi = early_multi;
  } else {
    if (early_multi) {
      group.stop(*early_multi); // it included a GPU that failed on its own
    }
    if (peer_possible && candidates.size() >= 2 && Clock::now() < deadline) {
      multi = start_multi(candidates);
    }
  }
  if (multi) {
    {
      if (!group.pump_until(deadline, [&] { return group.finished(*multi); })) {
        group.kill_at_deadline(*multi);
        f.deadline_hit = true;
      }
      refuse_outside_kill(group, *multi, in.bandwidth, f.devices.size());
      const Transcript t = transcript(group, *multi);
      for (const auto& s : t.steps) {
        if (s.error_name == k_checker_resources) {
          throw CheckerFailure("the multi-GPU CUDA child: " + s.error_text);
        }
      }
      f.multi_gpu_ran = true;
      f.multi_gpu_devices = candidates;
      f.multi_gpu_steps = t.steps;
      // Stopped while timing copies, every pair verified before: bandwidth not measured, not a
      // hang (the pairs say so).
      const bool finished = t.done || t.timing_cut;
      if (!finished && t.all_steps_ok() &&
          std::all_of(t.peers.begin(), t.peers.end(),
                      [](const CudaPeerResult& p) { return p.ok; })) {
        f.multi_gpu_steps.push_back(child_step(t));
      }
      f.peers = t.peers;
      f.multi_gpu_ok =
          finished && t.all_steps_ok() && !t.peers.empty() &&
          std::all_of(t.peers.begin(), t.peers.end(), [](const CudaPeerResult& p) { return p.ok; });
    }
  }
  group.settle(k_settle_grace);
  f.wall_ms = ms_between(start, Clock::now());
  return f;
}

} // namespace gpf::cuda
