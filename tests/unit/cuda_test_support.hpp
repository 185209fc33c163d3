#pragma once
// Helpers of the CUDA tests: the fake driver's variables set for one test, the binary run with an
// environment, and a scratch copy of a fixture snapshot.
#include "support/child_env.hpp"
#include "support/lookup.hpp"

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

struct RunResult {
  int exit_code = -1;
  std::string out;
  double seconds = 0;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

// Runs the gpu-preflight binary with args and env (on top of this process's environment, minus
// inherited FAKE_CUDA_* / CUDA_*); captures stdout and the wall time. `wrapper` (a program and its
// options, e.g. setpriv to run as another user) goes before the binary.
inline RunResult run_gpf(const std::vector<std::string>& args, const Env& env = {},
                         const std::vector<std::string>& wrapper = {}) {
  std::vector<std::string> argv_s = wrapper;
  argv_s.push_back(GPF_BINARY);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = child_environment(env);
  const std::vector<char*> argv = c_strings(argv_s);
  const std::vector<char*> envp = c_strings(env_s);

  int fds[2];
  if (::pipe(fds) != 0) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("posix_spawn failed");
  }
  RunResult result;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) {
      result.out.append(buffer, static_cast<std::size_t>(n));
    } else if (errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

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
