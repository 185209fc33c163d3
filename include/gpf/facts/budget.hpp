#pragma once
// The live stages --budget left out, as the probes recorded them (stage_over_budget's reason,
// "budget: …", on a skipped probe): read by probe.stage-over-budget and the one-line report.
#include "gpf/facts/facts.hpp"

#include <string>
#include <vector>

namespace gpf {

// Whether the probe was skipped because its deadline did not fit --budget.
bool over_budget(const ProbeStatus& probe);

// A live stage as reports name it: the probe's name in capitals ("CUDA", "NVML", "NCCL").
std::string stage_name(const ProbeStatus& probe);

// The stages left out for --budget, in pipeline order, by stage_name.
std::vector<std::string> stages_over_budget(const Facts& facts);

} // namespace gpf
