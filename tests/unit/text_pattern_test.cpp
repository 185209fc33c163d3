// The site rules' `matches` pattern (text_pattern.hpp): glob semantics with anchors and quoting,
// table-driven, and linear time on inputs that make a backtracking matcher explode.
#include "gpf/util/text_pattern.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using gpf::TextPattern;

namespace {

bool found(const std::string& pattern, const std::string& value) {
  const auto p = TextPattern::parse(pattern);
  REQUIRE(p);
  return p->found_in(value);
}

} // namespace

TEST_CASE("text pattern: alternatives, wildcards, anchors and quoting") {
  struct Case {
    const char* pattern;
    const char* value;
    bool expected;
  };
  const Case cases[] = {
      {"H100|H200", "NVIDIA H200 141GB HBM3e", true},
      {"H100|H200", "NVIDIA A100-SXM4-80GB", false},
      {"A100*80GB", "NVIDIA A100-SXM4-80GB", true},
      {"A100*80GB", "NVIDIA A100-SXM4-40GB", false},
      {"H?00", "NVIDIA H200", true},
      {"H?00", "NVIDIA H0", false},
      {"^NVIDIA", "NVIDIA H100", true},
      {"^H100", "NVIDIA H100", false},
      {"HBM3$", "NVIDIA H100 80GB HBM3", true},
      {"HBM3$", "NVIDIA H200 141GB HBM3e", false},
      {"^NVIDIA*HBM3$", "NVIDIA H100 80GB HBM3", true},
      {"^abc$", "abc", true},
      {"^abc$", "abcd", false},
      {"^ab*b$", "ab", false}, // "ab", then a "b" of its own
      {"^ab*b$", "abb", true},
      {"^$", "", true},
      {"^$", "x", false},
      {"a.c", "abc", false}, // '.' is a literal, not "any"
      {"a.c", "xa.cx", true},
      {"(x)", "f(x)", true},
      {"\\*", "a*b", true},
      {"\\*", "ab", false},
      {"a\\|b", "a|b", true},
      {"a\\|b", "a", false},
      {"x$y", "x$y", true}, // '$' inside an alternative is a literal
      {"a^b", "a^b", true},
      {"*", "", true},
      {"a**b", "ab", true},
      {"?", "", false},
  };
  for (const auto& c : cases) {
    INFO(c.pattern << " in \"" << c.value << "\"");
    CHECK(found(c.pattern, c.value) == c.expected);
  }
}

TEST_CASE("text pattern: bad patterns are errors that say where") {
  const std::pair<std::string, std::string> cases[] = {
      {"A100||H100", "at byte 6: an empty alternative (it would match everything)"},
      {"|x", "at byte 1: an empty alternative (it would match everything)"},
      {"x\\", "at byte 2: a '\\' with nothing after it"},
      {std::string(257, 'a'), "the pattern is 257 bytes, more than 256"},
      {std::string(65, 'a'), "at byte 65: more than 64 bytes without a '*'"},
      {"a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q", "at byte 33: more than 16 alternatives"},
  };
  for (const auto& [pattern, error] : cases) {
    INFO(pattern);
    const auto p = TextPattern::parse(pattern);
    REQUIRE_FALSE(p);
    CHECK(p.error().message == error);
  }
  CHECK(TextPattern::parse(std::string(64, 'a') + "*" + std::string(64, 'b')));
}

TEST_CASE("text pattern: linear time on a 64 KiB value, longer values never match") {
  const std::string value(TextPattern::k_max_value, 'a');
  // Patterns that cost a backtracking matcher (std::regex, a recursive glob) exponential or
  // quadratic time on a run of 'a' with no 'b'.
  const char* hostile[] = {"*a*a*a*a*a*a*a*a*a*a*a*a*b", "a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?a?b",
                           "^*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b$",
                           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"};
  const auto start = std::chrono::steady_clock::now();
  for (const char* p : hostile) {
    INFO(p);
    CHECK_FALSE(found(p, value));
  }
  CHECK(found("*a*a*a*a*a*a*a*a*a*a*a*a*a$", value));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(s < 0.5); // a few passes over 64 KiB each; a backtracking matcher takes hours
  CHECK_FALSE(found("a", value + "a"));
}
