// The NCCL child's work and the fold of its lines. Every step is announced before it starts, so the
// parent can name the step a hung child is stuck in (init or all_reduce); every NCCL error carries
// nccl.h's name for the code and the library's own words (ncclGetErrorString, ncclGetLastError).
#include "probes/nccl/nccl_child.hpp"
#include "gpf/util/plural.hpp"

#include "gpf/util/json_read.hpp"
#include "gpf/util/text.hpp"
#include "probes/cuda/driver_api.hpp"
#include "probes/cuda/protocol.hpp"
#include "probes/nccl/nccl_api.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

extern char** environ; // POSIX: the child's own environment

namespace gpf::nccl {
namespace {

using cuda::CUcontext;
using cuda::CUdevice;
using cuda::CUdeviceptr;
using cuda::CUresult;
using cuda::Event;
using cuda::EventKind;

constexpr std::string_view k_version_event = "nccl_version";
constexpr std::string_view k_log_event = "nccl_log";
constexpr std::string_view k_log_dropped_event = "nccl_log_dropped";
// NCCL's lines forwarded to the parent, at most: more (a flood of INFO lines, which the checker
// itself asked for with NCCL_DEBUG=INFO) would pass the child protocol's caps (20000 lines, 4 MiB)
// and get the child killed mid-step, read as NCCL's failure. The rest are counted.
constexpr std::size_t k_forwarded_lines = 2000;
constexpr std::size_t k_log_line_cap = 1024;

struct Outcome {
  bool ok = true;
  std::optional<int> code;
  std::string name;
  std::string text;
};

Outcome failure(std::string name, std::string text) {
  return {false, std::nullopt, std::move(name), std::move(text)};
}

Outcome cuda_check(const cuda::DriverApi& api, std::string_view call, CUresult result) {
  if (result == cuda::k_success) {
    return {};
  }
  const std::string what = cuda::error_text(api, result);
  return {false, result, cuda::error_name(api, result),
          what.empty() ? std::string(call) : fmt::format("{}: {}", call, what)};
}

// An NCCL call's failure in NCCL's words: the code's string, then the last error's detail.
Outcome nccl_check(const NcclApi& api, std::string_view call, ncclResult_t result) {
  if (result == k_success) {
    return {};
  }
  const char* words = api.ncclGetErrorString ? api.ncclGetErrorString(result) : nullptr;
  std::string text = fmt::format("{}: {}", call, words ? to_valid_utf8(words) : "(no message)");
  if (api.ncclGetLastError) {
    if (const char* last = api.ncclGetLastError(nullptr); last && *last) {
      text += fmt::format(" ({})", to_valid_utf8(last));
    }
  }
  return {false, result, result_name(result), std::move(text)};
}

class Steps {
public:
  explicit Steps(child::LineWriter& out) : m_out(out) {}

  template <class Fn> bool run(const std::string& name, Fn&& fn) {
    Event begin;
    begin.kind = EventKind::begin;
    begin.step.name = name;
    cuda::emit_event(m_out, begin);
    const auto start = child::Clock::now();
    const Outcome o = fn();
    Event end;
    end.kind = EventKind::end;
    end.step.name = name;
    end.step.ok = o.ok;
    end.step.duration_ms =
        std::chrono::duration<double, std::milli>(child::Clock::now() - start).count();
    end.step.error_code = o.code;
    end.step.error_name = o.name;
    end.step.error_text = o.text;
    cuda::emit_event(m_out, end);
    return o.ok;
  }

  void emit(EventKind kind, std::string text, bool required = false) {
    Event e;
    e.kind = kind;
    e.text = std::move(text);
    e.required = required;
    cuda::emit_event(m_out, e);
  }
  void version(int code) {
    nlohmann::json j{{"event", k_version_event}, {"value", code}};
    m_out.write_line(j.dump());
  }
  child::LineWriter& out() { return m_out; }

private:
  child::LineWriter& m_out;
};

// NCCL prints its INFO lines on stdout (NCCL_DEBUG_FILE unset): stdout becomes a pipe whose lines
// a thread forwards as nccl_log events while NCCL runs. stop() closes stdout and waits a little for
// the last lines.
class StdoutForwarder {
public:
  explicit StdoutForwarder(child::LineWriter& out) : m_out(out) {}
  StdoutForwarder(const StdoutForwarder&) = delete;
  StdoutForwarder& operator=(const StdoutForwarder&) = delete;

  // False when stdout cannot be redirected: NCCL's lines then go where the child's stdout goes.
  bool start() {
    int fds[2];
    if (::pipe(fds) != 0) {
      return false;
    }
    std::fflush(stdout);
    if (::dup2(fds[1], STDOUT_FILENO) < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return false;
    }
    ::close(fds[1]);
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // each line leaves the process as it is printed
    const int read_fd = fds[0];
    std::packaged_task<void()> task([this, read_fd] { forward(read_fd); });
    m_finished = task.get_future();
    try {
      std::thread(std::move(task)).detach();
    } catch (const std::system_error&) {
      ::close(read_fd);
      return false;
    }
    return true;
  }

  void stop() {
    if (!m_finished.valid()) {
      return;
    }
    std::fflush(stdout);
    ::close(STDOUT_FILENO); // the pipe's only writer: the thread reads to its end
    m_finished.wait_for(std::chrono::milliseconds(500));
  }

private:
  void forward(int fd) {
    std::string partial;
    char buffer[4096];
    for (;;) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        break;
      }
      partial.append(buffer, static_cast<std::size_t>(n));
      std::size_t start = 0;
      for (std::size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
        send(std::string_view(partial).substr(start, nl - start));
      }
      partial.erase(0, start);
      if (partial.size() > k_log_line_cap) {
        send(partial);
        partial.clear();
      }
    }
    if (!partial.empty()) {
      send(partial);
    }
    if (m_dropped > 0) {
      const nlohmann::json j{{"event", k_log_dropped_event}, {"count", m_dropped}};
      m_out.write_line(j.dump());
    }
    ::close(fd);
  }
  void send(std::string_view line) {
    if (trim(line).empty()) {
      return; // NCCL separates its warnings with blank lines
    }
    if (m_sent == k_forwarded_lines) {
      ++m_dropped;
      return;
    }
    ++m_sent;
    nlohmann::json j{{"event", k_log_event}, {"text", quote_evidence(line, k_log_line_cap)}};
    m_out.write_line(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  std::size_t m_sent = 0;
  std::size_t m_dropped = 0;

  child::LineWriter& m_out;
  std::future<void> m_finished;
};

struct Gpu {
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUdeviceptr send = 0;
  CUdeviceptr recv = 0;
};

// "buffers": a context on each GPU, a send buffer holding the rank's pattern and a receive buffer
// filled with a value no sum produces.
Outcome prepare(const cuda::DriverApi& api, int ranks, std::vector<Gpu>& gpus) {
  int count = 0;
  if (auto o = cuda_check(api, "cuDeviceGetCount", api.cuDeviceGetCount(&count)); !o.ok) {
    return o;
  }
  if (count < ranks) {
    return failure("NO_DEVICE_VISIBLE",
                   fmt::format("cuDeviceGetCount: {} visible, expected {}",
                               counted(static_cast<std::size_t>(count), "device"), ranks));
  }
  const std::size_t bytes = k_elements * sizeof(int);
  std::vector<int> host(k_elements);
  gpus.assign(static_cast<std::size_t>(ranks), Gpu{});
  for (int r = 0; r < ranks; ++r) {
    Gpu& g = gpus[static_cast<std::size_t>(r)];
    if (auto o = cuda_check(api, "cuDeviceGet", api.cuDeviceGet(&g.device, r)); !o.ok) {
      return o;
    }
    if (auto o = cuda_check(api, "cuDevicePrimaryCtxRetain",
                            api.cuDevicePrimaryCtxRetain(&g.context, g.device));
        !o.ok) {
      return o;
    }
    if (auto o = cuda_check(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(g.context)); !o.ok) {
      return o;
    }
    if (auto o = cuda_check(api, "cuMemAlloc", api.cuMemAlloc(&g.send, bytes)); !o.ok) {
      return o;
    }
    if (auto o = cuda_check(api, "cuMemAlloc", api.cuMemAlloc(&g.recv, bytes)); !o.ok) {
      return o;
    }
    for (std::size_t i = 0; i < k_elements; ++i) {
      host[i] = rank_value(r, i);
    }
    if (auto o = cuda_check(api, "cuMemcpyHtoD", api.cuMemcpyHtoD(g.send, host.data(), bytes));
        !o.ok) {
      return o;
    }
    if (auto o = cuda_check(api, "cuMemsetD8", api.cuMemsetD8(g.recv, 0xff, bytes)); !o.ok) {
      return o;
    }
  }
  return {};
}

Outcome all_reduce(const cuda::DriverApi& capi, const NcclApi& api, std::vector<Gpu>& gpus,
                   const std::vector<ncclComm_t>& comms) {
  if (auto o = nccl_check(api, "ncclGroupStart", api.ncclGroupStart()); !o.ok) {
    return o;
  }
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    capi.cuCtxSetCurrent(gpus[r].context);
    const auto result = api.ncclAllReduce(reinterpret_cast<const void*>(gpus[r].send),
                                          reinterpret_cast<void*>(gpus[r].recv), k_elements,
                                          k_int32, k_sum, comms[r], nullptr);
    if (result != k_success) {
      api.ncclGroupEnd();
      return nccl_check(api, "ncclAllReduce", result);
    }
  }
  if (auto o = nccl_check(api, "ncclGroupEnd", api.ncclGroupEnd()); !o.ok) {
    return o;
  }
  // The kernels run on each GPU's default stream: the step ends when every GPU has finished.
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    capi.cuCtxSetCurrent(gpus[r].context);
    if (auto o = cuda_check(capi, "cuCtxSynchronize", capi.cuCtxSynchronize()); !o.ok) {
      return o;
    }
    if (api.ncclCommGetAsyncError) {
      ncclResult_t async = k_success;
      if (api.ncclCommGetAsyncError(comms[r], &async) == k_success && async != k_success) {
        return nccl_check(api, "ncclCommGetAsyncError", async);
      }
    }
  }
  return {};
}

Outcome verify(const cuda::DriverApi& api, const std::vector<Gpu>& gpus) {
  const int ranks = static_cast<int>(gpus.size());
  std::vector<int> host(k_elements);
  for (std::size_t r = 0; r < gpus.size(); ++r) {
    api.cuCtxSetCurrent(gpus[r].context);
    if (auto o = cuda_check(api, "cuMemcpyDtoH",
                            api.cuMemcpyDtoH(host.data(), gpus[r].recv, host.size() * sizeof(int)));
        !o.ok) {
      return o;
    }
    for (std::size_t i = 0; i < k_elements; ++i) {
      if (host[i] != expected_sum(ranks, i)) {
        return failure("WRONG_SUM",
                       fmt::format("rank {}: element {} of {} is {}, the sum over {} ranks is {}",
                                   r, i, k_elements, host[i], ranks, expected_sum(ranks, i)));
      }
    }
  }
  return {};
}

// The child's own NCCL_* variables but NCCL_DEBUG: under --root the checker's environment is not
// the job's, and NCCL's defaults must not pick up the checker's settings either.
void drop_nccl_variables() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    if (starts_with(name, "NCCL_") && name != "NCCL_DEBUG") {
      names.emplace_back(name);
    }
  }
  for (const auto& name : names) {
    ::unsetenv(name.c_str());
  }
}

std::string one_line(std::string_view s) {
  return std::string(trim(s));
}

} // namespace

int rank_value(int rank, std::size_t i) {
  return (rank + 1) * static_cast<int>(i % 1021 + 1);
}

int expected_sum(int ranks, std::size_t i) {
  return ranks * (ranks + 1) / 2 * static_cast<int>(i % 1021 + 1);
}

void nccl_child(const std::string& libcuda, const std::string& libnccl, int ranks,
                bool keep_nccl_env, child::LineWriter& out) {
  if (!keep_nccl_env) {
    drop_nccl_variables();
  }
  Steps steps(out);
  StdoutForwarder forwarder(out);
  const auto finish = [&] {
    forwarder.stop();
    Event e;
    e.kind = EventKind::done;
    cuda::emit_event(out, e);
  };
  std::unique_ptr<cuda::LoadedDriver> driver;
  const bool cuda_loaded = steps.run("load_cuda", [&] {
    cuda::LoadResult loaded = cuda::load_driver(libcuda);
    if (!loaded.loaded) {
      return failure("LOAD_FAILED", loaded.error);
    }
    if (!loaded.loaded->missing_required.empty()) {
      return failure(
          "SYMBOL_MISSING",
          fmt::format("{} lacks {}", libcuda, fmt::join(loaded.loaded->missing_required, ", ")));
    }
    driver = std::move(loaded.loaded);
    return Outcome{};
  });
  if (!cuda_loaded) {
    return finish();
  }
  const cuda::DriverApi& capi = driver->api;
  std::vector<Gpu> gpus;
  if (!steps.run("cuInit", [&] { return cuda_check(capi, "cuInit", capi.cuInit(0)); }) ||
      !steps.run("buffers", [&] { return prepare(capi, ranks, gpus); })) {
    return finish();
  }

  forwarder.start();
  std::unique_ptr<LoadedNccl> nccl;
  const bool nccl_loaded = steps.run("load_nccl", [&] {
    LoadResult loaded = load_nccl(libnccl);
    if (!loaded.loaded) {
      steps.emit(EventKind::load_error, loaded.error);
      return failure("LOAD_FAILED", loaded.error);
    }
    nccl = std::move(loaded.loaded);
    if (!nccl->path.empty()) {
      steps.emit(EventKind::library, nccl->path);
    }
    for (const auto& name : nccl->missing_required) {
      steps.emit(EventKind::missing_symbol, name, true);
    }
    if (!nccl->missing_required.empty()) {
      return failure("SYMBOL_MISSING",
                     fmt::format("{} lacks {}", libnccl, fmt::join(nccl->missing_required, ", ")));
    }
    return Outcome{};
  });
  if (!nccl_loaded) {
    return finish();
  }
  const NcclApi& api = nccl->api;
  const bool versioned = steps.run("ncclGetVersion", [&] {
    int code = 0;
    auto o = nccl_check(api, "ncclGetVersion", api.ncclGetVersion(&code));
    if (o.ok) {
      steps.version(code);
    }
    return o;
  });
  std::vector<ncclComm_t> comms(gpus.size(), nullptr);
  std::vector<int> devlist(gpus.size());
  for (std::size_t r = 0; r < devlist.size(); ++r) {
    devlist[r] = static_cast<int>(r);
  }
  if (!versioned || !steps.run(std::string(k_nccl_init_step), [&] {
        return nccl_check(
            api, "ncclCommInitAll",
            api.ncclCommInitAll(comms.data(), static_cast<int>(comms.size()), devlist.data()));
      })) {
    return finish();
  }
  if (steps.run(std::string(k_nccl_all_reduce_step),
                [&] { return all_reduce(capi, api, gpus, comms); })) {
    steps.run(std::string(k_nccl_check_step), [&] { return verify(capi, gpus); });
  }
  // No ncclCommDestroy: the child exits right after, and a destroy may itself block.
  finish();
}

std::optional<std::string> connection_of(std::string_view line) {
  const auto via = line.find(" via ");
  const auto channel = line.find("Channel ");
  if (via == std::string_view::npos || channel == std::string_view::npos || channel > via) {
    return std::nullopt;
  }
  const auto colon = line.find(" : ", channel);
  if (colon == std::string_view::npos || colon > via) {
    return std::nullopt;
  }
  return one_line(line.substr(colon + 3));
}

void fold_nccl_transcript(const std::vector<child::TimedLine>& lines, const child::ChildEnd& end,
                          NcclFacts& f) {
  std::vector<child::TimedLine> protocol;
  for (const auto& line : lines) {
    const auto j = nlohmann::json::parse(line.text, nullptr, false);
    const JsonIn in(j, "", k_log_line_cap * 2);
    const auto event = j.is_object() ? in["event"].lenient<std::string>() : std::nullopt;
    if (event == k_log_event) {
      const std::string text = in["text"].lenient<std::string>().value_or("");
      if (f.log.size() < k_nccl_log_lines) {
        f.log.push_back(text);
      } else {
        ++f.log_lines_dropped;
      }
      if (auto c = connection_of(text);
          c && std::find(f.transports.begin(), f.transports.end(), *c) == f.transports.end() &&
          f.transports.size() < k_nccl_log_lines) {
        f.transports.push_back(*c);
      }
    } else if (event == k_log_dropped_event) {
      f.log_lines_dropped += in["count"].lenient<std::size_t>().value_or(0);
    } else if (event == k_version_event) {
      f.version_code = in["value"].lenient<int>();
      if (f.version_code) {
        f.version = version_text(*f.version_code);
      }
    } else {
      protocol.push_back(line);
    }
  }
  const cuda::Transcript t = cuda::fold_transcript(protocol, end);
  for (const auto& s : t.steps) {
    f.steps.push_back(
        {s.name, s.ok, s.timed_out, s.duration_ms, s.error_code, s.error_name, s.error_text});
  }
  f.library_path = t.library_path;
  f.load_error = t.load_error;
  f.missing_symbols = t.missing_required;
  f.deadline_hit = f.deadline_hit || t.timed_out;
  if (!t.done || !t.invalid_lines.empty()) {
    f.child_error = t.child_error;
  }
  // A child that ended between two steps (or never began one) gets a step that says so.
  if (!t.done && t.all_steps_ok()) {
    NcclStep s;
    s.name = "child";
    s.timed_out = t.timed_out;
    if (!s.timed_out) {
      s.error_name = "CHILD_DIED";
      s.error_text = t.child_error;
    }
    f.steps.push_back(std::move(s));
  }
  const auto passed = [&](std::string_view name) {
    const NcclStep* s = f.step(name);
    return s && s->ok;
  };
  f.ok = t.done && t.all_steps_ok() && passed(k_nccl_init_step) && passed(k_nccl_all_reduce_step) &&
         passed(k_nccl_check_step);
}

} // namespace gpf::nccl
