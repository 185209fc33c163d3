#pragma once
// Runs the built gpu-preflight (GPF_BINARY) with arguments and captures stdout, stderr and the
// exit code, for end-to-end tests of the command line.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace gpf_test {

struct Output {
  int code = -1;
  std::string out;
  std::string err;
};

// Single-quotes one argument for /bin/sh.
inline std::string sh_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

inline Output run_binary(const std::vector<std::string>& args) {
  static int counter = 0;
  const auto err_path =
      std::filesystem::temp_directory_path() /
      ("gpf-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".err");
  std::string cmd = sh_quote(GPF_BINARY);
  for (const auto& a : args) {
    cmd += " " + sh_quote(a);
  }
  cmd += " 2>" + sh_quote(err_path.string()) + " </dev/null";
  Output o;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) {
    return o;
  }
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) {
    o.out.append(buf, n);
  }
  const int status = ::pclose(pipe);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  o.err = ss.str();
  std::filesystem::remove(err_path);
  return o;
}

// Writes text to a fresh temporary file and returns its path (removed by the caller's TempFile).
struct TempFile {
  std::filesystem::path path;
  explicit TempFile(const std::string& text, const std::string& name = "rules.json") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("gpf-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" + name);
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

} // namespace gpf_test
