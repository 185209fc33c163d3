#pragma once
// The names of an enum's values as one table indexed by the value, for enums whose values run
// from 0 to `Last` without gaps. enum_names<Last>({...}) does not compile unless the table has one
// name per value, so adding a value without its name is a build error, not a silent default.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace gpf {

template <class E, std::size_t N> struct EnumNames {
  std::array<std::string_view, N> names;

  constexpr std::string_view operator()(E e) const {
    const auto i = static_cast<std::size_t>(e);
    return i < N ? names[i] : std::string_view("unknown");
  }
  constexpr std::optional<E> parse(std::string_view name) const {
    for (std::size_t i = 0; i < N; ++i) {
      if (names[i] == name) {
        return static_cast<E>(i);
      }
    }
    return std::nullopt;
  }
};

template <auto Last, std::size_t N>
constexpr EnumNames<decltype(Last), N> enum_names(const std::string_view (&names)[N]) {
  static_assert(N == static_cast<std::size_t>(Last) + 1, "one name per enum value, in order");
  EnumNames<decltype(Last), N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    out.names[i] = names[i];
  }
  return out;
}

} // namespace gpf
