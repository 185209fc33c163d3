// JSON of the compat probe's facts. Every host string passes through to_valid_utf8.
#include "gpf/report/compat_json.hpp"

#include "gpf/util/text.hpp"

namespace gpf {
namespace {
using Json = nlohmann::ordered_json;

Json optional_text(const std::optional<std::string>& s) {
  return s ? Json(to_valid_utf8(*s)) : Json(nullptr);
}

Json library_json(const DriverLibrary& lib) {
  Json j;
  j["soname"] = lib.soname;
  j["path"] = optional_text(lib.path);
  j["resolved"] = optional_text(lib.resolved);
  j["via"] = lib.path ? Json(lib.via) : Json(nullptr);
  j["version"] = lib.version ? Json(to_valid_utf8(lib.version_text)) : Json(nullptr);
  j["in_stubs"] = lib.in_stubs;
  j["in_compat"] = lib.in_compat;
  Json searched = Json::array();
  for (const auto& step : lib.searched) {
    searched.push_back(Json{{"dir", to_valid_utf8(step.dir)},
                            {"via", step.via},
                            {"result", to_valid_utf8(step.result)}});
  }
  j["searched"] = std::move(searched);
  return j;
}
} // namespace

Json compat_json(const CompatFacts& c) {
  if (!c.ran) {
    return nullptr;
  }
  Json j;
  if (c.expected_cuda) {
    j["expected_cuda"] = Json{{"version", to_valid_utf8(c.expected_cuda->text)},
                              {"source", to_valid_utf8(c.expected_cuda->source)}};
  } else {
    j["expected_cuda"] = nullptr;
  }
  Json notes = Json::array();
  for (const auto& n : c.expected_cuda_notes) {
    notes.push_back(to_valid_utf8(n));
  }
  j["expected_cuda_notes"] = std::move(notes);
  j["ld_so_cache"] = to_valid_utf8(c.ld_cache);
  j["libraries"] = Json::array({library_json(c.libcuda), library_json(c.libnvidia_ml)});
  Json modules = Json::array();
  for (const auto& m : c.modules) {
    Json mj;
    mj["name"] = m.name;
    mj["version"] = m.version ? Json(to_valid_utf8(m.text)) : Json(nullptr);
    if (!m.error.empty()) {
      mj["error"] = to_valid_utf8(m.error);
    }
    modules.push_back(std::move(mj));
  }
  j["modules"] = std::move(modules);
  return j;
}

} // namespace gpf
