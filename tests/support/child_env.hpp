#pragma once
// What a test's child process is started with: argv/envp arrays for posix_spawn/execve, and the
// environment of this process minus what a test must not inherit, with the test's own variables.
#include <unistd.h> // environ (_GNU_SOURCE)

#include <map>
#include <string>
#include <vector>

namespace gpf::test {

// Variables a test must not inherit from whoever runs the suite.
inline bool inherited_noise(const std::string& name) {
  return name.rfind("FAKE_CUDA_", 0) == 0 || name.rfind("FAKE_NVML_", 0) == 0 ||
         name.rfind("FAKE_NCCL_", 0) == 0 || name.rfind("NCCL_", 0) == 0 ||
         name == "CUDA_VISIBLE_DEVICES" || name == "CUDA_DEVICE_ORDER";
}

// "NAME=value" entries: this process's environment without inherited noise, then overrides.
inline std::vector<std::string>
child_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    const auto name = entry.substr(0, entry.find('='));
    if (!inherited_noise(name) && overrides.count(name) == 0) {
      out.push_back(std::move(entry));
    }
  }
  for (const auto& [name, value] : overrides) {
    out.push_back(name + "=" + value);
  }
  return out;
}

// A null-terminated array of pointers into strings (which must outlive it).
inline std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

} // namespace gpf::test
