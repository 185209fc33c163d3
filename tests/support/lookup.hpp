#pragma once
// The tests' one way to name a fixture snapshot and to look a finding up in a JSON report.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::test {

// The path of tests/fixtures/NAME.
inline std::string fixture(const std::string& name) {
  return std::string(GPF_FIXTURES_DIR) + "/" + name;
}

// Names of every fixture snapshot directory, sorted.
inline std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(GPF_FIXTURES_DIR)) {
    if (e.is_directory()) {
      names.push_back(e.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The first finding with this id (and, when gpu is given, on that GPU) in a JSON report, or null.
inline const nlohmann::json* finding(const nlohmann::json& report, std::string_view id,
                                     std::string_view gpu = {}) {
  for (const auto& f : report.at("findings")) {
    if (f.at("id") == id && (gpu.empty() || f.value("gpu", "") == gpu)) {
      return &f;
    }
  }
  return nullptr;
}

// A finding's evidence lines, each ended by '\n'.
inline std::string evidence(const nlohmann::json& finding) {
  std::string all;
  for (const auto& e : finding.at("evidence")) {
    all += e.get<std::string>() + "\n";
  }
  return all;
}

} // namespace gpf::test
