#pragma once
// The command line: parses arguments with CLI11, runs the check, maps every outcome (including
// CLI11's own parse errors) to the exit-code contract: 0 ready, 1 not ready, 2 checker error.
// exec adds the launched command's own status, and 127/126 when it cannot be started.
#include "gpf/util/result.hpp"

#include <cstddef>
#include <istream>
#include <memory>
#include <string>
#include <vector>

namespace gpf {

inline constexpr int k_exit_ready = 0;
inline constexpr int k_exit_not_ready = 1;
inline constexpr int k_exit_error = 2;
inline constexpr int k_exit_cannot_execute = 126;
inline constexpr int k_exit_not_found = 127;

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

// Writes content to path through a temporary file beside it and a rename, so a reader (a log
// shipper, a dashboard) never sees half a report. The error is the OS reason.
Result<void> write_file_replacing(const std::string& path, const std::string& content);

// A report file named on the command line (summarize, diff), open for reading. Only a regular file
// or a pipe is read, and the open never waits: a FIFO nobody writes to would block the open, a
// terminal or a device the read. A FIFO without a writer reads as empty. The error names the kind.
Result<std::unique_ptr<std::istream>> open_report_input(const std::string& path);

} // namespace gpf
