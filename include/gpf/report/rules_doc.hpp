#pragma once
// The rule table as documentation: `gpu-preflight rules` (text, JSON, Markdown for
// docs/rules.md) and `gpu-preflight explain ID`. Rules are listed sorted by id.
#include "gpf/rules/rule.hpp"

#include <nlohmann/json.hpp>

#include <span>
#include <string>

namespace gpf {

std::string_view stage_name(Stage stage);

std::string render_rules_text(std::span<const Rule> rules, std::size_t width);
nlohmann::ordered_json rules_json(std::span<const Rule> rules);
std::string render_rules_markdown(std::span<const Rule> rules);
// What the rule means, the evidence it looks for, its remedy and its sources.
std::string render_explain(const Rule& rule);

} // namespace gpf
