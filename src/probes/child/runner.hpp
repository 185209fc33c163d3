#pragma once
// Child processes for the driver probes (CUDA, NVML). Every driver call happens in a forked child;
// each child speaks one line per event on a pipe (the probe's own protocol). The parent only
// reads the children's pipes with poll() under a deadline, SIGKILLs whatever is still running when
// it passes, reaps with WNOHANG and abandons a child that does not die (uninterruptible sleep in
// the driver) instead of blocking on it. The parent stays single-threaded, so fork is safe.
#include "gpf/facts/isolation.hpp"
#include "gpf/util/result.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpf::child {

using Clock = std::chrono::steady_clock;

// A line as the parent received it, with the time it arrived (ms since the child started).
struct TimedLine {
  std::string text;
  double at_ms = 0;
};

// How a child's life ended, as the parent saw it.
struct ChildEnd {
  bool killed_at_deadline = false; // the parent sent SIGKILL because the deadline passed
  double end_ms = 0;               // when the parent stopped listening (ms since the child started)
  std::optional<int> exit_code;
  std::optional<int> signal; // the signal that ended it, when not our SIGKILL
  // That signal is one no driver raises on its own (SIGKILL, SIGTERM, SIGINT, SIGHUP) and this
  // process never sent it: the kernel's OOM killer (a memory cgroup's limit) or another process.
  // Not the GPU's doing: the probes make it a checker failure, never a verdict.
  bool killed_from_outside = false;
  bool abandoned = false; // it did not die after SIGKILL (uninterruptible sleep)
  // It broke the protocol (an over-long line, too many lines or bytes) and was killed: why.
  std::string protocol_error;
};

// For a child ended by a signal this process did not send (ChildEnd::killed_from_outside): "killed
// by signal 9 (Killed), which the checker did not send: killed by the kernel: out of memory in
// this cgroup?"; nullopt for any other end. The probes throw CheckerFailure with it: such an end
// is never a verdict about a GPU.
std::optional<std::string> outside_kill_text(const ChildEnd& end);

// The child's end of the pipe: one write(2) per line ('\n' added), safe to share between threads.
class LineWriter {
public:
  explicit LineWriter(int fd) : m_fd(fd) {}
  void write_line(std::string_view line);

private:
  int m_fd;
  std::mutex m_mutex;
};

// A variable to set in the child's environment, or to unset (nullopt).
using EnvOverride = std::pair<std::string, std::optional<std::string>>;

struct ChildSpec {
  std::string label; // for messages: "enumeration", "gpu 0000:3b:00.0", "multi-gpu"
  std::vector<EnvOverride> env;
  std::function<void(LineWriter&)> work; // runs in the child; the child then _exits
};

// A helper that a driver library starts and that leaves its child's process group (setsid, as a
// daemon does) escapes the group's SIGKILL. Called once by the program (not by library users such
// as the test binary, whose other children this must not touch): while any ChildGroup lives, this
// process is a child subreaper (prctl), so such a helper is re-parented here when the child that
// started it dies, and settle() kills and reaps every child of this process that spawn() did not
// make. Off again when the last group ends, so that a process exec'd later (`exec`) is no
// subreaper.
void adopt_helpers();

// A pipe made before the children are forked, both ends close-on-exec, each end closed when the
// object goes (in every process that has a copy). read/write are -1 where pipe2 failed or the
// end was closed. The one-way words below are made of it.
struct ParentPipe {
  ParentPipe();
  ~ParentPipe();
  ParentPipe(const ParentPipe&) = delete;
  ParentPipe& operator=(const ParentPipe&) = delete;
  void close_write();
  int read = -1;
  int write = -1;
};

// A one-way word from the parent to its children that is said once: "the stage you wait for has
// ended". A pipe made before the children are forked; the parent writes one byte, which leaves the
// read end readable for good, and the children only poll it (none reads it), so every one of them
// sees it. Both ends close on exec.
class Gate {
public:
  // Without a pipe (pipe2 failed) the gate is not usable: usable() says so.
  bool usable() const { return m_pipe.read >= 0 && m_pipe.write >= 0; }
  // In the parent: say the word (once; later calls do nothing).
  void release();
  // In a child: true once the word was said (or no one is left to say it), false when `wait`
  // passed first or the gate is not usable.
  bool wait_for(std::chrono::milliseconds wait) const;

private:
  ParentPipe m_pipe;
  bool m_released = false;
};

// A one-way line from the parent to one child, said at most once and after the fork: what the
// child is to do once the parent knows it (the multi-GPU child initialises CUDA at time 0 and
// learns its GPUs when enumeration ends). A pipe made before the fork; the parent writes one line
// of at most PIPE_BUF bytes (one atomic write) and closes its end. Both ends close on exec.
class Letter {
public:
  // Without a pipe (pipe2 failed) the letter is not usable: usable() says so.
  bool usable() const { return m_pipe.read >= 0; }
  // In the parent: send the line (once; false when it cannot: not usable, sent before, too long,
  // or the write failed).
  bool send(std::string_view line);
  // In a child: the line, or nullopt when `until` passed first, the parent closed its end without
  // one, or the letter is not usable. Closes the child's copy of the write end first.
  std::optional<std::string> receive(Clock::time_point until);

private:
  ParentPipe m_pipe;
};

class ChildGroup {
public:
  // is_done: whether a line is the protocol's "finished everything" event.
  explicit ChildGroup(std::function<bool(std::string_view)> is_done);
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;
  // Kills and reaps whatever is left (see settle).
  ~ChildGroup();

  // Forks a child that runs spec.work with spec.env applied. Error: pipe or fork failed.
  Result<std::size_t> spawn(ChildSpec spec);

  // Reads every child's pipe until done() is true or the deadline passes; returns done().
  bool pump_until(Clock::time_point deadline, const std::function<bool()>& done);

  // The child said "done" or closed its pipe.
  bool finished(std::size_t id) const;
  // SIGKILLs an unfinished child because the deadline passed (its open step becomes timed out).
  void kill_at_deadline(std::size_t id);
  // SIGKILLs a child whose result is no longer wanted (not a finding).
  void stop(std::size_t id);
  // SIGKILLs every child's process group (helpers included, the child alive or exited), reaps
  // for at most `grace`, abandons the rest. With adopt_helpers(), then also the helpers that left
  // their group (setsid) and were orphaned: see there.
  void settle(std::chrono::milliseconds grace);

  // Every line the child said so far, and how it ended (end_ms up to now while it runs).
  const std::vector<TimedLine>& lines(std::size_t id) const { return m_children.at(id).lines; }
  ChildEnd end(std::size_t id) const;
  const std::string& label(std::size_t id) const { return m_children.at(id).label; }
  // How the child was kept from changing the host (nullopt: it died before saying).
  const std::optional<ChildIsolation>& isolation(std::size_t id) const {
    return m_children.at(id).isolation;
  }

private:
  struct Child {
    std::string label;
    pid_t pid = -1;
    int fd = -1;
    int err_fd = -1; // its standard error, a sealed memory file (k_max_stderr in runner.cpp)
    Clock::time_point started;
    std::string partial;   // bytes after the last '\n'
    std::size_t bytes = 0; // read from its pipe in all
    std::vector<TimedLine> lines;
    bool eof = false;
    bool done_seen = false;
    bool exited = false; // its status is known; a zombie until reap()
    bool reaped = false;
    bool kill_sent = false; // this process sent it SIGKILL (deadline, protocol, stop, settle)
    ChildEnd end;
    std::optional<ChildIsolation> isolation;
  };
  void reap_nonblocking();
  // One child's exit status if it has exited (WNOHANG, WNOWAIT); true once it has.
  bool try_reap(Child& child);
  // Reaps an exited child (after its group was killed).
  void reap(Child& child);
  void read_from(Child& child);
  // Copies what the child wrote to its standard error (bounded) to the checker's, once.
  static void forward_stderr(Child& child);
  void add_line(Child& child, std::string line);
  void signal_kill(Child& child);
  // Kills a child that broke the protocol and stops reading it; its end records why.
  void protocol_error(Child& child, std::string why);
  std::function<bool(std::string_view)> m_is_done;
  std::vector<Child> m_children;
};

} // namespace gpf::child
