#include "gpf/cli/cli.hpp"

#include <cstdio>

// Whatever a command printed (reports, --help, --version), a stdout that could not take it (a full
// disk, /dev/full, a closed descriptor) is the checker's failure: exit 2, never the node's verdict.
int main(int argc, char** argv) {
  int code = gpf::run_cli(argc, argv);
  if ((std::fflush(stdout) != 0 || std::ferror(stdout) != 0) && code != gpf::k_exit_error) {
    std::fputs("gpu-preflight: error: cannot write to standard output\n", stderr);
    code = gpf::k_exit_error;
  }
  return code;
}
