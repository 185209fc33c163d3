#include "support/run.hpp"
#include "support/child_env.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace gpf::test {

RunResult run_program(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env_overrides,
                      const std::string& stdin_text) {
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(in_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);

  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) {
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [k, v] : env_overrides) {
    if (v == "\x01unset") {
      env.erase(k);
    } else {
      env[k] = v;
    }
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) {
    env_strings.push_back(k + "=" + v);
  }
  std::vector<std::string> argv_copy = argv;
  const std::vector<char*> envp = c_strings(env_strings);
  const std::vector<char*> args = c_strings(argv_copy);

  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult result;
  if (rc != 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.exit_code = 127;
    result.err = "spawn failed";
    return result;
  }
  if (!stdin_text.empty()) {
    [[maybe_unused]] auto n = write(in_pipe[1], stdin_text.data(), stdin_text.size());
  }
  close(in_pipe[1]);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) {
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[65536];
        const ssize_t n = read(fds[i].fd, buf, sizeof buf);
        if (n <= 0) {
          close(fds[i].fd);
          fds[i].fd = -1;
          --open_fds;
        } else {
          sinks[i]->append(buf, static_cast<std::size_t>(n));
        }
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

RunResult run_preflight(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env_overrides) {
  std::vector<std::string> argv{GPF_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  // The text report follows the locale and COLUMNS: the same for every test unless it says.
  std::map<std::string, std::string> env{{"LC_ALL", "C.UTF-8"}, {"COLUMNS", "\x01unset"}};
  for (const auto& [k, v] : env_overrides) {
    env[k] = v;
  }
  return run_program(argv, env);
}

} // namespace gpf::test
