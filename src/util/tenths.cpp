#include "gpf/util/tenths.hpp"

#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <cctype>

namespace gpf {

std::optional<unsigned> parse_tenths(std::string_view text) {
  const auto t = trim(text);
  const auto dot = t.find('.');
  const auto whole = t.substr(0, dot);
  if (whole.empty() || whole.size() > 6) {
    return std::nullopt;
  }
  const auto w = parse_uint(whole);
  if (!w) {
    return std::nullopt;
  }
  unsigned tenth = 0;
  if (dot != std::string_view::npos) {
    const auto frac = t.substr(dot + 1);
    if (frac.size() != 1 || !std::isdigit(static_cast<unsigned char>(frac[0]))) {
      return std::nullopt;
    }
    tenth = static_cast<unsigned>(frac[0] - '0');
  }
  return static_cast<unsigned>(*w) * 10 + tenth;
}

std::string tenths_text(unsigned tenths) {
  return tenths % 10 == 0 ? fmt::format("{}", tenths / 10)
                          : fmt::format("{}.{}", tenths / 10, tenths % 10);
}

} // namespace gpf
