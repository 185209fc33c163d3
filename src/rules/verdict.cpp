// Verdict and recommendation: runs the rule stages, decides which GPUs are usable and which to
// recommend, then the verdict (fail: a host-level fail finding or too few GPUs; warn: any warn
// finding or an unusable GPU; pass otherwise).
#include "gpf/rules/verdict.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace gpf {

int Assessment::usable_count() const {
  return static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(), [](const GpuAssessment& g) { return g.usable; }));
}

namespace {

Finding make_finding(const Rule& rule, Hit&& hit) {
  Finding f;
  f.id = std::string(rule.id);
  // A row declares whether its findings can be lower (severity_from); never higher than the row.
  f.severity = rule.severity_from.empty()
                   ? rule.severity
                   : std::min(hit.severity.value_or(rule.severity), rule.severity);
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
  const JobView job = derive_job_view(facts, Matrix::get());
  RuleContext ctx{facts, job, options, usable, recommended};
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
  if (facts.cuda.enumerated()) {
    // CUDA's devices are GPUs too (on WSL2 the only ones); the CUDA rows drop those that failed.
    for (const auto& d : facts.cuda.devices) {
      usable.insert(d.bus_id);
    }
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

  const auto& space = job.index_space;
  const auto add_gpu = [&](const GpuRef& ref, std::optional<int> index) {
    GpuAssessment g;
    g.index = index;
    g.bus_id = ref.bus_id;
    g.uuid = ref.uuid;
    if (const auto* gf = facts.gpu_by_bus(g.bus_id)) {
      g.model = gf->model;
      if (!g.uuid) {
        g.uuid = gf->uuid;
      }
    }
    if (const auto* cd = facts.cuda.device_by_bus(g.bus_id); cd && !g.model) {
      g.model = cd->name;
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
    if (g.usable && job.admits(g.bus_id) && index) {
      recommended.push_back(g.bus_id);
    }
    a.gpus.push_back(std::move(g));
  };
  for (std::size_t i = 0; i < space.size(); ++i) {
    add_gpu(space[i], static_cast<int>(i));
  }
  // Driver GPUs outside CUDA's list: judged and shown, but without an index, never recommended.
  for (const auto& gpu : facts.gpus) {
    if (std::none_of(space.begin(), space.end(),
                     [&](const GpuRef& r) { return r.bus_id == gpu.bus_id; })) {
      add_gpu({gpu.bus_id, gpu.uuid}, std::nullopt);
    }
  }
  const bool single = std::any_of(a.findings.begin(), a.findings.end(), [](const Finding& f) {
    return f.effect == Effect::single_gpu_only;
  });
  if (single && recommended.size() > 1) {
    recommended.resize(1);
  }
  run_stage(Stage::summary);

  std::vector<std::string> indices;
  std::vector<std::string> uuids;
  for (const auto& g : a.gpus) {
    if (std::find(recommended.begin(), recommended.end(), g.bus_id) != recommended.end()) {
      indices.push_back(std::to_string(*g.index));
      uuids.push_back(g.uuid.value_or(""));
    }
  }
  // --cvd-form uuid: UUIDs need no CUDA_DEVICE_ORDER; indices stay when a UUID is unknown.
  const bool by_uuid = options.cvd_form == CvdForm::uuid &&
                       std::all_of(uuids.begin(), uuids.end(),
                                   [](const std::string& u) { return starts_with(u, "GPU-"); });
  a.recommendation.cuda_visible_devices =
      fmt::format("{}", fmt::join(by_uuid ? uuids : indices, ","));
  a.recommendation.single_gpu_only = single;
  if (!indices.empty() && !by_uuid && job.pci_order) {
    a.recommendation.cuda_device_order = "PCI_BUS_ID";
  }

  std::stable_sort(a.findings.begin(), a.findings.end(),
                   [](const Finding& x, const Finding& y) { return x.severity > y.severity; });
  const auto is_host_fail = [](const Finding& f) { return f.severity == Severity::fail && !f.gpu; };
  const auto counts_for_warn = [](const Finding& f) {
    return f.severity == Severity::warn || (f.severity == Severity::fail && f.gpu);
  };
  const bool host_fail = std::any_of(a.findings.begin(), a.findings.end(), is_host_fail);
  const bool any_warn = std::any_of(a.findings.begin(), a.findings.end(), counts_for_warn);
  a.verdict = host_fail                                                          ? Verdict::fail
              : (any_warn || a.usable_count() < static_cast<int>(a.gpus.size())) ? Verdict::warn
                                                                                 : Verdict::pass;
  if (a.verdict != Verdict::pass) {
    for (std::size_t i = 0; i < a.findings.size(); ++i) {
      if (a.verdict == Verdict::fail ? is_host_fail(a.findings[i])
                                     : counts_for_warn(a.findings[i])) {
        a.causes.push_back(i);
      }
    }
  }
  return a;
}

int exit_code_for(Verdict verdict, bool strict) {
  if (verdict == Verdict::fail || (verdict == Verdict::warn && strict)) {
    return 1;
  }
  return 0;
}

std::string_view verdict_name(Verdict v) {
  static constexpr auto k_names = enum_names<Verdict::fail>({"pass", "warn", "fail"});
  return k_names(v);
}

} // namespace gpf
