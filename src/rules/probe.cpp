// Rules whose id starts with "probe.": the checker's own probes: an input that could not be read is
// never a pass.
#include "common.hpp"

namespace gpf {

std::span<const Rule> probe_rules() {
  static const Rule rows[] = {
      {.id = "probe.failed",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Every probe could read its input",
       .remedy =
           "Run as root or fix the unreadable path named in the evidence; a check that could not read is not a pass",
       .source = "docs/sources.md#design-decisions-of-the-checker",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& p : c.facts.probes) {
           // the kernel log has its own finding (log.not-readable) with the remedies that fit it
           if (p.state == ProbeState::error && p.name != "kernel-log") {
             hits.push_back(
                 {fmt::format("Probe \"{}\" could not read its input, so its checks are incomplete",
                              p.name),
                  {p.message}});
           }
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
