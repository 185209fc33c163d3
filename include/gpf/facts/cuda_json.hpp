#pragma once
// cuda.json (docs/cuda-json.md): the CUDA facts as JSON. The CUDA probe replays it, a snapshot
// records it, and the report writes the same object as facts.cuda.
#include "gpf/facts/cuda_facts.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpf {

// The CUDA facts as JSON: the format of cuda.json and of the report's facts.cuda.
nlohmann::ordered_json cuda_facts_json(const CudaFacts& cuda);
// Reads cuda.json. Error (with the member at fault) on invalid JSON or a mistyped member;
// unknown members are ignored, missing ones keep their defaults.
Result<CudaFacts> parse_cuda_json(std::string_view text);

// One GPU's active-step result as JSON (a member of cuda.json's devices, and the per-GPU child's
// "active" event), and read back: error on a mistyped member.
nlohmann::ordered_json cuda_active_json(const CudaActiveResult& active);
Result<CudaActiveResult> parse_cuda_active_json(const nlohmann::json& json);

// One GPU's fabric allocation result as JSON (a member of cuda.json's devices, and the per-GPU
// child's "fabric" event), and read back: error on a mistyped member.
nlohmann::ordered_json cuda_fabric_json(const CudaFabricResult& fabric);
Result<CudaFabricResult> parse_cuda_fabric_json(const nlohmann::json& json);

// "12.4" from cuDriverGetVersion's 12040 (1000 * major + 10 * minor, the CUDA Driver API's
// cuDriverGetVersion: docs/sources.md#cuda-toolkit-and-driver-versions).
std::string cuda_version_text(int version);

} // namespace gpf
