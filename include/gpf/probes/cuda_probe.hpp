#pragma once
// Probe "cuda" (docs/cuda-probe.md): the live CUDA probe (children under a deadline, never CUDA in
// this process) or, under --root, the snapshot's recorded cuda.json (docs/cuda-json.md).
#include "gpf/probes/pipeline.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpf {

// --no-cuda: skipped. --root without --libcuda: replays DIR/cuda.json (absent: skipped; unreadable
// or invalid: error). Otherwise runs live against --libcuda or the loader's libcuda.so.1, with
// the host's environment as the job's (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER). Status error
// only when the probe itself could not run (no child process); CUDA's own failures are facts.
ProbeStatus probe_cuda(const Host& host, const ProbeOptions& options, Facts& facts);

} // namespace gpf
