// The env format: shell `export` lines safe to eval, the verdict as a comment.
#include "gpf/report/report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpf {

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string render_env(const Report& r) {
  const Assessment& a = r.assessment;
  // printable: the headline may quote the job's CUDA_VISIBLE_DEVICES, which must not end the
  // comment
  std::string out = fmt::format("# gpu-preflight verdict: {} ({})\n", verdict_name(a.verdict),
                                verdict_headline(a));
  out += fmt::format("# {}\n", versions_line(r.facts)); // printable: one comment line
  // Each id once, failures first, with how many GPUs it hit. Ids are [a-z0-9.-]; the message is
  // not emitted, so nothing here can break out of the comment.
  struct Line {
    Severity severity;
    std::string id;
    int gpus = 0;
  };
  std::vector<Line> lines;
  for (const auto& f : a.findings) {
    if (f.severity == Severity::info) {
      continue;
    }
    auto it = std::find_if(lines.begin(), lines.end(), [&](const Line& l) { return l.id == f.id; });
    if (it == lines.end()) {
      lines.push_back({f.severity, f.id});
      it = lines.end() - 1;
    }
    it->severity = std::max(it->severity, f.severity);
    it->gpus += f.gpu ? 1 : 0;
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line& x, const Line& y) { return x.severity > y.severity; });
  for (const auto& l : lines) {
    out += fmt::format("# {}: {}{}\n", severity_name(l.severity), l.id,
                       l.gpus > 1 ? fmt::format(" ({} GPUs)", l.gpus) : std::string());
  }
  // A failed node gets no GPU: a --min-gpus fail still has a recommendation, which a script that
  // evaluates this without checking its status must not start a job on.
  const bool failed = a.verdict == Verdict::fail;
  if (!failed && a.recommendation.cuda_device_order &&
      !a.recommendation.cuda_visible_devices.empty()) {
    out += fmt::format("export CUDA_DEVICE_ORDER={}\n",
                       shell_quote(*a.recommendation.cuda_device_order));
  }
  out += fmt::format("export CUDA_VISIBLE_DEVICES={}\n",
                     shell_quote(failed ? std::string() : a.recommendation.cuda_visible_devices));
  if (r.exit_code != 0) {
    // `eval "$(gpu-preflight check --format env)" && train` must not train: eval's status is that
    // of the last command it ran, never that of the command substitution.
    out += "# not ready: evaluating this output fails\nfalse\n";
  }
  return out;
}

} // namespace gpf
