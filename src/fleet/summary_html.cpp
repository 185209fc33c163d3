// summarize --format html: one self-contained page, the fleet's GPUs coloured by state and
// grouped by cause; every string from a report escaped.
#include "fleet/summary.hpp"

#include "gpf/util/hostlist.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <fmt/format.h>

namespace gpf::fleet {

// Report text for HTML: control characters shown (printable), then the five characters HTML
// treats specially escaped. Every string from a report goes through here.
static std::string html(std::string_view s) {
  const std::string text = printable(s);
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

// The colours of the grid's states; the legend, the cells and the headings share them.
constexpr std::string_view k_html_style = R"(
body { font: 14px/1.4 sans-serif; margin: 16px; color: #222222; background: #ffffff; }
h1 { font-size: 20px; margin: 0 0 8px; }
h2 { font-size: 16px; margin: 20px 0 6px; }
.c { display: inline-block; width: 14px; height: 14px; margin: 1px; border-radius: 2px; }
.fail { background: #d62728; } .warn { background: #ff9f1a; } .none { background: #7f7f7f; }
.stale { background: #9467bd; } .pass { background: #2ca02c; }
.grid { display: flex; flex-wrap: wrap; gap: 4px 12px; }
.node { display: flex; align-items: center; white-space: nowrap; }
.node b { font: 12px monospace; font-weight: normal; min-width: 9em; margin-right: 4px; }
table { border-collapse: collapse; margin-top: 8px; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
code, pre { font: 12px monospace; white-space: pre-wrap; word-break: break-all; margin: 0; }
)";

// A GPU's cell: its worst finding, else the node's own cause, else ready; one cell for a node
// without a report or without a GPU listed.
std::string Fleet::html_cells(const NodeRecord& n) const {
  const std::string node = html(n.name);
  if (n.no_report) {
    return fmt::format(R"h(<span class="c none" title="{}: no report ({})"></span>)h", node,
                       html(n.primary));
  }
  if (n.stale) {
    return fmt::format(
        R"h(<span class="c stale" title="{}: stale, checked {}"></span>)h", node,
        html(n.checked_at.empty() ? std::string("at no readable time") : n.checked_at));
  }
  const std::string node_kind = n.verdict == "pass" || !n.primary_gpu.empty() ? "pass" : n.verdict;
  const std::string node_what =
      node_kind == "pass" ? std::string("ready")
                          : fmt::format("{} ({}, the node's)", html(n.primary_id), n.verdict);
  // the GPUs listed, and those a finding names that the list lacks (an excluded GPU)
  std::vector<std::string> buses = n.gpus;
  for (const auto& f : n.findings) {
    if (!f.gpu.empty() && std::find(buses.begin(), buses.end(), f.gpu) == buses.end()) {
      buses.push_back(f.gpu);
    }
  }
  if (buses.empty()) {
    return fmt::format(R"h(<span class="c {}" title="{}, no GPU listed: {}"></span>)h",
                       n.verdict == "pass" ? "pass" : n.verdict, node,
                       n.primary_id.empty() ? std::string("ready") : html(n.primary_id));
  }
  std::string out;
  for (const auto& bus : buses) {
    std::string kind = node_kind;
    std::vector<std::string> what;
    for (const auto& f : n.findings) {
      if (f.gpu == bus && (f.severity == "fail" || f.severity == "warn")) {
        what.push_back(fmt::format("{} ({})", html(f.id), html(f.severity)));
        if (kind_rank(f.severity) < kind_rank(kind)) {
          kind = f.severity;
        }
      }
    }
    out += fmt::format(R"h(<span class="c {}" title="{} {}: {}"></span>)h", kind, node, html(bus),
                       what.empty() ? node_what : fmt::format("{}", fmt::join(what, ", ")));
  }
  return out;
}

std::string Fleet::to_html() const {
  std::size_t ready_count = 0;
  for (const auto& [key, n] : m_nodes) {
    ready_count += ready(n) ? 1 : 0;
  }
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>gpu-preflight fleet summary</title>\n<style>{}</style>\n</head>\n<body>\n"
      "<h1>gpu-preflight fleet summary</h1>\n"
      "<p>{} node{} from {} report{}; ready: {} of {}; not ready: {} ({} empty or cut short, {} "
      "unreadable, {} superseded)</p>\n"
      "<p>",
      k_html_style, m_nodes.size(), m_nodes.size() == 1 ? "" : "s", m_reports,
      m_reports == 1 ? "" : "s", ready_count, m_nodes.size(), m_nodes.size() - ready_count,
      m_no_report, m_unreadable_count, m_superseded_count);
  for (const std::string_view kind : {"pass", "warn", "fail", "none", "stale"}) {
    out += fmt::format(R"h(<span class="c {}"></span> {} &nbsp; )h", kind,
                       kind == "pass"   ? "ready"
                       : kind == "none" ? "no report"
                                        : kind);
  }
  out += "</p>\n";
  for (const auto& g : cause_groups(true)) {
    out += fmt::format("<section>\n<h2><span class=\"c {}\"></span> {}: {} node{}</h2>\n", g.kind,
                       group_title(g, html(g.id)), g.nodes.size(), g.nodes.size() == 1 ? "" : "s");
    out += "<div class=\"grid\">\n";
    for (const NodeRecord* n : g.nodes) {
      out += fmt::format("<div class=\"node\"><b>{}</b>{}</div>\n", html(n->name), html_cells(*n));
    }
    out += "</div>\n";
    if (g.kind == "pass") {
      out += "</section>\n";
      continue;
    }
    std::map<std::string, std::vector<std::string>> rows;
    std::vector<std::string> not_ready;
    for (const NodeRecord* n : g.nodes) {
      rows[detail(g, *n)].push_back(n->name);
      if (!ready(*n) && !n->hostless) { // a file's name is no node to drain
        not_ready.push_back(n->name);
      }
    }
    out += "<table>\n<tr><th></th><th>nodes (Slurm hostlist)</th></tr>\n";
    for (const auto& [what, names] : rows) {
      out += fmt::format("<tr><td>{}</td><td><code>{}</code></td></tr>\n",
                         what.empty() ? std::string("nodes") : html(what), html(hostlist(names)));
    }
    const std::string remedy = g.kind == "none"    ? std::string("Run the check again.")
                               : g.kind == "stale" ? std::string("Run the check again.")
                                                   : g.nodes.front()->remedy;
    if (!remedy.empty()) {
      out += fmt::format("<tr><td>remedy</td><td>{}</td></tr>\n", html(remedy));
    }
    if (!not_ready.empty()) {
      out += fmt::format(
          "<tr><td>drain</td><td><pre>scontrol update state=drain {} {}</pre></td></tr>\n",
          html(shell_word(fmt::format("nodename={}", hostlist(not_ready)))),
          html(shell_word("reason=" + drain_reason(g))));
    }
    out += "</table>\n</section>\n";
  }
  out += "</body>\n</html>\n";
  return out;
}

} // namespace gpf::fleet
