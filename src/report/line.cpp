// The one-line summary (--format line): at most 80 bytes, for Slurm drain reasons and Kubernetes
// node-problem-detector messages, which cut at 80. Only ids, counts and bus ids: plain ASCII.
#include "gpf/facts/budget.hpp"
#include "gpf/report/report.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpf {

std::string render_line(const Report& r) {
  const Assessment& a = r.assessment;
  const Recommendation& rec = a.recommendation;
  const auto counts = rec.mig ? fmt::format("{} MIG", rec.devices)
                              : fmt::format("{}/{} GPUs", rec.devices, a.gpus.size());
  std::string line;
  const Finding* primary = a.primary_cause();
  if (a.verdict == Verdict::pass || primary == nullptr) {
    line = fmt::format("{} {}",
                       a.verdict == Verdict::pass   ? "PASS"
                       : a.verdict == Verdict::warn ? "WARN"
                                                    : "FAIL",
                       counts);
  } else {
    const auto head = a.verdict == Verdict::fail ? std::string("FAIL") : "WARN " + counts + ":";
    line = fmt::format("{} {}", head, cause_label(*primary));
    if (a.causes.size() > 1) {
      line += fmt::format(" +{} more", a.causes.size() - 1);
    }
  }
  // A stage asked for and left out by --budget is said on the line itself, whatever the verdict:
  // a prolog logs only this line, and "PASS" alone would read as a node whose CUDA was checked.
  if (const auto over = stages_over_budget(r.facts); !over.empty()) {
    line += fmt::format(" ({} not checked: budget)", fmt::join(over, ", "));
  }
  if (line.size() > k_line_max_bytes) {
    line.resize(k_line_max_bytes);
  }
  return line + "\n";
}

std::string render_summary(const Report& r, bool sets_environment) {
  std::string line = render_line(r);
  line.pop_back();
  line = printable(line); // bus ids come from the host or a snapshot: shown, not obeyed
  const Assessment& a = r.assessment;
  if (a.verdict != Verdict::fail) {
    // fmt, not "literal" + string&&: GCC 12's -O3 -Wrestrict misfires on that (bug 105329)
    line += sets_environment ? fmt::format(" CUDA_VISIBLE_DEVICES={}",
                                           printable(a.recommendation.cuda_visible_devices))
                             : std::string(" (environment unchanged)");
  }
  if (const Finding* primary = a.primary_cause(); primary && !primary->remedy.empty()) {
    line += fmt::format("; fix: {}", printable(primary->remedy));
  }
  return fmt::format("gpu-preflight: {}\n", line);
}

} // namespace gpf
