// The human report: verdict first, findings by severity with evidence and remedy, then the
// recommendation. Colour only when asked (--color) — the caller decides. Text from the inputs is
// shown, never obeyed: control characters come out escaped (printable).
#include "gpf/util/text.hpp"
#include "gpf/report/report.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace gpf {
namespace {

struct Palette {
  bool on;
  std::string paint(std::string_view text, std::string_view code) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  }
};

std::string_view colour_of(Severity s) {
  return s == Severity::fail ? "1;31" : s == Severity::warn ? "1;33" : "36";
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

// The GPU's own health as NVML reported it, in a few words: its nvml.* warnings and failures, or
// "ok"; nothing when NVML did not answer for it (the findings then say why).
std::string health_of(const Report& r, const std::string& bus_id) {
  const NvmlFacts& n = r.facts.nvml;
  if (!n.ran || !n.init_ok() || n.gpu_by_bus(bus_id) == nullptr) {
    return {};
  }
  constexpr std::string_view prefix = "nvml.";
  std::vector<std::string> what;
  for (const auto& f : r.assessment.findings) {
    if (f.gpu == bus_id && f.severity != Severity::info &&
        std::string_view(f.id).substr(0, prefix.size()) == prefix) {
      what.push_back(f.id.substr(prefix.size()));
    }
  }
  return fmt::format("  health: {}",
                     what.empty() ? "ok" : fmt::format("{}", fmt::join(what, ", ")));
}

} // namespace

std::string render_text(const Report& r, bool color) {
  const Assessment& a = r.assessment;
  const Palette p{color};
  const auto verdict_colour = a.verdict == Verdict::fail   ? "1;31"
                              : a.verdict == Verdict::warn ? "1;33"
                                                           : "1;32";
  std::string out;
  out += fmt::format("gpu-preflight: {} — {}\n",
                     p.paint(upper(verdict_name(a.verdict)), verdict_colour), verdict_headline(a));
  // A PASS after a verified CUDA start-up must not read like one where CUDA was never tried.
  if (const auto skipped = not_checked(r.facts); !skipped.empty()) {
    out += fmt::format("not checked: {}\n", skipped);
  }
  for (const auto& f : a.findings) {
    out += fmt::format(
        "\n{} {}{}\n  {}\n",
        p.paint(fmt::format("[{}]", upper(severity_name(f.severity))), colour_of(f.severity)), f.id,
        f.gpu ? fmt::format(" (GPU {})", printable(*f.gpu)) : std::string(), printable(f.message));
    for (const auto& e : f.evidence) {
      out += fmt::format("  evidence: {}\n", printable(quote_evidence(e, 512)));
    }
    out += fmt::format("  remedy:   {}\n", printable(f.remedy));
    if (a.verdict != Verdict::fail && f.effect == Effect::gpu_unusable && f.gpu) {
      out += "  effect:   this GPU is left out of the recommendation; the job runs on the others\n";
    } else if (a.verdict != Verdict::fail && f.effect == Effect::single_gpu_only &&
               a.recommendation.single_gpu_only()) {
      out += "  effect:   the recommendation keeps one GPU\n";
    }
  }
  if (!a.gpus.empty()) {
    // Mark the GPUs the job gets when that is not simply every usable one.
    const bool mark = a.verdict != Verdict::fail &&
                      std::any_of(a.gpus.begin(), a.gpus.end(), [](const GpuAssessment& g) {
                        return g.usable && !g.recommended;
                      });
    out += mark ? "\nGPUs (* = recommended):\n" : "\nGPUs:\n";
    for (const auto& g : a.gpus) {
      out += fmt::format(
          "{}{} {} {}{}{}\n",
          !mark           ? "  "
          : g.recommended ? " * "
                          : "   ",
          g.index ? std::to_string(*g.index) : "-", g.bus_id,
          printable(g.model.value_or("(unknown model)")),
          g.usable ? "" : printable(fmt::format("  UNUSABLE ({})", fmt::join(g.reasons, ", "))),
          health_of(r, g.bus_id));
    }
  }
  out += "\nRecommendation:\n";
  if (a.verdict == Verdict::fail) {
    out += "  do not start a job here: fix the failures above first\n";
  } else if (a.recommendation.cuda_visible_devices.empty()) {
    out += "  no GPU can be recommended\n";
  } else {
    if (a.recommendation.cuda_device_order) {
      out += fmt::format("  export CUDA_DEVICE_ORDER={}\n",
                         shell_quote(*a.recommendation.cuda_device_order));
    }
    // quoted as in the env format, so the line can be pasted into a shell as it is
    out += fmt::format("  export CUDA_VISIBLE_DEVICES={}\n",
                       shell_quote(a.recommendation.cuda_visible_devices));
    if (a.recommendation.single_gpu_only()) {
      out += "  (one GPU only until a multi-GPU start-up test passes; see the findings)\n";
    }
    if (a.recommendation.mig) {
      out += "  (the job's own MIG instances, up to the first that does not exist)\n";
    } else if (a.recommendation.chosen_by) {
      out += fmt::format("  (only GPUs the job's CUDA_VISIBLE_DEVICES={} names)\n",
                         printable(quote_evidence(*a.recommendation.chosen_by, 120)));
    }
  }
  return out;
}

} // namespace gpf
