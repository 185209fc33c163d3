// Verdict and recommendation: runs the rule stages, decides which GPUs are usable and which to
// recommend, then the verdict (fail: a host-level fail finding or too few GPUs; warn: any warn
// finding or an unusable GPU; pass otherwise).
#include "gpf/rules/verdict.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace gpf {

std::vector<GpuRef> gpu_index_space(const Facts& facts) {
  std::vector<GpuRef> refs;
  for (const auto& gpu : facts.gpus) {
    refs.push_back({gpu.bus_id, gpu.uuid});
  }
  return refs;
}

bool index_space_is_pci_order(const Facts&) { return true; }

int Assessment::usable_count() const {
  return static_cast<int>(std::count_if(gpus.begin(), gpus.end(), [](const GpuAssessment& g) { return g.usable; }));
}

namespace {

Finding make_finding(const Rule& rule, Hit&& hit) {
  Finding f;
  f.id = std::string(rule.id);
  f.severity = hit.severity.value_or(rule.severity);
  f.message = std::move(hit.message);
  f.evidence = std::move(hit.evidence);
  f.remedy = hit.remedy.empty() ? std::string(rule.remedy) : std::move(hit.remedy);
  f.gpu = std::move(hit.gpu);
  f.effect = hit.effect;
  return f;
}

} // namespace

Assessment assess(const Facts& facts, std::span<const Rule> rules, const CheckOptions& options) {
  Assessment a;
  std::set<std::string> usable;
  std::vector<std::string> recommended;
  RuleContext ctx{facts, options, usable, recommended};
  const auto run_stage = [&](Stage stage) {
    for (const auto& rule : rules) {
      if (rule.stage != stage) {
        continue;
      }
      for (auto& hit : rule.check(ctx)) {
        a.findings.push_back(make_finding(rule, std::move(hit)));
      }
    }
  };
  const auto apply_gpu_effects = [&] {
    for (const auto& f : a.findings) {
      if (f.effect == Effect::gpu_unusable && f.gpu) {
        usable.erase(*f.gpu);
      }
    }
  };

  const auto host_fail_ids = [&] {
    std::vector<std::string> ids;
    for (const auto& f : a.findings) {
      if (f.severity == Severity::fail && !f.gpu) {
        ids.push_back(f.id);
      }
    }
    return ids;
  };

  for (const auto& gpu : facts.gpus) {
    usable.insert(gpu.bus_id);
  }
  run_stage(Stage::gpu);
  apply_gpu_effects();
  run_stage(Stage::host);
  apply_gpu_effects();
  // A host-level failure (no /dev/nvidia-uvm, driver mismatch, ...) leaves no GPU usable.
  const auto host_failures = host_fail_ids();
  if (!host_failures.empty()) {
    usable.clear();
  }
  ctx.host_failed = !host_failures.empty();

  const auto space = gpu_index_space(facts);
  const auto visible = parse_visible_devices(facts.env.get("CUDA_VISIBLE_DEVICES"), space);
  for (std::size_t i = 0; i < space.size(); ++i) {
    GpuAssessment g;
    g.index = static_cast<int>(i);
    g.bus_id = space[i].bus_id;
    g.uuid = space[i].uuid;
    if (const auto* gf = facts.gpu_by_bus(g.bus_id)) {
      g.model = gf->model;
      if (!g.uuid) {
        g.uuid = gf->uuid;
      }
    }
    g.usable = usable.count(g.bus_id) != 0;
    for (const auto& f : a.findings) {
      if (f.effect == Effect::gpu_unusable && f.gpu == g.bus_id) {
        g.reasons.push_back(f.id);
      }
    }
    if (g.reasons.empty() && !g.usable) {
      g.reasons = host_failures;
    }
    const bool admitted = std::find(visible.bus_ids.begin(), visible.bus_ids.end(), g.bus_id) != visible.bus_ids.end();
    if (g.usable && admitted) {
      recommended.push_back(g.bus_id);
    }
    a.gpus.push_back(std::move(g));
  }
  const bool single = std::any_of(a.findings.begin(), a.findings.end(),
                                  [](const Finding& f) { return f.effect == Effect::single_gpu_only; });
  if (single && recommended.size() > 1) {
    recommended.resize(1);
  }
  run_stage(Stage::summary);

  std::vector<std::string> indices;
  for (const auto& g : a.gpus) {
    if (std::find(recommended.begin(), recommended.end(), g.bus_id) != recommended.end()) {
      indices.push_back(std::to_string(*g.index));
    }
  }
  a.recommendation.cuda_visible_devices = fmt::format("{}", fmt::join(indices, ","));
  a.recommendation.single_gpu_only = single;
  if (!indices.empty() && index_space_is_pci_order(facts)) {
    a.recommendation.cuda_device_order = "PCI_BUS_ID";
  }

  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
  const bool host_fail = !host_fail_ids().empty();
  const bool any_warn = std::any_of(a.findings.begin(), a.findings.end(), [](const Finding& f) {
    return f.severity == Severity::warn || (f.severity == Severity::fail && f.gpu);
  });
  a.verdict = host_fail ? Verdict::fail : (any_warn || a.usable_count() < static_cast<int>(a.gpus.size())) ? Verdict::warn : Verdict::pass;
  return a;
}

int exit_code_for(Verdict verdict, bool strict) {
  if (verdict == Verdict::fail || (verdict == Verdict::warn && strict)) {
    return 1;
  }
  return 0;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
  case Verdict::pass:
    return "pass";
  case Verdict::warn:
    return "warn";
  case Verdict::fail:
    return "fail";
  }
  return "fail";
}

} // namespace gpf
