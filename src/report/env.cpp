// The env format: shell `export` lines safe to eval, the verdict as a comment.
#include "gpf/report/report.hpp"

#include <fmt/format.h>

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
  for (const auto& f : a.findings) {
    if (f.severity != Severity::info) {
      // ids are [a-z0-9.-]; the message is not emitted, so nothing here can break out of the
      // comment
      out += fmt::format("# {}: {}\n", severity_name(f.severity), f.id);
    }
  }
  if (a.recommendation.cuda_device_order && !a.recommendation.cuda_visible_devices.empty()) {
    out += fmt::format("export CUDA_DEVICE_ORDER={}\n",
                       shell_quote(*a.recommendation.cuda_device_order));
  }
  out += fmt::format("export CUDA_VISIBLE_DEVICES={}\n",
                     shell_quote(a.recommendation.cuda_visible_devices));
  if (r.exit_code != 0) {
    // `eval "$(gpu-preflight check --format env)" && train` must not train: eval's status is that
    // of the last command it ran, never that of the command substitution.
    out += "# not ready: evaluating this output fails\nfalse\n";
  }
  return out;
}

} // namespace gpf
