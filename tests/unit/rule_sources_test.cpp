// Every built-in rule's source is something a user can open: a public http(s) URL, or a path
// inside this repository that exists (a Markdown "#anchor" after it must name one of its headings).
#include "gpf/rules/rule.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace fs = std::filesystem;

namespace {

// The anchors GitHub gives a Markdown file's headings: lower case, spaces to '-', punctuation
// other than '-' and '_' dropped.
std::set<std::string> markdown_anchors(const fs::path& file) {
  std::set<std::string> anchors;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '#') {
      continue;
    }
    const auto text = line.find_first_not_of('#');
    std::string anchor;
    for (char ch : line.substr(text == std::string::npos ? line.size() : text)) {
      const auto c = static_cast<unsigned char>(ch);
      if (std::isalnum(c) != 0 || ch == '-' || ch == '_') {
        anchor += static_cast<char>(std::tolower(c));
      } else if (ch == ' ') {
        anchor += '-';
      }
    }
    if (!anchor.empty() && anchor.front() == '-') {
      anchor.erase(0, 1);
    }
    anchors.insert(anchor);
  }
  return anchors;
}

// "" when the source can be opened, otherwise why not.
std::string why_not_openable(std::string_view source) {
  if (source.rfind("https://", 0) == 0 || source.rfind("http://", 0) == 0) {
    const bool one_url = std::none_of(source.begin(), source.end(), [](char c) {
      return std::isspace(static_cast<unsigned char>(c)) != 0;
    });
    return one_url ? "" : "not a single URL (contains white space)";
  }
  const auto hash = source.find('#');
  const std::string path(source.substr(0, hash));
  if (path.empty() || fs::path(path).is_absolute() || path.find("..") != std::string::npos) {
    return "neither an http(s) URL nor a path inside the repository";
  }
  const fs::path file = fs::path(GPF_SOURCE_DIR) / path;
  if (!fs::is_regular_file(file)) {
    return "no such file in the repository: " + path;
  }
  if (hash != std::string_view::npos && file.extension() == ".md" &&
      markdown_anchors(file).count(std::string(source.substr(hash + 1))) == 0) {
    return "no heading in " + path + " has the anchor " + std::string(source.substr(hash));
  }
  return "";
}

} // namespace

TEST_CASE("rule sources: what counts as openable", "[sources]") {
  CHECK(why_not_openable("https://docs.nvidia.com/deploy/driver-persistence/").empty());
  CHECK(why_not_openable("docs/sources.md#persistence").empty());
  CHECK(why_not_openable("docs/sources.md#cuda_visible_devices").empty());
  CHECK(why_not_openable("docs/sources.md#driver-files-under-proc-and-sys").empty());
  CHECK(why_not_openable("docs/cuda-probe.md").empty());
  CHECK_FALSE(why_not_openable("docs/sources.md#no-such-heading").empty());
  CHECK_FALSE(why_not_openable("nvidia-facts.md §10c").empty());
  CHECK_FALSE(why_not_openable("../shared/reference/nvidia-facts.md").empty());
  CHECK_FALSE(why_not_openable("/etc/passwd").empty());
  CHECK_FALSE(why_not_openable("https://example.com/a and more").empty());
}

TEST_CASE("every built-in rule's source is a public URL or a file in this repository",
          "[sources]") {
  REQUIRE_FALSE(gpf::builtin_rules().empty());
  int unopenable = 0;
  for (const auto& rule : gpf::builtin_rules()) {
    const std::string why = why_not_openable(rule.source);
    if (!why.empty()) {
      ++unopenable;
      UNSCOPED_INFO(rule.id << ": " << why << ": " << rule.source);
    }
  }
  CHECK(unopenable == 0);
}
