// Source rules a compiler does not check; these tests read the sources (GPF_SOURCE_DIR).
// - Probe code reads the host only through Host: no absolute paths in string literals, no
//   getenv/uname/open/fopen/ifstream of its own.
// - Includes follow the layers: each layer includes only those its row of allowed_includes()
//   names (util ← host ← facts ← probes; knowledge on util only; rules on facts and knowledge;
//   reports on facts, rules and knowledge; never rules or reports on probes).
// - A public header that declares functions is named as the source that defines them.
// - Text in the product and its documentation cites public sources, never notes outside the
//   repository or this project's issue tracker.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path k_root = GPF_SOURCE_DIR;

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The layer of a source file: its first folder under src/ or include/gpf/ ("" for
// include/gpf/version_info.hpp and the like, which every layer may include).
std::string layer_of(const fs::path& file) {
  for (const fs::path& base : {k_root / "include" / "gpf", k_root / "src"}) {
    const fs::path rel = file.lexically_relative(base);
    if (!rel.empty() && *rel.begin() != "..") {
      return std::distance(rel.begin(), rel.end()) > 1 ? rel.begin()->string() : "";
    }
  }
  return "";
}

// The layers each layer may include besides itself: util <- host <- facts <- probes, knowledge
// (catalogs and tables as data) on util alone below probes and rules, rules on facts and knowledge
// (facts bring the host's types along), report on facts, the rules' public types and knowledge,
// capture over the probes, fleet (summarize, diff: reports of many nodes, a snapshot replayed) over
// all but cli, cli over all. Probes decode, rules judge: neither rules nor reports
// include a probe header.
const std::map<std::string, std::set<std::string>>& allowed_includes() {
  static const std::map<std::string, std::set<std::string>> table = {
      {"util", {}},
      {"host", {"util"}},
      {"knowledge", {"util"}},
      {"facts", {"util", "host"}},
      {"probes", {"util", "host", "knowledge", "facts"}},
      {"rules", {"util", "host", "knowledge", "facts"}},
      {"report", {"util", "host", "knowledge", "facts", "rules"}},
      {"capture", {"util", "host", "knowledge", "facts", "probes"}},
      {"fleet", {"util", "host", "knowledge", "facts", "probes", "rules", "report", "capture"}},
      {"cli",
       {"util", "host", "knowledge", "facts", "probes", "rules", "report", "capture", "fleet"}},
  };
  return table;
}

// The layer an #include names: "gpf/<layer>/..." (public headers), "<layer>/..." (internal
// headers under src/), or a bare name in the including file's own folder (its own layer).
std::string included_layer(const std::string& target, const std::string& own) {
  std::string path = target;
  if (path.rfind("gpf/", 0) == 0) {
    path = path.substr(4);
  }
  const auto slash = path.find('/');
  if (slash == std::string::npos) {
    return target.rfind("gpf/", 0) == 0 ? "" : own;
  }
  const std::string first = path.substr(0, slash);
  return allowed_includes().count(first) != 0 ? first : own;
}

// "issue 10", "#14": a number in this project's tracker. Issues of other projects are cited as
// owner/repo#N or by URL and four-digit numbers are not ours; rsyslog's "#012" escape has a
// leading zero.
const std::string k_issue_number =
    R"re(\b[Ii]ssues?\s+[0-9]+\b|(^|[^[:alnum:]_&/#])#[1-9][0-9]{0,2}\b)re";

// Each line of the file that contains the pattern, as "path:line: text".
std::vector<std::string> matching_lines(const fs::path& file, const std::regex& pattern) {
  std::vector<std::string> hits;
  std::ifstream in(file);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (std::regex_search(line, pattern)) {
      hits.push_back(file.lexically_relative(k_root).string() + ":" + std::to_string(number) +
                     ": " + line);
    }
  }
  return hits;
}

} // namespace

TEST_CASE("probe sources never bypass the host") {
  const std::regex forbidden(
      R"re("/(proc|sys|dev|etc|usr|lib|lib64|var|run|tmp|opt|home|root)(/|")|\bgetenv\s*\(|\buname\s*\(|\bfopen\s*\(|\bifstream\b|::open\s*\(|\bopendir\s*\()re");
  int files = 0;
  // The children's sandbox mounts over the real /dev of the child's own mount namespace; it
  // reads no fact, so there is nothing a snapshot could stand in for.
  const fs::path sandbox = k_root / "src" / "probes" / "child" / "isolation.cpp";
  // The children's runner lists this process's own children (/proc/self), no fact of the host.
  const fs::path self = k_root / "src" / "probes" / "child" / "self.cpp";
  for (const auto& file : files_under(k_root / "src" / "probes")) {
    if (file == sandbox || file == self) {
      continue;
    }
    std::ifstream in(file);
    std::string line;
    int number = 0;
    ++files;
    while (std::getline(in, line)) {
      ++number;
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      INFO(file.string() << ":" << number << ": " << line);
      CHECK_FALSE(std::regex_search(code, forbidden));
    }
  }
  CHECK(files >= 4);
}

TEST_CASE("includes follow the layers: each layer includes only what its row allows") {
  const std::regex include(R"re(^\s*#\s*include\s*["<]([^">]+)[">])re");
  std::map<std::string, int> files_per_layer;
  std::vector<std::string> violations;
  for (const fs::path& dir : {k_root / "src", k_root / "include" / "gpf"}) {
    for (const auto& file : files_under(dir)) {
      const std::string layer = layer_of(file);
      if (layer.empty()) {
        continue;
      }
      // a folder no one placed in the pipeline must be placed before it can hold code
      INFO(file.string() << " is in layer '" << layer << "'");
      REQUIRE(allowed_includes().count(layer) == 1);
      ++files_per_layer[layer];
      std::ifstream in(file);
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (!std::regex_search(line, m, include)) {
          continue;
        }
        const std::string target = included_layer(m[1].str(), layer);
        if (!target.empty() && target != layer && allowed_includes().at(layer).count(target) == 0) {
          violations.push_back(file.lexically_relative(k_root).string() + ":" +
                               std::to_string(number) + ": " + layer + " includes " + target +
                               ": " + line);
        }
      }
    }
  }
  for (const auto& v : violations) {
    UNSCOPED_INFO(v);
  }
  CHECK(violations.empty());
  // the walk found every layer (a moved tree would otherwise pass by reading nothing)
  for (const auto& [layer, allowed] : allowed_includes()) {
    INFO(layer);
    CHECK(files_per_layer[layer] > 0);
  }
}

TEST_CASE("include direction: how an #include names its layer") {
  CHECK(included_layer("gpf/rules/rule.hpp", "probes") == "rules");
  CHECK(included_layer("probes/cuda/live_probe.hpp", "rules") == "probes");
  CHECK(included_layer("streams.hpp", "host") == "host");
  CHECK(included_layer("gpf/version_info.hpp", "cli").empty());
  CHECK(included_layer("catch2/catch.hpp", "cli") == "cli");
  CHECK(allowed_includes().at("probes").count(
            included_layer("gpf/rules/visible_devices.hpp", "probes")) == 0);
  CHECK(allowed_includes()
            .at("knowledge")
            .count(included_layer("gpf/facts/facts.hpp", "knowledge")) == 0);
  // rules and reports reach no probe: not its parsers, not its interface
  CHECK(allowed_includes().at("rules").count(
            included_layer("gpf/probes/topology_parsers.hpp", "rules")) == 0);
  CHECK(allowed_includes().at("rules").count(
            included_layer("gpf/probes/cuda_probe.hpp", "rules")) == 0);
  CHECK(allowed_includes().at("report").count(included_layer("gpf/probes/parsers.hpp", "report")) ==
        0);
  CHECK(allowed_includes().at("report").count(included_layer("gpf/rules/verdict.hpp", "report")) ==
        1);
}

namespace {

// Whether a header declares a function at namespace scope (a line at column 0 that names one and
// opens no body): such a header has a source that defines it.
bool declares_functions(const fs::path& header) {
  const std::regex declaration(
      R"re(^(?!inline|constexpr|template|struct|class|enum|using|namespace|static|typedef|extern|#|//|\})[A-Za-z_][^;{}=]*\()re");
  std::ifstream in(header);
  std::string line;
  bool after_template = false; // a template's own line: its body is in the header
  while (std::getline(in, line)) {
    if (!after_template && line.find('{') == std::string::npos &&
        std::regex_search(line, declaration)) {
      return true;
    }
    after_template = line.rfind("template", 0) == 0;
  }
  return false;
}

// The source a header's name mirrors: src/<layer>/<name>.cpp, or src/<layer>/<dir>/<rest>.cpp for
// a header named <dir>_<rest> (kernel_log_format.hpp: kernel_log/format.cpp).
bool has_mirror_source(const fs::path& header) {
  const fs::path src = k_root / "src" / header.parent_path().filename();
  const std::string name = header.stem().string();
  if (fs::exists(src / (name + ".cpp"))) {
    return true;
  }
  for (auto at = name.find('_'); at != std::string::npos; at = name.find('_', at + 1)) {
    if (fs::exists(src / name.substr(0, at) / (name.substr(at + 1) + ".cpp"))) {
      return true;
    }
  }
  return false;
}

} // namespace

TEST_CASE("headers mirror their sources' names") {
  // Headers whose functions are defined across several sources, each named for its own part.
  const std::set<std::string> spread = {
      "fleet/fleet.hpp",     // summarize.cpp, diff.cpp
      "probes/probes.hpp",   // one source per probe
      "probes/progress.hpp", // pipeline.cpp
      "report/report.hpp",   // json.cpp, text.cpp, env.cpp, line.cpp, summary.cpp
      "rules/rule.hpp",      // rule_table.cpp and each prefix's <prefix>_rules()
      // the probe interfaces, named as their folders' probe_*.cpp
      "probes/cuda_probe.hpp",
      "probes/nvml_probe.hpp",
  };
  std::vector<std::string> unmatched;
  int headers = 0;
  for (const auto& header : files_under(k_root / "include" / "gpf")) {
    const std::string rel = header.lexically_relative(k_root / "include" / "gpf").string();
    if (layer_of(header).empty() || !declares_functions(header)) {
      continue;
    }
    ++headers;
    if (!has_mirror_source(header) && spread.count(rel) == 0) {
      unmatched.push_back(rel);
    }
  }
  for (const auto& u : unmatched) {
    UNSCOPED_INFO(u << " declares functions but src/ has no source of its name");
  }
  CHECK(unmatched.empty());
  CHECK(headers >= 20);
  CHECK(declares_functions(k_root / "include" / "gpf" / "knowledge" / "gsp_firmware.hpp"));
  CHECK_FALSE(declares_functions(k_root / "include" / "gpf" / "facts" / "cuda_facts.hpp"));
  CHECK(has_mirror_source(k_root / "include" / "gpf" / "probes" / "kernel_log_format.hpp"));
  CHECK_FALSE(has_mirror_source(k_root / "include" / "gpf" / "cli" / "fleet.hpp"));
}

// Product text (code, comments, docs) names public sources: a reader has no access to this
// project's research notes or tracker.
TEST_CASE("product text cites no notes outside the repository and no issue numbers") {
  const std::regex pattern(R"re(nvidia-facts|style\.md|shared/|\b[Mm]ilestone|)re" +
                           k_issue_number);
  std::vector<std::string> hits;
  int files = 0;
  for (const fs::path& dir :
       {k_root / "src" / "util", k_root / "src" / "host", k_root / "src" / "knowledge",
        k_root / "src" / "probes", k_root / "src" / "facts", k_root / "src" / "rules",
        k_root / "src" / "report", k_root / "src" / "capture", k_root / "src" / "cli",
        k_root / "include", k_root / "docs", k_root / "data"}) {
    for (const auto& file : files_under(dir)) {
      ++files;
      for (auto& hit : matching_lines(file, pattern)) {
        hits.push_back(std::move(hit));
      }
    }
  }
  for (const auto& h : hits) {
    UNSCOPED_INFO(h);
  }
  CHECK(hits.empty());
  CHECK(files >= 50);
}

TEST_CASE("product text check: what counts as an issue number") {
  const std::regex issue(k_issue_number);
  CHECK(std::regex_search("see issue 10", issue));
  CHECK(std::regex_search("fixed in #14.", issue));
  CHECK(std::regex_search("(#7)", issue));
  CHECK_FALSE(std::regex_search("rsyslog's #012 escape", issue));
  CHECK_FALSE(std::regex_search("NVIDIA/nccl#631", issue));
  CHECK_FALSE(std::regex_search("accelerate issue #1929", issue));
  CHECK_FALSE(std::regex_search("&#123;", issue));
}
