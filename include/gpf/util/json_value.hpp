#pragma once
// A fact as a JSON value, one rule for the report and for the probes' recorded results (cuda.json,
// nvml.json): text made valid UTF-8 (and cut at `cap` bytes when one is given), an absent
// optional as null.
#include "gpf/util/text.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace gpf {

inline constexpr std::size_t k_no_cap = std::string::npos;

inline std::string json_text(std::string_view s, std::size_t cap = k_no_cap) {
  return cap == k_no_cap ? to_valid_utf8(s) : quote_evidence(s, cap);
}

template <class T>
nlohmann::ordered_json json_opt(const std::optional<T>& v, std::size_t cap = k_no_cap) {
  if (!v) {
    return nullptr;
  }
  if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return json_text(*v, cap);
  } else {
    return *v;
  }
}

// JSON inputs from a snapshot are parsed only when their arrays and objects nest at most this
// deep: the parser builds a value per level, so 8 MiB of "[" took 635 MB before it failed.
inline constexpr std::size_t k_json_max_depth = 64;

// Whether text's arrays and objects nest at most max_depth deep (strings and escapes skipped).
// One pass, no allocation; says nothing else about validity.
inline bool json_depth_within(std::string_view text, std::size_t max_depth = k_json_max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return false;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

} // namespace gpf
