#include "gpf/cli/cli.hpp"
#include "gpf/util/text.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <unistd.h>

namespace gpf {

int exec_command(const std::vector<std::string>& argv,
                 const std::vector<std::pair<std::string, std::string>>& set_env) {
  if (argv.empty()) {
    std::cerr
        << "gpu-preflight: exec: no command given (usage: gpu-preflight exec [OPTIONS] [--] CMD [ARGS...])\n";
    return k_exit_error;
  }
  for (const auto& [name, value] : set_env) {
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  std::vector<char*> args;
  for (const auto& a : argv) {
    args.push_back(const_cast<char*>(a.c_str()));
  }
  args.push_back(nullptr);
  std::cout.flush();
  ::execvp(args[0], args.data());
  const int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    std::cerr << "gpu-preflight: " << printable(argv[0]) << ": command not found\n";
    return k_exit_not_found;
  }
  std::cerr << "gpu-preflight: " << printable(argv[0]) << ": " << std::strerror(err) << "\n";
  return k_exit_cannot_execute;
}

} // namespace gpf
