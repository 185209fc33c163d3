#pragma once
// A rule is one declaration: a stable dotted id (public API, never renamed), its severity, a
// title, a remedy, a source, and a predicate over the facts and the derived job view that returns
// one Hit per finding. Every rule whose id starts with "P." is declared in src/rules/P.cpp;
// rule_table.cpp joins those files' tables.
#include "gpf/facts/facts.hpp"
#include "gpf/facts/probe_ids.hpp"
#include "gpf/rules/job_view.hpp"

#include <cstdint>
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
  bool expect_idle = false; // the node should have no process on a GPU (--expect-idle)
  CvdForm cvd_form = CvdForm::index;
};

// Rules run in three stages: GPU rules decide which GPUs are usable; host rules then see that set
// (e.g. "kernel < 5.5 with two or more usable GPUs"); summary rules see the final recommendation.
enum class Stage { gpu, host, summary };

struct Rule;

struct RuleContext {
  const Facts& facts;
  const JobView& job; // derived once, before any rule runs
  const CheckOptions& options;
  const std::set<std::string>& usable_gpus;    // bus ids; filled from Stage::host on
  const std::vector<std::string>& recommended; // bus ids in index order; filled for Stage::summary
  bool host_failed = false;                    // a host-level fail finding exists (Stage::summary)
  // What the job gets (Stage::summary): its GPUs, or its MIG instances when CUDA_VISIBLE_DEVICES
  // names MIG instances (several may share one GPU).
  std::size_t recommended_devices = 0;
  // The row being evaluated: a row's helpers select its events (`.events`) and read its remedy
  // through it. Set by the verdict for every row.
  const Rule* rule = nullptr;
};

struct Hit {
  Hit() = default;
  Hit(std::string message_, std::vector<std::string> evidence_,
      std::optional<std::string> gpu_ = std::nullopt, Effect effect_ = Effect::none)
      : message(std::move(message_)), evidence(std::move(evidence_)), gpu(std::move(gpu_)),
        effect(effect_) {}

  std::string message;
  std::vector<std::string> evidence; // verbatim input: the file value, the missing path
  std::optional<std::string> gpu;    // bus id, when the finding is about one GPU
  Effect effect = Effect::none;
  std::string remedy;               // empty = the rule's remedy; set when it names real values
  std::optional<Severity> severity; // lower than the row's; only for rows with severity_from
  // A few words for the report's headline when the finding narrows the recommendation
  // (Effect::single_gpu_only), e.g. "multi-GPU start-up untested on kernel 5.4.0".
  std::string headline;
  // Effect::single_gpu_only: the GPU (bus id) the recommendation keeps; "" = the first usable.
  std::string keep;
  // Where the cause sits when it is not the finding's GPU, a few ASCII words ("ACS
  // 0000:00:01.0": the port whose ACS redirects a hang's peer traffic); cause labels and drain
  // reasons name it.
  std::string where;
};

// The kernel-log events a row judges (`.events`), as data: every event kind, Xid class and SXid
// class is judged by exactly one built-in row or is evidence only (tests/unit/rule_table_test.cpp),
// and "which row judges this event" is derived from the rows (log_event_rule_id).
struct EventSet {
  std::uint64_t kinds = 0;       // bit per LogEventKind, judged whatever the event says (not Xid,
                                 // not SXid)
  std::uint32_t xid_classes = 0; // bit per XidClass: Xid events of that class
  bool xid_unlisted = false;     // Xids the catalog does not list (whose line does not say Fatal)
  std::uint8_t sxid = 0;         // k_sxid_fatal | k_sxid_nonfatal
  static constexpr std::uint8_t k_sxid_fatal = 1;
  static constexpr std::uint8_t k_sxid_nonfatal = 2;

  constexpr bool empty() const {
    return kinds == 0 && xid_classes == 0 && !xid_unlisted && sxid == 0;
  }
  // Does the row judge this event? (src/rules/log_events.cpp)
  bool judges(const LogEvent& e) const;
};

// A fixture snapshot (tests/fixtures/NAME) on which a row must fire or stay silent. Every row
// declares its cases (`.cases`: one that fires, one where it is silent);
// tests/rules/cases_test.cpp runs them all.
struct RuleCase {
  std::string_view fixture;
  std::string_view gpu = {}; // the bus id a firing case's finding names; "" = a host-level one
  bool fires = true;
  // Command-line options of `check --root FIXTURE` ("" = none), for a row only options reach.
  std::string_view options = {};
};

// A plain function for built-in rows; user rules (--rules FILE) carry their parameters inside.
using CheckFn = std::function<std::vector<Hit>(const RuleContext&)>;

struct Rule {
  std::string_view id;
  Stage stage = Stage::host;
  Severity severity = Severity::fail; // the highest severity a finding of this rule has
  // Empty when every finding has `severity`; otherwise what makes a finding lower (shown by
  // `rules`, `explain` and docs/rules.md), e.g. "info when a driver reload cleared the event".
  std::string_view severity_from = {};
  std::string_view title;  // what it checks, one line
  std::string_view remedy; // a concrete next step
  std::string_view source; // where the fact comes from: a public URL or a path in this repository
  std::string_view explanation = {}; // what a finding means and why (`explain ID`); "" = title
  std::string_view evidence = {};    // what the rule looks at (`explain ID`)
  // Findings that usually cause this one, space-separated: rule ids, id prefixes ending in "."
  // or "gpu-effects" (any finding that left a GPU out or narrowed the recommendation). When one
  // was found, the verdict names it as the primary cause instead: module.nouveau-loaded before
  // driver.not-loaded, gpu.fallen-off-bus before gpu.too-few-usable.
  std::string_view caused_by = {};
  // The probes whose facts the predicate judges ({ProbeId::kernel_log, ProbeId::nvml}). When one
  // of them did not run (skipped, failed), no finding is no evidence: the rule is "not checked",
  // not passed (rules_not_checked; `explain-log --check` calls it "not checked", not
  // "rejected"). Empty: it judges only facts every check has.
  ProbeSet reads = {};
  EventSet events = {};             // the kernel-log events this row judges
  std::vector<RuleCase> cases = {}; // fixtures that must fire it, fixtures where it is silent
  CheckFn check;
  // A site rules file replaced the remedy: it is the site's next step, and a predicate's own
  // filled-in remedy does not override it.
  bool site_remedy = false;
};

struct Finding {
  std::string id;
  Severity severity = Severity::info;
  std::string message;
  std::vector<std::string> evidence;
  std::string remedy;
  std::optional<std::string> gpu; // bus id
  Effect effect = Effect::none;
  std::string headline; // Hit::headline
  std::string keep;     // Hit::keep
  std::string where;    // Hit::where
};

// Every built-in rule, in evaluation order.
std::span<const Rule> builtin_rules();
const Rule* find_rule(std::string_view id);

// One table per id prefix (src/rules/<prefix>.cpp), joined by builtin_rules().
std::span<const Rule> driver_rules();
std::span<const Rule> module_rules();
std::span<const Rule> devnode_rules();
std::span<const Rule> gpu_rules();
std::span<const Rule> kernel_rules();
std::span<const Rule> env_rules();
std::span<const Rule> probe_rules();
std::span<const Rule> xid_rules();
std::span<const Rule> rminit_rules();
std::span<const Rule> gsp_rules();
std::span<const Rule> log_rules();
std::span<const Rule> cuda_rules();
std::span<const Rule> nvml_rules();
std::span<const Rule> pcie_rules();
std::span<const Rule> iommu_rules();
std::span<const Rule> shm_rules();
std::span<const Rule> limits_rules();
std::span<const Rule> nvswitch_rules();
std::span<const Rule> imex_rules();
std::span<const Rule> persistence_rules();
std::span<const Rule> ib_rules();
std::span<const Rule> rdma_rules();
std::span<const Rule> hang_rules();
std::span<const Rule> process_rules();
std::span<const Rule> nccl_rules();

std::string_view severity_name(Severity s);
std::optional<Severity> parse_severity(std::string_view s);

} // namespace gpf
