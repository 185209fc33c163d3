#pragma once
// The command line: parses arguments with CLI11, runs the check, maps every outcome (including
// CLI11's own parse errors) to the exit-code contract: 0 ready, 1 not ready, 2 checker error.
#include <string>
#include <vector>

namespace gpf {

inline constexpr int k_exit_ready = 0;
inline constexpr int k_exit_not_ready = 1;
inline constexpr int k_exit_error = 2;

// Runs gpu-preflight with argv (argv[0] included); writes to stdout/stderr; returns the exit code.
int run_cli(int argc, char** argv);

} // namespace gpf
