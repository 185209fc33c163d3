#include "gpf/util/version.hpp"

#include <cctype>

namespace gpf {
namespace {
constexpr std::size_t k_max_parts = 4;
constexpr std::size_t k_max_digits = 9; // keeps every component inside unsigned long

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Parses "N(.N)*" starting at text[pos]; stops at the first character that does not continue it.
std::optional<Version> parse_at(std::string_view text, std::size_t pos) {
  std::vector<unsigned long> parts;
  while (pos < text.size() && is_digit(text[pos]) && parts.size() < k_max_parts) {
    unsigned long value = 0;
    std::size_t digits = 0;
    while (pos < text.size() && is_digit(text[pos])) {
      if (digits < k_max_digits) {
        value = value * 10 + static_cast<unsigned long>(text[pos] - '0');
      }
      ++digits;
      ++pos;
    }
    parts.push_back(value);
    if (pos + 1 < text.size() && text[pos] == '.' && is_digit(text[pos + 1])) {
      ++pos;
    } else {
      break;
    }
  }
  if (parts.empty()) {
    return std::nullopt;
  }
  return Version(std::move(parts));
}
} // namespace

std::optional<Version> Version::parse(std::string_view text) {
  return parse_at(text, 0);
}

std::optional<Version> Version::find_in(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_digit(text[i]) || (i > 0 && (is_digit(text[i - 1]) || text[i - 1] == '.'))) {
      continue;
    }
    auto v = parse_at(text, i);
    if (v && v->parts().size() >= 2) {
      return v;
    }
  }
  return std::nullopt;
}

std::optional<Version> Version::parse_exact(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789.") != std::string_view::npos ||
      text.front() == '.' || text.back() == '.' || text.find("..") != std::string_view::npos) {
    return std::nullopt;
  }
  return parse(text);
}

Version Version::from_cuda_number(int number) {
  const auto n = static_cast<unsigned long>(number < 0 ? 0 : number);
  return Version({n / 1000, (n % 1000) / 10});
}

std::string Version::str() const {
  std::string out;
  for (std::size_t i = 0; i < m_parts.size(); ++i) {
    if (i) {
      out += '.';
    }
    out += std::to_string(m_parts[i]);
  }
  return out;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  const std::size_t n = std::max(a.m_parts.size(), b.m_parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = a.part(i) <=> b.part(i); c != 0) {
      return c;
    }
  }
  return std::strong_ordering::equal;
}

} // namespace gpf
