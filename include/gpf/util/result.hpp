#pragma once
// Anticipated failures as values (CONTRIBUTING.md): a Result<T> holds either a T or an
// Error whose message is meant for a human (usually the OS reason, e.g. "Permission denied").
#include <string>
#include <utility>
#include <variant>

namespace gpf {

struct Error {
  std::string message;
};

template <class T> class Result {
public:
  Result(T value) : m_v(std::move(value)) {}
  Result(Error error) : m_v(std::move(error)) {}

  bool ok() const { return m_v.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(m_v); }
  T& value() & { return std::get<0>(m_v); }
  T&& value() && { return std::get<0>(std::move(m_v)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(m_v); }

private:
  std::variant<T, Error> m_v;
};

} // namespace gpf
