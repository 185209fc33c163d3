// The driver stages' SIGINT/SIGTERM handler (interrupt.hpp). Async-signal-safe only: atomics,
// kill, waitpid, nanosleep, write, signal, raise.
#include "probes/child/interrupt.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>

namespace gpf::child {
namespace {

constexpr std::size_t k_slots = 256; // more children than GPUs ever run at once
constexpr int k_reap_rounds = 100;   // x 10 ms: how long the handler waits for the kills
std::array<std::atomic<pid_t>, k_slots> g_children{};
std::atomic<unsigned> g_stages{0}; // DriverStage bits of the guards alive

void write_stderr(const char* text) {
  const std::size_t size = std::strlen(text);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(STDERR_FILENO, text + done, size - done);
    if (n <= 0 && errno != EINTR) {
      return;
    }
    done += n > 0 ? static_cast<std::size_t>(n) : 0;
  }
}

// Reaps what it can without blocking; true when no tracked child is left.
bool reap_tracked() {
  bool left = false;
  for (auto& slot : g_children) {
    const pid_t pid = slot.load();
    if (pid <= 0) {
      continue;
    }
    const pid_t r = ::waitpid(pid, nullptr, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) {
      slot.store(0);
    } else {
      left = true;
    }
  }
  return !left;
}

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;
  bool any = false;
  for (auto& slot : g_children) {
    if (const pid_t pid = slot.load(); pid > 0) {
      ::kill(-pid, SIGKILL); // its process group: helpers the driver started
      ::kill(pid, SIGKILL);
      any = true;
    }
  }
  bool all_reaped = reap_tracked();
  for (int round = 0; !all_reaped && round < k_reap_rounds; ++round) {
    const timespec pause{0, 10 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
    all_reaped = reap_tracked();
  }
  write_stderr(sig == SIGINT ? "gpu-preflight: interrupted (SIGINT) during the "
                             : "gpu-preflight: terminated (SIGTERM) during the ");
  // "CUDA probe", "NVML and CUDA probes": static strings only (async-signal-safe)
  const unsigned stages = g_stages.load();
  const char* names[3] = {};
  int count = 0;
  for (const auto& [bit, name] :
       {std::pair{DriverStage::nvml, "NVML"}, std::pair{DriverStage::cuda, "CUDA"},
        std::pair{DriverStage::nccl, "NCCL"}}) {
    if ((stages & static_cast<unsigned>(bit)) != 0) {
      names[count++] = name;
    }
  }
  for (int i = 0; i < count; ++i) {
    write_stderr(i == 0 ? "" : (i + 1 == count ? " and " : ", "));
    write_stderr(names[i]);
  }
  write_stderr(count == 0 ? "driver probe; no verdict"
                          : (count == 1 ? " probe; no verdict" : " probes; no verdict"));
  if (any) {
    write_stderr(
        all_reaped
            ? "; its child processes were stopped and reaped\n"
            : "; its child processes were killed, some stuck in the driver were abandoned\n");
  } else {
    write_stderr("\n");
  }
  errno = saved_errno;
  // Die of the same signal (the caller sees 128+N); it is delivered when this handler returns.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

bool install_over_default(int sig, struct sigaction& old) {
  if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
      (old.sa_flags & SA_SIGINFO) != 0) {
    return false;
  }
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  return ::sigaction(sig, &action, nullptr) == 0;
}

} // namespace

void interrupt_track(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) {
      return;
    }
  }
  // Full: the child still dies with this process through PR_SET_PDEATHSIG.
}

void interrupt_untrack(pid_t pid) {
  for (auto& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) {
      return;
    }
  }
}

InterruptGuard::InterruptGuard(DriverStage stage) : m_stage(static_cast<unsigned>(stage)) {
  g_stages.fetch_or(m_stage);
  m_int = install_over_default(SIGINT, m_old_int);
  m_term = install_over_default(SIGTERM, m_old_term);
}

InterruptGuard::~InterruptGuard() {
  g_stages.fetch_and(~m_stage);
  if (m_int) {
    ::sigaction(SIGINT, &m_old_int, nullptr);
  }
  if (m_term) {
    ::sigaction(SIGTERM, &m_old_term, nullptr);
  }
}

} // namespace gpf::child
