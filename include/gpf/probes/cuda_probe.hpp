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

// The CUDA facts as JSON: the format of cuda.json and of the report's facts.cuda.
nlohmann::ordered_json cuda_facts_json(const CudaFacts& cuda);
// Reads cuda.json. Error (with the member at fault) on invalid JSON or a mistyped member;
// unknown members are ignored, missing ones keep their defaults.
Result<CudaFacts> parse_cuda_json(std::string_view text);

// "12.4" from cuDriverGetVersion's 12040 (1000 * major + 10 * minor, the CUDA Driver API's
// cuDriverGetVersion: docs/sources.md#cuda-toolkit-and-driver-versions).
std::string cuda_version_text(int version);

} // namespace gpf
