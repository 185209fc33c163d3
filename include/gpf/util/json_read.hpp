#pragma once
// Reading JSON back (recorded probe results, snapshot manifests, the compiled-in data), one error
// style for every reader: a member of the wrong type is an Error naming its JSON path
// ("devices[0].bus_id is not a string"); a missing or null member keeps the caller's default, so
// a file written before a member existed still reads. Text is made valid UTF-8 and cut at the
// reader's cap, as json_value.hpp writes it.
#include "gpf/util/json_value.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <concepts>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

class JsonIn {
public:
  // `path` names v in messages; "" is the whole document.
  explicit JsonIn(const nlohmann::json& v, std::string path = "", std::size_t cap = k_no_cap)
      : m_v(&v), m_path(std::move(path)), m_cap(cap) {}

  const nlohmann::json& json() const { return *m_v; }
  const std::string& path() const { return m_path; }
  // Absent and null read alike: nothing to read.
  bool absent() const { return m_v->is_null(); }

  // A member (null when this is no object or lacks it) and an array element, with their paths.
  JsonIn operator[](std::string_view key) const;
  JsonIn operator[](std::size_t i) const;
  std::size_t size() const { return m_v->is_array() ? m_v->size() : 0; }

  // "<path> is not <expected>", the one message shape for a mistyped value.
  Error not_a(std::string_view expected) const;
  Result<void> object() const;                        // present and an object
  Result<void> array() const;                         // absent, or an array
  template <class F> Result<void> each(F&& f) const { // f(element) -> Result<void>
    TRY(array());
    for (std::size_t i = 0; i < size(); ++i) {
      TRY(f((*this)[i]));
    }
    return {};
  }

  // Into `out`, left as it is when absent.
  Result<void> get(std::string& out) const;
  Result<void> get(bool& out) const;
  Result<void> get(double& out) const; // finite and not negative (durations, sizes)
  template <std::integral T> Result<void> get(T& out) const;
  template <class T> Result<void> get(std::optional<T>& out) const {
    if (absent()) {
      return {};
    }
    T v{};
    TRY(get(v));
    out = std::move(v);
    return {};
  }
  template <class T> Result<void> get(std::vector<T>& out) const {
    return each([&out](const JsonIn& e) -> Result<void> {
      T v{};
      if (e.absent()) {
        return e.not_a(expected<T>());
      }
      TRY(e.get(v));
      out.push_back(std::move(v));
      return {};
    });
  }

  // The value when present and of type T, else nullopt: for a child's output lines, read as far
  // as they go rather than refused.
  template <class T> std::optional<T> lenient() const {
    std::optional<T> v;
    return get(v) ? v : std::nullopt;
  }

  template <class T> static constexpr const char* expected() {
    if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_same_v<T, std::string>) {
      return "a string";
    } else if constexpr (std::is_floating_point_v<T>) {
      return "a non-negative number";
    } else if constexpr (std::is_unsigned_v<T>) {
      return "a non-negative integer";
    } else {
      return "an integer";
    }
  }

private:
  const nlohmann::json* m_v;
  std::string m_path;
  std::size_t m_cap;
};

template <std::integral T> Result<void> JsonIn::get(T& out) const {
  if (absent()) {
    return {};
  }
  // In T's range, so that a recorded value is never silently wrapped.
  bool fits = false;
  if (m_v->is_number_unsigned()) {
    fits = m_v->get<unsigned long long>() <=
           static_cast<unsigned long long>(std::numeric_limits<T>::max());
  } else if (m_v->is_number_integer()) {
    const long long v = m_v->get<long long>();
    fits = std::is_signed_v<T> && v >= static_cast<long long>(std::numeric_limits<T>::min()) &&
           v <= static_cast<long long>(std::numeric_limits<T>::max());
  }
  if (!fits) {
    return not_a(expected<T>());
  }
  out = m_v->get<T>();
  return {};
}

} // namespace gpf
