#pragma once
// The site rules' `matches` pattern (docs/user-rules.md): '|'-separated alternatives of literal
// bytes, '*' (any run), '?' (any one byte), a leading '^' and a trailing '$' as anchors, '\' to
// quote the next byte. No backtracking and no recursion: a match costs O(value length) per
// alternative (bit-parallel search, every segment searched once, left to right).
#include "gpf/util/result.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gpf {

class TextPattern {
public:
  static constexpr std::size_t k_max_pattern = 256; // bytes of the pattern
  static constexpr std::size_t k_max_alternatives = 16;
  static constexpr std::size_t k_max_segment = 64;      // bytes between two '*' (one machine word)
  static constexpr std::size_t k_max_value = 64 * 1024; // a longer value never matches

  // An error names what is wrong (too long, an empty alternative, a trailing '\', ...).
  static Result<TextPattern> parse(std::string_view pattern);
  // Whether an alternative is found in the value; false for a value over k_max_value.
  bool found_in(std::string_view value) const;

private:
  // A run of bytes without '*': per byte value, the positions it may stand at (Shift-And masks).
  struct Segment {
    std::size_t length = 0;
    std::array<std::uint64_t, 256> masks{};
  };
  struct Alternative {
    bool anchored_start = false;
    bool anchored_end = false;
    std::vector<Segment> segments; // split at '*'; at least one (possibly empty)
  };
  std::vector<Alternative> m_alternatives;
};

} // namespace gpf
