// libFuzzer target: a user rules file (--rules FILE).
// Properties: no crash; a refusal is a valid UTF-8 message; an accepted file evaluates against a
// real host's facts (the healthy-4gpu fixture) without a crash, evidence valid UTF-8.
#include "fuzz_support.hpp"

#include "gpf/probes/pipeline.hpp"
#include "gpf/rules/rule.hpp"
#include "gpf/rules/user_rules.hpp"
#include "gpf/rules/verdict.hpp"

namespace {
const gpf::Facts& healthy_facts() {
  static const gpf::Facts facts = [] {
    auto host = gpf::Host::snapshot(std::string(GPF_FIXTURES_DIR) + "/healthy-4gpu");
    gpf::fuzz::require(host.ok(), "healthy-4gpu fixture present");
    gpf::ProbeOptions options;
    options.no_cuda = true;
    return gpf::collect_facts(*host, options);
  }();
  return facts;
}
} // namespace

GPF_FUZZ_TARGET(user_rules) {
  const auto set = gpf::RuleSet::build(gpf::builtin_rules(), {}, gpf::fuzz::as_text(data, size));
  if (!set) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(set.error().message),
                       "error message is valid UTF-8");
    return 0;
  }
  const auto assessment = gpf::assess(healthy_facts(), set->rules(), gpf::CheckOptions{});
  for (const auto& finding : assessment.findings) {
    for (const auto& evidence : finding.evidence) {
      gpf::fuzz::require(gpf::fuzz::is_valid_utf8(evidence), "evidence is valid UTF-8");
    }
  }
  return 0;
}
