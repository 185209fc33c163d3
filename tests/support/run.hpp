#pragma once
// Runs the gpu-preflight binary (or any program) with arguments and captures stdout, stderr and
// the exit status. No shell: arguments are passed verbatim.
#include "support/lookup.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpf::test {
struct RunResult {
  int exit_code = -1; // -1 when killed by a signal
  std::string out;
  std::string err;
};
RunResult run_program(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env_overrides = {},
                      const std::string& stdin_text = {});
RunResult run_preflight(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env_overrides = {});
} // namespace gpf::test
