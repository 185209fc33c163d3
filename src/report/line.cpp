// The one-line summary (--format line): at most 80 bytes, for Slurm drain reasons and Kubernetes
// node-problem-detector messages, which cut at 80. Only ids, counts and bus ids: plain ASCII.
#include "gpf/report/report.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace gpf {

std::string render_line(const Report& r) {
  const Assessment& a = r.assessment;
  const auto counts = fmt::format("{}/{} GPUs", a.usable_count(), a.gpus.size());
  // The findings that explain the verdict: fails for FAIL, warnings and GPU-level fails for WARN.
  std::vector<const Finding*> causes;
  for (const auto& f : a.findings) {
    const bool host_fail = f.severity == Severity::fail && !f.gpu;
    const bool counts_for_warn = f.severity == Severity::warn || (f.severity == Severity::fail && f.gpu);
    if (a.verdict == Verdict::fail ? host_fail : counts_for_warn) {
      causes.push_back(&f);
    }
  }
  std::string line;
  if (a.verdict == Verdict::pass || causes.empty()) {
    line = fmt::format("{} {}", a.verdict == Verdict::pass ? "PASS" : a.verdict == Verdict::warn ? "WARN" : "FAIL", counts);
  } else {
    const Finding& first = *causes.front();
    const auto head = a.verdict == Verdict::fail ? std::string("FAIL") : "WARN " + counts + ":";
    line = fmt::format("{} {}{}", head, first.id, first.gpu ? " " + *first.gpu : std::string());
    if (causes.size() > 1) {
      line += fmt::format(" +{} more", causes.size() - 1);
    }
  }
  if (line.size() > k_line_max_bytes) {
    line.resize(k_line_max_bytes);
  }
  return line + "\n";
}

} // namespace gpf
