// summarize's grouping, outliers and spreads, and its text and JSON outputs.
#include "fleet/summary.hpp"

#include "gpf/report/text.hpp"
#include "gpf/util/exit_codes.hpp"
#include "gpf/util/hostlist.hpp"
#include "gpf/util/robust.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

namespace gpf::fleet {

// Lists in the text output name this many nodes, then "+N more" (the JSON has them all).
constexpr std::size_t k_text_list = 12;
// A finding's hostlist in the text takes at most this many lines: a node not ready is named in
// full in its cause's group, and the JSON has them all.
constexpr std::size_t k_finding_hostlist_lines = 2;
constexpr double k_outlier_mads = 3.0;
// Nodes needed in a group (same GPU model and driver) before one of them can stand out.
constexpr std::size_t k_outlier_min_group = 3;

static int severity_rank(std::string_view s) {
  return s == "fail" ? 0 : s == "warn" ? 1 : 2;
}

std::vector<std::pair<std::string, Fleet::FindingGroup>> Fleet::finding_groups() const {
  std::map<std::string, FindingGroup> groups;
  for (const auto& [key, n] : m_nodes) {
    for (const auto& f : n.findings) {
      auto& g = groups[f.id];
      if (g.severity.empty() || severity_rank(f.severity) < severity_rank(g.severity)) {
        g.severity = f.severity;
      }
      g.nodes.insert(n.name);
      if (!f.gpu.empty()) {
        g.gpus.emplace_back(n.name, f.gpu);
      }
    }
  }
  std::vector<std::pair<std::string, FindingGroup>> ordered(groups.begin(), groups.end());
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return severity_rank(a.second.severity) != severity_rank(b.second.severity)
               ? severity_rank(a.second.severity) < severity_rank(b.second.severity)
               : a.second.nodes.size() > b.second.nodes.size();
  });
  return ordered;
}

// A node stands out when one of its figures is more than 3 scaled median absolute deviations from
// the median of the nodes with the same GPU model and driver version (at least 3 such nodes with
// that figure), and at least the figure's least distance that matters (FigureInfo). The spread is
// at least 1% of the median, so that identical replays do not make every difference an outlier.
std::vector<Fleet::Outlier> Fleet::outliers() const {
  std::vector<Outlier> out;
  for (std::size_t f = 0; f < k_figures.size(); ++f) {
    add_outliers(static_cast<Figure>(f), out);
  }
  return out;
}

void Fleet::add_outliers(Figure figure, std::vector<Outlier>& out) const {
  const auto value = [figure](const NodeRecord& n) {
    return n.figures[static_cast<std::size_t>(figure)];
  };
  std::map<std::pair<std::string, std::string>, std::vector<const NodeRecord*>> groups;
  for (const auto& [key, n] : m_nodes) {
    if (value(n)) {
      groups[{model_key(n), n.driver_version}].push_back(&n);
    }
  }
  const auto first = out.size();
  for (const auto& [group_key, nodes] : groups) {
    if (nodes.size() < k_outlier_min_group) {
      continue;
    }
    std::vector<double> values;
    for (const auto* n : nodes) {
      values.push_back(value(*n)->value);
    }
    const RobustSpread r = robust_spread(values, 0.01);
    const double least =
        std::max(info(figure).min_fraction * std::abs(r.median), info(figure).min_amount);
    for (const auto* n : nodes) {
      const double v = value(*n)->value;
      const bool worse = info(figure).higher_is_worse ? v > r.median : v < r.median;
      if (worse && std::abs(r.deviations(v)) > k_outlier_mads && std::abs(v - r.median) >= least) {
        out.push_back(
            {n, figure, r.median, r.mad, nodes.size(), group_key.first, group_key.second});
      }
    }
  }
  // The farthest first, within this figure.
  std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
            [](const Outlier& a, const Outlier& b) {
              return std::abs(a.figure_of().value - a.median) >
                     std::abs(b.figure_of().value - b.median);
            });
}

std::vector<std::pair<std::string, int>> Fleet::spread(const std::map<std::string, int>& counts) {
  std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

static Json figure_json(const NodeRecord& n, Figure f) {
  const auto& v = n.figures[static_cast<std::size_t>(f)];
  return v ? Json(v->value) : Json(nullptr);
}

Fleet::Spreads Fleet::spreads() const {
  Spreads s;
  for (const auto& [key, n] : m_nodes) {
    if (n.no_report) {
      continue; // nothing known of its versions
    }
    ++s.drivers[n.driver];
    ++s.kernels[n.kernel.empty() ? "unknown" : n.kernel];
    ++s.cudas[n.cuda.empty() ? "not probed" : n.cuda];
    for (const auto& [model, count] : n.models) {
      s.model_gpus[model] += count;
      ++s.model_nodes[model];
    }
  }
  return s;
}

Json Fleet::to_json() const {
  Json j;
  j["tool"] = Json{{"name", k_tool_name}, {"version", k_tool_version}};
  std::size_t ready_count = 0;
  std::size_t stale = 0;
  for (const auto& [key, n] : m_nodes) {
    ready_count += ready(n) ? 1 : 0;
    stale += n.stale ? 1 : 0;
  }
  j["reports"] = Json{{"read", m_reports},
                      {"nodes", m_nodes.size()},
                      {"superseded", m_superseded_count},
                      {"unreadable", m_unreadable_count},
                      {"no_report", m_no_report},
                      {"stale", stale},
                      {"future_dated", m_future}};
  j["ready_nodes"] = ready_count;
  j["not_ready_nodes"] = m_nodes.size() - ready_count;
  Json nodes = Json::array();
  for (const auto& [key, n] : m_nodes) {
    nodes.push_back(
        Json{{"node", json_text(n.name)},
             {"host", n.hostless ? Json(nullptr) : Json(json_text(n.name))},
             {"source", json_text(n.source)},
             {"checked_at", json_text(n.checked_at)},
             {"verdict", n.no_report ? Json(nullptr) : Json(n.verdict)},
             {"no_report", n.no_report ? Json(n.primary) : Json(nullptr)},
             {"ready", ready(n)},
             {"strict", n.strict()},
             {"stale", n.stale},
             {"future_dated", n.future},
             {"primary_cause",
              n.primary.empty() || n.no_report ? Json(nullptr) : Json(json_text(n.primary))},
             {"usable_gpus", n.usable},
             {"total_gpus", n.total}});
    for (std::size_t f = 0; f < k_figures.size(); ++f) {
      nodes.back()[k_figures[f].metric] = figure_json(n, static_cast<Figure>(f));
    }
  }
  j["nodes"] = std::move(nodes);
  Json findings = Json::array();
  for (const auto& [id, group] : finding_groups()) {
    const FindingGroup* g = &group;
    Json names = Json::array();
    for (const auto& name : g->nodes) {
      names.push_back(json_text(name));
    }
    Json gpus = Json::array();
    for (const auto& [node, bus] : g->gpus) {
      gpus.push_back(Json{{"node", json_text(node)}, {"bus_id", json_text(bus)}});
    }
    findings.push_back(Json{{"id", json_text(id)},
                            {"severity", json_text(g->severity)},
                            {"nodes", std::move(names)},
                            {"gpus", std::move(gpus)}});
  }
  j["findings"] = std::move(findings);
  auto [drivers, kernels, cudas, model_gpus, model_nodes] = spreads();
  const auto counted = [](const std::map<std::string, int>& counts) {
    Json arr = Json::array();
    for (const auto& [value, count] : spread(counts)) {
      arr.push_back(Json{{"value", json_text(value)}, {"nodes", count}});
    }
    return arr;
  };
  Json models = Json::array();
  for (const auto& [model, count] : spread(model_gpus)) {
    models.push_back(
        Json{{"value", json_text(model)}, {"gpus", count}, {"nodes", model_nodes[model]}});
  }
  j["spread"] = Json{{"driver", counted(drivers)},
                     {"kernel", counted(kernels)},
                     {"cuda", counted(cudas)},
                     {"gpu_model", std::move(models)}};
  Json outs = Json::array();
  for (const auto& o : outliers()) {
    outs.push_back(Json{{"node", json_text(o.node->name)},
                        {"metric", info(o.figure).metric},
                        {"value", o.figure_of().value},
                        {"gpu", json_text(o.figure_of().gpu)},
                        {"median", o.median},
                        {"mad", o.mad},
                        {"group_nodes", o.group},
                        {"gpu_model", json_text(o.model)},
                        {"driver", json_text(o.driver)}});
  }
  j["outliers"] = std::move(outs);
  Json sup = Json::array();
  for (const auto& s : m_superseded) {
    sup.push_back(Json{{"node", json_text(s.name)},
                       {"source", json_text(s.source)},
                       {"checked_at", json_text(s.checked_at)},
                       {"superseded_by", json_text(s.by_source)}});
  }
  j["superseded"] = std::move(sup);
  Json bad = Json::array();
  for (const auto& u : m_unreadable) {
    bad.push_back(Json{{"source", json_text(u.source)}, {"error", json_text(u.why)}});
  }
  j["unreadable"] = std::move(bad);
  return j;
}

static std::string listed(const std::vector<std::string>& items) {
  std::string s = fmt::format(
      "{}",
      fmt::join(items.begin(),
                items.begin() + static_cast<std::ptrdiff_t>(std::min(items.size(), k_text_list)),
                ", "));
  if (items.size() > k_text_list) {
    s += fmt::format(", +{} more", items.size() - k_text_list);
  }
  return s;
}

static std::string age_text(std::int64_t s) {
  if (s >= 86400) {
    return fmt::format("{}d {}h", s / 86400, (s % 86400) / 3600);
  }
  if (s >= 3600) {
    return fmt::format("{}h {}m", s / 3600, (s % 3600) / 60);
  }
  return fmt::format("{}m", std::max<std::int64_t>(s, 0) / 60);
}

// Names joined as hostlist lines: the first after `lead`, the next indented by 4, each at most
// width columns where a term allows; a continued line ends in a comma.
static std::string wrapped_hostlist(const std::string& lead, const std::vector<std::string>& names,
                                    std::size_t width) {
  const std::size_t room = width > 10 ? width - 5 : 5; // an indent of 4 and a comma
  std::string out = lead;
  std::size_t col = lead.size();
  bool first = true;
  for (const auto& term : hostlist_terms(names, room)) {
    if (!first) {
      out += ',';
      ++col;
    }
    if (col + term.size() + 1 > width && col > 4) {
      while (!out.empty() && out.back() == ' ') {
        out.pop_back(); // the lead's own space, when the list starts on the next line
      }
      out += "\n    ";
      col = 4;
    }
    out += term;
    col += term.size();
    first = false;
  }
  return out + "\n";
}

std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=,@%+[]-").find(c) != std::string_view::npos;
  });
  if (plain) {
    return s;
  }
  std::string q = "'";
  for (const char c : s) {
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return q + "'";
}

// The `scontrol update` command that drains the nodes with a reason, continued with backslashes.
// A long hostlist continues at the start of the next line, so that it stays one shell word; one
// that has to be quoted (a host name with odd characters) is split into several commands instead.
static std::string drain_commands(const std::vector<std::string>& names, const std::string& reason,
                                  std::size_t width) {
  const std::string head =
      fmt::format("  scontrol update state=drain \\\n    {} \\\n", shell_word("reason=" + reason));
  const std::string all = fmt::format("nodename={}", hostlist(names));
  if (shell_word(all) == all) {
    std::string out = head;
    std::string line = "    ";
    for (std::size_t at = 0; at < all.size();) {
      const std::size_t comma = all.find(',', at);
      const std::size_t end = comma == std::string::npos ? all.size() : comma + 1;
      if (line.size() + (end - at) + 1 > width && !trim(line).empty()) {
        out += line + "\\\n";
        line.clear();
      }
      line.append(all, at, end - at);
      at = end;
    }
    return out + line + "\n";
  }
  std::string out;
  for (const auto& term : hostlist_terms(names, width > 20 ? width - 8 : 12)) {
    out += fmt::format("{}    {}\n", head, shell_word(fmt::format("nodename={}", term)));
  }
  return out;
}

int kind_rank(std::string_view kind) {
  return kind == "fail" ? 0 : kind == "warn" ? 1 : kind == "none" ? 2 : kind == "stale" ? 3 : 4;
}

static std::string kind_word(std::string_view kind) {
  return kind == "fail"    ? "FAIL"
         : kind == "warn"  ? "WARN"
         : kind == "none"  ? "NO REPORT"
         : kind == "stale" ? "STALE"
                           : "READY";
}

std::string group_title(const Fleet::CauseGroup& g, std::string_view id) {
  return g.kind == "fail" || g.kind == "warn" ? fmt::format("{} {}", kind_word(g.kind), id)
                                              : kind_word(g.kind);
}

std::vector<Fleet::CauseGroup> Fleet::cause_groups(bool with_ready) const {
  std::map<std::pair<std::string, std::string>, CauseGroup> by; // (kind of group, id)
  for (const auto& [key, n] : m_nodes) {
    std::string kind;
    std::string id;
    if (n.no_report) {
      kind = "none";
      id = "no report";
    } else if (n.stale) {
      kind = "stale";
      id = "stale";
    } else if (n.verdict == "pass") {
      if (!with_ready) {
        continue;
      }
      kind = "pass";
      id = "ready";
    } else {
      kind = "cause";
      id = n.primary_id.empty() ? std::string("no primary cause") : n.primary_id;
    }
    CauseGroup& g = by[{kind, id}];
    g.id = id;
    const std::string node_kind = kind == "cause" ? n.verdict : kind;
    if (g.kind.empty() || kind_rank(node_kind) < kind_rank(g.kind)) {
      g.kind = node_kind;
    }
    g.nodes.push_back(&n);
  }
  std::vector<CauseGroup> out;
  for (auto& [key, g] : by) {
    out.push_back(std::move(g));
  }
  std::stable_sort(out.begin(), out.end(), [](const CauseGroup& a, const CauseGroup& b) {
    return kind_rank(a.kind) != kind_rank(b.kind) ? kind_rank(a.kind) < kind_rank(b.kind)
                                                  : a.nodes.size() > b.nodes.size();
  });
  return out;
}

// What sets a node apart within its cause group: the GPU, WARN in a group that fails, whether
// --strict made it not ready; why there is no report. "" when nothing.
std::string Fleet::detail(const CauseGroup& g, const NodeRecord& n) const {
  if (n.no_report) {
    return printable(n.primary);
  }
  if (n.stale) {
    return {};
  }
  std::vector<std::string> parts;
  if (g.kind != n.verdict) {
    parts.emplace_back(kind_word(n.verdict));
  }
  if (n.verdict == "warn") {
    parts.emplace_back(n.strict() ? "not ready by --strict" : "ready");
  }
  if (!n.primary_gpu.empty()) {
    parts.push_back(fmt::format("GPU {}", printable(n.primary_gpu)));
  }
  if (!n.primary_where.empty()) {
    parts.push_back(printable(n.primary_where));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The reason a group's nodes are drained with: its cause's id, and the part of the node that
// causes it where every node names the same one (the ACS port of identical nodes), so that the
// reason Slurm shows leads to the fix; a node's own part is in its row when they differ.
std::string Fleet::drain_reason(const CauseGroup& g) {
  const std::string& where = g.nodes.front()->primary_where;
  const bool shared = !where.empty() && std::all_of(g.nodes.begin(), g.nodes.end(), [&](auto* n) {
    return n->primary_where == where;
  });
  return shared ? fmt::format("gpu-preflight: {} {}", g.id, where)
                : fmt::format("gpu-preflight: {}", g.id);
}

std::string Fleet::to_text(std::size_t width) const {
  width = std::max<std::size_t>(width, 40);
  const auto wrap = [width](const std::string& text, std::size_t hang = 4) {
    return wrap_text(text, 0, hang, width);
  };
  std::string out;
  std::size_t ready_count = 0;
  for (const auto& [key, n] : m_nodes) {
    ready_count += ready(n) ? 1 : 0;
  }
  std::vector<std::string> notes;
  if (!m_superseded.empty()) {
    notes.push_back(fmt::format("{} superseded", m_superseded_count));
  }
  if (m_no_report > 0) {
    notes.push_back(fmt::format("{} empty or cut short", m_no_report));
  }
  if (m_unreadable_count > 0) {
    notes.push_back(fmt::format("{} unreadable", m_unreadable_count));
  }
  if (m_future > 0) {
    notes.push_back(fmt::format("{} dated in the future", m_future));
  }
  out += wrap(
      fmt::format("gpu-preflight summary: {} node{} from {} report{}{}", m_nodes.size(),
                  m_nodes.size() == 1 ? "" : "s", m_reports, m_reports == 1 ? "" : "s",
                  notes.empty() ? std::string() : fmt::format(" ({})", fmt::join(notes, ", "))));
  out += fmt::format("ready: {} of {}; not ready: {}\n", ready_count, m_nodes.size(),
                     m_nodes.size() - ready_count);

  // Per primary cause: the nodes as a hostlist (rows where they differ), the first remedy once,
  // and the command that drains the ones not ready.
  for (const auto& g : cause_groups(false)) {
    std::map<std::string, std::vector<std::string>> rows; // detail -> node names
    std::vector<std::string> names;
    std::vector<std::string> not_ready;
    std::int64_t oldest = std::numeric_limits<std::int64_t>::max();
    std::int64_t newest = std::numeric_limits<std::int64_t>::min();
    std::size_t undated = 0;
    std::size_t future = 0;
    for (const NodeRecord* n : g.nodes) {
      const std::string name = printable(n->name);
      rows[detail(g, *n)].push_back(name);
      names.push_back(name);
      if (!ready(*n) && !n->hostless) { // a file's name is no node to drain
        not_ready.push_back(name);
      }
      if (n->plausible_time()) {
        oldest = std::min(oldest, *n->checked_s);
        newest = std::max(newest, *n->checked_s);
      } else {
        ++(n->future ? future : undated);
      }
    }
    std::string head = fmt::format("{}: {} node{}", group_title(g, printable(g.id)), g.nodes.size(),
                                   g.nodes.size() == 1 ? "" : "s");
    if (g.kind == "stale") {
      head = fmt::format("STALE (older than --max-age): {} node{}", g.nodes.size(),
                         g.nodes.size() == 1 ? "" : "s");
      if (oldest < newest) {
        head += fmt::format(", checked {} to {} ago", age_text(m_now_s - oldest),
                            age_text(m_now_s - newest));
      } else if (oldest == newest) {
        head += fmt::format(", checked {} ago", age_text(m_now_s - oldest));
      }
      if (future > 0) {
        head += fmt::format(", {} dated in the future", future);
      }
      if (undated > 0) {
        head += fmt::format(", {} without a readable checked_at", undated);
      }
    }
    if (rows.size() == 1 && !rows.begin()->first.empty()) {
      head += " (" + rows.begin()->first + ")";
    }
    out += '\n';
    out += wrap(head, 2);
    if (rows.size() > 1 || not_ready.size() < names.size()) {
      for (const auto& [what, row] : rows) {
        // one row: its difference is in the heading already
        const std::string label = rows.size() == 1 ? std::string("nodes")
                                  : what.empty()   ? std::string("other")
                                                   : what;
        out += wrapped_hostlist(fmt::format("  {}: ", label), row, width);
      }
    }
    const NodeRecord* first = g.nodes.front();
    const std::string remedy =
        g.kind == "none"
            ? std::string("Run the check again; an empty or cut-short report is a check that "
                          "crashed, was killed or timed out (see the job's log)")
        : g.kind == "stale" ? std::string("Run the check again: the reports are older than "
                                          "--max-age, their verdicts old news")
                            : printable(first->remedy);
    if (!remedy.empty()) {
      out += wrap_text("remedy: " + remedy, 2, 4, width).insert(0, "  ");
    }
    // A host that reads as a hostlist expression ("node[1-4]", "a,b") would drain nodes no
    // report is about: it is named, never put in the command.
    std::vector<std::string> expressions;
    std::erase_if(not_ready, [&](const std::string& name) {
      const bool expression = name.find_first_of("[],") != std::string::npos;
      if (expression) {
        expressions.push_back(name);
      }
      return expression;
    });
    if (!not_ready.empty()) {
      out += drain_commands(not_ready, printable(drain_reason(g)), width);
    }
    if (!expressions.empty()) {
      out +=
          wrap_text(fmt::format("not drained: the host name{} {} read{} as a Slurm hostlist "
                                "expression, which would drain other nodes too",
                                expressions.size() == 1 ? "" : "s", printable(listed(expressions)),
                                expressions.size() == 1 ? "s" : ""),
                    2, 4, width)
              .insert(0, "  ");
    }
  }
  std::vector<std::string> future;
  for (const auto& [key, n] : m_nodes) {
    if (n.future) {
      future.push_back(fmt::format("{} (checked_at {}, {} ahead of this clock)", printable(n.name),
                                   printable(n.checked_at), age_text(*n.checked_s - m_now_s)));
    }
  }
  if (!future.empty()) {
    out += '\n';
    out += wrap(fmt::format("FUTURE {}: {}", future.size(), listed(future)));
  }

  const auto groups = finding_groups();
  if (!groups.empty()) {
    out += "\nfindings (id, severity: nodes, GPUs)\n";
    for (const auto& [id, group] : groups) {
      const FindingGroup* g = &group;
      const std::vector<std::string> names(g->nodes.begin(), g->nodes.end());
      std::vector<std::string> shown;
      for (const auto& name : names) {
        shown.push_back(printable(name));
      }
      std::string rows = wrapped_hostlist(
          fmt::format("  {} ({}): {} node{}{}: ", printable(id), printable(g->severity),
                      g->nodes.size(), g->nodes.size() == 1 ? "" : "s",
                      g->gpus.empty() ? std::string()
                                      : fmt::format(", {} GPU{}", g->gpus.size(),
                                                    g->gpus.size() == 1 ? "" : "s")),
          shown, width);
      // a finding on a scattered set of nodes: its first lines
      if (static_cast<std::size_t>(std::count(rows.begin(), rows.end(), '\n')) >
          k_finding_hostlist_lines) {
        std::size_t end = 0;
        for (std::size_t i = 0; i < k_finding_hostlist_lines; ++i) {
          end = rows.find('\n', end) + 1;
        }
        rows.resize(end);
        if (rows.size() >= 2 && rows[rows.size() - 2] == ',') {
          rows.erase(rows.size() - 2, 1);
        }
        rows += "    and more (--format json names every node)\n";
      }
      out += rows;
    }
  }

  auto [drivers, kernels, cudas, model_gpus, model_nodes] = spreads();
  const auto line = [](const std::map<std::string, int>& counts) {
    std::vector<std::string> parts;
    for (const auto& [value, count] : spread(counts)) {
      parts.push_back(fmt::format("{}: {}", printable(value), count));
    }
    return parts.empty() ? std::string("none known") : fmt::format("{}", fmt::join(parts, ", "));
  };
  out += "\nspread (nodes)\n";
  out += wrap_text(fmt::format("driver     {}", line(drivers)), 2, 13, width).insert(0, "  ");
  out += wrap_text(fmt::format("kernel     {}", line(kernels)), 2, 13, width).insert(0, "  ");
  out += wrap_text(fmt::format("CUDA       {}", line(cudas)), 2, 13, width).insert(0, "  ");
  std::vector<std::string> models;
  for (const auto& [model, count] : spread(model_gpus)) {
    models.push_back(fmt::format("{}: {} GPUs on {} node{}", printable(model), count,
                                 model_nodes[model], model_nodes[model] == 1 ? "" : "s"));
  }
  out += wrap_text(fmt::format("GPU model  {}", models.empty()
                                                    ? std::string("none")
                                                    : fmt::format("{}", fmt::join(models, ", "))),
                   2, 13, width)
             .insert(0, "  ");

  const auto outs = outliers();
  out += '\n';
  out += wrap("outliers (the slowest CUDA start-up, narrowest PCIe link, hottest GPU or "
              "slowest copy bandwidth of a node, > 3 scaled MADs from the median of nodes "
              "with the same GPU model and driver)",
              2);
  if (outs.empty()) {
    out += "  none\n";
  }
  for (const auto& o : outs) {
    const auto text = [&o](double v) {
      const auto& f = info(o.figure);
      return f.fixed ? fmt::format("{:.1f} {}", v, f.unit) : fmt::format("{:g} {}", v, f.unit);
    };
    out +=
        wrap(fmt::format("  {} {}: {} {} vs median {} (MAD {}, {} nodes with {}, driver {})",
                         printable(o.node->name), printable(o.figure_of().gpu), info(o.figure).what,
                         text(o.figure_of().value), text(o.median), text(o.mad), o.group,
                         printable(o.model), o.driver.empty() ? "none" : printable(o.driver)));
  }
  if (!m_superseded.empty()) {
    out += "\nsuperseded (a newer report of the node counts)\n";
    std::size_t shown = 0;
    for (const auto& s : m_superseded) {
      if (shown++ == k_text_list) {
        out += fmt::format("  +{} more\n", m_superseded_count - k_text_list);
        break;
      }
      out += wrap(fmt::format("  {}: {} ({}) by {} ({})", printable(s.name), printable(s.source),
                              printable(s.checked_at), printable(s.by_source),
                              printable(s.by_checked_at)));
    }
  }
  if (!m_unreadable.empty()) {
    out += "\nunreadable\n";
    std::size_t shown = 0;
    for (const auto& u : m_unreadable) {
      if (shown++ == k_text_list) {
        break;
      }
      out += wrap(fmt::format("  {}: {}", printable(u.source), printable(u.why)));
    }
    if (m_unreadable_count > k_text_list) {
      out += fmt::format("  +{} more\n", m_unreadable_count - k_text_list);
    }
  }
  return out;
}

} // namespace gpf::fleet
