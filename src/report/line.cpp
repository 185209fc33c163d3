// The one-line summary (--format line): at most 80 bytes, for Slurm drain reasons and Kubernetes
// node-problem-detector messages, which cut at 80. Only ids, counts and bus ids: plain ASCII.
#include "gpf/facts/budget.hpp"
#include "gpf/report/report.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpf {

namespace {

// The verdict, the GPUs and the primary cause, at most k_line_max_bytes.
std::string verdict_line(const Report& r) {
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
    // the other causes, each id once: the primary's rule on more GPUs is counted as GPUs
    std::vector<std::string_view> others;
    int same = 0;
    for (const std::size_t i : a.causes) {
      const Finding& f = a.findings[i];
      if (&f == primary) {
        continue;
      }
      if (f.id == primary->id) {
        ++same;
      } else if (std::find(others.begin(), others.end(), f.id) == others.end()) {
        others.push_back(f.id);
      }
    }
    if (same > 0) {
      line += fmt::format(" +{} GPU{}", same, same == 1 ? "" : "s");
    }
    if (!others.empty()) {
      line += fmt::format(" +{} more", others.size());
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
  return line;
}

} // namespace

std::string render_line(const Report& r) {
  std::string line = verdict_line(r);
  // The versions where they fit, in plain ASCII, for a ticket or a node condition; not on a
  // FAIL, whose line is a drain reason that stays the same while the cause does.
  const std::string versions = versions_line(r.facts);
  const bool ascii =
      std::all_of(versions.begin(), versions.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (r.assessment.verdict != Verdict::fail && ascii &&
      line.size() + 2 + versions.size() <= k_line_max_bytes) {
    line += "; " + versions;
  }
  return line + "\n";
}

std::string render_summary(const Report& r, bool sets_environment) {
  // bus ids come from the host or a snapshot: shown, not obeyed
  std::string line = printable(verdict_line(r));
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
