#pragma once
// A rule is one row (style.md practice 4): a stable dotted id (public API, never renamed), a
// severity, a title, a remedy, a source, and a predicate over the facts that returns one Hit per
// finding. Rows live in tables under src/rules/ (one file per domain); rule_table.cpp joins them.
#include "gpf/facts/facts.hpp"

#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

enum class Severity { info, warn, fail };

// What a finding does to the recommendation besides its severity.
enum class Effect {
  none,
  gpu_unusable,    // the finding's GPU is dropped from CUDA_VISIBLE_DEVICES
  single_gpu_only, // keep only the first usable GPU (multi-GPU start-up is at risk)
};

// How the recommended CUDA_VISIBLE_DEVICES names GPUs: indices, or UUIDs (immune to ordering).
enum class CvdForm { index, uuid };

struct CheckOptions {
  int min_gpus = 1;
  bool strict = false;
  CvdForm cvd_form = CvdForm::index;
};

// Rules run in three stages: GPU rules decide which GPUs are usable; host rules then see that set
// (e.g. "kernel < 5.5 with two or more usable GPUs"); summary rules see the final recommendation.
enum class Stage { gpu, host, summary };

struct RuleContext {
  const Facts& facts;
  const CheckOptions& options;
  const std::set<std::string>& usable_gpus;  // bus ids; filled from Stage::host on
  const std::vector<std::string>& recommended; // bus ids in index order; filled for Stage::summary
  bool host_failed = false;                    // a host-level fail finding exists (Stage::summary)
};

struct Hit {
  Hit() = default;
  Hit(std::string message_, std::vector<std::string> evidence_, std::optional<std::string> gpu_ = std::nullopt,
      Effect effect_ = Effect::none)
      : message(std::move(message_)), evidence(std::move(evidence_)), gpu(std::move(gpu_)), effect(effect_) {}

  std::string message;
  std::vector<std::string> evidence;   // verbatim input: the file value, the missing path
  std::optional<std::string> gpu;      // bus id, when the finding is about one GPU
  Effect effect = Effect::none;
  std::string remedy;                  // empty = the rule's remedy
  std::optional<Severity> severity;    // rare: a row whose severity depends on the input
};

// A plain function for built-in rows; user rules (--rules FILE) carry their parameters inside.
using CheckFn = std::function<std::vector<Hit>(const RuleContext&)>;

struct Rule {
  std::string_view id;
  Severity severity;
  Stage stage;
  std::string_view title;  // what it checks, one line
  std::string_view remedy; // a concrete next step
  std::string_view source; // where the fact comes from (URL / nvidia-facts.md section)
  CheckFn check;
  std::string_view explanation = {}; // what a finding means and why (`explain ID`); "" = title
  std::string_view evidence = {};    // what the rule looks at (`explain ID`)
};

struct Finding {
  std::string id;
  Severity severity = Severity::info;
  std::string message;
  std::vector<std::string> evidence;
  std::string remedy;
  std::optional<std::string> gpu; // bus id
  Effect effect = Effect::none;
};

// Every built-in rule, in evaluation order.
std::span<const Rule> builtin_rules();
const Rule* find_rule(std::string_view id);

// Per-domain tables joined by builtin_rules().
std::span<const Rule> foundation_rules();
std::span<const Rule> log_rules();
std::span<const Rule> compat_rules();
std::span<const Rule> cuda_rules();
std::span<const Rule> topology_rules();

std::string_view severity_name(Severity s);
std::optional<Severity> parse_severity(std::string_view s);

} // namespace gpf
