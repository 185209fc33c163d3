#include "gpf/rules/rule.hpp"

#include <catch2/catch.hpp>

#include <regex>
#include <set>

using namespace gpf;

TEST_CASE("rule table integrity: ids unique and well-formed, every row explains itself") {
  const std::regex id_form(R"([a-z0-9]+(\.[a-z0-9-]+)+)");
  std::set<std::string_view> ids;
  REQUIRE_FALSE(builtin_rules().empty());
  for (const auto& rule : builtin_rules()) {
    INFO(rule.id);
    CHECK(std::regex_match(std::string(rule.id), id_form));
    CHECK(ids.insert(rule.id).second);
    CHECK_FALSE(rule.title.empty());
    CHECK_FALSE(rule.remedy.empty());
    CHECK_FALSE(rule.source.empty());
    CHECK(rule.check != nullptr);
    CHECK(find_rule(rule.id) == &rule);
  }
  CHECK(find_rule("no.such-rule") == nullptr);
}

TEST_CASE("severity names round-trip") {
  for (auto s : {Severity::info, Severity::warn, Severity::fail}) {
    CHECK(parse_severity(severity_name(s)) == s);
  }
  CHECK_FALSE(parse_severity("error"));
}
