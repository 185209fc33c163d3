#pragma once
// Dotted numeric versions ("570.124.06", "5.4.0", "12.4"), compared per component as numbers,
// never as strings. Missing trailing components compare as 0 ("455.32" == "455.32.0").
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

class Version {
public:
  Version() = default;
  explicit Version(std::vector<unsigned long> parts) : m_parts(std::move(parts)) {}

  // Parses the leading "N(.N)*" of text; nullopt when text does not start with a digit.
  // Components beyond 4 and trailing non-digits ("-rc3", "-generic") are ignored.
  static std::optional<Version> parse(std::string_view text);
  // The first "N.N(.N)*" found anywhere in text (at least two components).
  static std::optional<Version> find_in(std::string_view text);
  // The whole of text is "N(.N)*": digits and single dots only ("1..2", "1.", "v1", "5.4-rc" are
  // not), for versions a person or our data writes down.
  static std::optional<Version> parse_exact(std::string_view text);
  // CUDA's integer form (cuDriverGetVersion, CUDA_VERSION): 12020 is 12.2; a negative one is 0.0.
  static Version from_cuda_number(int number);
  int cuda_number() const { return static_cast<int>(major() * 1000 + minor() * 10); }

  const std::vector<unsigned long>& parts() const { return m_parts; }
  unsigned long part(std::size_t i) const { return i < m_parts.size() ? m_parts[i] : 0; }
  unsigned long major() const { return part(0); }
  unsigned long minor() const { return part(1); }
  std::string str() const;

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) {
    return (a <=> b) == std::strong_ordering::equal;
  }

private:
  std::vector<unsigned long> m_parts;
};

} // namespace gpf
