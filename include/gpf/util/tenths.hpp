#pragma once
// Decimals with one fraction digit at most, as sysfs prints link speeds and rates. Pure; never
// throw.
#include <optional>
#include <string>
#include <string_view>

namespace gpf {

// A decimal with at most one fraction digit ("16.0", "2.5", "8", "400") -> tenths (160, 25, 80,
// 4000); nullopt on anything else.
std::optional<unsigned> parse_tenths(std::string_view text);

// "20 Gb/sec" tenths -> "20", 25 -> "2.5".
std::string tenths_text(unsigned tenths);

} // namespace gpf
