// Every rule row's cases (`.cases`, include/gpf/rules/rule.hpp): each named fixture is checked
// once, as `check --root FIXTURE` checks it, and the row must fire there (on the case's GPU, or
// with a host-level finding when it names none) or stay silent. A row needs a firing case and a
// silent one, so a new row without cases fails here by its id.
#include "support/checked.hpp"
#include "support/run.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <sstream>

using namespace gpf;
using gpf::test::fixture;

namespace {

// The rows no snapshot can fire, and why: they judge the live host itself. Their own tests
// cover them; a firing case here would contradict the entry.
const std::map<std::string_view, std::string_view> k_live_host_only{
    {"driver.libcuda-not-found",
     "judged on the live host only (compat.snapshot): tests/rules/driver_test.cpp"},
};

struct Found {
  std::string id;
  std::optional<std::string> gpu;
};

// A fixture's findings: in process when the case has no options, else from the binary's JSON.
std::vector<Found> check(const RuleCase& c) {
  std::vector<Found> out;
  if (c.options.empty()) {
    for (const auto& f : gpf::test::replay_fixture(std::string(c.fixture)).findings) {
      out.push_back({f.id, f.gpu});
    }
    return out;
  }
  std::vector<std::string> args{"check", "--root", fixture(std::string(c.fixture)), "--format",
                                "json"};
  std::istringstream words{std::string(c.options)};
  for (std::string w; words >> w;) {
    args.push_back(w);
  }
  const auto run = gpf::test::run_preflight(args);
  REQUIRE(run.exit_code <= 1);
  const auto report = run.json(); // kept whole: the loop reads into it
  for (const auto& f : report.at("findings")) {
    std::optional<std::string> gpu;
    if (f.contains("gpu")) {
      gpu = f.at("gpu").get<std::string>();
    }
    out.push_back({f.at("id").get<std::string>(), gpu});
  }
  return out;
}

// Each fixture's findings (with its options), checked once for all rows.
const std::vector<Found>& checked(const RuleCase& c) {
  static std::map<std::string, std::vector<Found>> cache;
  const std::string key = std::string(c.fixture) + " " + std::string(c.options);
  auto it = cache.find(key);
  if (it == cache.end()) {
    it = cache.emplace(key, check(c)).first;
  }
  return it->second;
}

} // namespace

TEST_CASE("rule cases: every row fires on its firing fixtures and stays silent on the others") {
  for (const auto& row : builtin_rules()) {
    INFO("rule " << row.id);
    bool firing = false;
    bool quiet = false;
    for (const auto& c : row.cases) {
      INFO((c.fires ? "fires on " : "silent on ")
           << c.fixture << (c.gpu.empty() ? "" : " GPU ") << c.gpu << " " << c.options);
      const auto& found = checked(c);
      const auto of_row = [&](const Found& f) { return f.id == row.id; };
      const auto on_gpu = [&](const Found& f) {
        return of_row(f) && (c.gpu.empty() ? !f.gpu.has_value() : f.gpu == c.gpu);
      };
      if (c.fires) {
        firing = true;
        CHECK(std::any_of(found.begin(), found.end(), on_gpu));
      } else {
        quiet = true;
        CHECK(std::none_of(found.begin(), found.end(), of_row));
      }
    }
    if (const auto live = k_live_host_only.find(row.id); live != k_live_host_only.end()) {
      INFO("no snapshot fires it: " << live->second);
      CHECK_FALSE(firing);
    } else {
      CHECK(firing); // a fixture that fires the row
    }
    CHECK(quiet); // a fixture where the row stays silent
  }
}
