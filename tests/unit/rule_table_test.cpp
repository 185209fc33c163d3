// The shape of the rule table: every row is declared in the file its id prefix names, and a row's
// findings are never more severe than the row and lower only where the row says so.
#include "gpf/rules/verdict.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace gpf {
namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("every rule is declared in src/rules/<id prefix>.cpp, and only there") {
  const std::filesystem::path dir = std::filesystem::path(GPF_SOURCE_DIR) / "src" / "rules";
  std::map<std::string, std::string> files; // file name -> text
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files[entry.path().filename().string()] = read_all(entry.path());
  }
  for (const auto& rule : builtin_rules()) {
    INFO(rule.id);
    const std::string id(rule.id);
    const std::string home = id.substr(0, id.find('.')) + ".cpp";
    const std::string declaration = ".id = \"" + id + "\"";
    REQUIRE(files.count(home) == 1);
    CHECK(files[home].find(declaration) != std::string::npos);
    for (const auto& [name, text] : files) {
      if (name != home) {
        CHECK(text.find(declaration) == std::string::npos);
      }
    }
  }
}

TEST_CASE("a hit cannot change its row's severity unless the row declares severity_from") {
  Facts facts;
  const auto rules_with = [](std::string_view severity_from) {
    return std::vector<Rule>{{.id = "test.row",
                              .stage = Stage::host,
                              .severity = Severity::warn,
                              .severity_from = severity_from,
                              .title = "t",
                              .remedy = "r",
                              .source = "docs/rules.md",
                              .check = [](const RuleContext&) {
                                Hit low{"lower", {"evidence"}};
                                low.severity = Severity::info;
                                Hit high{"higher", {"evidence"}};
                                high.severity = Severity::fail;
                                return std::vector<Hit>{low, high};
                              }}};
  };
  const auto severities = [&](std::string_view severity_from) {
    std::map<std::string, Severity> out;
    for (const auto& f : assess(facts, rules_with(severity_from), {}).findings) {
      out[f.message] = f.severity;
    }
    return out;
  };
  const auto silent = severities("");
  CHECK(silent.at("lower") == Severity::warn);
  CHECK(silent.at("higher") == Severity::warn);
  const auto declared = severities("info when the test says so");
  CHECK(declared.at("lower") == Severity::info);
  CHECK(declared.at("higher") == Severity::warn); // never above the row
}

} // namespace
} // namespace gpf
