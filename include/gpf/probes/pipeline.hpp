#pragma once
// The fixed pipeline of probes: each reads through the Host, parses, and records its status.
#include "gpf/facts/facts.hpp"
#include "gpf/host/host.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

// --budget's default: a Slurm prolog's habits (docs/usage.md#time-budget).
inline constexpr double k_default_budget_s = 60;

struct ProbeOptions {
  std::optional<std::string> dmesg_file; // --dmesg FILE ("-" = stdin)
  std::optional<std::string> libcuda;    // --libcuda PATH
  bool no_cuda = false;                  // --no-cuda
  bool skip_busy = false;             // --skip-busy: no live CUDA probe while a process holds a GPU
  double cuda_timeout_s = 30;         // --timeout / --cuda-timeout (CUDA and NVML stages)
  std::optional<std::string> libnvml; // --libnvml PATH
  bool no_nvml = false;               // --no-nvml
  std::optional<std::string> expect_cuda; // --expect-cuda X.Y
  std::optional<std::string> nccl;        // --nccl[=PATH]: "" = where the job finds libnccl.so.2
  bool nccl_job_env = false;              // --nccl-env job: keep the job's NCCL_* variables
  double nccl_timeout_s = 60;             // --nccl-timeout
  bool no_bandwidth = false;              // --no-bandwidth: no timed copies in the CUDA stage
  bool no_active = false;                 // --no-active: no test kernels in the CUDA stage
  double active_seconds = 2;              // --active-time: the active step's time per GPU
  // --budget: seconds the whole check may take (nullopt: no limit); a timed stage starts only
  // when its cost estimate fits what is left (docs/usage.md).
  std::optional<double> budget_s = k_default_budget_s;
  // When the check started (these options were made), for the budget.
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  // Seconds of the budget left now; nullopt without a budget.
  std::optional<double> budget_left_s() const {
    if (!budget_s) {
      return std::nullopt;
    }
    return *budget_s -
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  }
};

// A live stage costs at most its deadline (the CUDA and NVML children, beside each other:
// --cuda-timeout; the NCCL child after them: --nccl-timeout): "budget: …", the reason it does not
// start, when that does not fit what is left of --budget; nullopt when it fits or there is no
// budget.
std::optional<std::string> stage_over_budget(const ProbeOptions& options, double deadline_s);

// An optional stage and its cost estimate in seconds.
struct StageEstimate {
  std::string name;
  double estimate_s = 0;
};
// Which optional stages start within left_s seconds (one flag per stage, in the given order): in
// ascending order of their estimates, each while the sum of those admitted still fits.
std::vector<bool> stages_within(const std::vector<StageEstimate>& stages, double left_s);

// Runs every probe in order. Never throws for anything the host says; a probe that cannot read
// its input records ProbeState::error with the OS reason.
Facts collect_facts(const Host& host, const ProbeOptions& options);

// A probe's signature: read through host, fill facts, return its status (name, state, message).
// The pipeline times it.
using ProbeFn = ProbeStatus (*)(const Host& host, const ProbeOptions& options, Facts& facts);

// A probe in two phases: its start (children forked to work beside a later probe) returns its
// in-flight state, which the pipeline holds and hands to its finish at the probe's own row.
struct ProbeStarted {
  virtual ~ProbeStarted() = default;
};
using ProbeStartFn = std::unique_ptr<ProbeStarted> (*)(const Host& host,
                                                       const ProbeOptions& options,
                                                       const Facts& facts);
// `started`: what the start returned (nullptr when it started nothing).
using ProbeFinishFn = ProbeStatus (*)(const Host& host, const ProbeOptions& options, Facts& facts,
                                      std::unique_ptr<ProbeStarted> started);

// The order collect_facts runs the phases in: each row's name, "start NAME" for a start phase.
std::vector<std::string> probe_schedule();

} // namespace gpf
