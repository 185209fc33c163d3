// The verdict in a few words, shared by the text header, the env comment and the line format:
// what the job gets, why it gets less than every GPU, and the primary cause. All of it comes from
// the assessment; nothing here re-derives a cause.
#include "gpf/facts/cuda_json.hpp"
#include "gpf/report/report.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {

std::string cause_label(const Finding& f) {
  return f.gpu ? f.id + " " + *f.gpu : f.where.empty() ? f.id : f.id + " " + f.where;
}

std::string verdict_headline(const Assessment& a) {
  const Finding* primary = a.primary_cause();
  const auto more = [&] {
    return a.causes.size() > 1 ? fmt::format(" (+{} more)", a.causes.size() - 1) : std::string();
  };
  if (a.verdict == Verdict::fail) {
    return primary ? "not ready: " + printable(cause_label(*primary)) + more() : "not ready";
  }
  const Recommendation& rec = a.recommendation;
  std::string s =
      rec.mig ? fmt::format("ready on {} MIG instance{}", rec.devices, rec.devices == 1 ? "" : "s")
              : fmt::format("ready on {} of {} GPU{}", rec.devices, a.gpus.size(),
                            a.gpus.size() == 1 ? "" : "s");
  std::vector<std::string> why;
  const Finding* narrowing = rec.narrowed_by ? &a.findings[*rec.narrowed_by] : nullptr;
  if (narrowing) {
    why.push_back(narrowing->headline.empty() ? narrowing->id : narrowing->headline);
  }
  if (rec.mig) {
    why.push_back("named by the job's CUDA_VISIBLE_DEVICES");
  } else if (rec.chosen_by) {
    why.push_back(fmt::format("CUDA_VISIBLE_DEVICES={} chose them",
                              printable(quote_evidence(*rec.chosen_by, 60))));
  }
  if (!why.empty()) {
    s += fmt::format(" ({})", fmt::join(why, "; "));
  }
  if (const int n = a.left_out_count(); n > 0) {
    s += fmt::format("; {} GPU{} left out", n, n == 1 ? "" : "s");
  }
  if (primary && primary != narrowing) {
    s += ": " + printable(cause_label(*primary)) + more();
  }
  return s;
}

std::string versions_line(const Facts& facts) {
  const DriverFacts& d = facts.driver;
  std::vector<std::string> parts;
  if (!d.version_text.empty()) {
    const std::string_view flavour = d.flavour == DriverFlavour::open          ? " (open)"
                                     : d.flavour == DriverFlavour::proprietary ? " (proprietary)"
                                                                               : "";
    parts.push_back(fmt::format("driver {}{}", d.version_text, flavour));
  } else {
    parts.emplace_back(d.loaded ? "driver version unknown" : "driver not loaded");
  }
  if (facts.cuda.driver_version) {
    parts.push_back("CUDA " + cuda_version_text(*facts.cuda.driver_version));
  }
  if (!facts.kernel.release.empty()) {
    parts.push_back("kernel " + facts.kernel.release);
  }
  return printable(fmt::format("{}", fmt::join(parts, ", ")));
}

std::string not_checked(const Facts& facts) {
  std::vector<std::string> parts;
  for (const auto& p : facts.probes) {
    if (p.state != ProbeState::ok) {
      // The reason's first clause: its details are in the JSON report's probes[].
      const std::string_view why =
          p.message.empty()
              ? std::string_view(p.state == ProbeState::skipped ? "skipped" : "unreadable")
              : std::string_view(p.message);
      parts.push_back(
          fmt::format("{} ({})", p.what.empty() ? p.name : p.what, why.substr(0, why.find(" ("))));
    }
  }
  // The bandwidth step is part of the CUDA stage: a stage that ran without it says so too.
  const auto& bw = facts.cuda.bandwidth;
  if (facts.cuda.ran && !bw.run && !bw.not_checked.empty()) {
    const std::string_view why = bw.not_checked;
    parts.push_back(fmt::format("copy bandwidth ({})", why.substr(0, why.find(" ("))));
  }
  return printable(fmt::format("{}", fmt::join(parts, "; ")));
}

std::map<std::string, int> rules_not_checked_by_probe(const Assessment& a) {
  std::map<std::string, int> out;
  for (const auto& nc : a.not_checked) {
    for (const auto& probe : nc.probes) {
      ++out[probe];
    }
  }
  return out;
}

} // namespace gpf
