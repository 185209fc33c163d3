#pragma once
// nvml.json (docs/snapshot-format.md): the NVML facts as JSON. The NVML probe replays it and reads
// its children's GPU objects with it, a snapshot records it, and the report writes the same object
// as facts.nvml.
#include "gpf/facts/nvml_facts.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace gpf {

// The NVML facts as JSON: the format of nvml.json and of the report's facts.nvml.
nlohmann::ordered_json nvml_facts_json(const NvmlFacts& nvml);
nlohmann::ordered_json nvml_gpu_json(const NvmlGpu& gpu);
// One GPU's traffic window: the child's "traffic" event.
nlohmann::ordered_json nvml_traffic_json(const NvmlTraffic& traffic);
// Reads nvml.json (or one GPU object). Error naming the member at fault on invalid JSON or a
// mistyped member; unknown members are ignored, missing ones keep their defaults.
Result<NvmlFacts> parse_nvml_json(std::string_view text);
Result<NvmlGpu> nvml_gpu_from_json(const nlohmann::json& j);
Result<NvmlTraffic> nvml_traffic_from_json(const nlohmann::json& j);

} // namespace gpf
