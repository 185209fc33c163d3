// Joins the per-domain rule tables into the one built-in table.
#include "gpf/rules/rule.hpp"

#include <vector>

namespace gpf {

std::span<const Rule> nvml_rules(); // src/rules/nvml.cpp

std::span<const Rule> builtin_rules() {
  static const std::vector<Rule> table = [] {
    std::vector<Rule> all;
    for (auto part : {foundation_rules(), log_rules(), compat_rules(), topology_rules(), cuda_rules(), nvml_rules()}) {
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }();
  return table;
}

const Rule* find_rule(std::string_view id) {
  for (const auto& rule : builtin_rules()) {
    if (rule.id == id) {
      return &rule;
    }
  }
  return nullptr;
}

std::string_view severity_name(Severity s) {
  switch (s) {
  case Severity::info:
    return "info";
  case Severity::warn:
    return "warn";
  case Severity::fail:
    return "fail";
  }
  return "info";
}

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info") {
    return Severity::info;
  }
  if (s == "warn") {
    return Severity::warn;
  }
  if (s == "fail") {
    return Severity::fail;
  }
  return std::nullopt;
}

} // namespace gpf
