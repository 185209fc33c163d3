#pragma once
// Site policy on top of the built-in table (docs/user-rules.md): a JSON rules file whose rows use
// the facts' vocabulary (e.g. driver.version min 535, gpus.usable min 8); a row with an existing
// id overrides that rule; plus --disable ID and --severity ID=LEVEL from the command line.
#include "gpf/rules/rule.hpp"
#include "gpf/util/result.hpp"

#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

struct RuleOverrides {
  std::optional<std::string> rules_file; // --rules FILE
  std::vector<std::string> disable;      // --disable ID (repeatable)
  std::vector<std::string> severity;     // --severity ID=info|warn|fail (repeatable)
};

// The rule table of one run. Rules hold string_views into this object's storage, so it is
// move-only and must outlive every use of rules().
class RuleSet {
public:
  RuleSet() = default;
  RuleSet(RuleSet&&) = default;
  RuleSet& operator=(RuleSet&&) = default;
  RuleSet(const RuleSet&) = delete;
  RuleSet& operator=(const RuleSet&) = delete;

  // builtin, then the rules file's rows (text already read; name for messages), then the file's
  // and the command line's disable/severity settings. Errors name the file, the position
  // (line:column for syntax, a JSON pointer for content) and what is wrong.
  static Result<RuleSet> build(std::span<const Rule> builtin, const RuleOverrides& overrides,
                               std::optional<std::string_view> rules_text = std::nullopt);
  // As build(), reading overrides.rules_file from the local file system (at most 1 MiB).
  static Result<RuleSet> load(std::span<const Rule> builtin, const RuleOverrides& overrides);

  std::span<const Rule> rules() const { return m_rules; }
  const Rule* find(std::string_view id) const;

private:
  std::string_view keep(std::string text);
  // Adds the rows for ids naming one code (xid.N, sxid.N) not yet in the set; an error for an Xid
  // whose judging row reads more than the kernel log (54, 79).
  Result<void> add_code_rules(const std::vector<std::string>& ids);
  std::vector<Rule> m_rules;
  std::vector<std::unique_ptr<std::string>> m_text; // stable storage for the user rows' strings
  std::set<std::string> m_code_rules;               // ids of the rows for one code
};

} // namespace gpf
