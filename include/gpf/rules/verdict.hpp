#pragma once
// Turns facts and rules into a verdict, findings and a CUDA_VISIBLE_DEVICES recommendation.
#include "gpf/facts/visible_devices.hpp"
#include "gpf/rules/rule.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpf {

enum class Verdict { pass, warn, fail };

struct GpuAssessment {
  std::optional<int> index; // in the recommendation's index space (PCI order or CUDA's)
  std::string bus_id;
  std::optional<std::string> uuid;
  std::optional<std::string> model;
  bool usable = true;
  bool recommended = false;         // in the recommended CUDA_VISIBLE_DEVICES
  std::vector<std::string> reasons; // ids of findings that made it unusable
};

struct Recommendation {
  std::string cuda_visible_devices;             // "" when no GPU is usable
  std::optional<std::string> cuda_device_order; // "PCI_BUS_ID" when the indices rely on it
  // What the job gets: GPUs, or MIG instances when the job's CUDA_VISIBLE_DEVICES names them
  // (then cuda_visible_devices keeps the job's own MIG entries, never a parent GPU's index).
  int devices = 0;
  bool mig = false;
  // The job's CUDA_VISIBLE_DEVICES when it chose fewer GPUs than are usable.
  std::optional<std::string> chosen_by;
  // The finding (index into Assessment::findings) that kept one GPU of several.
  std::optional<std::size_t> narrowed_by;
  bool single_gpu_only() const { return narrowed_by.has_value(); }
};

// A rule that found nothing because an input it reads (its row's `.reads`) was not read: the
// probes named did not run or failed. Not a pass of that rule.
struct RuleNotChecked {
  std::string id;
  std::vector<std::string> probes;
};

struct Assessment {
  Verdict verdict = Verdict::pass;
  std::vector<Finding> findings;           // sorted: fail, warn, info; then by id
  std::vector<RuleNotChecked> not_checked; // in table order
  std::vector<GpuAssessment> gpus;
  Recommendation recommendation;
  // Indices into findings that explain the verdict, the primary cause first: host-level fails for
  // FAIL, warnings and GPU-level fails for WARN, none for PASS. Reports use these, never re-derive.
  std::vector<std::size_t> causes;
  int usable_count() const;
  // GPUs that a GPU-level finding left out (the others stay usable).
  int left_out_count() const;
  // The finding that decided the verdict (causes.front()), nullptr for PASS.
  const Finding* primary_cause() const;
};

Assessment assess(const Facts& facts, std::span<const Rule> rules, const CheckOptions& options);

// The probes of a row's `.reads` that did not give their facts (skipped, failed, or not run):
// where any is, a rule that found nothing was not checked. One judgement for the report
// (Assessment::not_checked) and explain-log --check.
std::vector<std::string> unread_probes(const Rule& rule, std::span<const ProbeStatus> probes);

// 0 ready (pass, or warn without --strict); 1 fail (or warn with --strict).
int exit_code_for(Verdict verdict, bool strict);
std::string_view verdict_name(Verdict v);

} // namespace gpf
