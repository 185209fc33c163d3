#pragma once
// Probe "nvml" (docs/nvml-probe.md): per-GPU health from libnvidia-ml, asked only in forked
// children under a deadline (never NVML in this process), or under --root the snapshot's nvml.json.
#include "gpf/probes/pipeline.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace gpf {

// The start phase: forks the live NVML children (when the probe is to run live; else nullptr) so
// that they work while the CUDA stage runs; probe_nvml then collects them.
std::unique_ptr<ProbeStarted> start_nvml(const Host& host, const ProbeOptions& options,
                                         const Facts& facts);

// --no-nvml: skipped. --root without --libnvml: replays DIR/nvml.json (absent: skipped;
// unreadable or invalid: error). Otherwise live against --libnvml or the loader's
// libnvidia-ml.so.1, collecting the children start_nvml forked (`started`), or starting them now
// when it forked none. Status error only when no child could be started; NVML's own answers
// (driver not loaded, a lost GPU) are facts for the rules.
ProbeStatus probe_nvml(const Host& host, const ProbeOptions& options, Facts& facts,
                       std::unique_ptr<ProbeStarted> started);

} // namespace gpf
