#pragma once
// Helpers of the fault-injection tests: scratch roots built from fixtures, and the binary run under
// a wall-clock guard (SIGKILL at the limit, reported as timed_out) with its children watched
// through /proc, so a test can assert "no hang, no zombie, no orphan".
#include "support/lookup.hpp"
#include "support/run.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <sys/types.h>

namespace gpf::fault {

inline const std::string k_binary = GPF_BINARY;
inline const std::string k_fake_libcuda = GPF_FAKE_LIBCUDA;

// A scratch directory (removed at the end of the scope), optionally a copy of a fixture.
class TempDir {
public:
  explicit TempDir(const std::string& fixture_name = {});
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return m_dir; }
  std::string str() const { return m_dir.string(); }
  void write(const std::string& relative, const std::string& bytes) const;
  std::string read(const std::string& relative) const;

private:
  std::filesystem::path m_dir;
};

// pid -> start time (field 22 of /proc/PID/stat), so a reused pid is not mistaken for the child.
using ProcSet = std::map<pid_t, unsigned long long>;

using test::RunOptions;
using test::Stdout;

struct Outcome : test::RunResult {
  ProcSet children_seen; // every child /proc showed while it ran
};

// The binary run by test::run_binary, with its children recorded through /proc while it runs.
Outcome run_watched(const std::vector<std::string>& args, const RunOptions& options = {});

// Child pids of pid according to /proc/*/stat (ppid field).
ProcSet children_of(pid_t pid);
// Whether pid or one of its descendants has file mapped (/proc/PID/maps): a stage known by the
// library its child loaded, not by the time elapsed (a sanitizer build is several times slower).
bool maps_file(pid_t pid, const std::string& file);
// Waits up to limit_s for every process to be gone from /proc (not even a zombie); the ones left,
// with their state letter.
std::map<pid_t, char> still_present(const ProcSet& procs, double limit_s = 3);

bool has_program(const std::string& name);

} // namespace gpf::fault
