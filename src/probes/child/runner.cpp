// fork / pipe / poll / SIGKILL / WNOHANG: the only place that manages the driver probes' children.
#include "probes/child/runner.hpp"

#include "probes/child/interrupt.hpp"
#include "probes/child/isolation.hpp"
#include "probes/child/self.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <unordered_set>

namespace gpf::child {
namespace {

// A child saying more than this breaks the protocol: it is killed and its end says why (a
// protocol error, never a hang). A real child writes a few KiB.
constexpr std::size_t k_max_line = 64 * 1024;        // one line
constexpr std::size_t k_max_lines = 20000;           // lines
constexpr std::size_t k_max_bytes = 4 * 1024 * 1024; // bytes in all
// The first line of every child: "#isolation 1 <detail>" or "#isolation 0 <why not>".
constexpr std::string_view k_isolation_marker = "#isolation ";
constexpr int k_max_poll_ms = 100;   // wake up at least this often to reap
constexpr int k_reap_grace_ms = 500; // how long a closed pipe waits for its child's exit status
// What a child (the driver library in it, and its helpers) may write to standard error and
// standard output: a memory file of this size, sealed against growth (writes past it fail), copied
// to the checker's standard error when the stage settles. A library's chatter reached the checker's
// stderr unbounded before.
constexpr std::size_t k_max_stderr = 64 * 1024;

bool g_adopt_helpers = false;
int g_live_groups = 0;

// Every child spawn() made, in any group, until it is reaped.
std::unordered_set<pid_t>& spawned() {
  static std::unordered_set<pid_t> pids;
  return pids;
}

void forget(pid_t pid) {
  spawned().erase(pid);
  interrupt_untrack(pid);
}

// Children of this process that spawn() did not make (see adopt_helpers): killed with their
// groups and reaped, again while killing one orphans more, until none is left or `until` passes.
void sweep_adopted(Clock::time_point until) {
  for (;;) {
    bool any = false;
    for (const pid_t pid : own_children()) {
      if (spawned().count(pid) != 0) {
        continue;
      }
      any = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      int status = 0;
      ::waitpid(pid, &status, WNOHANG);
    }
    if (!any || Clock::now() >= until) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Children that did not die after SIGKILL. Retried with WNOHANG at every spawn so that one that
// finally dies does not stay a zombie for the life of this process.
std::vector<pid_t>& abandoned_pids() {
  static std::vector<pid_t> pids;
  return pids;
}

void reap_abandoned() {
  auto& pids = abandoned_pids();
  pids.erase(std::remove_if(pids.begin(), pids.end(),
                            [](pid_t pid) {
                              int status = 0;
                              const pid_t r = ::waitpid(pid, &status, WNOHANG);
                              const bool gone = r == pid || (r < 0 && errno == ECHILD);
                              if (gone) {
                                forget(pid);
                              }
                              return gone;
                            }),
             pids.end());
}

// The memory file a child's standard error goes to; -1 where memfd or sealing is not available
// (the child then writes to the checker's stderr, as it inherited it).
int stderr_capture() {
  const int fd = ::memfd_create("gpu-preflight-child-stderr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    return -1;
  }
  if (::ftruncate(fd, static_cast<off_t>(k_max_stderr)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return; // the parent has gone: nothing to tell
    }
    done += static_cast<std::size_t>(n);
  }
}

// In the child, before any work: own process group (so a SIGKILL reaches helpers it starts),
// die with the parent, default signal handling, stdout away from the report.
void prepare_child(pid_t parent, const std::vector<EnvOverride>& env) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) {
    ::_exit(127);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Default dispositions: a handler inherited from the parent (a test framework's, say) must not
  // run in the child; SIGPIPE kills it once the parent has gone.
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) {
      std::signal(sig, SIG_DFL);
    }
  }
  ::dup2(STDERR_FILENO, STDOUT_FILENO); // driver chatter on stdout must not end up in the report
  for (const auto& [name, value] : env) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
}

} // namespace

void LineWriter::write_line(std::string_view text) {
  std::string line(text);
  line += '\n';
  std::lock_guard lock(m_mutex);
  write_all(m_fd, line);
}

ParentPipe::ParentPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) == 0) {
    read = fds[0];
    write = fds[1];
  }
}

ParentPipe::~ParentPipe() {
  close_write();
  if (read >= 0) {
    ::close(read);
  }
}

void ParentPipe::close_write() {
  if (write >= 0) {
    ::close(write);
    write = -1;
  }
}

void Gate::release() {
  if (!usable() || m_released) {
    return;
  }
  m_released = true;
  const char word = 1;
  while (::write(m_pipe.write, &word, 1) < 0 && errno == EINTR) {
  }
}

bool Gate::wait_for(std::chrono::milliseconds wait) const {
  if (!usable()) {
    return false;
  }
  const auto until = Clock::now() + wait;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    pollfd p{m_pipe.read, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (n > 0) {
      return true; // the word, or a hang-up: no word can come any more
    }
    if (n == 0 || errno != EINTR) {
      return false;
    }
  }
}

bool Letter::send(std::string_view line) {
  if (m_pipe.write < 0 || line.size() + 1 > PIPE_BUF || line.find('\n') != std::string_view::npos) {
    return false;
  }
  const std::string text = std::string(line) + '\n';
  ssize_t n = 0;
  while ((n = ::write(m_pipe.write, text.data(), text.size())) < 0 && errno == EINTR) {
  }
  m_pipe.close_write();
  return n == static_cast<ssize_t>(text.size());
}

std::optional<std::string> Letter::receive(Clock::time_point until) {
  m_pipe.close_write(); // the child's copy: the parent's close must read as the end of the letter
  if (m_pipe.read < 0) {
    return std::nullopt;
  }
  std::string text;
  char buffer[512];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    pollfd p{m_pipe.read, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      return std::nullopt; // the time passed, or poll failed
    }
    const ssize_t n = ::read(m_pipe.read, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return std::nullopt; // closed without a whole line
    }
    text.append(buffer, static_cast<std::size_t>(n));
    if (const auto end = text.find('\n'); end != std::string::npos) {
      text.resize(end);
      return text;
    }
    if (text.size() > PIPE_BUF) {
      return std::nullopt;
    }
  }
}

void adopt_helpers() {
  g_adopt_helpers = true;
}

ChildGroup::ChildGroup(std::function<bool(std::string_view)> is_done)
    : m_is_done(std::move(is_done)) {
  if (g_adopt_helpers && g_live_groups++ == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  }
}

ChildGroup::~ChildGroup() {
  settle(std::chrono::milliseconds(200));
  if (g_adopt_helpers && --g_live_groups == 0) {
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  }
}

Result<std::size_t> ChildGroup::spawn(ChildSpec spec) {
  reap_abandoned();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  const int err_fd = stderr_capture();
  std::fflush(nullptr); // nothing buffered may be written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    if (err_fd >= 0) {
      ::close(err_fd);
    }
    return Error{std::string("fork: ") + std::strerror(err)};
  }
  if (pid == 0) {
    ::close(fds[0]);
    for (const auto& other : m_children) {
      if (other.fd >= 0) {
        ::close(other.fd);
      }
      if (other.err_fd >= 0) {
        ::close(other.err_fd);
      }
    }
    if (err_fd >= 0) {
      ::dup2(err_fd, STDERR_FILENO); // prepare_child sends stdout there too
      ::close(err_fd);
    }
    prepare_child(parent, spec.env);
    {
      LineWriter writer(fds[1]);
      const ChildIsolation iso = isolate_from_host();
      writer.write_line(
          fmt::format("{}{} {}", k_isolation_marker, iso.isolated ? 1 : 0, iso.detail));
      try {
        spec.work(writer);
      } catch (...) {
        // the parent sees a child that ended without "done"
      }
    }
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);  // also from this side, so a kill right after fork reaches the group
  interrupt_track(pid); // a SIGINT/SIGTERM to this process now stops it too
  spawned().insert(pid);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  Child child;
  child.label = std::move(spec.label);
  child.pid = pid;
  child.fd = fds[0];
  child.err_fd = err_fd;
  child.started = Clock::now();
  m_children.push_back(std::move(child));
  return m_children.size() - 1;
}

void ChildGroup::add_line(Child& child, std::string line) {
  if (!child.isolation && line.rfind(k_isolation_marker, 0) == 0) {
    // the child's first line, before its work: not part of the probe's protocol
    const std::string_view rest = std::string_view(line).substr(k_isolation_marker.size());
    child.isolation = ChildIsolation{
        rest.substr(0, 2) == "1 ", std::string(rest.substr(std::min<std::size_t>(2, rest.size())))};
    return;
  }
  if (child.lines.size() >= k_max_lines) {
    return;
  }
  if (m_is_done && m_is_done(line)) {
    child.done_seen = true;
  }
  child.lines.push_back({std::move(line), ms_since(child.started)});
  if (child.lines.size() == k_max_lines) {
    // flooding: stop it, keep what it said
    protocol_error(child, fmt::format("it wrote more than {} lines", k_max_lines));
  }
}

void ChildGroup::protocol_error(Child& child, std::string why) {
  if (child.end.protocol_error.empty()) {
    child.end.protocol_error = std::move(why);
  }
  signal_kill(child);
  if (child.fd >= 0) {
    ::close(child.fd); // nothing more is read from it
    child.fd = -1;
  }
  if (!child.eof) {
    child.eof = true;
    child.end.end_ms = ms_since(child.started);
  }
}

void ChildGroup::read_from(Child& child) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    }
    if (n <= 0) {
      if (!child.partial.empty()) {
        add_line(child, std::move(child.partial));
        child.partial.clear();
      }
      ::close(child.fd);
      child.fd = -1;
      child.eof = true;
      child.end.end_ms = ms_since(child.started);
      // The pipe closes as the child dies, and under load its exit status can lag the close by
      // milliseconds: wait that long for it, so a crash is named by its signal, not as a closed
      // pipe. A child that closed its pipe and lives on costs this grace once.
      for (int waited = 0; waited < k_reap_grace_ms && !try_reap(child); ++waited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return;
    }
    child.bytes += static_cast<std::size_t>(n);
    if (child.bytes > k_max_bytes) {
      return protocol_error(child, fmt::format("it wrote more than {} bytes", k_max_bytes));
    }
    child.partial.append(buffer, static_cast<std::size_t>(n));
    std::size_t start = 0;
    for (std::size_t nl; (nl = child.partial.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      if (nl - start > k_max_line) {
        return protocol_error(child,
                              fmt::format("it wrote a line longer than {} bytes", k_max_line));
      }
      add_line(child, child.partial.substr(start, nl - start));
      if (child.fd < 0) {
        return; // add_line stopped it
      }
    }
    child.partial.erase(0, start);
    if (child.partial.size() > k_max_line) {
      return protocol_error(child, fmt::format("it wrote a line longer than {} bytes", k_max_line));
    }
  }
}

bool ChildGroup::try_reap(Child& child) {
  if (child.exited || child.reaped || child.pid <= 0) {
    return true;
  }
  // WNOWAIT: the status is read and the child stays a zombie, so its pid (the id of its process
  // group) cannot be reused before settle() kills the group, helpers included, and reaps it.
  siginfo_t info{};
  const int r = ::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (r == 0 && info.si_pid == child.pid) {
    child.exited = true;
    if (info.si_code == CLD_EXITED) {
      child.end.exit_code = info.si_status;
    } else if ((info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) &&
               !child.end.killed_at_deadline) {
      child.end.signal = info.si_status;
      const int sig = info.si_status;
      child.end.killed_from_outside =
          !child.kill_sent && (sig == SIGKILL || sig == SIGTERM || sig == SIGINT || sig == SIGHUP);
    }
  } else if (r < 0 && errno == ECHILD) {
    child.exited = child.reaped = true; // someone else reaped it; nothing to wait for
    forget(child.pid);
  }
  return child.exited;
}

void ChildGroup::reap(Child& child) {
  if (child.reaped || !child.exited || child.pid <= 0) {
    return;
  }
  int status = 0;
  const pid_t r = ::waitpid(child.pid, &status, WNOHANG);
  if (r == child.pid || (r < 0 && errno == ECHILD)) {
    child.reaped = true;
    forget(child.pid);
  }
}

void ChildGroup::reap_nonblocking() {
  for (auto& child : m_children) {
    try_reap(child);
  }
}

bool ChildGroup::pump_until(Clock::time_point deadline, const std::function<bool()>& done) {
  for (;;) {
    reap_nonblocking();
    if (done()) {
      return true;
    }
    const auto now = Clock::now();
    if (now >= deadline) {
      return false;
    }
    std::vector<pollfd> fds;
    std::vector<Child*> owners;
    for (auto& child : m_children) {
      if (child.fd >= 0) {
        fds.push_back({child.fd, POLLIN, 0});
        owners.push_back(&child);
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    const int wait_ms = static_cast<int>(std::min<long long>(left, k_max_poll_ms));
    if (fds.empty()) {
      // nothing to read: done() waits for something else (a reap); check again shortly
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(wait_ms, 5)));
      continue;
    }
    const int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0) {
      if (errno == EINTR) {
        continue;
      }
      return done();
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) {
        read_from(*owners[i]);
      }
    }
  }
}

bool ChildGroup::finished(std::size_t id) const {
  const auto& c = m_children.at(id);
  return c.eof || c.done_seen;
}

std::optional<std::string> outside_kill_text(const ChildEnd& end) {
  if (!end.killed_from_outside || !end.signal) {
    return std::nullopt;
  }
  const char* name = ::strsignal(*end.signal);
  return fmt::format("killed by signal {} ({}), which the checker did not send: killed by the "
                     "kernel: out of memory in this cgroup?",
                     *end.signal, name ? name : "unknown");
}

void ChildGroup::signal_kill(Child& child) {
  if (!child.reaped && child.pid > 0) {
    child.kill_sent = true; // before the signal: its end may be read as soon as it is sent
    ::kill(-child.pid, SIGKILL);
    ::kill(child.pid, SIGKILL);
  }
}

void ChildGroup::kill_at_deadline(std::size_t id) {
  auto& child = m_children.at(id);
  if (finished(id)) {
    return;
  }
  child.end.killed_at_deadline = true;
  child.end.end_ms = ms_since(child.started);
  signal_kill(child);
}

void ChildGroup::stop(std::size_t id) {
  signal_kill(m_children.at(id));
}

void ChildGroup::settle(std::chrono::milliseconds grace) {
  // Every child's whole group, whether the child still runs or has exited (a zombie until reaped
  // below): helpers a driver library started die with the stage.
  for (auto& child : m_children) {
    signal_kill(child);
  }
  const auto until = Clock::now() + grace;
  for (;;) {
    reap_nonblocking();
    const bool all = std::all_of(m_children.begin(), m_children.end(),
                                 [](const Child& c) { return c.exited || c.pid <= 0; });
    if (all || Clock::now() >= until) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (auto& child : m_children) {
    reap(child);
  }
  if (g_adopt_helpers) {
    sweep_adopted(std::max(until, Clock::now() + std::chrono::milliseconds(20)));
  }
  for (auto& child : m_children) {
    if (child.fd >= 0) {
      read_from(child); // whatever is still buffered in the pipe
      if (child.fd >= 0) {
        ::close(child.fd);
        child.fd = -1;
      }
    }
    forward_stderr(child);
    if (!child.reaped && child.pid > 0) {
      child.end.abandoned = !child.exited; // an exited one is only left to reap later
      abandoned_pids().push_back(child.pid);
      child.pid = -1;
    }
  }
}

void ChildGroup::forward_stderr(Child& child) {
  if (child.err_fd < 0) {
    return;
  }
  // the child's file offset is this descriptor's too (one open file, shared through fork)
  const off_t used = ::lseek(child.err_fd, 0, SEEK_CUR);
  if (used > 0) {
    std::string text(std::min(static_cast<std::size_t>(used), k_max_stderr), '\0');
    const ssize_t n = ::pread(child.err_fd, text.data(), text.size(), 0);
    if (n > 0) {
      text.resize(static_cast<std::size_t>(n));
      if (text.size() >= k_max_stderr) {
        text += fmt::format("\ngpu-preflight: the {} child's output was cut at {} KiB\n",
                            child.label, k_max_stderr / 1024);
      }
      write_all(STDERR_FILENO, text);
    }
  }
  ::close(child.err_fd);
  child.err_fd = -1;
}

ChildEnd ChildGroup::end(std::size_t id) const {
  const auto& child = m_children.at(id);
  ChildEnd end = child.end;
  if (!child.eof && !end.killed_at_deadline) {
    end.end_ms = ms_since(child.started);
  }
  return end;
}

} // namespace gpf::child
