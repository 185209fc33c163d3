// Renders the rule table for people (`rules`, `explain`, docs/rules.md) and for programs (JSON).
#include "gpf/report/rules_doc.hpp"
#include "gpf/knowledge/kernel_log_tables.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/report/report.hpp"
#include "gpf/report/text.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace gpf {
namespace {

std::vector<const Rule*> sorted(std::span<const Rule> rules) {
  std::vector<const Rule*> out;
  for (const auto& r : rules) {
    out.push_back(&r);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Rule* a, const Rule* b) { return a->id < b->id; });
  return out;
}

// "fail", or "fail; info for an Xid logged before the last driver reload" when findings can be
// lower.
std::string severity_text(const Rule& r) {
  const auto name = std::string(severity_name(r.severity));
  return r.severity_from.empty() ? name : fmt::format("{}; {}", name, r.severity_from);
}

std::string_view meaning(const Rule& r) {
  return r.explanation.empty() ? r.title : r.explanation;
}
std::string_view evidence(const Rule& r) {
  return r.evidence.empty() ? std::string_view("the inputs named in each finding's evidence")
                            : r.evidence;
}

// A Markdown table cell: no line breaks, no unescaped pipes.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace

std::string_view stage_name(Stage stage) {
  static constexpr auto k_names = enum_names<Stage::summary>({"gpu", "host", "summary"});
  return k_names(stage);
}

// A source for a reader at a terminal: a URL as it is; a page of this repository's docs/ by where
// the package installs it (cmake/packaging.cmake: docs/ into /usr/share/doc/gpu-preflight), since
// an installed tool has no repository beside it. The JSON and docs/rules.md keep the path.
static std::string reader_source(std::string_view source) {
  constexpr std::string_view k_docs = "docs/";
  if (source.substr(0, k_docs.size()) != k_docs) {
    return std::string(source);
  }
  return fmt::format("/usr/share/doc/gpu-preflight/{}", source.substr(k_docs.size()));
}

std::string render_rules_text(std::span<const Rule> rules, std::size_t width) {
  const auto list = sorted(rules);
  std::size_t id_width = 2;
  for (const auto* r : list) {
    id_width = std::max(id_width, r->id.size());
  }
  // A table where every title fits beside the id and severity; on a narrower terminal each rule is
  // its id and severity, then its title, lower severity and source wrapped under it.
  const std::size_t column = id_width + 12;
  const bool table = std::all_of(list.begin(), list.end(),
                                 [&](const Rule* r) { return column + r->title.size() <= width; });
  const auto wrapped = [width](std::string_view text, std::size_t used, std::size_t hang) {
    std::string w = wrap_text(text, used, hang, width);
    while (!w.empty() && w.back() == '\n') {
      w.pop_back();
    }
    return w + "\n";
  };
  std::string out;
  if (table) {
    out = fmt::format("{:<{}}  {:<8}  {}\n", "ID", id_width, "SEVERITY", "WHAT IT CHECKS");
  }
  for (const auto* r : list) {
    const std::size_t indent = table ? column : 4;
    if (table) {
      out +=
          fmt::format("{:<{}}  {:<8}  {}\n", r->id, id_width, severity_name(r->severity), r->title);
    } else {
      out += fmt::format("{}  {}\n{}", r->id, severity_name(r->severity), std::string(indent, ' '));
      out += wrapped(r->title, indent, indent);
    }
    if (!r->severity_from.empty()) {
      out += std::string(indent, ' ') +
             wrapped(fmt::format("lower: {}", r->severity_from), indent, indent + 7);
    }
    out += std::string(indent, ' ') +
           wrapped(fmt::format("source: {}", reader_source(r->source)), indent, indent + 8);
  }
  out += '\n';
  out += wrapped(fmt::format("{} rules. `gpu-preflight explain ID` tells what one means "
                             "and how to fix it.",
                             list.size()),
                 0, 0);
  return out;
}

namespace {

// Rule::caused_by in words: "module.nouveau-loaded, gsp.*, or any finding that left a GPU out".
std::string caused_by_text(const Rule& r) {
  std::vector<std::string> parts;
  for (const auto& token : split(r.caused_by, ' ')) {
    parts.push_back(token == "gpu-effects"
                        ? std::string("any finding that left a GPU out or kept one")
                    : token.back() == '.' ? fmt::format("{}*", token)
                                          : std::string(token));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

} // namespace

nlohmann::ordered_json rules_json(std::span<const Rule> rules) {
  nlohmann::ordered_json j;
  j["schema_version"] = k_schema_version;
  auto arr = nlohmann::ordered_json::array();
  for (const auto* r : sorted(rules)) {
    nlohmann::ordered_json rj;
    rj["id"] = r->id;
    rj["severity"] = severity_name(r->severity);
    if (!r->severity_from.empty()) {
      rj["severity_from"] = r->severity_from;
    }
    rj["stage"] = stage_name(r->stage);
    rj["checks"] = r->title;
    rj["meaning"] = meaning(*r);
    rj["evidence"] = evidence(*r);
    rj["remedy"] = r->remedy;
    rj["source"] = r->source;
    if (!r->caused_by.empty()) {
      rj["caused_by"] = caused_by_text(*r);
    }
    if (!r->reads.empty()) {
      rj["reads"] = r->reads.names();
    }
    arr.push_back(std::move(rj));
  }
  j["rules"] = std::move(arr);
  return j;
}

namespace {

// NVIDIA's Xid and SXid catalogs beside gpu-preflight's judgement of each code.
std::string catalogs_markdown() {
  std::string out = fmt::format(
      "\n## Xid catalog\n\nNVIDIA's columns ({}, <{}>) beside gpu-preflight's judgement; the "
      "note says why where they differ. Per-code site policy: `xid.N` (docs/user-rules.md).\n\n"
      "| Xid | NVIDIA's mnemonic | NVIDIA's description | NVIDIA's action (immediate / "
      "investigatory) | gpu-preflight | note |\n|---|---|---|---|---|---|\n",
      k_xid_catalog_version, k_xid_catalog_url);
  for (const auto& x : xid_table()) {
    out += fmt::format(
        "| {} | {} | {} | {} / {} | {} | {} |\n", x.code, cell(x.mnemonic), cell(x.description),
        x.immediate.empty() ? "-" : cell(x.immediate),
        x.investigatory.empty() ? "-" : cell(x.investigatory), cell(xid_class_word(x.cls)),
        cell(x.source == k_xid_catalog_url ? std::string(x.note)
                                           : fmt::format("{} (source: {})", x.note, x.source)));
  }
  out += fmt::format(
      "\n## SXid catalog\n\nThe Fabric Manager User Guide's SXid tables ({}, <{}>) beside "
      "gpu-preflight's judgement. An SXid the table does not list follows its line's own Fatal / "
      "Non-fatal word. Per-code site policy: `sxid.N`.\n\n| SXid | NVIDIA's name | NVIDIA's "
      "table | NVIDIA's recovery | gpu-preflight | note |\n|---|---|---|---|---|---|\n",
      k_sxid_catalog_version, k_sxid_catalog_url);
  for (const auto& x : sxid_table()) {
    out += fmt::format(
        "| {} | {} | {} | {} | {} | {} |\n", x.code, cell(x.name), sxid_guide_word(x.guide),
        x.recovery.empty() ? "-" : cell(x.recovery), cell(sxid_class_word(x.cls)),
        cell(x.source == k_sxid_catalog_url ? std::string(x.note)
                                            : fmt::format("{} (source: {})", x.note, x.source)));
  }
  return out;
}

} // namespace

std::string render_rules_markdown(std::span<const Rule> rules) {
  const auto list = sorted(rules);
  std::string out =
      "<!-- Generated from the rule table by `gpu-preflight rules --format markdown` (target `docs`); "
      "do not edit below this line. -->\n\n## Rule index\n\n| id | severity | stage | what it checks |\n"
      "|---|---|---|---|\n";
  for (const auto* r : list) {
    out += fmt::format("| `{}` | {} | {} | {} |\n", r->id, severity_name(r->severity),
                       stage_name(r->stage), cell(r->title));
  }
  out += "\n## Rules\n";
  for (const auto* r : list) {
    out += fmt::format(
        "\n### {}\n\n- **Severity:** {} ({} stage)\n- **Checks:** {}\n- **Meaning:** {}\n"
        "- **Evidence looked for:** {}\n- **Remedy:** {}\n- **Source:** {}\n",
        r->id, severity_text(*r), stage_name(r->stage), r->title, meaning(*r), evidence(*r),
        r->remedy, r->source);
    if (!r->caused_by.empty()) {
      out +=
          fmt::format("- **Usually caused by (named first when found):** {}\n", caused_by_text(*r));
    }
  }
  return out + catalogs_markdown();
}

std::string render_explain(const Rule& r) {
  // Each field under its label, wrapped to 80 columns so that it reads in a terminal.
  const auto field = [](std::string_view label, std::string_view text) {
    return fmt::format("{:<11}", label) + wrap_text(text, 11, 11, 80) + "\n";
  };
  std::string out =
      fmt::format("{}  ({}, {} stage)\n\n", r.id, severity_name(r.severity), stage_name(r.stage));
  out += field("Checks:", r.title);
  out += field("Meaning:", meaning(r));
  out += field("Evidence:", evidence(r));
  out += field("Remedy:", r.remedy);
  if (!r.severity_from.empty()) {
    out += field("Severity:", severity_text(r));
  }
  if (!r.caused_by.empty()) {
    out += field("Causes:",
                 fmt::format("usually {}; when one is found, it is named as the primary cause",
                             caused_by_text(r)));
  }
  if (!r.reads.empty()) {
    out +=
        field("Reads:",
              fmt::format("the {} probe{}; where {} not read, the rule is not checked, "
                          "not passed",
                          fmt::join(r.reads.names(), ", "), r.reads.names().size() == 1 ? "" : "s",
                          r.reads.names().size() == 1 ? "it is" : "one is"));
  }
  return out + fmt::format("{:<11}{}\n", "Sources:", reader_source(r.source)); // never cut
}

} // namespace gpf
