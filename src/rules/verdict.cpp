// Verdict and recommendation: runs the rule stages, decides which GPUs are usable and which to
// recommend, then the verdict (fail: a host-level fail finding or too few GPUs; warn: any warn
// finding or an unusable GPU; pass otherwise).
#include "gpf/rules/verdict.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/util/text.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>
#include <unordered_set>

namespace gpf {

int Assessment::usable_count() const {
  return static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(), [](const GpuAssessment& g) { return g.usable; }));
}

namespace {

// A rule's remedy is written once for every host; a finding's names this host's values instead of
// the placeholders: "<bus id>" (the finding's GPU), "<version>" (the loaded driver's version) and
// "<branch>" (its major number, as in nvidia-fabricmanager-550). Unknown values stay as written.
void fill_placeholders(std::string& remedy, const std::optional<std::string>& gpu,
                       const Facts& facts) {
  const std::string& version = facts.driver.version_text;
  const std::pair<std::string_view, std::string> values[] = {
      {"<bus id>", gpu.value_or("")},
      {"<version>", version},
      {"<branch>", version.substr(0, version.find('.'))},
  };
  for (const auto& [placeholder, value] : values) {
    if (value.empty()) {
      continue;
    }
    for (auto at = remedy.find(placeholder); at != std::string::npos;
         at = remedy.find(placeholder, at + value.size())) {
      remedy.replace(at, placeholder.size(), value);
    }
  }
}

Finding make_finding(const Rule& rule, Hit&& hit, const Facts& facts) {
  Finding f;
  f.id = std::string(rule.id);
  // A row declares whether its findings can be lower (severity_from); never higher than the row.
  f.severity = rule.severity_from.empty()
                   ? rule.severity
                   : std::min(hit.severity.value_or(rule.severity), rule.severity);
  f.message = std::move(hit.message);
  f.evidence = std::move(hit.evidence);
  f.remedy =
      hit.remedy.empty() || rule.site_remedy ? std::string(rule.remedy) : std::move(hit.remedy);
  f.gpu = std::move(hit.gpu);
  fill_placeholders(f.remedy, f.gpu, facts);
  f.effect = hit.effect;
  f.headline = std::move(hit.headline);
  return f;
}

// Whether a finding is one of those a rule's caused_by lists (see Rule::caused_by).
bool listed_in(std::string_view caused_by, const Finding& f) {
  for (const auto& token : split(caused_by, ' ')) {
    if (token == "gpu-effects" ? f.effect != Effect::none
        : token.back() == '.'  ? starts_with(f.id, token)
                               : f.id == token) {
      return true;
    }
  }
  return false;
}

// The root cause first: when the first cause's rule lists what usually causes it and such a
// finding exists, that finding leads (module.nouveau-loaded before driver.not-loaded). A few hops
// at most: caused_by lists could name each other.
void promote_root_cause(Assessment& a, std::span<const Rule> rules) {
  for (int hop = 0; hop < 3 && !a.causes.empty(); ++hop) {
    const Finding& head = a.findings[a.causes.front()];
    const auto rule =
        std::find_if(rules.begin(), rules.end(), [&](const Rule& r) { return r.id == head.id; });
    if (rule == rules.end() || rule->caused_by.empty()) {
      return;
    }
    std::optional<std::size_t> root;
    for (std::size_t i = 0; i < a.findings.size() && !root; ++i) {
      if (i != a.causes.front() && a.findings[i].severity != Severity::info &&
          listed_in(rule->caused_by, a.findings[i])) {
        root = i;
      }
    }
    if (!root) {
      return;
    }
    a.causes.erase(std::remove(a.causes.begin(), a.causes.end(), *root), a.causes.end());
    a.causes.insert(a.causes.begin(), *root);
  }
}

// The job's MIG entries that it still gets: CUDA stops at the first entry naming no device (a MIG
// instance the mig probe found missing), and an instance on an unusable GPU is left out. Entries
// whose GPU cannot be known from the variable alone (MIG-<uuid>) are kept as the job wrote them.
std::vector<std::string> kept_mig_entries(const Facts& facts, const VisibleDevices& visible,
                                          const std::set<std::string>& usable) {
  // Hashed, not scanned: a job may name tens of thousands of instances.
  std::unordered_map<std::string_view, const MigEntry*> mig_by_entry;
  for (const auto& m : facts.topology.mig_entries) {
    mig_by_entry.try_emplace(m.entry, &m);
  }
  std::vector<std::string> kept;
  std::unordered_set<std::string_view> seen;
  for (const auto& named : visible.entries) {
    const std::string& entry = named.first; // not a structured binding: clang 14 cannot capture one
    const std::string& bus = named.second;
    if (const auto mig = mig_by_entry.find(entry);
        mig != mig_by_entry.end() && mig->second->exists == false) {
      break;
    }
    if (!bus.empty() && usable.count(bus) == 0) {
      continue;
    }
    if (seen.insert(entry).second) {
      kept.push_back(entry);
    }
  }
  return kept;
}

} // namespace

int Assessment::left_out_count() const {
  return static_cast<int>(std::count_if(gpus.begin(), gpus.end(), [&](const GpuAssessment& g) {
    return !g.usable && verdict != Verdict::fail;
  }));
}

const Finding* Assessment::primary_cause() const {
  return causes.empty() ? nullptr : &findings[causes.front()];
}

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
        a.findings.push_back(make_finding(rule, std::move(hit), facts));
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
      // each id once: a GPU row names a cause, not every line that showed it
      if (f.severity == Severity::fail && !f.gpu &&
          std::find(ids.begin(), ids.end(), f.id) == ids.end()) {
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
      if (f.effect == Effect::gpu_unusable && f.gpu == g.bus_id &&
          std::find(g.reasons.begin(), g.reasons.end(), f.id) == g.reasons.end()) {
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
  Recommendation& rec = a.recommendation;
  if (job.visible.set && static_cast<int>(recommended.size()) < a.usable_count()) {
    rec.chosen_by = job.visible.raw;
  }
  const auto narrowing = std::find_if(a.findings.begin(), a.findings.end(), [](const Finding& f) {
    return f.effect == Effect::single_gpu_only;
  });
  const bool single = narrowing != a.findings.end();
  // MIG instances stay MIG instances: a parent GPU's index would hand the job every instance of
  // a shared GPU, or another tenant's.
  const std::vector<std::string> mig_entries = job.visible.mig && host_failures.empty()
                                                   ? kept_mig_entries(facts, job.visible, usable)
                                                   : std::vector<std::string>{};
  if (job.visible.mig) {
    rec.mig = true;
    rec.chosen_by = job.visible.raw;
    recommended.clear();
    const std::unordered_set<std::string_view> kept(mig_entries.begin(), mig_entries.end());
    std::unordered_set<std::string_view> buses;
    for (const auto& [entry, bus] : job.visible.entries) {
      if (kept.count(entry) != 0 && !bus.empty() && buses.insert(bus).second) {
        recommended.push_back(bus);
      }
    }
  }
  std::vector<std::string> kept = mig_entries;
  if (single && (rec.mig ? kept.size() : recommended.size()) > 1) {
    rec.narrowed_by = static_cast<std::size_t>(narrowing - a.findings.begin());
    kept.resize(std::min<std::size_t>(kept.size(), 1));
    recommended.resize(1);
  }
  ctx.recommended_devices = rec.mig ? kept.size() : recommended.size();
  run_stage(Stage::summary);

  std::vector<std::string> indices;
  std::vector<std::string> uuids;
  for (auto& g : a.gpus) {
    g.recommended =
        std::find(recommended.begin(), recommended.end(), g.bus_id) != recommended.end();
    if (g.recommended && g.index) {
      indices.push_back(std::to_string(*g.index));
      uuids.push_back(g.uuid.value_or(""));
    }
  }
  if (rec.mig) {
    rec.cuda_visible_devices = fmt::format("{}", fmt::join(kept, ","));
    rec.devices = static_cast<int>(kept.size());
  } else {
    // --cvd-form uuid: UUIDs need no CUDA_DEVICE_ORDER; indices stay when a UUID is unknown.
    const bool by_uuid = options.cvd_form == CvdForm::uuid &&
                         std::all_of(uuids.begin(), uuids.end(),
                                     [](const std::string& u) { return starts_with(u, "GPU-"); });
    rec.cuda_visible_devices = fmt::format("{}", fmt::join(by_uuid ? uuids : indices, ","));
    rec.devices = static_cast<int>(indices.size());
    if (!indices.empty() && !by_uuid && job.pci_order) {
      rec.cuda_device_order = "PCI_BUS_ID";
    }
  }

  // Sorted by severity; the narrowing finding keeps its identity through the sort.
  std::vector<std::size_t> order(a.findings.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return a.findings[x].severity > a.findings[y].severity;
  });
  std::vector<Finding> sorted;
  sorted.reserve(a.findings.size());
  const auto narrowed_before = rec.narrowed_by;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (narrowed_before && order[i] == *narrowed_before) {
      rec.narrowed_by = i;
    }
    sorted.push_back(std::move(a.findings[order[i]]));
  }
  a.findings = std::move(sorted);

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
    // A warning's first cause is what changed the recommendation: a GPU left out, or one kept.
    std::stable_partition(a.causes.begin(), a.causes.end(),
                          [&](std::size_t i) { return a.findings[i].effect != Effect::none; });
    promote_root_cause(a, rules);
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
