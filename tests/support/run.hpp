#pragma once
// The one way the tests start a program (the gpu-preflight binary, a script, a tool): no shell,
// arguments passed verbatim, stdout and stderr captured, a wall-clock guard (SIGKILL at the limit,
// reported as timed_out). The child gets this process's environment minus what a test must not
// inherit (child_env.hpp), plus the test's own variables.
#include "support/lookup.hpp"

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpf::test {

// AddressSanitizer's shadow memory alone exceeds the memory bounds: they are for plain builds.
// (GCC defines __SANITIZE_ADDRESS__; clang answers __has_feature.)
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool k_sanitized = true;
#elif defined(__has_feature)
inline constexpr bool k_sanitized = __has_feature(address_sanitizer);
#else
inline constexpr bool k_sanitized = false;
#endif

// The fixtures a sweep that repeats `check` in another form (a snapshot and its replay, the
// redaction, the line and plugin formats, the wrapping) runs on: all of them, but every fourth in
// the sanitizer build. That build still runs `check` on every fixture ("every fixture: JSON
// valid ..."); these sweeps' own code varies little from fixture to fixture, and their full runs
// under the sanitizers cost CI about three minutes of its two cores.
inline std::vector<std::string> sweep_fixtures() {
  auto names = fixture_names();
  if constexpr (k_sanitized) {
    std::vector<std::string> every_fourth;
    for (std::size_t i = 0; i < names.size(); i += 4) {
      every_fourth.push_back(names[i]);
    }
    return every_fourth;
  }
  return names;
}

// A value in env that removes the variable instead of setting it.
inline const std::string k_unset = "\x01unset";

enum class Stdout { capture, close_after_10_bytes };

struct RunOptions {
  std::map<std::string, std::string> env; // on top of the cleaned environment; k_unset removes
  std::string stdin_text;                 // written to its stdin, which is then closed
  std::vector<std::string> wrapper;       // goes before the program, e.g. {"setpriv", ...}
  double limit_s = 600;                   // SIGKILL after this long
  Stdout out = Stdout::capture;
  bool ignore_sigpipe = false; // start it with SIGPIPE ignored
  // Called about every 20 ms while it runs, with its pid and the seconds since the start.
  std::function<void(pid_t, double)> on_tick;
};

struct RunResult {
  int exit_code = -1;        // -1 unless it exited
  std::optional<int> signal; // when a signal killed it
  bool timed_out = false;
  double seconds = 0;
  std::string out;
  std::string err;
  nlohmann::json json() const { return nlohmann::json::parse(out); }
};

// Starts argv[0] (looked up in PATH) with options.wrapper before it. A program that cannot be
// started gives exit_code 127 and err "spawn failed".
RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// The built gpu-preflight with args.
RunResult run_binary(const std::vector<std::string>& args, const RunOptions& options = {});

// Shorthands for the common case: a program or the binary with some variables.
RunResult run_program(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env = {},
                      const std::string& stdin_text = {});
RunResult run_preflight(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env = {});

// The first of paths that uid 65534 cannot read ("" when it can read them all), checked as that
// user. A checkout under a private (0700) home directory is not searchable for it, yet setpriv,
// still holding root's capabilities when it execs, starts the binary there: a test that runs the
// check as that user needs its fixtures and libraries readable too, else it measures the path.
std::string unreadable_to_nobody(const std::vector<std::string>& paths);
} // namespace gpf::test
