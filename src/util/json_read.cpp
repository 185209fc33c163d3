#include "gpf/util/json_read.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {
const nlohmann::json& null_json() {
  static const nlohmann::json k_null;
  return k_null;
}
} // namespace

JsonIn JsonIn::operator[](std::string_view key) const {
  const nlohmann::json* v = &null_json();
  if (m_v->is_object()) {
    if (auto it = m_v->find(key); it != m_v->end()) {
      v = &*it;
    }
  }
  return JsonIn(*v, m_path.empty() ? std::string(key) : fmt::format("{}.{}", m_path, key), m_cap);
}

JsonIn JsonIn::operator[](std::size_t i) const {
  const nlohmann::json& v = m_v->is_array() && i < m_v->size() ? (*m_v)[i] : null_json();
  return JsonIn(v, fmt::format("{}[{}]", m_path, i), m_cap);
}

Error JsonIn::not_a(std::string_view expected) const {
  return Error{fmt::format("{} is not {}", m_path.empty() ? "the document" : m_path, expected)};
}

Result<void> JsonIn::object() const {
  if (!m_v->is_object()) {
    return not_a("an object");
  }
  return {};
}

Result<void> JsonIn::array() const {
  if (!absent() && !m_v->is_array()) {
    return not_a("an array");
  }
  return {};
}

Result<void> JsonIn::get(std::string& out) const {
  if (absent()) {
    return {};
  }
  if (!m_v->is_string()) {
    return not_a(expected<std::string>());
  }
  out = json_text(m_v->get_ref<const std::string&>(), m_cap);
  return {};
}

Result<void> JsonIn::get(bool& out) const {
  if (absent()) {
    return {};
  }
  if (!m_v->is_boolean()) {
    return not_a(expected<bool>());
  }
  out = m_v->get<bool>();
  return {};
}

Result<void> JsonIn::get(double& out) const {
  if (absent()) {
    return {};
  }
  if (!m_v->is_number() || !std::isfinite(m_v->get<double>()) || m_v->get<double>() < 0) {
    return not_a(expected<double>());
  }
  out = m_v->get<double>();
  return {};
}

} // namespace gpf
