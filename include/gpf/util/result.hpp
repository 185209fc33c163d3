#pragma once
// Anticipated failures as values (CONTRIBUTING.md): a Result<T> holds either a T or an
// Error whose message is meant for a human (usually the OS reason, e.g. "Permission denied").
// Result<void> is the outcome of a step that yields nothing; TRY passes an error up.
#include <optional>
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

template <> class Result<void> {
public:
  Result() = default;
  Result(Error error) : m_error(std::move(error)) {}

  bool ok() const { return !m_error; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return *m_error; }

private:
  std::optional<Error> m_error;
};

} // namespace gpf

#define GPF_TRY_CAT2(a, b) a##b
#define GPF_TRY_CAT(a, b) GPF_TRY_CAT2(a, b)

// TRY(expr): when the Result expr holds an error, the enclosing function returns that error
// (its own return type is any Result).
#define TRY(expr)                                                                                  \
  do {                                                                                             \
    auto&& gpf_try_result_ = (expr);                                                               \
    if (!gpf_try_result_) {                                                                        \
      return gpf_try_result_.error();                                                              \
    }                                                                                              \
  } while (false)

// TRY_ASSIGN(lhs, expr): as TRY, and otherwise lhs = the value (lhs may declare, e.g. `auto x`).
#define TRY_ASSIGN(lhs, expr)                                                                      \
  auto&& GPF_TRY_CAT(gpf_try_value_, __LINE__) = (expr);                                           \
  if (!GPF_TRY_CAT(gpf_try_value_, __LINE__)) {                                                    \
    return GPF_TRY_CAT(gpf_try_value_, __LINE__).error();                                          \
  }                                                                                                \
  lhs = std::move(GPF_TRY_CAT(gpf_try_value_, __LINE__)).value()
