#pragma once
// Facts built in code for the tests of the rows that judge the kernel log: a host whose kernel log
// is an inline dmesg, judged by those rows only, and lookups in the findings.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/rules/verdict.hpp"
#include "support/checked.hpp"
#include "support/rule_subset.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

namespace gpf::test::log_rule_facts {

inline bool has_warn_or_fail(const Assessment& a) {
  return std::any_of(a.findings.begin(), a.findings.end(),
                     [](const Finding& f) { return f.severity != Severity::info; });
}

inline bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

inline bool any_evidence(const Finding& f, std::string_view part) {
  return std::any_of(f.evidence.begin(), f.evidence.end(),
                     [&](const std::string& e) { return contains(e, part); });
}

inline const GpuAssessment& gpu(const Assessment& a, std::string_view bus) {
  const auto it = std::find_if(a.gpus.begin(), a.gpus.end(),
                               [&](const GpuAssessment& g) { return g.bus_id == bus; });
  REQUIRE(it != a.gpus.end());
  return *it;
}

inline const char* const k_buses[] = {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0",
                                      "0000:5d:00.0"};

// Facts of a host with n GPUs whose kernel log is `log`; only the log rules judge them.
inline Checked judge_log(const std::string& log, int n_gpus = 2) {
  Facts f;
  f.driver.loaded = true;
  f.driver.version_text = "550.54.14";
  for (int i = 0; i < n_gpus; ++i) {
    GpuFacts g;
    g.bus_id = k_buses[i];
    g.uuid = fmt::format("GPU-{:08x}-1111", i);
    g.device_minor = static_cast<unsigned>(i);
    f.gpus.push_back(g);
  }
  f.log = scan_kernel_log(log);
  f.log.source = "test.log";
  Checked c{f, {}};
  c.assessment = assess(c.facts, kernel_log_rules(), {});
  return c;
}

inline std::string dmesg(std::initializer_list<std::string> messages) {
  std::string out;
  double t = 100;
  for (const auto& m : messages) {
    out += fmt::format("[{:12.6f}] {}\n", t, m);
    t += 1.5;
  }
  return out;
}

inline const std::string k_loading =
    "NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (b@h)  2024";

} // namespace gpf::test::log_rule_facts
