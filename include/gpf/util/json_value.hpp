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

} // namespace gpf
