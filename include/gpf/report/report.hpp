#pragma once
// Renders one check's result. JSON keys are in a stable order; every string is made valid UTF-8.
#include "gpf/facts/facts.hpp"
#include "gpf/rules/verdict.hpp"

#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

inline constexpr int k_schema_version = 1;

// How the check was run: when, and the options that change its verdict (the JSON report's
// checked_at and options, so that a report read elsewhere stands alone).
struct RunInfo {
  // The node's name: uname's nodename live, the snapshot's proc/sys/kernel/hostname under --root,
  // nullopt when the snapshot records none (never the checking machine's name then).
  std::optional<std::string> host_name;
  std::chrono::system_clock::time_point checked_at = std::chrono::system_clock::now();
  int min_gpus = 1;
  bool strict = false;
  std::optional<std::string> expect_cuda;  // --expect-cuda as given
  std::vector<std::string> disabled_rules; // --disable, in the order given
};

struct Report {
  const Facts& facts;
  const Assessment& assessment;
  int exit_code;
  RunInfo run;
};

nlohmann::ordered_json report_json(const Report& report);
std::string render_json(const Report& report); // pretty, ends with '\n'
// The same text written to out as it is serialised, without holding it whole (a report of
// thousands of GPUs). Write errors are left in ferror(out) for the caller.
void write_json(const Report& report, std::FILE* out);
std::string render_text(const Report& report, bool color);
std::string render_env(const Report& report); // safe to eval
// One line of at most k_line_max_bytes (newline not counted): "PASS 8/8 GPUs",
// "WARN 7/8 GPUs: gpu.fallen-off-bus 0000:a1:00.0", "FAIL module.nouveau-loaded +1 more": the
// count is what the job gets (the recommendation), the id the primary cause.
inline constexpr std::size_t k_line_max_bytes = 80;
std::string render_line(const Report& report);
// The line a person watching a launch reads on stderr (exec; --format env, whose comments eval
// swallows): render_line, the GPUs the job gets, and the primary cause's remedy.
std::string render_summary(const Report& report, bool sets_environment);

// The verdict in words, after "WARN — ": what the job gets and why ("ready on 1 of 4 GPUs
// (multi-GPU start-up untested on kernel 5.4.0)", "not ready: module.nouveau-loaded"). Text header,
// env comment; printable ASCII-safe (the job's CUDA_VISIBLE_DEVICES is escaped).
std::string verdict_headline(const Assessment& a);
// How a cause is named in one line: its id, and its GPU's bus id when it has one.
std::string cause_label(const Finding& f);
// The versions a ticket needs under the verdict, as nvidia-smi's header gives them: "driver
// 550.54.14 (open), CUDA 12.4, kernel 6.8.0-31-generic" (the CUDA version the driver supports,
// when the CUDA probe read it); printable.
std::string versions_line(const Facts& facts);
// The probes that were skipped or could not read their input, with why:
// "kernel log (the snapshot has no dmesg.txt); CUDA start-up (--no-cuda)"; "" when none.
std::string not_checked(const Facts& facts);
// Assessment::not_checked counted by the probe not read (a rule that reads two unread probes
// counts under each): the JSON report's rules_not_checked, the Prometheus family, the text line.
std::map<std::string, int> rules_not_checked_by_probe(const Assessment& a);

// The Prometheus text exposition format: gauges named gpu_preflight_*, label values escaped,
// no timestamps (docs/integrations/prometheus.md lists the series).
std::string render_prometheus(const Report& report);

// JSON of the facts alone (the "facts" member of the report).
nlohmann::ordered_json facts_json(const Facts& facts);

// Single-quotes s for a POSIX shell.
std::string shell_quote(std::string_view s);

} // namespace gpf
