#include "faults/fault_support.hpp"

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

bool maps_file(pid_t pid, const std::string& file) {
  const std::string wanted = fs::weakly_canonical(file).string();
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() >= wanted.size() && line.ends_with(wanted)) {
      return true;
    }
  }
  for (const auto& [child, start] : children_of(pid)) {
    if (maps_file(child, file)) {
      return true;
    }
  }
  return false;
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

Outcome run_watched(const std::vector<std::string>& args, const RunOptions& options) {
  Outcome result;
  RunOptions watched = options;
  watched.on_tick = [&](pid_t pid, double elapsed) {
    for (const auto& [child, begun] : children_of(pid)) {
      result.children_seen.emplace(child, begun);
    }
    if (options.on_tick) {
      options.on_tick(pid, elapsed);
    }
  };
  static_cast<test::RunResult&>(result) = test::run_binary(args, watched);
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
