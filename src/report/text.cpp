// The human report: verdict first, findings by severity with evidence and remedy, then the
// recommendation and a closing line that repeats the verdict and the export. Colour only when
// asked (--color) — the caller decides. Text from the inputs is shown, never obeyed: control
// characters come out escaped (printable). Lines are wrapped to the width with hanging indents;
// on a pass the info findings are folded into one line unless verbose.
#include "gpf/util/text.hpp"
#include "gpf/knowledge/data_age.hpp"
#include "gpf/report/report.hpp"
#include "gpf/report/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

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

// Columns a string takes on a terminal: code points, not bytes (the text has no escapes here).
std::size_t columns(std::string_view s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// The byte length of the first n columns of s.
std::size_t bytes_of_columns(std::string_view s, std::size_t n) {
  std::size_t i = 0;
  for (std::size_t col = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (col == n) {
        break;
      }
      ++col;
    }
  }
  return i;
}

// The pieces wrapping keeps whole: words, and a `backticked command` with its spaces, so that a
// command is copied from one line; one longer than max_cols is split at its spaces after all.
std::vector<std::string_view> wrap_units(std::string_view text, std::size_t max_cols) {
  const auto words = split(text, ' '); // views into text
  const auto ticks = [](std::string_view w) { return std::count(w.begin(), w.end(), '`'); };
  std::vector<std::string_view> units;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (ticks(words[i]) % 2 == 1) { // opens a span: it ends at the next word with a backtick
      std::size_t j = i + 1;
      while (j < words.size() && ticks(words[j]) == 0) {
        ++j;
      }
      if (j < words.size()) {
        const std::string_view span(
            words[i].data(),
            static_cast<std::size_t>(words[j].data() + words[j].size() - words[i].data()));
        if (columns(span) <= max_cols) {
          units.push_back(span);
          i = j;
          continue;
        }
      }
    }
    units.push_back(words[i]);
  }
  return units;
}

// Appends text wrapped at spaces to `width` columns and a newline: the first line continues
// after `used` columns, the next ones start with `hang` spaces. A word longer than a whole line
// is cut, but for a URL; everything else stays whole, so commands and paths can be copied.
void append_wrapped(std::string& out, std::string_view text, std::size_t used, std::size_t hang,
                    std::size_t width) {
  std::size_t col = used;
  bool words_on_line = false;
  for (std::string_view word : wrap_units(text, width > hang ? width - hang : 0)) {
    std::size_t w = columns(word);
    if (words_on_line && col + 1 + w > width) {
      out += '\n' + std::string(hang, ' ');
      col = hang;
      words_on_line = false;
    } else if (words_on_line) {
      out += ' ';
      ++col;
    }
    // alone on its line and still too long: cut after the last '/' that fits (a path then
    // breaks between its parts), else where the line ends; a URL stays whole, for the terminal
    // to open it
    while (col + w > width && col < width && !contains(word, "://")) {
      std::size_t cut = bytes_of_columns(word, width - col);
      if (const auto slash = word.substr(0, cut).rfind('/');
          slash != std::string_view::npos && slash > 0) {
        cut = slash + 1;
      }
      out += std::string(word.substr(0, cut)) + '\n' + std::string(hang, ' ');
      w -= columns(word.substr(0, cut));
      word.remove_prefix(cut);
      col = hang;
    }
    out += word;
    col += w;
    words_on_line = true;
  }
  out += '\n';
}

// One labelled field ("  evidence: ...") wrapped with its text aligned after the label.
void append_field(std::string& out, std::string_view label, std::string_view text,
                  std::size_t width) {
  out += label;
  append_wrapped(out, text, columns(label), columns(label), width);
}

// Evidence as the text report shows it: the driver's version line shortened to what the driver
// probe read from it (the JSON keeps it whole).
std::string shown_evidence(std::string_view e, const DriverFacts& driver) {
  constexpr std::string_view k_banner = "NVRM version: ";
  const auto at = starts_with(driver.version_line, k_banner) ? e.find(driver.version_line)
                                                             : std::string_view::npos;
  if (at != std::string_view::npos) {
    if (const auto brief = short_driver_banner(driver)) {
      return std::string(e.substr(0, at + k_banner.size())) + *brief;
    }
  }
  return quote_evidence(e, 512);
}

// The info findings in one line: "cuda.x, nvml.y (8 GPUs)".
std::string folded(const std::vector<const Finding*>& infos) {
  std::vector<std::pair<std::string, int>> counts;
  for (const Finding* f : infos) {
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == f->id; });
    if (it == counts.end()) {
      counts.emplace_back(f->id, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [id, n] : counts) {
    parts.push_back(n > 1 ? fmt::format("{} (x{})", id, n) : id);
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

std::string ascii_punctuation(std::string s) {
  static const std::pair<std::string_view, std::string_view> k_map[] = {
      {"\u2014", "-"}, {"\u2013", "-"},  {"\u2026", "..."}, {"\u2018", "'"},
      {"\u2019", "'"}, {"\u201c", "\""}, {"\u201d", "\""},  {"\u2192", "->"}};
  for (const auto& [from, to] : k_map) {
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at)) {
      s.replace(at, from.size(), to);
      at += to.size();
    }
  }
  return s;
}

std::string wrap_text(std::string_view text, std::size_t used, std::size_t hang,
                      std::size_t width) {
  std::string out;
  append_wrapped(out, text, used, hang, width);
  return out;
}

std::optional<std::string> short_driver_banner(const DriverFacts& d) {
  // the version and flavour the driver probe read from the version line itself, not from
  // sys/module/nvidia/version after the line named none
  if (d.version_line.empty() || d.version_source != "proc/driver/nvidia/version") {
    return std::nullopt;
  }
  switch (d.flavour) {
  case DriverFlavour::open:
    return d.version_text + " (open kernel module)";
  case DriverFlavour::proprietary:
    return d.version_text + " (proprietary kernel module)";
  case DriverFlavour::unknown:
    break;
  }
  return d.version_text;
}

std::string render_text(const Report& r, bool color) {
  return render_text(r, TextOptions{.color = color});
}

std::string render_text(const Report& r, const TextOptions& opt) {
  const Assessment& a = r.assessment;
  const Palette p{opt.color};
  const std::size_t width = std::max<std::size_t>(opt.width, 40);
  const auto verdict_colour = a.verdict == Verdict::fail   ? "1;31"
                              : a.verdict == Verdict::warn ? "1;33"
                                                           : "1;32";
  const std::string verdict_word = upper(verdict_name(a.verdict));
  std::string out = fmt::format("gpu-preflight: {} — ", p.paint(verdict_word, verdict_colour));
  append_wrapped(out, verdict_headline(a), columns("gpu-preflight: " + verdict_word + " — "), 2,
                 width);
  // what a ticket needs with the verdict, as nvidia-smi's header gives it
  out += "  ";
  append_wrapped(out, versions_line(r.facts), 2, 4, width);
  const bool fold = a.verdict == Verdict::pass && !opt.verbose;
  std::vector<const Finding*> folded_infos;
  for (const auto& f : a.findings) {
    if (fold && f.severity == Severity::info) {
      folded_infos.push_back(&f);
      continue;
    }
    const std::string tag = fmt::format("[{}]", upper(severity_name(f.severity)));
    // appended piece by piece: GCC 12's -O3 misreads "literal" + string&& (bug 105329)
    out += '\n';
    out += p.paint(tag, colour_of(f.severity));
    out += ' ';
    append_wrapped(out,
                   f.id + (f.gpu ? fmt::format(" (GPU {})", printable(*f.gpu)) : std::string()),
                   columns(tag) + 1, 2, width);
    out += "  ";
    append_wrapped(out, printable(f.message), 2, 2, width);
    for (const auto& e : f.evidence) {
      append_field(out, "  evidence: ", printable(shown_evidence(e, r.facts.driver)), width);
    }
    append_field(out, "  remedy:   ", printable(f.remedy), width);
    if (a.verdict != Verdict::fail && f.effect == Effect::gpu_unusable && f.gpu) {
      append_field(out, "  effect:   ",
                   "this GPU is left out of the recommendation; the job runs on the others", width);
    } else if (a.verdict != Verdict::fail && f.effect == Effect::single_gpu_only &&
               a.recommendation.single_gpu_only()) {
      append_field(out, "  effect:   ", "the recommendation keeps one GPU", width);
    }
  }
  if (!folded_infos.empty()) {
    const std::string tag = "[INFO]";
    out += '\n'; // piece by piece: GCC 12's -O3 misreads "literal" + string&& (bug 105329)
    out += p.paint(tag, colour_of(Severity::info));
    out += ' ';
    append_wrapped(out,
                   fmt::format("{} note{} (--verbose shows them): {}", folded_infos.size(),
                               folded_infos.size() == 1 ? "" : "s", folded(folded_infos)),
                   columns(tag) + 1, 2, width);
  }
  // After the findings, which are what the reader acts on: a PASS after a verified CUDA start-up
  // must still not read like one where CUDA was never tried.
  if (const auto skipped = not_checked(r.facts); !skipped.empty()) {
    append_field(out, "not checked: ", skipped, width);
  }
  if (!r.assessment.not_checked.empty()) {
    std::vector<std::string> by_probe;
    for (const auto& [probe, count] : rules_not_checked_by_probe(r.assessment)) {
      by_probe.push_back(fmt::format("{} {}", probe, count));
    }
    append_field(out, "rules not checked: ",
                 fmt::format("{}, their inputs not read ({}); `gpu-preflight rules --format "
                             "json` lists what each reads",
                             r.assessment.not_checked.size(), fmt::join(by_probe, ", ")),
                 width);
  }
  // The age of the data every judgement above rests on: anything newer is said to be so.
  {
    const auto& age = data_age();
    append_field(out, "knowledge as of: ",
                 fmt::format("{} (driver branches to R{}, CUDA to {}, compute capability to {})",
                             age.as_of, age.newest_branch, age.newest_cuda.str(),
                             age.newest_compute_capability.str()),
                 width);
  }
  if (!a.gpus.empty()) {
    // Mark the GPUs the job gets when that is not simply every usable one.
    const bool mark = a.verdict != Verdict::fail &&
                      std::any_of(a.gpus.begin(), a.gpus.end(), [](const GpuAssessment& g) {
                        return g.usable && !g.recommended;
                      });
    out += mark ? "\nGPUs (* = recommended):\n" : "\nGPUs:\n";
    // A recommendation by UUID (--cvd-form uuid, or the job's own) is matched by the UUIDs here.
    const bool names_uuids = a.recommendation.cuda_visible_devices.rfind("GPU-", 0) == 0;
    for (const auto& g : a.gpus) {
      const std::string lead = !mark ? "  " : g.recommended ? " * " : "   ";
      const std::string row = fmt::format(
          "{} {}{} {}{}{}", g.index ? std::to_string(*g.index) : "-", g.bus_id,
          names_uuids && g.uuid ? fmt::format(" {}", printable(*g.uuid)) : std::string(),
          printable(g.model.value_or("(unknown model)")),
          g.usable ? "" : printable(fmt::format("  UNUSABLE ({})", fmt::join(g.reasons, ", "))),
          health_of(r, g.bus_id));
      out += lead;
      append_wrapped(out, row, lead.size(), lead.size() + 2, width);
    }
  }
  out += "\nRecommendation:\n";
  std::string exports;
  if (a.verdict == Verdict::fail) {
    out += "  do not start a job here: fix the failures above first\n";
  } else if (a.recommendation.cuda_visible_devices.empty()) {
    out += "  no GPU can be recommended\n";
  } else {
    if (a.recommendation.cuda_device_order) {
      // shell-quoted for pasting, then escaped: a quote does not stop a terminal obeying ESC
      exports = fmt::format("CUDA_DEVICE_ORDER={} ",
                            printable(shell_quote(*a.recommendation.cuda_device_order)));
      out += fmt::format("  export CUDA_DEVICE_ORDER={}\n",
                         printable(shell_quote(*a.recommendation.cuda_device_order)));
    }
    // quoted as in the env format, so the line can be pasted into a shell as it is
    exports += fmt::format("CUDA_VISIBLE_DEVICES={}",
                           printable(shell_quote(a.recommendation.cuda_visible_devices)));
    out += fmt::format("  export CUDA_VISIBLE_DEVICES={}\n",
                       printable(shell_quote(a.recommendation.cuda_visible_devices)));
    if (a.recommendation.single_gpu_only()) {
      append_wrapped(out,
                     "  (one GPU only until a multi-GPU start-up test passes; see the findings)", 0,
                     3, width);
    }
    if (a.recommendation.mig) {
      append_wrapped(out, "  (the job's own MIG instances, up to the first that does not exist)", 0,
                     3, width);
    } else if (a.recommendation.chosen_by) {
      append_wrapped(out,
                     fmt::format("  (only GPUs the job's CUDA_VISIBLE_DEVICES={} names)",
                                 printable(quote_evidence(*a.recommendation.chosen_by, 120))),
                     0, 3, width);
    }
  }
  // The closing line: the verdict again where the reader's eyes end up, with what to run.
  // The export stays whole on one line, so that it can be pasted as it is.
  // (appended piece by piece: GCC 12's -O3 -Wrestrict misfires on "literal" + string&&, bug 105329)
  out += '\n';
  out += p.paint(verdict_word, verdict_colour);
  out += ": ";
  const std::size_t used = verdict_word.size() + 2;
  const std::string headline = verdict_headline(a);
  const Finding* primary = a.primary_cause();
  if (a.verdict == Verdict::fail) {
    // The first remedy again: by now the finding has scrolled off a 24-line screen.
    append_wrapped(out,
                   primary ? fmt::format("{}; first: {} (gpu-preflight explain {})", headline,
                                         printable(primary->remedy), primary->id)
                           : headline + "; fix the failures above",
                   used, 2, width);
  } else if (exports.empty()) {
    append_wrapped(out, headline, used, 2, width);
  } else if (used + columns(headline + "; export " + exports) <= width) {
    out += headline + "; export " + exports + "\n";
  } else {
    append_wrapped(out, headline + ";", used, 2, width);
    out += "  export " + exports + "\n";
  }
  return opt.utf8 ? out : ascii_punctuation(std::move(out));
}

} // namespace gpf
