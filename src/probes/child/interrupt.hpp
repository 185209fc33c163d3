#pragma once
// SIGINT / SIGTERM to gpu-preflight while the CUDA, NVML or NCCL children run: the children are
// SIGKILLed and reaped (or abandoned after a short bound, when stuck in the driver), one clear line
// naming the stages that were running goes to stderr, and the process then dies of the same signal
// (exit status 128+N in a shell). Without this the children would only die through
// PR_SET_PDEATHSIG, silently, possibly as zombies.
#include <sys/types.h>

#include <csignal>

namespace gpf::child {

// Children the handler must stop; the runner adds each child at fork and removes it once reaped.
void interrupt_track(pid_t pid);
void interrupt_untrack(pid_t pid);

// The driver stages a guard stands for, named in the handler's line.
enum class DriverStage : unsigned { cuda = 1, nvml = 2, nccl = 4 };

// Installs the handler for its lifetime, only over the default disposition: an ignored signal
// (nohup) stays ignored, and a handler someone else installed (a test framework's) is kept. The
// stage counts as running for the guard's lifetime, also when an outer guard owns the handler.
class InterruptGuard {
public:
  explicit InterruptGuard(DriverStage stage);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
  bool m_int = false;
  bool m_term = false;
  unsigned m_stage;
};

} // namespace gpf::child
