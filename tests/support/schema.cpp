#include "support/schema.hpp"

#include <fstream>
#include <stdexcept>

namespace gpf::test {
namespace {
using nlohmann::json;

bool has_type(const json& v, const std::string& t) {
  if (t == "object") {
    return v.is_object();
  }
  if (t == "array") {
    return v.is_array();
  }
  if (t == "string") {
    return v.is_string();
  }
  if (t == "integer") {
    return v.is_number_integer();
  }
  if (t == "number") {
    return v.is_number();
  }
  if (t == "boolean") {
    return v.is_boolean();
  }
  if (t == "null") {
    return v.is_null();
  }
  throw std::runtime_error("schema uses unsupported type " + t);
}

void check(const json& root, const json& schema, const json& v, const std::string& at,
           std::vector<std::string>& out) {
  if (schema.is_boolean()) {
    if (!schema.get<bool>()) {
      out.push_back(at + ": not allowed");
    }
    return;
  }
  if (auto ref = schema.find("$ref"); ref != schema.end()) {
    const std::string r = *ref;
    if (r.rfind("#/$defs/", 0) != 0) {
      throw std::runtime_error("unsupported $ref " + r);
    }
    check(root, root.at("$defs").at(r.substr(8)), v, at, out);
    return;
  }
  if (auto t = schema.find("type"); t != schema.end()) {
    bool ok = false;
    if (t->is_array()) {
      for (const auto& one : *t) {
        ok = ok || has_type(v, one.get<std::string>());
      }
    } else {
      ok = has_type(v, t->get<std::string>());
    }
    if (!ok) {
      out.push_back(at + ": expected type " + t->dump() + ", got " + v.type_name());
      return;
    }
  }
  if (auto e = schema.find("enum");
      e != schema.end() && std::find(e->begin(), e->end(), v) == e->end()) {
    out.push_back(at + ": " + v.dump() + " not in " + e->dump());
  }
  if (auto c = schema.find("const"); c != schema.end() && *c != v) {
    out.push_back(at + ": expected " + c->dump());
  }
  if (auto m = schema.find("minimum");
      m != schema.end() && v.is_number() && v.get<double>() < m->get<double>()) {
    out.push_back(at + ": below minimum " + m->dump());
  }
  if (auto m = schema.find("minLength");
      m != schema.end() && v.is_string() && v.get<std::string>().size() < m->get<std::size_t>()) {
    out.push_back(at + ": shorter than " + m->dump());
  }
  if (v.is_object()) {
    const json props = schema.value("properties", json::object());
    for (const auto& req : schema.value("required", json::array())) {
      if (!v.contains(req.get<std::string>())) {
        out.push_back(at + ": missing required member " + req.get<std::string>());
      }
    }
    for (const auto& [key, value] : v.items()) {
      if (props.contains(key)) {
        check(root, props.at(key), value, at + "/" + key, out);
      } else if (auto ap = schema.find("additionalProperties"); ap != schema.end()) {
        check(root, *ap, value, at + "/" + key, out);
      }
    }
  }
  if (v.is_array()) {
    if (auto items = schema.find("items"); items != schema.end()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        check(root, *items, v[i], at + "/" + std::to_string(i), out);
      }
    }
  }
}
} // namespace

std::vector<std::string> validate_schema(const nlohmann::json& schema, const nlohmann::json& doc) {
  std::vector<std::string> out;
  check(schema, schema, doc, "", out);
  return out;
}

nlohmann::json load_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error("cannot open " + path);
  }
  return nlohmann::json::parse(in);
}
} // namespace gpf::test
