// The shape of the rule table: every row is declared in the file its id prefix names, and a row's
// findings are never more severe than the row and lower only where the row says so.
#include "gpf/probes/probes.hpp"
#include "gpf/rules/verdict.hpp"
#include "rules/common.hpp"
#include "rules/log_events.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

namespace gpf {
namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("every rule is declared in src/rules/<id prefix>.cpp, and only there") {
  const std::filesystem::path dir = std::filesystem::path(GPF_SOURCE_DIR) / "src" / "rules";
  std::map<std::string, std::string> files; // file name -> text
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files[entry.path().filename().string()] = read_all(entry.path());
  }
  for (const auto& rule : builtin_rules()) {
    INFO(rule.id);
    const std::string id(rule.id);
    const std::string home = id.substr(0, id.find('.')) + ".cpp";
    const std::string declaration = ".id = \"" + id + "\"";
    REQUIRE(files.count(home) == 1);
    CHECK(files[home].find(declaration) != std::string::npos);
    for (const auto& [name, text] : files) {
      if (name != home) {
        CHECK(text.find(declaration) == std::string::npos);
      }
    }
  }
}

std::map<std::string, std::string> rules_sources() {
  const std::filesystem::path dir = std::filesystem::path(GPF_SOURCE_DIR) / "src" / "rules";
  std::map<std::string, std::string> files; // file name -> text
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".cpp") {
      files[entry.path().filename().string()] = read_all(entry.path());
    }
  }
  return files;
}

// A source is a public URL or a path in this repository (an anchor after '#' allowed).
bool source_ok(std::string_view source) {
  if (source.rfind("https://", 0) == 0 || source.rfind("http://", 0) == 0) {
    return source.find(' ') == std::string_view::npos;
  }
  const std::string path(source.substr(0, source.find('#')));
  return !path.empty() && std::filesystem::exists(std::filesystem::path(GPF_SOURCE_DIR) / path);
}

TEST_CASE("every built-in row is whole: a well-formed unique id, title, check, remedy, source, "
          "evidence") {
  const auto files = rules_sources();
  // lower-case dotted: a prefix naming a rules file, then dash-separated words or numbers
  const std::regex well_formed("[a-z0-9]+(\\.[a-z0-9]+(-[a-z0-9]+)*)+");
  std::set<std::string_view> seen;
  for (const auto& rule : builtin_rules()) {
    INFO(rule.id);
    CHECK(seen.insert(rule.id).second);
    const std::string id(rule.id);
    CHECK(std::regex_match(id, well_formed));
    CHECK(files.count(id.substr(0, id.find('.')) + ".cpp") == 1);
    CHECK_FALSE(rule.title.empty());
    CHECK(static_cast<bool>(rule.check));
    CHECK_FALSE(rule.remedy.empty());
    CHECK_FALSE(rule.source.empty());
    CHECK(source_ok(rule.source));
    // What the rule looks at, for `explain` and docs/rules.md: never the generic fallback (#30).
    CHECK_FALSE(rule.evidence.empty());
  }
}

TEST_CASE("every row under src/rules is in the table, and every rules file in the join") {
  const auto files = rules_sources();
  const std::regex declared("\\.id = \"([^\"]+)\"");
  const std::regex table_function("std::span<const Rule> ([a-z_]+_rules)\\(\\) \\{");
  const std::string& join = files.at("rule_table.cpp");
  std::size_t rows = 0;
  for (const auto& [name, text] : files) {
    INFO(name);
    for (std::sregex_iterator m(text.begin(), text.end(), declared), end; m != end; ++m) {
      INFO((*m)[1].str());
      CHECK(find_rule((*m)[1].str()) != nullptr);
      ++rows;
    }
    for (std::sregex_iterator m(text.begin(), text.end(), table_function), end; m != end; ++m) {
      const std::string fn = (*m)[1].str();
      INFO(fn);
      if (fn != "builtin_rules") {
        CHECK(join.find(fn + "()") != std::string::npos);
      }
    }
  }
  CHECK(rows == builtin_rules().size());
}

TEST_CASE("a hit cannot change its row's severity unless the row declares severity_from") {
  Facts facts;
  const auto rules_with = [](std::string_view severity_from) {
    return std::vector<Rule>{{.id = "test.row",
                              .stage = Stage::host,
                              .severity = Severity::warn,
                              .severity_from = severity_from,
                              .title = "t",
                              .remedy = "r",
                              .source = "docs/rules.md",
                              .check = [](const RuleContext&) {
                                Hit low{"lower", {"evidence"}};
                                low.severity = Severity::info;
                                Hit high{"higher", {"evidence"}};
                                high.severity = Severity::fail;
                                return std::vector<Hit>{low, high};
                              }}};
  };
  const auto severities = [&](std::string_view severity_from) {
    std::map<std::string, Severity> out;
    for (const auto& f : assess(facts, rules_with(severity_from), {}).findings) {
      out[f.message] = f.severity;
    }
    return out;
  };
  const auto silent = severities("");
  CHECK(silent.at("lower") == Severity::warn);
  CHECK(silent.at("higher") == Severity::warn);
  const auto declared = severities("info when the test says so");
  CHECK(declared.at("lower") == Severity::info);
  CHECK(declared.at("higher") == Severity::warn); // never above the row
}

} // namespace
TEST_CASE("every probe handle a row can read names a registered probe, and every probe has one") {
  std::set<std::string> registered;
  for (const auto& row : probe_rows()) {
    registered.insert(std::string(row.name));
  }
  std::set<std::string> handles;
  for (unsigned i = 0; i <= static_cast<unsigned>(k_last_probe_id); ++i) {
    const auto name = std::string(probe_id_name(static_cast<ProbeId>(i)));
    INFO(name);
    CHECK(registered.contains(name));
    handles.insert(name);
  }
  CHECK(handles == registered);
  const ProbeSet two{ProbeId::nvml, ProbeId::kernel_log};
  CHECK(two.text() == "kernel-log nvml");
  CHECK(two.contains(ProbeId::nvml));
  CHECK_FALSE(two.contains(ProbeId::cuda));
  CHECK(ProbeSet{}.empty());
}

TEST_CASE("a rule whose input was not read is not checked, unless it found something anyway") {
  Facts f;
  ProbeStatus log;
  log.name = "kernel-log";
  log.state = ProbeState::error;
  ProbeStatus nvml;
  nvml.name = "nvml";
  f.probes = {log, nvml};
  const auto a = assess(f, builtin_rules(), CheckOptions{});
  std::set<std::string> ids;
  for (const auto& nc : a.not_checked) {
    ids.insert(nc.id);
  }
  for (const auto& rule : builtin_rules()) {
    INFO(rule.id);
    // every row reading a probe that is not ok here (cuda is absent: not read either)
    const auto reads = rule.reads.names();
    const bool unread =
        std::any_of(reads.begin(), reads.end(), [](std::string_view n) { return n != "nvml"; });
    const bool found = std::any_of(a.findings.begin(), a.findings.end(),
                                   [&](const Finding& x) { return x.id == rule.id; });
    CHECK(ids.contains(std::string(rule.id)) == (unread && !found));
  }
  CHECK(ids.contains("gpu.fallen-off-bus"));
}

} // namespace gpf

TEST_CASE("findings count in plain plurals, never \"GPU(s)\"") {
  CHECK(gpf::plural(1, "GPU") == "GPU");
  CHECK(gpf::plural(0, "GPU") == "GPUs");
  CHECK(gpf::plural(2, "process") == "processes");
  CHECK(gpf::counted(1, "other GPU") == "1 other GPU");
  CHECK(gpf::counted(7, "uncorrectable ECC error") == "7 uncorrectable ECC errors");
  // no text of the checker says "(s)": each counts with plural()/counted() or its own test
  const std::regex paren_plural(R"("[^"]*[A-Za-z]\(s\)[^"]*")"); // inside a string literal
  for (const auto& entry : std::filesystem::recursive_directory_iterator(GPF_SOURCE_DIR "/src")) {
    if (!entry.is_regular_file() || entry.path().filename() == "driver_messages.inc") {
      continue; // the driver's own messages, verbatim (knowledge/driver_messages.cpp)
    }
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find("device(s)") != std::string::npos || // the driver's own NVRM line, quoted
          line.find_first_not_of(' ') == line.find("//")) {
        continue; // and comments
      }
      INFO(entry.path().filename().string() << ":" << n << ": " << line);
      CHECK_FALSE(std::regex_search(line, paren_plural));
    }
  }
}

namespace gpf {

// The rows' `.events` are the only map from a kernel-log event to its rule.
TEST_CASE("every kernel-log event is judged by exactly one row, or is evidence only") {
  for (const auto& problem : event_routing_problems(builtin_rules())) {
    FAIL_CHECK(problem);
  }
  // a planted second judge is found
  std::vector<Rule> rows(builtin_rules().begin(), builtin_rules().end());
  Rule twin = *find_rule(log_event_rule_id([] {
    LogEvent e;
    e.kind = LogEventKind::crash_dump;
    return e;
  }()));
  twin.id = "test.twin";
  rows.push_back(twin);
  const auto problems = event_routing_problems(rows);
  REQUIRE(problems.size() == 1);
  CHECK(problems.front().find("test.twin") != std::string::npos);
  // and so is an event nobody judges
  for (auto& r : rows) {
    r.events = EventSet{};
  }
  CHECK(event_routing_problems(rows).size() > 20);
}

// A rule's id is spelled in its row (and where another row names it as a cause), nowhere else in
// src/: helpers reach their row through the context, routing through the rows' `.events`.
TEST_CASE("rule ids are spelled only in their rows") {
  std::set<std::string> ids;
  for (const auto& r : builtin_rules()) {
    ids.emplace(r.id);
  }
  const std::regex literal(R"re("([a-z0-9-]+\.[a-z0-9.-]+)")re");
  std::vector<std::string> found;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(GPF_SOURCE_DIR))) {
    const auto rel = std::filesystem::relative(entry.path(), GPF_SOURCE_DIR).string();
    if (!entry.is_regular_file() || !(rel.rfind("src/", 0) == 0 || rel.rfind("include/", 0) == 0) ||
        rel == "src/knowledge/log_patterns.cpp") { // the job-log tables' candidate lists
      continue;
    }
    std::istringstream text(read_all(entry.path()));
    std::string line;
    int n = 0;
    while (std::getline(text, line)) {
      ++n;
      if (line.find(".id = \"") != std::string::npos ||
          line.find(".caused_by") != std::string::npos) {
        continue;
      }
      for (std::sregex_iterator m(line.begin(), line.end(), literal), end; m != end; ++m) {
        if (ids.count((*m)[1].str()) != 0) {
          found.push_back(fmt::format("{}:{}: {}", rel, n, (*m)[1].str()));
        }
      }
    }
  }
  for (const auto& f : found) {
    FAIL_CHECK(f);
  }
}

} // namespace gpf
