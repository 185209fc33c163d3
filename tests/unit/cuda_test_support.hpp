#pragma once
// Helpers of the CUDA tests: the fake driver's variables set for one test, the binary run with an
// environment, and a scratch copy of a fixture snapshot.
#include "support/child_env.hpp"
#include "support/lookup.hpp"
#include "support/run.hpp"

#include <nlohmann/json.hpp>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace gpf::cuda_test {

using gpf::test::c_strings;
using gpf::test::child_environment;
using gpf::test::inherited_noise;

inline const std::string k_fake = GPF_FAKE_LIBCUDA;
inline const std::string k_fake_no_peer = GPF_FAKE_LIBCUDA_NO_PEER;
inline const std::string k_fake_no_memset = GPF_FAKE_LIBCUDA_NO_MEMSET;

using Env = std::map<std::string, std::string>;

// Sets variables in this process for one scope (the fake driver reads them in the children);
// every FAKE_CUDA_* / CUDA_* variable from outside is removed meanwhile.
class ScopedEnv {
public:
  explicit ScopedEnv(const Env& vars) {
    for (char** e = environ; e && *e; ++e) {
      std::string entry(*e);
      const auto eq = entry.find('=');
      if (eq != std::string::npos && inherited_noise(entry.substr(0, eq))) {
        m_saved[entry.substr(0, eq)] = entry.substr(eq + 1);
      }
    }
    for (const auto& [name, value] : m_saved) {
      ::unsetenv(name.c_str());
    }
    for (const auto& [name, value] : vars) {
      m_set.push_back(name);
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& name : m_set) {
      ::unsetenv(name.c_str());
    }
    for (const auto& [name, value] : m_saved) {
      ::setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
  std::map<std::string, std::string> m_saved;
  std::vector<std::string> m_set;
};

using test::run_preflight;
using test::RunResult;

// A scratch copy of a fixture snapshot, removed at the end of the scope.
class TempSnapshot {
public:
  explicit TempSnapshot(const std::string& fixture_name) {
    std::random_device rd;
    m_dir = std::filesystem::temp_directory_path() /
            ("gpf-cuda-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::copy(test::fixture(fixture_name), m_dir,
                          std::filesystem::copy_options::recursive);
  }
  ~TempSnapshot() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  TempSnapshot(const TempSnapshot&) = delete;
  TempSnapshot& operator=(const TempSnapshot&) = delete;

  void write(const std::string& relative, const std::string& text) const {
    std::ofstream(m_dir / relative, std::ios::binary) << text;
  }
  std::string path() const { return m_dir.string(); }

private:
  std::filesystem::path m_dir;
};

} // namespace gpf::cuda_test
