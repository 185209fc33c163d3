#include "faults/fault_support.hpp"
#include "support/child_env.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace gpf::fault {
namespace fs = std::filesystem;
using gpf::test::c_strings;
using gpf::test::child_environment;

TempDir::TempDir(const std::string& fixture_name) {
  std::random_device rd;
  m_dir = fs::temp_directory_path() /
          ("gpf-fault-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  if (fixture_name.empty()) {
    fs::create_directories(m_dir);
  } else {
    fs::copy(gpf::test::fixture(fixture_name), m_dir,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  fs::permissions(m_dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(m_dir, ec);
}

void TempDir::write(const std::string& relative, const std::string& bytes) const {
  fs::create_directories((m_dir / relative).parent_path());
  std::ofstream(m_dir / relative, std::ios::binary | std::ios::trunc) << bytes;
}

std::string TempDir::read(const std::string& relative) const {
  std::ifstream in(m_dir / relative, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

namespace {

std::optional<std::pair<pid_t, unsigned long long>> stat_of(pid_t pid, char* state = nullptr) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) {
    return std::nullopt;
  }
  // "pid (comm) S ppid ..." — comm may hold spaces and parentheses: parse after the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream rest(text.substr(close + 2));
  char st = '?';
  long long ppid = 0;
  rest >> st >> ppid;
  std::string skip;
  for (int field = 5; field < 22; ++field) {
    rest >> skip;
  }
  unsigned long long start = 0;
  rest >> start;
  if (state) {
    *state = st;
  }
  return std::make_pair(static_cast<pid_t>(ppid), start);
}

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

} // namespace

ProcSet children_of(pid_t pid) {
  ProcSet found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const auto name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const auto child = static_cast<pid_t>(std::stol(name));
    if (auto st = stat_of(child); st && st->first == pid) {
      found[child] = st->second;
    }
  }
  return found;
}

std::map<pid_t, char> still_present(const ProcSet& procs, double limit_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  for (;;) {
    std::map<pid_t, char> left;
    for (const auto& [pid, start] : procs) {
      char state = '?';
      if (auto st = stat_of(pid, &state); st && st->second == start) {
        left[pid] = state;
      }
    }
    if (left.empty() || std::chrono::steady_clock::now() >= until) {
      return left;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Outcome run_binary(const std::vector<std::string>& args, const RunOptions& options) {
  std::vector<std::string> argv_s = options.wrapper;
  argv_s.push_back(k_binary);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = child_environment(options.env);
  const std::vector<char*> argv = c_strings(argv_s);
  const std::vector<char*> envp = c_strings(env_s);

  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  if (options.out == Stdout::close_after_10_bytes) {
    ::fcntl(out[0], F_SETPIPE_SZ,
            4096); // the smallest pipe: the report cannot fit before the reader leaves
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
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
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(out[0]);
    ::close(err[0]);
    throw std::runtime_error("cannot start " + argv_s.front());
  }
  for (int fd : {out[0], err[0]}) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  Outcome result;
  int out_fd = out[0];
  int err_fd = err[0];
  int status = 0;
  bool exited = false;
  for (;;) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& [child, begun] : children_of(pid)) {
      result.children_seen.emplace(child, begun);
    }
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
    pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
    ::poll(fds, 2, 20);
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
  for (int fd : {out_fd, err_fd}) {
    if (fd >= 0) {
      ::close(fd);
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

bool has_program(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (::access((fs::path(dir) / name).c_str(), X_OK) == 0) {
      return true;
    }
  }
  return false;
}

} // namespace gpf::fault
