// `explain` says more than the finding: every rule has an explanation of its own (not its title),
// the ones written for the driver, device-node, GPU, Xid and CUDA rules say how to confirm by hand
// with a command and what the finding does to the verdict; a GPU row names each cause once.
#include "gpf/report/rules_doc.hpp"
#include "gpf/rules/rule.hpp"

#include "support/checked.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace gpf;
using namespace gpf::test;

namespace {

// Runs of spaces and newlines as one space: explain wraps its fields.
std::string collapsed(std::string_view s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) {
      out += space ? ' ' : c;
    }
  }
  return out;
}

} // namespace

TEST_CASE("no rule's explanation is empty or repeats its title") {
  for (const auto& r : builtin_rules()) {
    INFO(r.id);
    CHECK_FALSE(r.explanation.empty());
    CHECK(r.explanation != r.title);
    CHECK(r.explanation.size() > r.title.size());
  }
}

TEST_CASE("the common rules' explanations say how to confirm by hand and what they do") {
  std::size_t covered = 0;
  for (const auto& r : builtin_rules()) {
    const std::string_view id = r.id;
    const bool common = id.rfind("driver.", 0) == 0 || id.rfind("devnode.", 0) == 0 ||
                        id.rfind("xid.", 0) == 0 || id.rfind("cuda.", 0) == 0 ||
                        id.rfind("gpu.", 0) == 0;
    const std::string_view e = r.explanation;
    if (!common || e.find("Confirm") == std::string_view::npos) {
      continue;
    }
    INFO(r.id);
    ++covered;
    // a concrete command, quoted as code
    CHECK(std::count(e.begin(), e.end(), '`') >= 2);
    // what it does to the verdict or the recommendation
    const bool effect = e.find("verdict") != std::string_view::npos ||
                        e.find("recommend") != std::string_view::npos ||
                        e.find("--strict") != std::string_view::npos;
    CHECK(effect);
    // explain shows it
    const std::string shown = render_explain(r);
    CHECK(collapsed(shown).find(collapsed(e)) != std::string::npos);
    for (std::size_t start = 0, nl = shown.find('\n'); nl != std::string::npos;
         start = nl + 1, nl = shown.find('\n', start)) {
      // wrapped for a terminal (these texts are ASCII); a source URL is never cut
      CHECK((nl - start <= 80 || shown.compare(start, 8, "Sources:") == 0));
    }
  }
  CHECK(covered >= 40);
}

TEST_CASE("a GPU row names each cause once") {
  for (const auto& name : fixture_names()) {
    INFO(name);
    const auto c = check_fixture(name);
    for (const auto& g : c.assessment.gpus) {
      const std::set<std::string> unique(g.reasons.begin(), g.reasons.end());
      CHECK(unique.size() == g.reasons.size());
    }
  }
}
