#pragma once
// Facts from the CUDA probe (the CUDA-probe issue). Live: children that dlopen libcuda.so.1 under
// a deadline; replay: a snapshot's cuda.json. Every CUDA call happens in a child process.
#include "gpf/facts/isolation.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// One timed step of a child ("load", "cuInit", "device_get", "primary_context", "alloc", "memset",
// "copy_roundtrip", "release"; docs/cuda-probe.md lists them per child).
struct CudaStep {
  std::string name;
  bool ok = false;
  bool timed_out = false; // the step began and never finished before the deadline
  double duration_ms = 0;
  std::optional<int> error_code; // CUresult when the step failed
  std::string
      error_name; // "CUDA_ERROR_UNKNOWN"; "DATA_MISMATCH", "CHILD_DIED" for non-CUresult failures
  std::string error_text; // cuGetErrorString text, or what went wrong

  // Every member (the JSON round-trip tests compare whole facts).
  bool operator==(const CudaStep&) const = default;
};

// The sum of the named steps' times, or nullopt unless each of them ran exactly once and passed: a
// failed or hung step's time is how long it ran until it stopped, and a missing one was not timed,
// so a sum over them would be a wrong figure rather than no figure.
template <std::size_t N>
std::optional<double> sum_of_steps(const std::vector<CudaStep>& steps,
                                   const std::array<std::string_view, N>& names) {
  std::array<bool, N> seen{};
  double total = 0;
  for (const auto& s : steps) {
    for (std::size_t i = 0; i < N; ++i) {
      if (s.name == names[i]) {
        if (!s.ok || seen[i]) {
          return std::nullopt;
        }
        seen[i] = true;
        total += s.duration_ms;
      }
    }
  }
  for (const bool b : seen) {
    if (!b) {
      return std::nullopt;
    }
  }
  return total;
}

// Init time: cuInit + primary_context, the two steps in which the driver brings the GPU up (what
// nvidia-persistenced saves a job); loading the library and naming the device are not the GPU's.
inline constexpr std::array<std::string_view, 2> k_cuda_init_steps{"cuInit", "primary_context"};
// Start-up time: from opening libcuda to a working context on the GPU, what a job waits before
// its first kernel (the per-GPU child's steps up to the context; the test allocation is not a
// job's).
inline constexpr std::array<std::string_view, 4> k_cuda_startup_steps{
    "load", "cuInit", "device_get", "primary_context"};

// One word of the active step's memory test that read back wrong.
struct CudaMemoryError {
  std::string pattern; // "address", "address-inverse", "walking-one", "walking-zero", "random"
  unsigned long long offset = 0;  // byte offset in the tested region
  unsigned long long address = 0; // the word's device (virtual) address
  unsigned expected = 0;
  unsigned got = 0;

  bool operator==(const CudaMemoryError&) const = default;
};

// The active step on one GPU (docs/cuda-probe.md#active-step): a memory test of a bounded region
// and a compute kernel whose output is checksummed. Seconds long: it finds hard faults, never
// rare intermittent corruption.
struct CudaActiveResult {
  bool ran = false;        // the step ran on this GPU (all of it or as far as not_checked says)
  std::string not_checked; // why it did not run, or what of it did not ("" = all of it ran)
  std::optional<double> first_kernel_ms; // the first launch and its synchronisation
  // Memory: the region, the patterns written and verified on the GPU, the words that differed.
  unsigned long long memory_bytes = 0;
  std::vector<std::string> patterns;
  unsigned long long memory_mismatches = 0;
  std::vector<CudaMemoryError> memory_errors; // the first ones (at most 8 per pattern)
  double memory_ms = 0;
  // Compute: FNV-1a of the output words ("" = not computed), compared bitwise across the node's
  // GPUs of one model; the integer words checked against the host's own computation.
  std::string checksum;
  unsigned long long integer_mismatches = 0;
  std::string integer_error; // the first: "thread N: expected 0x…, got 0x…"
  double compute_ms = 0;

  bool memory_bad() const { return memory_mismatches > 0; }
  bool operator==(const CudaActiveResult&) const = default;
};

// The fabric allocation probe on one GPU (docs/cuda-probe.md#fabric-allocation): the device
// attribute CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, and where it is 1 one allocation of
// one granule with cuMemCreate requesting a fabric handle (what NCCL's multi-node NVLink transport
// and IMEX-shared memory need), released at once. The attribute can say 1 while the allocation is
// refused (no IMEX channel, one this user cannot open, no IMEX daemon).
struct CudaFabricResult {
  bool asked = false;           // the per-GPU child reached the probe
  std::optional<int> attribute; // the attribute's value; nullopt: not asked or unknown
  bool tried = false;           // an allocation was tried
  bool allocated = false;       // ... and the driver made it (then released it)
  // Why no allocation was tried ("" when one was): attribute 0, the attribute unknown (a driver
  // older than CUDA 12.3), or libcuda lacking the entry points ("not asked: …").
  std::string not_tried;
  unsigned long long granularity = 0; // bytes: the one granule asked for, when known
  // The refusal: the call ("cuMemGetAllocationGranularity", "cuMemCreate") and its CUresult.
  std::string call;
  std::optional<int> error_code;
  std::string error_name;
  std::string error_text;

  bool refused() const { return tried && !allocated; }
  bool operator==(const CudaFabricResult&) const = default;
};

struct CudaDevice {
  int index = 0;                   // CUDA's enumeration index under the job's CUDA_DEVICE_ORDER
  std::string bus_id;              // normalised "dddd:bb:dd.f"
  std::optional<std::string> uuid; // "GPU-…"
  std::optional<std::string> name;
  std::optional<int> cc_major;
  std::optional<int> cc_minor;
  std::optional<unsigned long long> total_mem_bytes;
  std::optional<int> compute_mode; // CU_DEVICE_ATTRIBUTE_COMPUTE_MODE
  std::vector<CudaStep> steps;     // the per-GPU child's steps
  bool usable = false;             // every step passed
  // Not usable only because another process holds it: context creation (or the test allocation)
  // was refused with CUDA_ERROR_DEVICE_UNAVAILABLE (exclusive-process mode, busy) or
  // CUDA_ERROR_OUT_OF_MEMORY. Working hardware, not a failure.
  bool in_use = false;
  std::vector<std::string>
      holders;            // "PID (comm)" of processes with its device node open, when known
  std::string visible_as; // the CUDA_VISIBLE_DEVICES value its child ran with
  // Decoded once from steps by derive_timing(), where the probe's result is read (live or
  // cuda.json); nullopt when a step of the figure is missing, failed or hung.
  std::optional<double> init_ms;    // k_cuda_init_steps
  std::optional<double> startup_ms; // k_cuda_startup_steps
  // Copy bandwidth between pinned host memory and this GPU (the per-GPU child's "bandwidth"
  // step: the best of the timed copies), in GB/s (1e9 bytes per second); nullopt when not
  // measured, and then bandwidth_not_checked says why ("" when the step was not asked for).
  std::optional<double> h2d_gbps;
  std::optional<double> d2h_gbps;
  std::string bandwidth_not_checked;
  CudaActiveResult active; // the active step (ran = false when it did not)
  CudaFabricResult fabric; // the fabric allocation probe (asked = false when it did not run)

  void derive_timing() {
    init_ms = sum_of_steps(steps, k_cuda_init_steps);
    startup_ms = sum_of_steps(steps, k_cuda_startup_steps);
  }

  bool operator==(const CudaDevice&) const = default;
};

struct CudaPeerResult {
  int from = 0; // CUDA indices
  int to = 0;
  bool can_access = false;
  bool ok = false;
  bool timed_out = false;
  double duration_ms = 0;
  std::string error_name;
  std::optional<int> error_code;
  std::string error_text;
  // Peer copy bandwidth from -> to (best of the timed copies), GB/s; nullopt when not measured,
  // and then bandwidth_not_checked says why when the timing was asked for.
  std::optional<double> gbps;
  std::string bandwidth_not_checked;

  bool operator==(const CudaPeerResult&) const = default;
};

// The bandwidth step as the stage ran it: copies timed `repeats` times per direction
// (the best counts), or why it did not run at all ("budget: …", "--no-bandwidth").
struct CudaBandwidthPlan {
  bool run = false;
  std::size_t bytes = 0;      // per host copy
  std::size_t peer_bytes = 0; // per peer copy
  int repeats = 0;
  std::string not_checked;

  bool operator==(const CudaBandwidthPlan&) const = default;
};

// The active step as the stage ran it: its time per GPU and memory bounds, or why it did not run
// at all ("--no-active", "budget: …").
struct CudaActivePlan {
  bool run = false;
  double seconds = 0;                // per GPU, the GPUs in parallel
  double memory_fraction = 0;        // of the free memory
  unsigned long long memory_cap = 0; // bytes
  std::string not_checked;

  bool operator==(const CudaActivePlan&) const = default;
};

// A real enumeration takes a few steps per GPU; a recorded list longer than this is cut on reading
// (bounded memory on a hostile cuda.json).
inline constexpr std::size_t k_max_replayed_steps = 256;

struct CudaFacts {
  bool ran = false;         // the probe ran live or was replayed
  std::string source;       // "live", "cuda.json", or "" when skipped
  std::string library;      // path or soname opened
  std::string library_path; // the file the loader picked (symlinks resolved), when known
  std::string load_error;   // dlopen/dlsym text when the library could not be used
  std::vector<std::string> missing_symbols;          // required entry points not found
  std::vector<std::string> missing_optional_symbols; // optional ones (a measurement is skipped)
  std::optional<int> driver_version;                 // cuDriverGetVersion, e.g. 12040
  CudaStep init;                                     // cuInit in the enumeration child
  std::vector<CudaStep> enumeration_steps; // every step of the enumeration child, cuInit included
  // A replayed cuda.json keeps at most k_max_replayed_steps of each step list (and the first
  // failed step after them); the others are only counted here.
  std::size_t steps_not_kept = 0;
  std::string device_order;        // CUDA_DEVICE_ORDER the enumeration ran with ("" = unset)
  std::vector<CudaDevice> devices; // in CUDA order
  bool multi_gpu_ran = false;
  std::optional<bool> multi_gpu_ok;
  std::vector<int> multi_gpu_devices;    // CUDA indices the multi-GPU child covered
  std::vector<CudaStep> multi_gpu_steps; // its set-up steps (cuInit, contexts, buffers)
  std::vector<CudaPeerResult> peers;
  CudaBandwidthPlan bandwidth;
  CudaActivePlan active;
  bool deadline_hit = false;
  double timeout_s = 0; // --cuda-timeout the stage ran under
  double wall_ms = 0;
  std::string child_error;                 // the enumeration child died or spoke garbage
  std::optional<ChildIsolation> isolation; // as the first child reported it; nullopt: not known
  bool enumeration_complete = false;       // cuInit passed and the whole device list was learnt

  // CUDA's device list is known (possibly empty): GPUs are then judged in CUDA's order.
  bool enumerated() const { return ran && enumeration_complete; }
  const CudaDevice* device_by_bus(const std::string& bus_id) const {
    for (const auto& d : devices) {
      if (d.bus_id == bus_id) {
        return &d;
      }
    }
    return nullptr;
  }

  bool operator==(const CudaFacts&) const = default;
};

} // namespace gpf
