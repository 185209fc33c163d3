// Counts in plain plurals: "1 GPU", "3 GPUs", never "GPU(s)" — the one way every layer counts.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace gpf {

// "GPU" or "GPUs" for n of them. Nouns ending in s, x or sh take "es" ("processes").
inline std::string plural(std::size_t n, std::string_view noun) {
  std::string out(noun);
  if (n != 1) {
    out += noun.ends_with('s') || noun.ends_with('x') || noun.ends_with("sh") ? "es" : "s";
  }
  return out;
}

// "1 GPU", "3 GPUs".
inline std::string counted(std::size_t n, std::string_view noun) {
  return fmt::format("{} {}", n, plural(n, noun));
}

} // namespace gpf
