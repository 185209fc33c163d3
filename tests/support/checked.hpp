#pragma once
// A fixture snapshot through the real probes and rule table, in process: its facts and assessment.
// The CUDA stage is skipped (its own tests cover the replay); nothing live is read. And the
// findings of an assessment by id.
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"

#include "support/lookup.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::test {

struct Checked {
  Facts facts;
  Assessment assessment;
};

inline Checked check_fixture(const std::string& name, const CheckOptions& options = {},
                             std::optional<std::string> expect_cuda = std::nullopt) {
  const auto host = Host::snapshot(fixture(name));
  REQUIRE(host.ok());
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  probe_options.expect_cuda = std::move(expect_cuda);
  Checked c{collect_facts(*host, probe_options), {}};
  c.assessment = assess(c.facts, builtin_rules(), options);
  return c;
}

// A fixture snapshot checked as `check --root` checks it, options apart: its cuda.json, nvml.json
// and nccl.json are replayed (absent: those probes are skipped).
inline Assessment replay_fixture(const std::string& name, const CheckOptions& options = {}) {
  const auto host = Host::snapshot(fixture(name));
  REQUIRE(host.ok());
  return assess(collect_facts(*host, ProbeOptions{}), builtin_rules(), options);
}

// The findings with this id, in the assessment's order.
inline std::vector<const Finding*> findings(const Assessment& a, std::string_view id) {
  std::vector<const Finding*> out;
  for (const auto& f : a.findings) {
    if (f.id == id) {
      out.push_back(&f);
    }
  }
  return out;
}

// The first finding with this id, or null.
inline const Finding* finding(const Assessment& a, std::string_view id) {
  const auto all = findings(a, id);
  return all.empty() ? nullptr : all.front();
}

} // namespace gpf::test
