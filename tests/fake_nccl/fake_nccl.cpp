// A fake libnccl.so.2 for the NCCL probe's tests: exports the entry points the probe uses, with the
// probe's own declarations (src/probes/nccl/nccl_api.hpp), and works on the fake libcuda's
// "device" buffers (host memory: tests/fake_cuda). It behaves as these variables say:
//   FAKE_NCCL_LOADED_MARKER=FILE    append a line to FILE when the library is loaded (proves that
//                                   nothing of NCCL ran without --nccl)
//   FAKE_NCCL_VERSION=N             ncclGetVersion's code (default 22105, NCCL 2.21.5)
//   FAKE_NCCL_INIT_HANG=1           ncclCommInitAll never returns (after its first INFO lines)
//   FAKE_NCCL_ALLREDUCE_HANG=1      ncclGroupEnd never returns (the all-reduce hangs)
//   FAKE_NCCL_WRONG_SUM=R           rank R's result is off by one in one element
//   FAKE_NCCL_INIT_ERROR=CODE       ncclCommInitAll returns CODE (an ncclResult_t)
//   FAKE_NCCL_ALLREDUCE_ERROR=CODE  ncclGroupEnd returns CODE
//   FAKE_NCCL_LAST_ERROR=TEXT       what ncclGetLastError says after an error
//   FAKE_NCCL_TRANSPORT=NAME        the transport its INFO lines name (default P2P/CUMEM)
//   FAKE_NCCL_ENV_ECHO=1            print every NCCL_* variable it sees as an INFO line
//   FAKE_NCCL_FLOOD=N               print N INFO lines in the all-reduce (a chatty NCCL)
// With NCCL_DEBUG=INFO it prints INFO lines shaped like NCCL's on stdout: its version, one
// "Channel 00/0 : a[a] -> b[b] via NAME" line per ring connection, "Connected all rings".
#include "probes/nccl/nccl_api.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

extern char** environ;

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using gpf::nccl::cudaStream_t;
using gpf::nccl::ncclComm_t;
using gpf::nccl::ncclDataType_t;
using gpf::nccl::ncclRedOp_t;
using gpf::nccl::ncclResult_t;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

long env_long(const char* name, long fallback) {
  const char* v = env(name);
  return v ? std::strtol(v, nullptr, 10) : fallback;
}

bool info() {
  const char* v = env("NCCL_DEBUG");
  return v && std::strcmp(v, "INFO") == 0;
}

void say(const std::string& text) {
  if (info()) {
    std::printf("fakehost:%d:%d [0] NCCL INFO %s\n", static_cast<int>(::getpid()),
                static_cast<int>(::getpid()), text.c_str());
    std::fflush(stdout);
  }
}

std::string join(std::initializer_list<std::string> parts) {
  std::string out;
  for (const auto& p : parts) {
    out += p;
  }
  return out;
}

[[noreturn]] void hang() {
  for (;;) {
    ::pause();
  }
}

std::string g_last_error;

ncclResult_t fail(long code) {
  const char* text = env("FAKE_NCCL_LAST_ERROR");
  g_last_error = text ? text : "fake NCCL failure";
  return static_cast<ncclResult_t>(code);
}

struct Pending {
  const int* send;
  int* recv;
  std::size_t count;
  int rank;
};

int g_ranks = 0;
bool g_in_group = false;
std::vector<Pending> g_pending;

__attribute__((constructor)) void loaded() {
  if (const char* marker = env("FAKE_NCCL_LOADED_MARKER")) {
    const int fd = ::open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      std::string line = "libnccl loaded by pid ";
      line += std::to_string(::getpid());
      line += '\n';
      [[maybe_unused]] auto n = ::write(fd, line.data(), line.size());
      ::close(fd);
    }
  }
}

ncclResult_t reduce_pending() {
  for (long i = 0, n = env_long("FAKE_NCCL_FLOOD", 0); i < n; ++i) {
    say(join({"Channel ", std::to_string(i % 32), " chatter line ", std::to_string(i)}));
  }
  if (env("FAKE_NCCL_ALLREDUCE_HANG")) {
    hang();
  }
  if (const long code = env_long("FAKE_NCCL_ALLREDUCE_ERROR", 0); code != 0) {
    g_pending.clear();
    return fail(code);
  }
  if (g_pending.empty()) {
    return gpf::nccl::k_success;
  }
  const std::size_t count = g_pending.front().count;
  std::vector<int> sum(count, 0);
  for (const auto& p : g_pending) {
    for (std::size_t i = 0; i < count; ++i) {
      sum[i] += p.send[i];
    }
  }
  const long wrong = env_long("FAKE_NCCL_WRONG_SUM", -1);
  for (const auto& p : g_pending) {
    std::memcpy(p.recv, sum.data(), count * sizeof(int));
    if (p.rank == wrong && count > 7) {
      p.recv[7] += 1;
    }
  }
  g_pending.clear();
  return gpf::nccl::k_success;
}

} // namespace

struct gpf::nccl::NcclCommSt {
  int rank = 0;
  int ranks = 0;
};

FAKE_EXPORT ncclResult_t ncclGetVersion(int* version) {
  *version = static_cast<int>(env_long("FAKE_NCCL_VERSION", 22105));
  return gpf::nccl::k_success;
}

FAKE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  const long version = env_long("FAKE_NCCL_VERSION", 22105);
  say(join({"NCCL version code ", std::to_string(version), " (fake)"}));
  if (env("FAKE_NCCL_ENV_ECHO")) {
    for (char** e = environ; *e; ++e) {
      if (std::strncmp(*e, "NCCL_", 5) == 0) {
        say(std::string("env ") + *e);
      }
    }
  }
  if (env("FAKE_NCCL_INIT_HANG")) {
    say("Bootstrap : Using lo:127.0.0.1<0>");
    hang();
  }
  if (const long code = env_long("FAKE_NCCL_INIT_ERROR", 0); code != 0) {
    return fail(code);
  }
  if (ndev < 1 || comms == nullptr) {
    g_last_error = "ndev must be at least 1";
    return gpf::nccl::k_invalid_argument;
  }
  const char* transport = env("FAKE_NCCL_TRANSPORT");
  for (int r = 0; r < ndev; ++r) {
    comms[r] = new gpf::nccl::NcclCommSt{r, ndev};
    const int dev = devlist ? devlist[r] : r;
    say(join({"comm ", std::to_string(r), " rank ", std::to_string(r), " nRanks ",
              std::to_string(ndev), " nNodes 1 localRanks ", std::to_string(ndev), " cudaDev ",
              std::to_string(dev)}));
  }
  for (int r = 0; ndev > 1 && r < ndev; ++r) {
    const int next = (r + 1) % ndev;
    say(join({"Channel 00/0 : ", std::to_string(r), "[", std::to_string(r), "] -> ",
              std::to_string(next), "[", std::to_string(next), "] via ",
              transport ? transport : "P2P/CUMEM"}));
  }
  say("Connected all rings");
  g_ranks = ndev;
  return gpf::nccl::k_success;
}

FAKE_EXPORT ncclResult_t ncclGroupStart() {
  g_in_group = true;
  return gpf::nccl::k_success;
}

FAKE_EXPORT ncclResult_t ncclGroupEnd() {
  g_in_group = false;
  return reduce_pending();
}

FAKE_EXPORT ncclResult_t ncclAllReduce(const void* send, void* recv, std::size_t count,
                                       ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                       cudaStream_t) {
  if (type != gpf::nccl::k_int32 || op != gpf::nccl::k_sum || comm == nullptr) {
    g_last_error = "the fake sums int32 only";
    return gpf::nccl::k_invalid_argument;
  }
  g_pending.push_back({static_cast<const int*>(send), static_cast<int*>(recv), count, comm->rank});
  // Outside a group each rank would wait for the others: the fake reduces once all have come.
  if (!g_in_group && static_cast<int>(g_pending.size()) == g_ranks) {
    return reduce_pending();
  }
  return gpf::nccl::k_success;
}

FAKE_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case 0:
    return "no error";
  case 1:
    return "unhandled cuda error (fake)";
  case 2:
    return "unhandled system error (fake)";
  case 3:
    return "internal error (fake)";
  case 4:
    return "invalid argument (fake)";
  case 5:
    return "invalid usage (fake)";
  case 6:
    return "remote process exited or there was a network error (fake)";
  default:
    return "unknown result code (fake)";
  }
}

FAKE_EXPORT const char* ncclGetLastError(ncclComm_t) {
  return g_last_error.c_str();
}

FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t, ncclResult_t* error) {
  *error = gpf::nccl::k_success;
  return gpf::nccl::k_success;
}
