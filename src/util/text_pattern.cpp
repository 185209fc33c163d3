// TextPattern (text_pattern.hpp): a glob with anchors, matched in linear time. The leftmost
// occurrence of each '*'-separated segment, taken in order, is where a match can continue from if
// any can, so no position is ever tried twice.
#include "gpf/util/text_pattern.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

namespace gpf {
namespace {

// Whether the segment matches the value at exactly pos (the caller ensures it fits).
template <class Segment>
bool matches_at(const Segment& seg, std::string_view value, std::size_t pos) {
  for (std::size_t i = 0; i < seg.length; ++i) {
    const auto byte = static_cast<unsigned char>(value[pos + i]);
    if ((seg.masks[byte] & (std::uint64_t{1} << i)) == 0) {
      return false;
    }
  }
  return true;
}

// Shift-And: the first position at or after from where the segment matches; one pass.
template <class Segment>
std::optional<std::size_t> find_from(const Segment& seg, std::string_view value, std::size_t from) {
  if (seg.length == 0) {
    return from;
  }
  const std::uint64_t last = std::uint64_t{1} << (seg.length - 1);
  std::uint64_t state = 0;
  for (std::size_t j = from; j < value.size(); ++j) {
    state = ((state << 1) | 1) & seg.masks[static_cast<unsigned char>(value[j])];
    if (state & last) {
      return j + 1 - seg.length;
    }
  }
  return std::nullopt;
}

} // namespace

Result<TextPattern> TextPattern::parse(std::string_view pattern) {
  if (pattern.size() > k_max_pattern) {
    return Error{
        fmt::format("the pattern is {} bytes, more than {}", pattern.size(), k_max_pattern)};
  }
  TextPattern out;
  Alternative alt;
  Segment seg;
  bool at_alternative_start = true;
  const auto error_at = [&](std::size_t i, std::string_view what) {
    return Error{fmt::format("at byte {}: {}", i + 1, what)};
  };
  const auto finish = [&](std::size_t i) -> Result<void> {
    alt.segments.push_back(seg);
    seg = Segment{};
    const bool empty = !alt.anchored_start && !alt.anchored_end && alt.segments.size() == 1 &&
                       alt.segments.front().length == 0;
    if (empty) {
      return error_at(i, "an empty alternative (it would match everything)");
    }
    if (out.m_alternatives.size() == k_max_alternatives) {
      return error_at(i, fmt::format("more than {} alternatives", k_max_alternatives));
    }
    out.m_alternatives.push_back(std::move(alt));
    alt = Alternative{};
    at_alternative_start = true;
    return {};
  };
  const auto add = [&](std::size_t i, std::optional<unsigned char> byte) -> Result<void> {
    if (seg.length == k_max_segment) {
      return error_at(i, fmt::format("more than {} bytes without a '*'", k_max_segment));
    }
    const std::uint64_t bit = std::uint64_t{1} << seg.length;
    if (byte) {
      seg.masks[*byte] |= bit;
    } else {
      for (auto& m : seg.masks) {
        m |= bit;
      }
    }
    ++seg.length;
    return {};
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    const bool first = at_alternative_start;
    at_alternative_start = false;
    if (c == '\\') {
      if (i + 1 == pattern.size()) {
        return error_at(i, "a '\\' with nothing after it");
      }
      ++i;
      TRY(add(i, static_cast<unsigned char>(pattern[i])));
    } else if (c == '|') {
      TRY(finish(i));
    } else if (c == '*') {
      alt.segments.push_back(seg);
      seg = Segment{};
    } else if (c == '?') {
      TRY(add(i, std::nullopt));
    } else if (c == '^' && first) {
      alt.anchored_start = true;
    } else if (c == '$' && (i + 1 == pattern.size() || pattern[i + 1] == '|')) {
      alt.anchored_end = true;
    } else {
      TRY(add(i, static_cast<unsigned char>(c)));
    }
  }
  TRY(finish(pattern.size() == 0 ? 0 : pattern.size() - 1));
  return out;
}

bool TextPattern::found_in(std::string_view value) const {
  if (value.size() > k_max_value) {
    return false;
  }
  for (const auto& alt : m_alternatives) {
    const auto& segs = alt.segments;
    std::size_t pos = 0;
    bool ok = true;
    for (std::size_t k = 0; k < segs.size() && ok; ++k) {
      const auto& seg = segs[k];
      const bool first = k == 0;
      const bool last = k + 1 == segs.size();
      if (last && alt.anchored_end) {
        // the last segment ends the value: it is there or nowhere
        ok = value.size() >= seg.length && value.size() - seg.length >= pos &&
             (!first || !alt.anchored_start || value.size() == seg.length) &&
             matches_at(seg, value, value.size() - seg.length);
      } else if (first && alt.anchored_start) {
        ok = value.size() >= seg.length && matches_at(seg, value, 0);
        pos = seg.length;
      } else {
        const auto at = find_from(seg, value, pos);
        ok = at.has_value();
        pos = ok ? *at + seg.length : pos;
      }
    }
    if (ok) {
      return true;
    }
  }
  return false;
}

} // namespace gpf
