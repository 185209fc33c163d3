#include "support/run.hpp"
#include "support/child_env.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpf::test {
namespace {

// Reads what is there without blocking; closes fd (and sets it to -1) at EOF.
void drain(int& fd, std::string& into) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      into.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n == 0) {
      ::close(fd);
      fd = -1;
    }
    return; // EAGAIN or closed
  }
}

std::vector<std::string> environment_for(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> set;
  std::map<std::string, std::string> removed;
  for (const auto& [name, value] : env) {
    (value == k_unset ? removed : set).emplace(name, value);
  }
  std::vector<std::string> out;
  for (auto& entry : child_environment(set)) {
    if (removed.count(entry.substr(0, entry.find('='))) == 0) {
      out.push_back(std::move(entry));
    }
  }
  return out;
}

} // namespace

RunResult run(const std::vector<std::string>& argv_in, const RunOptions& options) {
  std::vector<std::string> argv_s = options.wrapper;
  argv_s.insert(argv_s.end(), argv_in.begin(), argv_in.end());
  std::vector<std::string> env_s = environment_for(options.env);
  const std::vector<char*> argv = c_strings(argv_s);
  const std::vector<char*> envp = c_strings(env_s);

  int in[2];
  int out[2];
  int err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  if (options.out == Stdout::close_after_10_bytes) {
    // the smallest pipe: the report cannot fit before the reader leaves
    ::fcntl(out[0], F_SETPIPE_SZ, 4096);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM}) {
    sigaddset(&defaults, sig);
  }
  if (options.ignore_sigpipe) {
    sigdelset(&defaults, SIGPIPE);
  }
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  // An ignored disposition survives exec: set it here for the spawn only.
  struct sigaction old_pipe {};
  if (options.ignore_sigpipe) {
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_pipe);
  }
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  if (options.ignore_sigpipe) {
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  RunResult result;
  if (rc != 0) {
    for (int fd : {in[1], out[0], err[0]}) {
      ::close(fd);
    }
    result.exit_code = 127;
    result.err = "spawn failed";
    return result;
  }
  // stdin is fed from the loop below as the child reads it, so a large input never blocks us.
  int in_fd = in[1];
  std::size_t fed = 0;
  for (int fd : {in_fd, out[0], err[0]}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  int out_fd = out[0];
  int err_fd = err[0];
  // A child that exits without reading its input makes our write fail with EPIPE, not kill us.
  struct sigaction feeding_pipe {};
  struct sigaction ignore_pipe {};
  ignore_pipe.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore_pipe, &feeding_pipe);
  int status = 0;
  bool exited = false;
  for (;;) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
    }
    if (exited && out_fd < 0 && err_fd < 0) {
      break;
    }
    if (!exited && elapsed > options.limit_s) {
      result.timed_out = true;
      ::kill(pid, SIGKILL);
    }
    if (exited && elapsed > options.limit_s + 5) {
      break; // a leftover child holds the pipes: stop reading
    }
    if (options.on_tick && !exited) {
      options.on_tick(pid, elapsed);
    }
    if (in_fd >= 0) {
      const auto& text = options.stdin_text;
      const ssize_t n =
          fed < text.size() ? ::write(in_fd, text.data() + fed, text.size() - fed) : 0;
      if (n > 0) {
        fed += static_cast<std::size_t>(n);
      }
      if (fed == text.size() || (n < 0 && errno != EAGAIN && errno != EINTR) || exited) {
        ::close(in_fd); // all written, or the child is gone (EPIPE)
        in_fd = -1;
      }
    }
    pollfd fds[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
    ::poll(fds, 3, 20);
    if (out_fd >= 0) {
      drain(out_fd, result.out);
      if (options.out == Stdout::close_after_10_bytes && result.out.size() >= 10) {
        result.out.resize(10);
        ::close(out_fd); // the reader goes away, as `| head -c 10` does
        out_fd = -1;
      }
    }
    if (err_fd >= 0) {
      drain(err_fd, result.err);
    }
  }
  for (int fd : {in_fd, out_fd, err_fd}) {
    if (fd >= 0) {
      ::close(fd);
    }
  }
  ::sigaction(SIGPIPE, &feeding_pipe, nullptr);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

RunResult run_binary(const std::vector<std::string>& args, const RunOptions& options) {
  std::vector<std::string> argv{GPF_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  // The text report follows the locale and COLUMNS: the same for every test unless it says.
  RunOptions pinned = options;
  pinned.env.try_emplace("LC_ALL", "C.UTF-8");
  pinned.env.try_emplace("COLUMNS", k_unset);
  return run(argv, pinned);
}

RunResult run_program(const std::vector<std::string>& argv,
                      const std::map<std::string, std::string>& env,
                      const std::string& stdin_text) {
  RunOptions options;
  options.env = env;
  options.stdin_text = stdin_text;
  return run(argv, options);
}

RunResult run_preflight(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env) {
  RunOptions options;
  options.env = env;
  return run_binary(args, options);
}

std::string unreadable_to_nobody(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    if (run_program(
            {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "test", "-r", path})
            .exit_code != 0) {
      return path;
    }
  }
  return {};
}

} // namespace gpf::test
