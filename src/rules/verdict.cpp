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
  f.keep = std::move(hit.keep);
  f.where = std::move(hit.where);
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

namespace {

// One check's assessment, in the order the steps run (see assess below). The rule context refers
// to `usable` and `recommended`, which the steps fill as they go.
class Assessor {
public:
  Assessor(const Facts& facts, std::span<const Rule> rules, const CheckOptions& options)
      : m_facts(facts), m_rules(rules), m_options(options),
        m_job(derive_job_view(facts, Matrix::get())), m_ctx{facts, m_job, options, m_usable,
                                                            m_recommended} {}

  Assessment run() {
    start_with_every_gpu_usable();
    run_stage(Stage::gpu);
    drop_unusable_gpus();
    run_stage(Stage::host);
    drop_unusable_gpus();
    fail_every_gpu_on_host_failure();
    judge_each_gpu();
    const std::vector<std::string> kept = recommend();
    m_ctx.recommended_devices = m_a.recommendation.mig ? kept.size() : m_recommended.size();
    run_stage(Stage::summary);
    name_devices(kept);
    sort_findings();
    decide_verdict();
    list_not_checked();
    return std::move(m_a);
  }

private:
  // Derived from the rows alone: a rule whose `.reads` names a probe that did not give its facts,
  // and that found nothing in what was read, was not checked.
  void list_not_checked() {
    for (const auto& rule : m_rules) {
      std::vector<std::string> unread = unread_probes(rule, m_facts.probes);
      const bool found = std::any_of(m_a.findings.begin(), m_a.findings.end(),
                                     [&rule](const Finding& f) { return f.id == rule.id; });
      if (!unread.empty() && !found) {
        m_a.not_checked.push_back({std::string(rule.id), std::move(unread)});
      }
    }
  }

  // The driver's GPUs and CUDA's devices (on WSL2 the only ones); the rules drop those that fail.
  void start_with_every_gpu_usable() {
    for (const auto& gpu : m_facts.gpus) {
      m_usable.insert(gpu.bus_id);
    }
    if (m_facts.cuda.enumerated()) {
      for (const auto& d : m_facts.cuda.devices) {
        m_usable.insert(d.bus_id);
      }
    }
  }

  void run_stage(Stage stage) {
    for (const auto& rule : m_rules) {
      if (rule.stage != stage) {
        continue;
      }
      m_ctx.rule = &rule;
      for (auto& hit : rule.check(m_ctx)) {
        m_a.findings.push_back(make_finding(rule, std::move(hit), m_facts));
      }
    }
  }

  void drop_unusable_gpus() {
    for (const auto& f : m_a.findings) {
      if (f.effect == Effect::gpu_unusable && f.gpu) {
        m_usable.erase(*f.gpu);
      }
    }
  }

  // A host-level failure (no /dev/nvidia-uvm, driver mismatch, ...) leaves no GPU usable; its ids
  // (each once: a GPU row names a cause, not every line that showed it) are a GPU's reasons.
  void fail_every_gpu_on_host_failure() {
    for (const auto& f : m_a.findings) {
      if (f.severity == Severity::fail && !f.gpu &&
          std::find(m_host_failures.begin(), m_host_failures.end(), f.id) ==
              m_host_failures.end()) {
        m_host_failures.push_back(f.id);
      }
    }
    if (!m_host_failures.empty()) {
      m_usable.clear();
      // "Start on one GPU" narrows nothing on a node where none is usable: such a finding stays
      // as information (the condition is real: explain-log --check confirms it), not a warning
      // that several usable GPUs may hang together beside a table that shows none.
      for (auto& f : m_a.findings) {
        if (f.effect == Effect::single_gpu_only) {
          f.effect = Effect::none;
          f.severity = Severity::info;
          f.message += "; no GPU is usable until the node's failure is fixed, so the "
                       "recommendation is not narrowed";
        }
      }
    }
    m_ctx.host_failed = !m_host_failures.empty();
  }

  void add_gpu(const GpuRef& ref, std::optional<int> index) {
    GpuAssessment g;
    g.index = index;
    g.bus_id = ref.bus_id;
    g.uuid = ref.uuid;
    if (const auto* gf = m_facts.gpu_by_bus(g.bus_id)) {
      g.model = gf->model;
      if (!g.uuid) {
        g.uuid = gf->uuid;
      }
    }
    if (const auto* cd = m_facts.cuda.device_by_bus(g.bus_id); cd && !g.model) {
      g.model = cd->name;
    }
    g.usable = m_usable.count(g.bus_id) != 0;
    for (const auto& f : m_a.findings) {
      if (f.effect == Effect::gpu_unusable && f.gpu == g.bus_id &&
          std::find(g.reasons.begin(), g.reasons.end(), f.id) == g.reasons.end()) {
        g.reasons.push_back(f.id);
      }
    }
    if (g.reasons.empty() && !g.usable) {
      g.reasons = m_host_failures;
    }
    if (g.usable && m_job.admits(g.bus_id) && index) {
      m_recommended.push_back(g.bus_id);
    }
    m_a.gpus.push_back(std::move(g));
  }

  // Every GPU of the index space, then the driver's GPUs outside CUDA's list: judged and shown,
  // but without an index, never recommended.
  void judge_each_gpu() {
    const auto& space = m_job.index_space;
    for (std::size_t i = 0; i < space.size(); ++i) {
      add_gpu(space[i], static_cast<int>(i));
    }
    for (const auto& gpu : m_facts.gpus) {
      if (std::none_of(space.begin(), space.end(),
                       [&](const GpuRef& r) { return r.bus_id == gpu.bus_id; })) {
        add_gpu({gpu.bus_id, gpu.uuid}, std::nullopt);
      }
    }
  }

  // What the job gets: its usable GPUs, or its MIG entries, cut to one by a single-GPU finding.
  // Returns the MIG entries kept.
  std::vector<std::string> recommend() {
    Recommendation& rec = m_a.recommendation;
    const VisibleDevices& visible = m_job.visible;
    if (visible.set && static_cast<int>(m_recommended.size()) < m_a.usable_count()) {
      rec.chosen_by = visible.raw;
    }
    const auto narrowing =
        std::find_if(m_a.findings.begin(), m_a.findings.end(),
                     [](const Finding& f) { return f.effect == Effect::single_gpu_only; });
    // MIG instances stay MIG instances: a parent GPU's index would hand the job every instance of
    // a shared GPU, or another tenant's.
    std::vector<std::string> kept = visible.mig && m_host_failures.empty()
                                        ? kept_mig_entries(m_facts, visible, m_usable)
                                        : std::vector<std::string>{};
    if (visible.mig) {
      rec.mig = true;
      rec.chosen_by = visible.raw;
      m_recommended.clear();
      const std::unordered_set<std::string_view> kept_set(kept.begin(), kept.end());
      std::unordered_set<std::string_view> buses;
      for (const auto& [entry, bus] : visible.entries) {
        if (kept_set.count(entry) != 0 && !bus.empty() && buses.insert(bus).second) {
          m_recommended.push_back(bus);
        }
      }
    }
    if (narrowing != m_a.findings.end() && (rec.mig ? kept.size() : m_recommended.size()) > 1) {
      rec.narrowed_by = static_cast<std::size_t>(narrowing - m_a.findings.begin());
      kept.resize(std::min<std::size_t>(kept.size(), 1));
      // the GPU the finding chose (the best-placed one), else the first
      const auto chosen = std::find(m_recommended.begin(), m_recommended.end(), narrowing->keep);
      if (!rec.mig && chosen != m_recommended.end()) {
        std::rotate(m_recommended.begin(), chosen, chosen + 1);
      }
      m_recommended.resize(1);
    }
    return kept;
  }

  // CUDA_VISIBLE_DEVICES and each GPU's `recommended` from the recommendation.
  void name_devices(const std::vector<std::string>& kept) {
    Recommendation& rec = m_a.recommendation;
    std::vector<std::string> indices;
    std::vector<std::string> uuids;
    for (auto& g : m_a.gpus) {
      g.recommended =
          std::find(m_recommended.begin(), m_recommended.end(), g.bus_id) != m_recommended.end();
      if (g.recommended && g.index) {
        indices.push_back(std::to_string(*g.index));
        uuids.push_back(g.uuid.value_or(""));
      }
    }
    if (rec.mig) {
      rec.cuda_visible_devices = fmt::format("{}", fmt::join(kept, ","));
      rec.devices = static_cast<int>(kept.size());
      return;
    }
    // --cvd-form uuid: UUIDs need no CUDA_DEVICE_ORDER; indices stay when a UUID is unknown.
    const bool by_uuid = m_options.cvd_form == CvdForm::uuid &&
                         std::all_of(uuids.begin(), uuids.end(),
                                     [](const std::string& u) { return starts_with(u, "GPU-"); });
    rec.cuda_visible_devices = fmt::format("{}", fmt::join(by_uuid ? uuids : indices, ","));
    rec.devices = static_cast<int>(indices.size());
    if (!indices.empty() && !by_uuid && m_job.pci_order) {
      rec.cuda_device_order = "PCI_BUS_ID";
    }
  }

  // Sorted by severity; the narrowing finding keeps its identity through the sort.
  void sort_findings() {
    Recommendation& rec = m_a.recommendation;
    std::vector<std::size_t> order(m_a.findings.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return m_a.findings[x].severity > m_a.findings[y].severity;
    });
    std::vector<Finding> sorted;
    sorted.reserve(m_a.findings.size());
    const auto narrowed_before = rec.narrowed_by;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (narrowed_before && order[i] == *narrowed_before) {
        rec.narrowed_by = i;
      }
      sorted.push_back(std::move(m_a.findings[order[i]]));
    }
    m_a.findings = std::move(sorted);
  }

  // fail on a host-level fail finding; warn on a warning, a GPU's failure or an unusable GPU; then
  // the causes, what changed the recommendation first and the root cause before its consequence.
  void decide_verdict() {
    Assessment& a = m_a;
    const auto is_host_fail = [](const Finding& f) {
      return f.severity == Severity::fail && !f.gpu;
    };
    const auto counts_for_warn = [](const Finding& f) {
      return f.severity == Severity::warn || (f.severity == Severity::fail && f.gpu);
    };
    const bool host_fail = std::any_of(a.findings.begin(), a.findings.end(), is_host_fail);
    const bool any_warn = std::any_of(a.findings.begin(), a.findings.end(), counts_for_warn);
    a.verdict = host_fail                                                          ? Verdict::fail
                : (any_warn || a.usable_count() < static_cast<int>(a.gpus.size())) ? Verdict::warn
                                                                                   : Verdict::pass;
    if (a.verdict == Verdict::pass) {
      return;
    }
    for (std::size_t i = 0; i < a.findings.size(); ++i) {
      if (a.verdict == Verdict::fail ? is_host_fail(a.findings[i])
                                     : counts_for_warn(a.findings[i])) {
        a.causes.push_back(i);
      }
    }
    std::stable_partition(a.causes.begin(), a.causes.end(),
                          [&](std::size_t i) { return a.findings[i].effect != Effect::none; });
    promote_root_cause(a, m_rules);
  }

  const Facts& m_facts;
  std::span<const Rule> m_rules;
  const CheckOptions& m_options;
  Assessment m_a;
  std::set<std::string> m_usable;
  std::vector<std::string> m_recommended;
  std::vector<std::string> m_host_failures;
  const JobView m_job;
  RuleContext m_ctx;
};

} // namespace

Assessment assess(const Facts& facts, std::span<const Rule> rules, const CheckOptions& options) {
  return Assessor(facts, rules, options).run();
}

std::vector<std::string> unread_probes(const Rule& rule, std::span<const ProbeStatus> probes) {
  std::vector<std::string> unread;
  for (const auto name : rule.reads.names()) {
    const auto it = std::find_if(probes.begin(), probes.end(),
                                 [name](const ProbeStatus& p) { return p.name == name; });
    if (it == probes.end() || it->state != ProbeState::ok) {
      unread.emplace_back(name);
    }
  }
  return unread;
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
