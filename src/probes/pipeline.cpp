#include "gpf/probes/pipeline.hpp"

#include "gpf/probes/probes.hpp"
#include "gpf/probes/progress.hpp"
#include "gpf/util/checker_failure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string_view>
#include <utility>

namespace gpf {
namespace {
// One step of collect_facts: a row's start phase, or the row itself (run or finish).
struct Phase {
  std::size_t row = 0;
  bool start = false;
};

std::size_t row_index(const std::vector<ProbeRow>& rows, std::string_view name) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name == name) {
      return i;
    }
  }
  return rows.size();
}

// Where a row's first phase runs: before the row its start names, else at its own.
std::size_t first_phase_at(const std::vector<ProbeRow>& rows, std::size_t row) {
  return rows[row].start ? row_index(rows, rows[row].start_before) : row;
}

// The rows in order, each preceded by the start phases of the rows that start before it.
std::vector<Phase> schedule(const std::vector<ProbeRow>& rows) {
  std::vector<Phase> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < rows.size(); ++j) {
      if (rows[j].start && first_phase_at(rows, j) == i) {
        out.push_back({j, true});
      }
    }
    out.push_back({i, false});
  }
  return out;
}

ProgressFn& progress_listener() {
  static ProgressFn listener;
  return listener;
}
} // namespace

ProgressFn set_progress_listener(ProgressFn listener) {
  return std::exchange(progress_listener(), std::move(listener));
}

void report_progress(const std::string& text) {
  if (const auto& listener = progress_listener()) {
    listener(text);
  }
}

std::string probe_rows_problem() {
  const auto& rows = probe_rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const ProbeRow& r = rows[i];
    const bool one_phase = r.run && !r.start && !r.finish;
    const bool two_phases = !r.run && r.start && r.finish;
    if (!one_phase && !two_phases) {
      return fmt::format("probe row {}: neither one phase (run) nor two (start and finish)",
                         r.name);
    }
    if (row_index(rows, r.name) != i) {
      return fmt::format("probe row {}: registered twice", r.name);
    }
    if (first_phase_at(rows, i) > i) {
      return fmt::format("probe row {}: starts before {}, which is not a row before it", r.name,
                         r.start_before);
    }
    if (!r.after.empty() && row_index(rows, r.after) >= first_phase_at(rows, i)) {
      return fmt::format("probe row {}: {} does not run before its first phase", r.name, r.after);
    }
  }
  return {};
}

std::vector<std::string> probe_schedule() {
  const auto& rows = probe_rows();
  std::vector<std::string> out;
  for (const auto& phase : schedule(rows)) {
    const std::string name(rows[phase.row].name);
    out.push_back(phase.start ? "start " + name : name);
  }
  return out;
}

std::optional<std::string> stage_over_budget(const ProbeOptions& options, double deadline_s) {
  const auto left = options.budget_left_s();
  if (!left || deadline_s <= *left) {
    return std::nullopt;
  }
  return fmt::format(
      "budget: its deadline of {:g} s does not fit the {:.1f} s left of --budget {:g}", deadline_s,
      std::max(0.0, *left), *options.budget_s);
}

std::vector<bool> stages_within(const std::vector<StageEstimate>& stages, double left_s) {
  std::vector<std::size_t> order(stages.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return stages[a].estimate_s < stages[b].estimate_s;
  });
  std::vector<bool> admitted(stages.size(), false);
  double spent = 0;
  for (const std::size_t i : order) {
    if (spent + stages[i].estimate_s <= left_s) {
      spent += stages[i].estimate_s;
      admitted[i] = true;
    }
  }
  return admitted;
}

Facts collect_facts(const Host& host, const ProbeOptions& options) {
  Facts facts;
  facts.env = host.environment();
  const auto& rows = probe_rows(); // each probe registers its row in its own .cpp
  if (const auto problem = probe_rows_problem(); !problem.empty()) {
    throw CheckerFailure(problem);
  }
  // A started probe's in-flight work (its children), held here until its row finishes it.
  std::vector<std::unique_ptr<ProbeStarted>> started(rows.size());
  for (const auto& phase : schedule(rows)) {
    const ProbeRow& probe = rows[phase.row];
    if (phase.start) {
      started[phase.row] = probe.start(host, options, facts);
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    ProbeStatus status = probe.finish
                             ? probe.finish(host, options, facts, std::move(started[phase.row]))
                             : probe.run(host, options, facts);
    status.name = probe.name;
    status.what = probe.what;
    status.duration_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    auto reads = host.take_cut_reads(); // files cut at their read cap, then the probe's own cuts
    reads.insert(reads.end(), status.cut.begin(), status.cut.end());
    status.cut = std::move(reads);
    facts.probes.push_back(std::move(status));
  }
  return facts;
}

} // namespace gpf
