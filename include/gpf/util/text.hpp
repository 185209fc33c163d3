#pragma once
// Small text helpers shared by the parsers. All are pure and never throw on odd input.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

std::string_view trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool contains(std::string_view s, std::string_view needle);
std::string to_lower(std::string_view s);
// Splits on '\n', dropping a trailing '\r' from each line; no empty last line for a final '\n'.
std::vector<std::string_view> split_lines(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
std::optional<unsigned long> parse_uint(std::string_view s, int base = 10);

// Replaces every invalid UTF-8 sequence (and NUL) with U+FFFD so output stays valid UTF-8.
std::string to_valid_utf8(std::string_view s);
// to_valid_utf8, then cut to at most max_bytes (on a character boundary) with "…" appended.
std::string quote_evidence(std::string_view s, std::size_t max_bytes = 512);
// to_valid_utf8 with every control character shown, not obeyed, for a terminal: C0 controls but
// the tab, and DEL, as \x1b; C1 controls (U+0080–U+009F) as \u009b. One line stays one line.
std::string printable(std::string_view s);

// Normalises any PCI address form the driver, CUDA or the kernel prints
// ("PCI:0000:3b:00", "0000:3B:00.0", "00000000:3b:00.0", "3b:00.0", "0000:3b:00") to
// "dddd:bb:dd.f" in lowercase hex. A form without a function gets ".0". nullopt on garbage.
std::optional<std::string> normalize_bus_id(std::string_view s);

} // namespace gpf
