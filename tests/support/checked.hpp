#pragma once
// A fixture snapshot through the real probes and rule table, in process: its facts and assessment.
// The CUDA stage is skipped (its own tests cover the replay); nothing live is read.
#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/verdict.hpp"

#include <catch2/catch.hpp>

#include <string>

namespace gpf::test {

struct Checked {
  Facts facts;
  Assessment assessment;
};

inline Checked check_fixture(const std::string& name, const CheckOptions& options = {}) {
  const auto host = Host::snapshot(std::string(GPF_FIXTURES_DIR) + "/" + name);
  REQUIRE(host.ok());
  ProbeOptions probe_options;
  probe_options.no_cuda = true;
  Checked c{collect_facts(*host, probe_options), {}};
  c.assessment = assess(c.facts, builtin_rules(), options);
  return c;
}

} // namespace gpf::test
