#pragma once
// The command line: parses arguments with CLI11, runs the check, maps every outcome (including
// CLI11's own parse errors) to the exit-code contract: 0 ready, 1 not ready, 2 checker error.
// exec adds the launched command's own status, and 127/126 when it cannot be started.
#include "gpf/util/exit_codes.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace gpf {

// The width text output wraps to: COLUMNS when it holds a sensible number, else the terminal's
// on fd (TIOCGWINSZ), else 80.
std::size_t text_width(int fd);

// Runs gpu-preflight with argv (argv[0] included); writes to stdout/stderr; returns the exit code.
int run_cli(int argc, char** argv);

struct ExecOptions {
  bool quiet = false;    // no summary line on stderr
  bool keep_env = false; // launch without changing the environment
};

// Replaces the process with argv[0] (PATH search, no shell) after setting the variables; returns
// only on failure: 127 not found, 126 not executable; a message is printed on stderr.
int exec_command(const std::vector<std::string>& argv,
                 const std::vector<std::pair<std::string, std::string>>& set_env);

} // namespace gpf
