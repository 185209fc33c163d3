#pragma once
// One field list per facts struct, used both to write its JSON and to read it back (cuda.json,
// nvml.json, and the report's facts.cuda / facts.nvml, which are the same objects): a member is
// added in its struct's list only. Writing follows the list's order, which is the files' key
// order. Reading is json_read.hpp's: a missing or null member keeps its default, a mistyped one
// is an error naming its path. Used by the facts layer's JSON (src/facts/*_json.cpp).
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gpf::json_fields {

using Ordered = nlohmann::ordered_json;

// Text is written valid UTF-8 and cut at this many bytes; readers use the same cap.
inline constexpr std::size_t k_string_cap = 4096;

// One JSON member of S. write: its value (nullptr: read only); when: written only when it returns
// true (nullptr: always); read: from the member's value, null when absent (nullptr: written only,
// such as a figure derived from other members).
template <class S> struct Field {
  std::string_view key;
  Ordered (*write)(const S&) = nullptr;
  bool (*when)(const S&) = nullptr;
  Result<void> (*read)(const JsonIn& value, S&) = nullptr;
};

// The list of S, specialised beside S's writer:
//   template <> struct List<S> { static constexpr auto fields = std::to_array<Field<S>>({...});
//                                static Result<void> after_read(S&); /* optional */ };
template <class S> struct List;

template <class S>
concept Listed = requires {
  List<S>::fields;
};

template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};

template <class T> Ordered to_json(const T& v);
template <class T> Result<void> from_json(const JsonIn& in, T& out);

// The fields of list, in its order, as one object.
template <class S, std::size_t N>
Ordered write_fields(const S& s, const std::array<Field<S>, N>& list) {
  Ordered j = Ordered::object();
  for (const auto& f : list) {
    if (f.write && (!f.when || f.when(s))) {
      j[std::string(f.key)] = f.write(s);
    }
  }
  return j;
}

// The fields of list from the object `in` (absent: nothing to read) into s; the members it lacks
// keep their values.
template <class S, std::size_t N>
Result<void> read_fields(const JsonIn& in, S& s, const std::array<Field<S>, N>& list) {
  if (in.absent()) {
    return {};
  }
  TRY(in.object());
  for (const auto& f : list) {
    if (f.read) {
      TRY(f.read(in[f.key], s));
    }
  }
  return {};
}

template <Listed S> Result<void> read_object(const JsonIn& in, S& s) {
  TRY(in.object());
  TRY(read_fields(in, s, List<S>::fields));
  if constexpr (requires { List<S>::after_read(s); }) {
    TRY(List<S>::after_read(s));
  }
  return {};
}

template <class T> Ordered to_json(const T& v) {
  if constexpr (Listed<T>) {
    return write_fields(v, List<T>::fields);
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    return json_text(v, k_string_cap);
  } else if constexpr (is_optional<T>::value) {
    return v ? to_json(*v) : Ordered(nullptr);
  } else if constexpr (is_vector<T>::value) {
    Ordered arr = Ordered::array();
    for (const auto& e : v) {
      arr.push_back(to_json(static_cast<typename T::value_type>(e))); // vector<bool>'s proxies
    }
    return arr;
  } else {
    return Ordered(v);
  }
}

template <class T> Result<void> from_json(const JsonIn& in, T& out) {
  if constexpr (Listed<T>) {
    return in.absent() ? Result<void>{} : read_object(in, out);
  } else if constexpr (is_optional<T>::value) {
    using V = typename T::value_type;
    if constexpr (Listed<V> || is_vector<V>::value) {
      if (in.absent()) {
        return {};
      }
      V v{};
      TRY(from_json(in, v));
      out = std::move(v);
      return {};
    } else {
      return in.get(out);
    }
  } else if constexpr (is_vector<T>::value) {
    if constexpr (Listed<typename T::value_type>) {
      return in.each([&out](const JsonIn& e) -> Result<void> {
        TRY(read_object(e, out.emplace_back()));
        return {};
      });
    } else {
      return in.get(out);
    }
  } else {
    return in.get(out);
  }
}

// The member pointer's class and type.
template <class> struct MemberOf;
template <class S, class T> struct MemberOf<T S::*> {
  using object = S;
  using type = T;
};

// Member M under key, written and read.
template <auto M, class S = typename MemberOf<decltype(M)>::object>
constexpr Field<S> member(std::string_view key,
                          std::type_identity_t<bool (*)(const S&)> when = nullptr) {
  return {key, [](const S& s) { return to_json(s.*M); }, when,
          [](const JsonIn& in, S& s) { return from_json(in, s.*M); }};
}

// Member M under key, written only: derived from other members, it is recomputed on reading.
template <auto M, class S = typename MemberOf<decltype(M)>::object>
constexpr Field<S> written(std::string_view key) {
  return {key, [](const S& s) { return to_json(s.*M); }, nullptr, nullptr};
}

} // namespace gpf::json_fields
