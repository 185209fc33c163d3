// parse_json_bounded (json_bounded.hpp): nlohmann's SAX interface with a DOM builder of our own,
// which appends each value to its parent and drops the last element in O(1) when the filter says
// so; a value beyond a width cap, or a member the shape does not name, puts the builder in skip
// mode until that value ends.
#include "gpf/util/json_bounded.hpp"

#include "gpf/util/json_value.hpp"

#include <fmt/format.h>

#include <vector>

namespace gpf {
namespace {

using Json = nlohmann::json;

class Builder : public nlohmann::json_sax<Json> {
public:
  Builder(std::size_t max_elements, std::size_t max_members, const JsonObjectFilter& filter,
          const JsonShape* shape)
      : m_max_elements(max_elements), m_max_members(max_members), m_filter(filter),
        m_root_shape(shape) {}

  Json root;
  std::size_t dropped = 0;
  std::size_t skipped = 0;
  std::string error;

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool string(string_t& v) override { return scalar(std::move(v)); }
  bool binary(binary_t&) override { return scalar(nullptr); }

  bool start_object(std::size_t) override { return open(Json::object()); }
  bool start_array(std::size_t) override { return open(Json::array()); }

  bool key(string_t& k) override {
    if (m_skip_depth > 0) {
      return true;
    }
    Frame& f = m_stack.back();
    const JsonShape* member_shape = nullptr; // the whole value
    if (f.shape != nullptr && !f.shape->members.empty()) {
      const auto it = f.shape->members.find(k);
      if (it == f.shape->members.end()) {
        m_skip_next = true; // not asked for: parsed, not built
        return true;
      }
      member_shape = &it->second;
    }
    if (f.value->size() >= m_max_members && !f.value->contains(k)) {
      m_skip_next = true; // this member's value is not built
      ++skipped;
    } else {
      f.key = std::move(k);
      m_member_shape = member_shape;
    }
    return true;
  }

  bool end_object() override { return close(); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    error = fmt::format("not valid JSON (at byte {})", position);
    return false;
  }

private:
  struct Frame {
    Json* value;
    std::string key;                  // the member being read (objects)
    std::string array_key;            // the key this array is held under (arrays)
    JsonArrayState state;             // the filter's, for arrays
    const JsonShape* shape = nullptr; // what to build of it (nullptr: all)
  };

  // Where the next value goes: nullptr when it is to be skipped.
  Json* slot() {
    if (m_skip_depth > 0) {
      return nullptr;
    }
    if (m_stack.empty()) {
      return &root;
    }
    Frame& f = m_stack.back();
    if (f.value->is_array()) {
      if (f.value->size() >= m_max_elements) {
        ++skipped;
        return nullptr;
      }
      f.value->push_back(nullptr);
      return &f.value->back();
    }
    if (m_skip_next) {
      m_skip_next = false;
      return nullptr;
    }
    return &(*f.value)[f.key];
  }

  template <class V> bool scalar(V&& v) {
    if (Json* s = slot()) {
      *s = Json(std::forward<V>(v));
    }
    return true;
  }

  bool open(Json empty) {
    if (m_stack.size() >= k_json_max_depth) {
      error = fmt::format("nested deeper than {} levels", k_json_max_depth);
      return false;
    }
    const std::string held_under =
        m_stack.empty() || !m_stack.back().value->is_object() ? std::string() : m_stack.back().key;
    // the root's shape; an array's element takes the array's; a member the one key() found
    const JsonShape* shape = m_stack.empty()                    ? m_root_shape
                             : m_stack.back().value->is_array() ? m_stack.back().shape
                                                                : m_member_shape;
    Json* s = slot();
    if (s == nullptr) {
      ++m_skip_depth;
      return true;
    }
    *s = std::move(empty);
    m_stack.push_back({s, {}, held_under, {}, shape});
    return true;
  }

  bool close() {
    if (m_skip_depth > 0) {
      --m_skip_depth;
      return true;
    }
    const Frame done = std::move(m_stack.back());
    m_stack.pop_back();
    if (m_filter && done.value->is_object() && !m_stack.empty() &&
        m_stack.back().value->is_array()) {
      Frame& parent = m_stack.back();
      if (!m_filter(parent.array_key, *done.value, parent.state)) {
        parent.value->erase(parent.value->size() - 1); // the last element: O(1)
        ++dropped;
      }
    }
    return true;
  }

  std::size_t m_max_elements;
  std::size_t m_max_members;
  const JsonObjectFilter& m_filter;
  const JsonShape* m_root_shape;
  const JsonShape* m_member_shape = nullptr; // of the member key() just read
  std::vector<Frame> m_stack;
  std::size_t m_skip_depth = 0;
  bool m_skip_next = false;
};

} // namespace

std::string too_wide(std::size_t skipped) {
  return fmt::format("wider than a replay reads: {} more elements or members than {} per array "
                     "or {} per object",
                     skipped, k_max_json_elements, k_max_json_members);
}

Result<BoundedJson> parse_json_bounded(std::string_view text, std::size_t max_elements,
                                       std::size_t max_members, const JsonObjectFilter& filter,
                                       const JsonShape* shape) {
  Builder b(max_elements, max_members, filter, shape);
  const bool ok = Json::sax_parse(text, &b, nlohmann::json::input_format_t::json, true);
  if (!ok) {
    return Error{b.error.empty() ? std::string("not valid JSON") : b.error};
  }
  return BoundedJson{std::move(b.root), b.dropped, b.skipped};
}

} // namespace gpf
