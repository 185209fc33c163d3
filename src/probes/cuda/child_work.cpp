// The CUDA children's work. Every step is announced before it starts, so the parent can name the
// step a hung child is stuck in; every CUresult failure carries the call and the driver's words.
#include "probes/cuda/child_work.hpp"
#include "gpf/util/plural.hpp"

#include "gpf/util/text.hpp"
#include "probes/cuda/driver_api.hpp"
#include "probes/cuda/kernels.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>

namespace gpf::cuda {
namespace {

struct Outcome {
  bool ok = true;
  std::optional<int> code;
  std::string name;
  std::string text;
};

Outcome check(const DriverApi& api, std::string_view call, CUresult result) {
  if (result == k_success) {
    return {};
  }
  const std::string what = error_text(api, result);
  return {false, result, error_name(api, result),
          what.empty() ? std::string(call) : fmt::format("{}: {}", call, what)};
}

Outcome failure(std::string name, std::string text) {
  return {false, std::nullopt, std::move(name), std::move(text)};
}

// A byte pattern that differs per position and per test, so a stale or shifted buffer shows.
void fill_pattern(std::vector<unsigned char>& bytes, unsigned seed) {
  // 131 is odd, so the bytes repeat every 256: build one tile, then copy it (fast in any build).
  for (std::size_t i = 0; i < 256 && i < bytes.size(); ++i) {
    bytes[i] = static_cast<unsigned char>((i * 131 + seed * 29 + 7) & 0xff);
  }
  for (std::size_t done = 256; done < bytes.size(); done *= 2) {
    std::memcpy(bytes.data() + done, bytes.data(), std::min(done, bytes.size() - done));
  }
}

std::vector<unsigned char> pattern(unsigned seed) {
  std::vector<unsigned char> bytes(k_test_bytes);
  fill_pattern(bytes, seed);
  return bytes;
}

Outcome compare(const std::vector<unsigned char>& wrote, const std::vector<unsigned char>& read) {
  if (wrote.size() == read.size() && std::memcmp(wrote.data(), read.data(), wrote.size()) == 0) {
    return {};
  }
  const auto [w, r] = std::mismatch(wrote.begin(), wrote.end(), read.begin(), read.end());
  const auto i = static_cast<std::size_t>(w - wrote.begin());
  return failure("DATA_MISMATCH",
                 fmt::format("byte {} of {} read back as 0x{:02x}, expected 0x{:02x}", i,
                             wrote.size(), r == read.end() ? 0 : *r, w == wrote.end() ? 0 : *w));
}

class Steps {
public:
  explicit Steps(LineWriter& out) : m_out(out) {}

  // Announces the step, runs it, reports its outcome and duration; true when it passed.
  template <class Fn> bool run(const std::string& name, Fn&& fn) {
    announce(name);
    const auto start = Clock::now();
    const Outcome o = fn();
    Event end;
    end.kind = EventKind::end;
    end.step.name = name;
    end.step.ok = o.ok;
    end.step.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    end.step.error_code = o.code;
    end.step.error_name = o.name;
    end.step.error_text = o.text;
    emit_event(m_out, end);
    return o.ok;
  }

  void emit(const Event& e) { emit_event(m_out, e); }

  // The start of a step, of a pair of GPUs where it names one: what a deadline finds in progress.
  void announce(const std::string& name, std::optional<std::pair<int, int>> pair = std::nullopt) {
    Event begin;
    begin.kind = EventKind::begin;
    begin.step.name = name;
    begin.pair = pair;
    emit_event(m_out, begin);
  }

  void done() {
    Event e;
    e.kind = EventKind::done;
    emit_event(m_out, e);
  }

private:
  LineWriter& m_out;
};

Event text_event(EventKind kind, std::string text, bool required = false) {
  Event e;
  e.kind = kind;
  e.text = std::move(text);
  e.required = required;
  return e;
}

// The "load" step: dlopen and dlsym. Null when the probe cannot go on.
std::unique_ptr<LoadedDriver> load_step(const std::string& library, Steps& steps) {
  std::unique_ptr<LoadedDriver> driver;
  steps.run("load", [&] {
    LoadResult loaded = load_driver(library);
    if (!loaded.loaded) {
      steps.emit(text_event(EventKind::load_error, loaded.error));
      return failure("LOAD_FAILED", loaded.error);
    }
    driver = std::move(loaded.loaded);
    if (!driver->path.empty()) {
      steps.emit(text_event(EventKind::library, driver->path));
    }
    for (const auto& name : driver->missing_required) {
      steps.emit(text_event(EventKind::missing_symbol, name, true));
    }
    for (const auto& name : driver->missing_optional) {
      steps.emit(text_event(EventKind::missing_symbol, name, false));
    }
    if (!driver->missing_required.empty()) {
      return failure("SYMBOL_MISSING", fmt::format("{} lacks {}", library,
                                                   fmt::join(driver->missing_required, ", ")));
    }
    return Outcome{};
  });
  if (driver && !driver->missing_required.empty()) {
    driver.reset();
  }
  return driver;
}

// The "cuInit" step. cuDriverGetVersion is asked first (best effort) so that a failing cuInit
// (803, 804) can still be reported with the library's CUDA version.
bool init_step(const DriverApi& api, Steps& steps) {
  return steps.run("cuInit", [&] {
    int version = 0;
    if (api.cuDriverGetVersion && api.cuDriverGetVersion(&version) == k_success) {
      Event e;
      e.kind = EventKind::driver_version;
      e.value = version;
      steps.emit(e);
    }
    return check(api, "cuInit", api.cuInit(0));
  });
}

std::string bus_id_of(const DriverApi& api, CUdevice device, Outcome& outcome) {
  char bus[64] = {};
  outcome = check(api, "cuDeviceGetPCIBusId", api.cuDeviceGetPCIBusId(bus, sizeof bus - 1, device));
  bus[sizeof bus - 1] = '\0';
  return normalize_bus_id(bus).value_or(to_valid_utf8(bus));
}

// Optional queries: a field the library cannot give stays unknown.
void describe(const DriverApi& api, CUdevice device, CudaDevice& d) {
  if (api.cuDeviceGetName) {
    char name[256] = {};
    if (api.cuDeviceGetName(name, sizeof name - 1, device) == k_success) {
      name[sizeof name - 1] = '\0';
      d.name = to_valid_utf8(name);
    }
  }
  if (api.cuDeviceGetUuid_v2 || api.cuDeviceGetUuid) {
    CUuuid uuid{};
    if (api.get_uuid(&uuid, device) == k_success) {
      d.uuid = format_uuid(uuid);
    }
  }
  if (api.cuDeviceTotalMem) {
    std::size_t bytes = 0;
    if (api.cuDeviceTotalMem(&bytes, device) == k_success) {
      d.total_mem_bytes = bytes;
    }
  }
  if (api.cuDeviceGetAttribute) {
    int major = 0;
    int minor = 0;
    int mode = 0;
    if (api.cuDeviceGetAttribute(&major, k_attr_cc_major, device) == k_success &&
        api.cuDeviceGetAttribute(&minor, k_attr_cc_minor, device) == k_success) {
      d.cc_major = major;
      d.cc_minor = minor;
    }
    if (api.cuDeviceGetAttribute(&mode, k_attr_compute_mode, device) == k_success) {
      d.compute_mode = mode;
    }
  }
}

Event device_event(CudaDevice d) {
  Event e;
  e.kind = EventKind::device;
  e.device = std::move(d);
  return e;
}

// "device_get": the child sees `expected` devices and learns their handles.
bool device_get_step(const DriverApi& api, Steps& steps, std::vector<CUdevice>& devices,
                     const std::vector<int>& ordinals, bool describe_first) {
  return steps.run("device_get", [&] {
    int count = 0;
    if (auto o = check(api, "cuDeviceGetCount", api.cuDeviceGetCount(&count)); !o.ok) {
      return o;
    }
    const int needed =
        ordinals.empty() ? 0 : *std::max_element(ordinals.begin(), ordinals.end()) + 1;
    if (count < needed) {
      return failure("NO_DEVICE_VISIBLE",
                     fmt::format("cuDeviceGetCount: {} visible to this child, expected {}",
                                 counted(static_cast<std::size_t>(count), "device"), needed));
    }
    devices.assign(ordinals.size(), 0);
    for (std::size_t k = 0; k < ordinals.size(); ++k) {
      if (auto o = check(api, "cuDeviceGet", api.cuDeviceGet(&devices[k], ordinals[k])); !o.ok) {
        return o;
      }
    }
    if (describe_first) {
      CudaDevice d;
      Outcome o;
      d.bus_id = bus_id_of(api, devices[0], o);
      if (!o.ok) {
        return o;
      }
      describe(api, devices[0], d);
      steps.emit(device_event(std::move(d)));
    }
    return Outcome{};
  });
}

Outcome context_on(const DriverApi& api, CUdevice device, CUcontext& context) {
  if (auto o =
          check(api, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&context, device));
      !o.ok) {
    return o;
  }
  return check(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(context));
}

// The host side of the multi-GPU test's copies, made once: fresh buffers for each of n*(n-1)
// pairs would cost a page fault per page each time, more than the copies themselves.
struct HostScratch {
  std::vector<unsigned char> wrote = std::vector<unsigned char>(k_test_bytes);
  std::vector<unsigned char> read = std::vector<unsigned char>(k_test_bytes);
};

// One ordered pair of the multi-GPU test: peer access where allowed, then a verified copy.
Outcome peer_copy(const DriverApi& api, std::size_t i, std::size_t j,
                  const std::vector<CUdevice>& devices, const std::vector<CUcontext>& contexts,
                  const std::vector<CUdeviceptr>& buffers, HostScratch& host, bool& can_access) {
  int can = 0;
  if (auto o = check(api, "cuDeviceCanAccessPeer",
                     api.cuDeviceCanAccessPeer(&can, devices[i], devices[j]));
      !o.ok) {
    return o;
  }
  can_access = can != 0;
  if (auto o = check(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(contexts[i])); !o.ok) {
    return o;
  }
  if (can_access) {
    const CUresult r = api.cuCtxEnablePeerAccess(contexts[j], 0);
    if (r != k_success && r != k_error_peer_access_already_enabled) {
      return check(api, "cuCtxEnablePeerAccess", r);
    }
  }
  auto& wrote = host.wrote;
  fill_pattern(wrote, static_cast<unsigned>(i * 64 + j + 1));
  if (auto o = check(api, "cuMemcpyHtoD", api.cuMemcpyHtoD(buffers[i], wrote.data(), wrote.size()));
      !o.ok) {
    return o;
  }
  if (auto o =
          check(api, "cuMemcpyPeer",
                api.cuMemcpyPeer(buffers[j], contexts[j], buffers[i], contexts[i], wrote.size()));
      !o.ok) {
    return o;
  }
  if (auto o = check(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(contexts[j])); !o.ok) {
    return o;
  }
  if (auto o = check(api, "cuCtxSynchronize", api.cuCtxSynchronize()); !o.ok) {
    return o;
  }
  auto& read = host.read;
  if (auto o = check(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(read.data(), buffers[j], read.size()));
      !o.ok) {
    return o;
  }
  return compare(wrote, read);
}

// GB/s (1e9 bytes per second) of `bytes` copied in `ms`, to 1 MB/s: finer is noise (an event's
// resolution is about half a microsecond), and round figures replay and compare exactly.
// Rounded by an integer cast, not std::round: that one comes from libm, which the binary does not
// link (package.links-libc-only).
double gbps_of(std::size_t bytes, float ms) {
  const double mbps = static_cast<double>(bytes) / (static_cast<double>(ms) * 1e3);
  if (!(mbps >= 0) || mbps > 1e15) {
    return mbps / 1e3; // not a figure to round (no time measured, NaN)
  }
  return static_cast<double>(static_cast<std::uint64_t>(mbps + 0.5)) / 1e3;
}

// Two events on the current context, destroyed with the object.
class EventPair {
public:
  explicit EventPair(const DriverApi& api) : m_api(api) {}
  ~EventPair() {
    for (CUevent e : {start, end}) {
      if (e) {
        m_api.cuEventDestroy(e);
      }
    }
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;

  Outcome create() {
    if (auto o = check(m_api, "cuEventCreate", m_api.cuEventCreate(&start, 0)); !o.ok) {
      return o;
    }
    return check(m_api, "cuEventCreate", m_api.cuEventCreate(&end, 0));
  }

  // Times `copy` (one asynchronous copy on the default stream) `repeats` times between the two
  // events; best holds the highest figure. The events time the GPU's work, not this thread's.
  template <class Copy>
  Outcome best_of(int repeats, std::size_t bytes, Copy&& copy, std::optional<double>& best) {
    for (int r = 0; r < repeats; ++r) {
      if (auto o = check(m_api, "cuEventRecord", m_api.cuEventRecord(start, nullptr)); !o.ok) {
        return o;
      }
      if (auto o = copy(); !o.ok) {
        return o;
      }
      if (auto o = check(m_api, "cuEventRecord", m_api.cuEventRecord(end, nullptr)); !o.ok) {
        return o;
      }
      if (auto o = check(m_api, "cuEventSynchronize", m_api.cuEventSynchronize(end)); !o.ok) {
        return o;
      }
      float ms = 0;
      if (auto o = check(m_api, "cuEventElapsedTime", m_api.cuEventElapsedTime(&ms, start, end));
          !o.ok) {
        return o;
      }
      if (ms > 0 && std::isfinite(ms)) {
        const double g = gbps_of(bytes, ms);
        best = best ? std::max(*best, g) : g;
      }
    }
    return {};
  }

  CUevent start = nullptr;
  CUevent end = nullptr;

private:
  const DriverApi& m_api;
};

constexpr int k_out_of_memory = 2; // CUDA_ERROR_OUT_OF_MEMORY

// The "bandwidth" step on the current context: host -> device, then device -> host, from pinned
// memory. Memory that cannot be had (pinned host memory, or device memory another process took)
// leaves the figures unmeasured, with the reason in `result.text`; a failing copy or event is the
// GPU's failure.
Outcome host_bandwidth(const DriverApi& api, const BandwidthRequest& bw, Event& result) {
  void* host = nullptr;
  if (const CUresult r = api.cuMemAllocHost(&host, bw.bytes); r != k_success) {
    result.text = fmt::format("cuMemAllocHost of {} MiB: {}", bw.bytes >> 20, error_name(api, r));
    return {};
  }
  CUdeviceptr device = 0;
  Outcome o;
  if (const CUresult r = api.cuMemAlloc(&device, bw.bytes); r != k_success) {
    if (r == k_out_of_memory) {
      result.text = fmt::format("cuMemAlloc of {} MiB: {}", bw.bytes >> 20, error_name(api, r));
    } else {
      o = check(api, "cuMemAlloc", r);
    }
    api.cuMemFreeHost(host);
    return o;
  }
  {
    EventPair events(api);
    o = events.create();
    if (o.ok) {
      o = events.best_of(
          bw.repeats, bw.bytes,
          [&] {
            return check(api, "cuMemcpyHtoDAsync",
                         api.cuMemcpyHtoDAsync(device, host, bw.bytes, nullptr));
          },
          result.h2d_gbps);
    }
    if (o.ok) {
      o = events.best_of(
          bw.repeats, bw.bytes,
          [&] {
            return check(api, "cuMemcpyDtoHAsync",
                         api.cuMemcpyDtoHAsync(host, device, bw.bytes, nullptr));
          },
          result.d2h_gbps);
    }
  }
  if (auto f = check(api, "cuMemFree", api.cuMemFree(device)); o.ok && !f.ok) {
    o = f;
  }
  if (auto f = check(api, "cuMemFreeHost", api.cuMemFreeHost(host)); o.ok && !f.ok) {
    o = f;
  }
  return o;
}

// The active step's grid for the memory kernels (a grid-stride loop over the region).
constexpr unsigned k_memory_blocks = 1024;
constexpr unsigned k_memory_threads = 256;
constexpr std::size_t k_mib = std::size_t{1} << 20;
// Bad words kept for the report, over all patterns.
constexpr std::size_t k_memory_errors_kept = 16;

std::string call_error(const DriverApi& api, std::string_view call, CUresult r) {
  const std::string what = error_text(api, r);
  return what.empty() ? fmt::format("{}: {}", call, error_name(api, r))
                      : fmt::format("{}: {} ({})", call, error_name(api, r), what);
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Device memory freed with the object.
class DeviceBuffer {
public:
  explicit DeviceBuffer(const DriverApi& api) : m_api(api) {}
  ~DeviceBuffer() {
    if (ptr != 0) {
      m_api.cuMemFree(ptr);
    }
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr ptr = 0;

private:
  const DriverApi& m_api;
};

// The active step's machinery: the module and its three functions.
struct ActiveModule {
  explicit ActiveModule(const DriverApi& api) : m_api(api) {}
  ~ActiveModule() {
    if (module) {
      m_api.cuModuleUnload(module);
    }
  }
  ActiveModule(const ActiveModule&) = delete;
  ActiveModule& operator=(const ActiveModule&) = delete;
  CUmodule module = nullptr;
  CUfunction fill = nullptr;
  CUfunction check = nullptr;
  CUfunction compute = nullptr;

private:
  const DriverApi& m_api;
};

// A launch the driver refused (a bad argument, no resources, an image it cannot run): the step's
// machinery, not the GPU. Empty when it was accepted.
template <class... Args>
std::string launch(const DriverApi& api, CUfunction f, std::string_view name, unsigned blocks,
                   unsigned threads, Args*... args) {
  void* params[] = {static_cast<void*>(args)...};
  const CUresult r =
      api.cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, params, nullptr);
  return r == k_success ? std::string()
                        : call_error(api, fmt::format("cuLaunchKernel({})", name), r);
}

// The compute kernel, launched first and timed with its synchronisation; its output checksummed
// and its integer words checked against the host's. A fault while it ran is the GPU's failure.
Outcome compute_part(const DriverApi& api, const ActiveModule& m, CudaActiveResult& a) {
  const auto start = Clock::now();
  DeviceBuffer out(api);
  const std::size_t bytes = k_compute_words * sizeof(std::uint32_t);
  if (const CUresult r = api.cuMemAlloc(&out.ptr, bytes); r != k_success) {
    a.not_checked = call_error(api, fmt::format("cuMemAlloc of {} KiB", bytes >> 10), r);
    out.ptr = 0;
    return {};
  }
  std::uint32_t iterations = k_compute_iterations;
  if (auto why = launch(api, m.compute, k_kernel_compute, k_compute_blocks, k_compute_threads,
                        &out.ptr, &iterations);
      !why.empty()) {
    a.not_checked = why;
    return {};
  }
  if (auto o = check(api, "cuCtxSynchronize", api.cuCtxSynchronize()); !o.ok) {
    return o;
  }
  a.first_kernel_ms = ms_since(start);
  std::vector<std::uint32_t> words(k_compute_words);
  if (auto o = check(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(words.data(), out.ptr, bytes)); !o.ok) {
    return o;
  }
  a.checksum = compute_checksum(words);
  for (std::uint32_t gid = 0; gid < k_compute_blocks * k_compute_threads; ++gid) {
    const std::uint32_t want = compute_integer(gid, k_compute_iterations);
    const std::uint32_t got = words[std::size_t{gid} * k_compute_words_per_thread];
    if (got != want) {
      if (a.integer_mismatches == 0) {
        a.integer_error = fmt::format("thread {}: expected 0x{:08x}, got 0x{:08x}", gid, want, got);
      }
      ++a.integer_mismatches;
    }
  }
  a.compute_ms = ms_since(start);
  return {};
}

// The memory test: each pattern written and verified on the GPU over the region, while the time
// allows (at least one pattern). A fault while a kernel ran is the GPU's failure; memory that
// cannot be had, or a launch refused, leaves the rest not checked.
Outcome memory_part(const DriverApi& api, const ActiveModule& m, const ActiveRequest& req,
                    Clock::time_point until, CudaActiveResult& a) {
  const auto start = Clock::now();
  std::size_t free = 0;
  std::size_t total = 0;
  if (const CUresult r = api.cuMemGetInfo(&free, &total); r != k_success) {
    a.not_checked = call_error(api, "cuMemGetInfo", r);
    return {};
  }
  const auto share = static_cast<std::size_t>(static_cast<double>(free) * req.memory_fraction);
  const std::size_t bytes = std::min(share, req.memory_cap) / k_mib * k_mib;
  if (bytes == 0) {
    a.not_checked = fmt::format("memory: {} MiB free, too little to test", free / k_mib);
    return {};
  }
  DeviceBuffer region(api);
  DeviceBuffer result(api);
  if (const CUresult r = api.cuMemAlloc(&region.ptr, bytes); r != k_success) {
    region.ptr = 0;
    a.not_checked = call_error(api, fmt::format("cuMemAlloc of {} MiB", bytes / k_mib), r);
    return {};
  }
  if (const CUresult r = api.cuMemAlloc(&result.ptr, sizeof(MemoryCheckResult)); r != k_success) {
    result.ptr = 0;
    a.not_checked = call_error(api, "cuMemAlloc", r);
    return {};
  }
  a.memory_bytes = bytes;
  std::uint64_t words = bytes / sizeof(std::uint32_t);
  // A new seed each run: repeated checks cover more of the random pattern's space.
  const auto now = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  const auto seed = static_cast<std::uint32_t>((now * 2654435761u) >> 16);
  for (std::uint32_t p = 0; p < k_memory_patterns; ++p) {
    if (Clock::now() >= (p > 0 ? until : req.not_after)) {
      a.not_checked = fmt::format("time: {} of {} memory patterns within {:g} s", p,
                                  k_memory_patterns, req.seconds);
      break;
    }
    if (auto o = check(api, "cuMemsetD8", api.cuMemsetD8(result.ptr, 0, sizeof(MemoryCheckResult)));
        !o.ok) {
      return o;
    }
    std::uint32_t pattern = p;
    std::uint32_t pattern_seed = seed;
    if (auto why = launch(api, m.fill, k_kernel_fill, k_memory_blocks, k_memory_threads,
                          &region.ptr, &words, &pattern, &pattern_seed);
        !why.empty()) {
      a.not_checked = why;
      return {};
    }
    if (auto why = launch(api, m.check, k_kernel_check, k_memory_blocks, k_memory_threads,
                          &region.ptr, &words, &pattern, &pattern_seed, &result.ptr);
        !why.empty()) {
      a.not_checked = why;
      return {};
    }
    if (auto o = check(api, "cuCtxSynchronize", api.cuCtxSynchronize()); !o.ok) {
      return o;
    }
    MemoryCheckResult got{};
    if (auto o = check(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(&got, result.ptr, sizeof got));
        !o.ok) {
      return o;
    }
    const std::string name = p == static_cast<std::uint32_t>(MemoryPattern::random)
                                 ? fmt::format("{} (seed 0x{:08x})", pattern_name(p), seed)
                                 : std::string(pattern_name(p));
    a.patterns.push_back(name);
    a.memory_mismatches += got.mismatches;
    for (std::uint32_t k = 0; k < std::min(got.mismatches, k_memory_slots); ++k) {
      const MemorySlot& slot = got.slots[k];
      if (a.memory_errors.size() < k_memory_errors_kept && slot.index < words) {
        a.memory_errors.push_back(
            {name, slot.index * 4, region.ptr + slot.index * 4, slot.expected, slot.got});
      }
    }
  }
  a.memory_ms = ms_since(start);
  return {};
}

// The active step: module load (JIT), the compute kernel, then the memory test within the time.
// What the step's own machinery cannot do (no entry point, JIT refused, no memory) is
// `a.not_checked`, never a failed step; a fault while a kernel runs is a failed step.
void active_step(const DriverApi& api, const ActiveRequest& req, Steps& steps,
                 CudaActiveResult& a) {
  const auto until =
      std::min(req.not_after, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double>(req.seconds)));
  if (Clock::now() >= req.not_after) {
    a.not_checked = "time: the CUDA stage's deadline left none for it";
    return;
  }
  if (!api.has_active_entry_points()) {
    a.not_checked = "libcuda lacks the entry points of the active step (cuMemGetInfo_v2, "
                    "cuModuleLoadData, cuModuleGetFunction, cuLaunchKernel, cuModuleUnload)";
    return;
  }
  ActiveModule m(api);
  bool loaded = false;
  steps.run("module_load", [&] {
    if (const CUresult r = api.cuModuleLoadData(&m.module, kernels_ptx().data()); r != k_success) {
      m.module = nullptr;
      a.not_checked =
          call_error(api, "cuModuleLoadData (the JIT of the embedded PTX, ISA 6.0, sm_30)", r);
      return Outcome{};
    }
    for (auto [name, f] : {std::pair{k_kernel_fill, &m.fill}, std::pair{k_kernel_check, &m.check},
                           std::pair{k_kernel_compute, &m.compute}}) {
      if (const CUresult r = api.cuModuleGetFunction(f, m.module, name); r != k_success) {
        a.not_checked = call_error(api, fmt::format("cuModuleGetFunction({})", name), r);
        return Outcome{};
      }
    }
    loaded = true;
    return Outcome{};
  });
  if (!loaded) {
    return;
  }
  a.ran = true;
  if (!steps.run("first_kernel", [&] { return compute_part(api, m, a); }) ||
      !a.not_checked.empty()) {
    return;
  }
  steps.run("memory_test", [&] { return memory_part(api, m, req, until, a); });
}

// The fabric allocation probe on the current context (docs/cuda-probe.md#fabric-allocation):
// CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, then where it is 1 one granule from cuMemCreate
// requesting a fabric handle, released at once. Signatures and enum values: cuda.h and
// https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__VA.html. A refusal is the result, not
// the step's failure: the GPU works, and what the multi-node fabric lacks is for the imex rules to
// judge; only a failing cuMemRelease fails the step. Nothing stays allocated.
// `ordinal`: the device's ordinal as this child sees it (the allocation's location).
void fabric_probe(const DriverApi& api, CUdevice device, int ordinal, Steps& steps,
                  CudaFabricResult& f) {
  f.asked = true;
  if (!api.cuDeviceGetAttribute) {
    f.not_tried = "not asked: libcuda lacks cuDeviceGetAttribute";
    return;
  }
  int value = 0;
  if (const CUresult r =
          api.cuDeviceGetAttribute(&value, k_attr_handle_type_fabric_supported, device);
      r != k_success) {
    f.not_tried = fmt::format(
        "attribute unknown: {} (drivers older than CUDA 12.3 do not know it)",
        call_error(api, "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)",
                   r));
    return;
  }
  f.attribute = value;
  if (value != 1) {
    f.not_tried = fmt::format(
        "CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED is {}: no fabric handles on this GPU",
        value);
    return;
  }
  if (!api.has_fabric_entry_points()) {
    f.not_tried = "not asked: libcuda lacks cuMemGetAllocationGranularity, cuMemCreate or "
                  "cuMemRelease";
    return;
  }
  const auto refused = [&](std::string_view call, CUresult r) {
    f.call = std::string(call);
    f.error_code = r;
    f.error_name = error_name(api, r);
    f.error_text = error_text(api, r);
    return Outcome{};
  };
  steps.run("fabric_alloc", [&] {
    f.tried = true;
    CUmemAllocationProp prop;
    prop.type = k_mem_allocation_type_pinned;
    prop.requestedHandleTypes = k_mem_handle_type_fabric;
    prop.location.type = k_mem_location_type_device;
    prop.location.id = ordinal;
    std::size_t granularity = 0;
    if (const CUresult r =
            api.cuMemGetAllocationGranularity(&granularity, &prop, k_mem_alloc_granularity_minimum);
        r != k_success) {
      return refused("cuMemGetAllocationGranularity", r);
    }
    if (granularity == 0) {
      f.tried = false;
      f.not_tried = "cuMemGetAllocationGranularity gave a granularity of 0 bytes";
      return Outcome{};
    }
    f.granularity = granularity;
    CUmemGenericAllocationHandle handle = 0;
    if (const CUresult r = api.cuMemCreate(&handle, granularity, &prop, 0); r != k_success) {
      return refused("cuMemCreate", r);
    }
    f.allocated = true;
    return check(api, "cuMemRelease", api.cuMemRelease(handle));
  });
}

} // namespace

void enumeration_child(const std::string& library, LineWriter& out) {
  Steps steps(out);
  auto driver = load_step(library, steps);
  if (!driver || !init_step(driver->api, steps)) {
    steps.done();
    return;
  }
  const DriverApi& api = driver->api;
  int count = 0;
  if (!steps.run("device_count",
                 [&] { return check(api, "cuDeviceGetCount", api.cuDeviceGetCount(&count)); })) {
    steps.done();
    return;
  }
  for (int i = 0; i < count; ++i) {
    steps.run(fmt::format("query device {}", i), [&] {
      CUdevice device = 0;
      if (auto o = check(api, "cuDeviceGet", api.cuDeviceGet(&device, i)); !o.ok) {
        return o;
      }
      CudaDevice d;
      d.index = i;
      Outcome o;
      d.bus_id = bus_id_of(api, device, o);
      if (!o.ok) {
        return o;
      }
      describe(api, device, d);
      steps.emit(device_event(std::move(d)));
      return Outcome{};
    });
  }
  steps.done();
}

void gpu_child(const std::string& library, const BandwidthRequest& bandwidth,
               const ActiveRequest& active, LineWriter& out) {
  Steps steps(out);
  auto driver = load_step(library, steps);
  if (!driver || !init_step(driver->api, steps)) {
    steps.done();
    return;
  }
  const DriverApi& api = driver->api;
  std::vector<CUdevice> devices;
  CUcontext context = nullptr;
  CUdeviceptr buffer = 0;
  const bool
      ok = device_get_step(api, steps, devices, {0}, true) && steps.run("primary_context", [&] {
        return context_on(api, devices[0], context);
      }) && steps.run("alloc", [&] {
        return check(api, "cuMemAlloc", api.cuMemAlloc(&buffer, k_test_bytes));
      }) && steps.run("memset", [&] {
        if (auto o = check(api, "cuMemsetD8", api.cuMemsetD8(buffer, 0xA5, k_test_bytes)); !o.ok) {
          return o;
        }
        if (auto o = check(api, "cuCtxSynchronize", api.cuCtxSynchronize()); !o.ok) {
          return o;
        }
        std::vector<unsigned char> read(k_test_bytes);
        if (auto o = check(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(read.data(), buffer, read.size()));
            !o.ok) {
          return o;
        }
        return compare(std::vector<unsigned char>(k_test_bytes, 0xA5), read);
      }) && steps.run("copy_roundtrip", [&] {
        const auto wrote = pattern(1);
        if (auto o =
                check(api, "cuMemcpyHtoD", api.cuMemcpyHtoD(buffer, wrote.data(), wrote.size()));
            !o.ok) {
          return o;
        }
        std::vector<unsigned char> read(wrote.size());
        if (auto o = check(api, "cuMemcpyDtoH", api.cuMemcpyDtoH(read.data(), buffer, read.size()));
            !o.ok) {
          return o;
        }
        return compare(wrote, read);
      });
  if (ok) {
    Event result;
    result.kind = EventKind::fabric;
    fabric_probe(api, devices[0], 0, steps, result.fabric);
    steps.emit(result);
  }
  if (ok && bandwidth.run) {
    Event result;
    result.kind = EventKind::bandwidth;
    if (!api.has_host_bandwidth_entry_points()) {
      result.text = "libcuda lacks the entry points of the timed copies";
    } else {
      steps.run("bandwidth", [&] { return host_bandwidth(api, bandwidth, result); });
    }
    steps.emit(result);
  }
  if (ok && active.run) {
    Event result;
    result.kind = EventKind::active;
    active_step(api, active, steps, result.active);
    steps.emit(result);
  }
  if (ok) {
    steps.run("release", [&] {
      if (auto o = check(api, "cuMemFree", api.cuMemFree(buffer)); !o.ok) {
        return o;
      }
      return check(api, "cuDevicePrimaryCtxRelease", api.cuDevicePrimaryCtxRelease(devices[0]));
    });
  }
  steps.done();
}

std::string encode_plan(const MultiGpuPlan& plan) {
  std::vector<std::string> words;
  for (const auto& g : plan.gpus) {
    words.push_back(fmt::format("{}:{}:{}", g.ordinal, g.cuda_index, g.measure ? 1 : 0));
  }
  return fmt::format("{}", fmt::join(words, " "));
}

std::optional<MultiGpuPlan> decode_plan(std::string_view line) {
  MultiGpuPlan plan;
  for (const auto& word : split(line, ' ')) {
    const auto parts = split(word, ':');
    if (parts.size() != 3) {
      return std::nullopt;
    }
    const auto ordinal = parse_uint(parts[0]);
    const auto index = parse_uint(parts[1]);
    if (!ordinal || !index || *ordinal > 1023 || *index > 1023 ||
        (parts[2] != "0" && parts[2] != "1")) {
      return std::nullopt;
    }
    const int o = static_cast<int>(*ordinal);
    if (std::any_of(plan.gpus.begin(), plan.gpus.end(),
                    [&](const MultiGpuPlan::Gpu& g) { return g.ordinal == o; })) {
      return std::nullopt;
    }
    plan.gpus.push_back({o, static_cast<int>(*index), parts[2] == "1"});
  }
  if (plan.gpus.size() < 2) {
    return std::nullopt;
  }
  return plan;
}

void multi_gpu_child(const std::string& library, child::Letter& plan_letter,
                     child::Clock::time_point wait_until, const BandwidthRequest& bandwidth,
                     TimingUntil timing_until, LineWriter& out) {
  Steps steps(out);
  auto driver = load_step(library, steps);
  if (!driver || !init_step(driver->api, steps)) {
    steps.done();
    return;
  }
  const DriverApi& api = driver->api;
  MultiGpuPlan plan;
  if (!steps.run("plan", [&] {
        const auto line = plan_letter.receive(wait_until);
        const auto decoded = line ? decode_plan(*line) : std::nullopt;
        if (!decoded) {
          return failure(std::string(k_checker_resources),
                         line ? "the checker's list of GPUs is malformed: " + *line
                              : std::string("no list of GPUs came from the checker"));
        }
        plan = *decoded;
        return Outcome{};
      })) {
    steps.done();
    return;
  }
  const std::size_t n = plan.gpus.size();
  std::vector<int> ordinals;
  std::vector<int> cuda_indices;
  std::vector<char> measure;
  for (const auto& g : plan.gpus) {
    ordinals.push_back(g.ordinal);
    cuda_indices.push_back(g.cuda_index);
    measure.push_back(g.measure ? 1 : 0);
  }
  std::vector<CUdevice> devices;
  if (!api.has_peer_entry_points() || !device_get_step(api, steps, devices, ordinals, false)) {
    steps.done();
    return;
  }
  // Contexts and buffers on all GPUs at once: a slow GPU initialisation costs its own time, not
  // the sum over GPUs.
  std::vector<CUcontext> contexts(n, nullptr);
  std::vector<CUdeviceptr> buffers(n, 0);
  std::vector<char> ready(n, 0);
  // The bandwidth copies' buffers and events, per GPU; a GPU without them is not measured.
  const bool timed = bandwidth.run && api.has_peer_bandwidth_entry_points();
  std::vector<CUdeviceptr> big(n, 0);
  std::vector<std::unique_ptr<EventPair>> events(n);
  {
    std::vector<std::thread> threads;
    std::string thread_error;
    for (std::size_t k = 0; k < n && thread_error.empty(); ++k) {
      try {
        threads.emplace_back([&, k] {
          const int index = cuda_indices[k];
          ready[k] = steps.run(fmt::format("primary_context gpu {}", index), [&] {
            return context_on(api, devices[k], contexts[k]);
          }) && steps.run(fmt::format("alloc gpu {}", index), [&] {
            return check(api, "cuMemAlloc", api.cuMemAlloc(&buffers[k], k_test_bytes));
          });
          // Best effort: memory another process holds leaves this GPU's pairs unmeasured.
          if (ready[k] && timed && k < measure.size() && measure[k] &&
              api.cuMemAlloc(&big[k], bandwidth.peer_bytes) == k_success) {
            events[k] = std::make_unique<EventPair>(api);
            if (!events[k]->create().ok) {
              events[k].reset();
            }
          }
        });
      } catch (const std::system_error& e) {
        thread_error = e.what();
      }
    }
    for (auto& t : threads) {
      t.join();
    }
    if (!thread_error.empty()) {
      // The checker's own resources ran out: the parent reports exit 2, not a multi-GPU failure.
      steps.run("threads", [&] {
        return failure(std::string(k_checker_resources), "cannot start a thread: " + thread_error);
      });
      steps.done();
      return;
    }
  }
  if (std::find(ready.begin(), ready.end(), 0) != ready.end()) {
    steps.done();
    return;
  }
  // Correctness first, for every pair: a slow path then costs a bandwidth figure, never the
  // verdict on the copies.
  std::vector<std::pair<std::size_t, std::size_t>> verified;
  HostScratch host;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) {
        continue;
      }
      steps.announce("peer", std::pair(cuda_indices[i], cuda_indices[j]));
      const auto start = Clock::now();
      Event result;
      result.kind = EventKind::peer;
      result.peer.from = cuda_indices[i];
      result.peer.to = cuda_indices[j];
      const Outcome o =
          peer_copy(api, i, j, devices, contexts, buffers, host, result.peer.can_access);
      result.peer.ok = o.ok;
      result.peer.duration_ms =
          std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      result.peer.error_code = o.code;
      result.peer.error_name = o.name;
      result.peer.error_text = o.text;
      steps.emit(result);
      if (o.ok && events[i] && events[j]) {
        verified.emplace_back(i, j);
      }
    }
  }
  // Then timing, while the stage's deadline allows.
  for (const auto& pair : verified) {
    // plain names, not a structured binding: clang before 16 cannot capture one in a lambda
    const auto i = pair.first;
    const auto j = pair.second;
    Event result;
    result.kind = EventKind::peer_bandwidth;
    result.peer.from = cuda_indices[i];
    result.peer.to = cuda_indices[j];
    result.peer.ok = true;
    if (Clock::now() >= timing_until) {
      result.text = "bandwidth not measured: the CUDA stage's deadline was near";
      steps.emit(result);
      continue;
    }
    steps.announce("peer_timing", std::pair(cuda_indices[i], cuda_indices[j]));
    Outcome o = check(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(contexts[i]));
    if (o.ok) {
      o = events[i]->best_of(
          bandwidth.repeats, bandwidth.peer_bytes,
          [&] {
            return check(api, "cuMemcpyPeerAsync",
                         api.cuMemcpyPeerAsync(big[j], contexts[j], big[i], contexts[i],
                                               bandwidth.peer_bytes, nullptr));
          },
          result.peer.gbps);
    }
    result.peer.ok = o.ok;
    result.peer.error_code = o.code;
    result.peer.error_name = o.name;
    result.peer.error_text = o.text;
    steps.emit(result);
  }
  steps.run("release", [&] {
    for (std::size_t k = 0; k < n; ++k) {
      api.cuCtxSetCurrent(contexts[k]);
      events[k].reset();
      if (big[k] != 0) {
        if (auto o = check(api, "cuMemFree", api.cuMemFree(big[k])); !o.ok) {
          return o;
        }
      }
      if (auto o = check(api, "cuMemFree", api.cuMemFree(buffers[k])); !o.ok) {
        return o;
      }
      if (auto o =
              check(api, "cuDevicePrimaryCtxRelease", api.cuDevicePrimaryCtxRelease(devices[k]));
          !o.ok) {
        return o;
      }
    }
    return Outcome{};
  });
  steps.done();
}

} // namespace gpf::cuda
