// What the NVML children do (one system child, one child per GPU). Each step is announced before
// its call, so the parent can name the call a hung child is stuck in. Runs in children only.
#include "probes/nvml/child_work.hpp"

#include "gpf/facts/nvml_json.hpp"
#include "gpf/util/text.hpp"
#include "probes/nvml/nvml_api.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <tuple>

namespace gpf::nvml {
namespace {
using Json = nlohmann::json;

void say(child::LineWriter& out, Json j) {
  out.write_line(j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

void begin(child::LineWriter& out, std::string_view step) {
  say(out, Json{{"e", "begin"}, {"step", step}});
}

std::string cstr(const char* buf, std::size_t size) {
  return to_valid_utf8(std::string(buf, ::strnlen(buf, size)));
}

// Loads the library and initialises NVML, telling the parent as it goes. Null when it cannot go on.
std::unique_ptr<LoadedNvml> load_and_init(const std::string& library, child::LineWriter& out,
                                          bool system) {
  begin(out, "load");
  LoadResult loaded = load_nvml(library);
  if (!loaded.loaded) {
    say(out, Json{{"e", "load_error"}, {"text", to_valid_utf8(loaded.error)}});
    return nullptr;
  }
  auto nvml = std::move(loaded.loaded);
  if (system) {
    say(out, Json{{"e", "library"}, {"path", nvml->path}});
    for (const auto& s : nvml->missing_required) {
      say(out, Json{{"e", "missing"}, {"symbol", s}, {"required", true}});
    }
    for (const auto& s : nvml->missing_optional) {
      say(out, Json{{"e", "missing"}, {"symbol", s}, {"required", false}});
    }
  }
  if (!nvml->missing_required.empty()) {
    return nullptr;
  }
  const NvmlApi& api = nvml->api;
  Json sys{{"e", "system"}};
  if (system && api.nvmlSystemGetNVMLVersion) {
    begin(out, "nvml_version");
    char buf[96] = {};
    if (api.nvmlSystemGetNVMLVersion(buf, sizeof buf) == 0) {
      sys["nvml_version"] = cstr(buf, sizeof buf);
    }
  }
  // NO_ATTACH where the library has it: init then attaches no GPU, and each per-GPU child
  // attaches only its own GPU in its handle call, so one broken GPU cannot stall the others.
  const bool flags = api.nvmlInitWithFlags != nullptr;
  sys["init_call"] = flags ? "nvmlInitWithFlags" : "nvmlInit_v2";
  begin(out, "init");
  const nvmlReturn_t rc = flags ? api.nvmlInitWithFlags(k_init_flag_no_attach) : api.nvmlInit_v2();
  sys["init_code"] = rc;
  sys["init_text"] = to_valid_utf8(error_text(api, rc));
  if (rc == 0 && system) {
    if (api.nvmlSystemGetDriverVersion) {
      begin(out, "driver_version");
      char buf[96] = {};
      if (api.nvmlSystemGetDriverVersion(buf, sizeof buf) == 0) {
        sys["driver_version"] = cstr(buf, sizeof buf);
      }
    }
    begin(out, "device_count");
    unsigned count = 0;
    if (api.nvmlDeviceGetCount_v2(&count) == 0) {
      sys["device_count"] = count;
    }
  }
  if (system || rc != 0) {
    say(out, sys);
  }
  return rc == 0 ? std::move(nvml) : nullptr;
}

class GpuQueries {
public:
  GpuQueries(const NvmlApi& api, nvmlDevice_t dev, child::LineWriter& out, NvmlGpu& gpu)
      : m_api(api), m_dev(dev), m_out(out), m_gpu(gpu) {}

  // Runs one query if its entry point exists; records a non-success answer. True on success.
  template <class Fn, class Call> bool ask(std::string_view step, Fn* fn, Call&& call) {
    if (fn == nullptr) {
      if (!m_gpu.call(std::string(step))) {
        m_gpu.calls.push_back(
            {std::string(step), k_nvml_symbol_missing, "not exported by the library"});
      }
      return false;
    }
    begin(m_out, step);
    const nvmlReturn_t rc = call(fn);
    if (rc != 0 && !m_gpu.call(std::string(step))) { // a step asked again (per link) is named once
      m_gpu.calls.push_back({std::string(step), rc, error_text(m_api, rc)});
    }
    return rc == 0;
  }

  // A volatile ECC count (ECC enabled only: the counts need it); nullopt when not given.
  std::optional<unsigned long long> volatile_ecc(std::string_view step, int type) {
    unsigned long long n = 0;
    if (m_gpu.ecc_enabled == true && ask(step, m_api.nvmlDeviceGetTotalEccErrors, [&](auto fn) {
          return fn(m_dev, type, k_volatile_ecc, &n);
        })) {
      return n;
    }
    return std::nullopt;
  }

  // Rows remapped from Ampere on (nvmlDeviceGetRemappedRows); false when not given.
  bool remapped_rows(unsigned& corr, unsigned& unc, unsigned& pending, unsigned& failure) {
    const bool ampere_up = !m_gpu.architecture || *m_gpu.architecture >= k_nvml_arch_ampere;
    return ampere_up && ask("remapped_rows", m_api.nvmlDeviceGetRemappedRows,
                            [&](auto fn) { return fn(m_dev, &corr, &unc, &pending, &failure); });
  }

  std::optional<unsigned long long> clock_event_reasons() {
    unsigned long long r = 0;
    const bool ok =
        m_api.nvmlDeviceGetCurrentClocksEventReasons
            ? ask("clock_event_reasons", m_api.nvmlDeviceGetCurrentClocksEventReasons,
                  [&](auto fn) { return fn(m_dev, &r); })
            : ask("clock_event_reasons", m_api.nvmlDeviceGetCurrentClocksThrottleReasons,
                  [&](auto fn) { return fn(m_dev, &r); });
    return ok ? std::optional(r) : std::nullopt;
  }

  // The counters our own traffic could raise: one reader for `before` and `after`.
  NvmlCounters counters() {
    const NvmlApi& a = m_api;
    nvmlDevice_t d = m_dev;
    NvmlCounters c;
    c.ecc_volatile_corrected = volatile_ecc("ecc_volatile_corrected", k_memory_error_corrected);
    c.ecc_volatile_uncorrected =
        volatile_ecc("ecc_volatile_uncorrected", k_memory_error_uncorrected);
    unsigned u = 0;
    if (ask("pcie_replay", a.nvmlDeviceGetPcieReplayCounter, [&](auto fn) { return fn(d, &u); })) {
      c.pcie_replay = u;
    }
    // R550+, and root only: NO_PERMISSION otherwise (recorded in calls, not a finding).
    if (a.nvmlDeviceGetSramEccErrorStatus) {
      nvmlEccSramErrorStatus_t sram{};
      sram.version = k_sram_status_version;
      if (ask("sram_ecc_status", a.nvmlDeviceGetSramEccErrorStatus,
              [&](auto fn) { return fn(d, &sram); })) {
        c.sram_threshold_exceeded = sram.bThresholdExceeded != 0;
      }
    }
    unsigned corr = 0;
    unsigned unc = 0;
    unsigned pending = 0;
    unsigned failure = 0;
    if (remapped_rows(corr, unc, pending, failure)) {
      c.remap_pending = pending != 0;
    }
    for (unsigned link = 0; link < m_gpu.nvlink_active.size(); ++link) {
      if (!m_gpu.nvlink_active[link]) {
        continue;
      }
      NvmlLinkErrors e;
      e.link = link;
      for (const auto& kind : {std::pair{k_nvlink_error_replay, &e.replay},
                               std::pair{k_nvlink_error_recovery, &e.recovery},
                               std::pair{k_nvlink_error_crc_flit, &e.crc_flit},
                               std::pair{k_nvlink_error_crc_data, &e.crc_data}}) {
        // not a structured binding: clang before 16 cannot capture one in a lambda
        const int counter = kind.first;
        unsigned long long v = 0;
        if (ask("nvlink_errors", a.nvmlDeviceGetNvLinkErrorCounter,
                [&](auto fn) { return fn(d, link, counter, &v); })) {
          *kind.second = v;
        }
      }
      c.nvlinks.push_back(e);
    }
    return c;
  }

  // One sample of the clocks while the CUDA stage runs: the highest SM clock and power so far,
  // and every clock-event reason seen.
  void sample(NvmlSamples& s) {
    begin(m_out, "sample");
    unsigned v = 0;
    if (m_api.nvmlDeviceGetClockInfo && m_api.nvmlDeviceGetClockInfo(m_dev, k_clock_sm, &v) == 0) {
      s.sm_clock_max_mhz = std::max(s.sm_clock_max_mhz.value_or(0), v);
    }
    if (m_api.nvmlDeviceGetPowerUsage && m_api.nvmlDeviceGetPowerUsage(m_dev, &v) == 0) {
      s.power_max_mw = std::max(s.power_max_mw.value_or(0), v);
    }
    if (const auto r = clock_event_reasons()) {
      s.clock_event_reasons |= *r;
    }
    ++s.count;
  }

  // The GPU instances of a GPU in MIG mode: every profile index NVML may define, the instances
  // listed under each, and each one's info. nullopt when the list is not whole: a profile or an
  // instance that did not answer (its call says why; NOT_SUPPORTED and INVALID_ARGUMENT for a
  // profile mean that profile does not exist on this GPU or driver, and are skipped).
  std::optional<std::vector<NvmlGpuInstance>> gpu_instances() {
    const NvmlApi& a = m_api;
    nvmlDevice_t d = m_dev;
    std::vector<NvmlGpuInstance> out;
    for (unsigned profile = 0; profile < k_gpu_instance_profile_count; ++profile) {
      nvmlGpuInstanceProfileInfo_t info{};
      if (a.nvmlDeviceGetGpuInstanceProfileInfo) {
        begin(m_out, "gpu_instance_profile");
        const nvmlReturn_t rc = a.nvmlDeviceGetGpuInstanceProfileInfo(d, profile, &info);
        if (rc == k_nvml_not_supported || rc == k_invalid_argument) {
          continue;
        }
        if (rc != 0) {
          m_gpu.calls.push_back({"gpu_instance_profile", rc, error_text(a, rc)});
          return std::nullopt;
        }
      } else {
        m_gpu.calls.push_back(
            {"gpu_instance_profile", k_nvml_symbol_missing, "not exported by the library"});
        return std::nullopt;
      }
      // The buffer must hold the profile's instanceCount; bounded against a nonsense count.
      std::vector<nvmlGpuInstance_t> handles(
          std::clamp(info.instanceCount, 1U, k_max_gpu_instances));
      unsigned count = static_cast<unsigned>(handles.size());
      if (!ask("gpu_instances", a.nvmlDeviceGetGpuInstances,
               [&](auto fn) { return fn(d, info.id, handles.data(), &count); })) {
        return std::nullopt;
      }
      for (unsigned i = 0; i < count && i < handles.size(); ++i) {
        nvmlGpuInstanceInfo_t gi{};
        if (!ask("gpu_instance_info", a.nvmlGpuInstanceGetInfo,
                 [&](auto fn) { return fn(handles[i], &gi); })) {
          return std::nullopt;
        }
        out.push_back({.profile = profile,
                       .profile_id = gi.profileId,
                       .id = gi.id,
                       .placement_start = gi.placement.start,
                       .placement_size = gi.placement.size,
                       .slice_count = info.sliceCount,
                       .memory_mib = info.memorySizeMB});
      }
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
      return std::tie(x.profile, x.placement_start, x.id) <
             std::tie(y.profile, y.placement_start, y.id);
    });
    return out;
  }

  // Compute processes on the GPU now (the count query alone); nullopt when not given.
  std::optional<unsigned> process_count() {
    unsigned count = 0;
    if (!m_api.nvmlDeviceGetComputeRunningProcesses_v2) {
      return std::nullopt;
    }
    begin(m_out, "processes");
    const nvmlReturn_t rc = m_api.nvmlDeviceGetComputeRunningProcesses_v2(m_dev, &count, nullptr);
    return rc == 0 || rc == k_insufficient_size ? std::optional(count) : std::nullopt;
  }

  void all() {
    const NvmlApi& a = m_api;
    nvmlDevice_t d = m_dev;
    NvmlGpu& g = m_gpu;
    {
      char buf[96] = {};
      if (ask("name", a.nvmlDeviceGetName, [&](auto fn) { return fn(d, buf, sizeof buf); })) {
        g.name = cstr(buf, sizeof buf);
      }
    }
    {
      char buf[96] = {};
      if (ask("uuid", a.nvmlDeviceGetUUID, [&](auto fn) { return fn(d, buf, sizeof buf); })) {
        g.uuid = cstr(buf, sizeof buf);
      }
    }
    unsigned u = 0;
    if (ask("minor", a.nvmlDeviceGetMinorNumber, [&](auto fn) { return fn(d, &u); })) {
      g.minor = u;
    }
    if (ask("architecture", a.nvmlDeviceGetArchitecture, [&](auto fn) { return fn(d, &u); })) {
      g.architecture = u;
    }
    nvmlEnableState_t cur = 0;
    nvmlEnableState_t pend = 0;
    if (ask("ecc_mode", a.nvmlDeviceGetEccMode, [&](auto fn) { return fn(d, &cur, &pend); })) {
      g.ecc_enabled = cur != 0;
      g.ecc_pending_enabled = pend != 0;
    }
    unsigned long long ull = 0;
    g.ecc_volatile_uncorrected =
        volatile_ecc("ecc_volatile_uncorrected", k_memory_error_uncorrected);
    if (g.ecc_enabled == true) {
      if (ask("ecc_aggregate_uncorrected", a.nvmlDeviceGetTotalEccErrors,
              [&](auto fn) { return fn(d, k_memory_error_uncorrected, k_aggregate_ecc, &ull); })) {
        g.ecc_aggregate_uncorrected = ull;
      }
    }
    // The memory-error mechanism follows the architecture: page retirement before Ampere, row
    // remapping from Ampere on. Unknown architecture: ask both (NOT_SUPPORTED is not a finding).
    const bool pre_ampere = !g.architecture || *g.architecture < k_nvml_arch_ampere;
    if (pre_ampere) {
      for (auto [cause, out] : {std::pair{k_retire_cause_sbe, &g.retired_pages_sbe},
                                std::pair{k_retire_cause_dbe, &g.retired_pages_dbe}}) {
        unsigned count = 0;
        // Size query: *count = 0 answers INSUFFICIENT_SIZE with the count, or SUCCESS with none.
        begin(m_out, "retired_pages");
        if (a.nvmlDeviceGetRetiredPages) {
          const nvmlReturn_t rc = a.nvmlDeviceGetRetiredPages(d, cause, &count, nullptr);
          if (rc == 0 || rc == k_insufficient_size) {
            *out = count;
          } else if (!g.call("retired_pages")) {
            g.calls.push_back({"retired_pages", rc, error_text(a, rc)});
          }
        } else if (!g.call("retired_pages")) {
          g.calls.push_back(
              {"retired_pages", k_nvml_symbol_missing, "not exported by the library"});
        }
      }
      if (ask("retired_pages_pending", a.nvmlDeviceGetRetiredPagesPendingStatus,
              [&](auto fn) { return fn(d, &cur); })) {
        g.retired_pages_pending = cur != 0;
      }
    }
    {
      unsigned c = 0;
      unsigned un = 0;
      unsigned p = 0;
      unsigned f = 0;
      if (remapped_rows(c, un, p, f)) {
        g.remapped_correctable = c;
        g.remapped_uncorrectable = un;
        g.remap_pending = p != 0;
        g.remap_failure = f != 0;
      }
    }
    {
      nvmlFieldValue_t v{};
      v.fieldId = k_field_recovery_action;
      if (ask("recovery_action", a.nvmlDeviceGetFieldValues,
              [&](auto fn) { return fn(d, 1, &v); })) {
        if (v.nvmlReturn == 0) {
          switch (v.valueType) {
          case k_value_type_ull:
          case k_value_type_sll:
            g.recovery_action = static_cast<unsigned>(v.value.ullVal);
            break;
          case k_value_type_ulong:
            g.recovery_action = static_cast<unsigned>(v.value.ulVal);
            break;
          default:
            g.recovery_action = v.value.uiVal;
          }
        } else {
          g.calls.push_back({"recovery_action", v.nvmlReturn, error_text(a, v.nvmlReturn)});
        }
      }
    }
    g.clock_event_reasons = clock_event_reasons();
    if (ask("temperature", a.nvmlDeviceGetTemperature,
            [&](auto fn) { return fn(d, k_temperature_gpu, &u); })) {
      g.temperature_c = u;
    }
    if (ask("slowdown_temperature", a.nvmlDeviceGetTemperatureThreshold,
            [&](auto fn) { return fn(d, k_threshold_slowdown, &u); })) {
      g.slowdown_temperature_c = u;
    }
    if (ask("persistence_mode", a.nvmlDeviceGetPersistenceMode,
            [&](auto fn) { return fn(d, &cur); })) {
      g.persistence_mode = cur != 0;
    }
    if (ask("compute_mode", a.nvmlDeviceGetComputeMode, [&](auto fn) { return fn(d, &cur); })) {
      g.compute_mode = cur;
    }
    unsigned mc = 0;
    unsigned mp = 0;
    if (ask("mig_mode", a.nvmlDeviceGetMigMode, [&](auto fn) { return fn(d, &mc, &mp); })) {
      g.mig_current = mc;
      g.mig_pending = mp;
    }
    nvmlMemory_t mem{};
    if (ask("memory_info", a.nvmlDeviceGetMemoryInfo, [&](auto fn) { return fn(d, &mem); })) {
      g.memory_total_bytes = mem.total;
    }
    if (g.mig_current == k_mig_enable) {
      g.gpu_instances = gpu_instances();
    }
    if (ask("pcie_gen", a.nvmlDeviceGetCurrPcieLinkGeneration,
            [&](auto fn) { return fn(d, &u); })) {
      g.pcie_gen = u;
    }
    if (ask("pcie_gen_max", a.nvmlDeviceGetMaxPcieLinkGeneration,
            [&](auto fn) { return fn(d, &u); })) {
      g.pcie_gen_max = u;
    }
    if (ask("pcie_width", a.nvmlDeviceGetCurrPcieLinkWidth, [&](auto fn) { return fn(d, &u); })) {
      g.pcie_width = u;
    }
    if (ask("pcie_width_max", a.nvmlDeviceGetMaxPcieLinkWidth,
            [&](auto fn) { return fn(d, &u); })) {
      g.pcie_width_max = u;
    }
    if (a.nvmlDeviceGetNvLinkState) {
      // Links are numbered from 0 until INVALID_ARGUMENT; NOT_SUPPORTED on link 0 = no NVLink.
      for (unsigned link = 0; link < k_max_links_probed; ++link) {
        begin(m_out, "nvlink");
        nvmlEnableState_t active = 0;
        const nvmlReturn_t rc = a.nvmlDeviceGetNvLinkState(d, link, &active);
        if (rc == k_invalid_argument) {
          break;
        }
        if (rc != 0) {
          if (link == 0) {
            g.calls.push_back({"nvlink", rc, error_text(a, rc)});
          }
          break;
        }
        g.nvlink_active.push_back(active != 0);
      }
    } else {
      g.calls.push_back({"nvlink", k_nvml_symbol_missing, "not exported by the library"});
    }
    nvmlGpuFabricInfo_t fabric{};
    if (ask("fabric", a.nvmlDeviceGetGpuFabricInfo, [&](auto fn) { return fn(d, &fabric); })) {
      g.fabric_state = fabric.state;
      g.fabric_status = fabric.status;
    }
    {
      // Count first (*count = 0), then a buffer with room to spare: the list may grow meanwhile.
      unsigned count = 0;
      if (a.nvmlDeviceGetComputeRunningProcesses_v2) {
        begin(m_out, "processes");
        nvmlReturn_t rc = a.nvmlDeviceGetComputeRunningProcesses_v2(d, &count, nullptr);
        std::vector<nvmlProcessInfo_v2_t> infos;
        if (rc == k_insufficient_size) {
          infos.resize(count + 8);
          count = static_cast<unsigned>(infos.size());
          rc = a.nvmlDeviceGetComputeRunningProcesses_v2(d, &count, infos.data());
        }
        if (rc == 0) {
          g.processes.emplace();
          for (unsigned i = 0; i < count && i < infos.size() && i < k_max_processes; ++i) {
            NvmlProcess p;
            p.pid = infos[i].pid;
            if (infos[i].usedGpuMemory != ~0ULL) {
              p.used_bytes = infos[i].usedGpuMemory;
            }
            g.processes->push_back(p);
          }
        } else {
          g.calls.push_back({"processes", rc, error_text(a, rc)});
        }
      } else {
        g.calls.push_back({"processes", k_nvml_symbol_missing, "not exported by the library"});
      }
    }
    if (ask("inforom", a.nvmlDeviceValidateInforom, [&](auto fn) { return fn(d); })) {
      g.inforom_valid = true;
    } else if (const auto* c = g.call("inforom"); c && c->code == k_nvml_corrupted_inforom) {
      g.inforom_valid = false;
    }
  }

private:
  const NvmlApi& m_api;
  nvmlDevice_t m_dev;
  child::LineWriter& m_out;
  NvmlGpu& m_gpu;
};

// How long the child sleeps between samples, and how many it takes at most (the parent reads its
// lines only after the CUDA stage: a bounded number keeps them within the pipe's buffer).
constexpr auto k_sample_every = std::chrono::milliseconds(200);
constexpr unsigned k_max_samples = 100;

// The rest of the window around the CUDA stage (t.before is read): samples until the parent's
// word or give_up, then `after` and the processes left. One "traffic" line.
void read_after(GpuQueries& q, NvmlTraffic t, const child::Gate& gate,
                child::Clock::time_point give_up, child::LineWriter& out) {
  const auto start = child::Clock::now();
  bool opened = false;
  while (!opened && child::Clock::now() < give_up) {
    if (t.during.count < k_max_samples) {
      q.sample(t.during);
    }
    begin(out, "traffic_wait");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(give_up - child::Clock::now());
    opened = gate.wait_for(std::clamp(left, std::chrono::milliseconds(0), k_sample_every));
  }
  t.waited_ms = std::chrono::duration<double, std::milli>(child::Clock::now() - start).count();
  if (opened) {
    t.after = q.counters();
    t.processes_after = q.process_count();
  } else {
    t.not_read = "the CUDA stage had not ended shortly before the deadline";
  }
  say(out, Json{{"e", "traffic"}, {"traffic", nvml_traffic_json(t)}});
}

void query_and_report(const NvmlApi& api, nvmlDevice_t dev, NvmlGpu gpu, child::LineWriter& out,
                      const child::Gate* gate = nullptr, child::Clock::time_point give_up = {}) {
  begin(out, "pci_info");
  nvmlPciInfo_t pci{};
  const nvmlReturn_t rc = api.nvmlDeviceGetPciInfo_v3(dev, &pci);
  if (rc == 0) {
    gpu.nvml_bus_id = cstr(pci.busId, sizeof pci.busId);
    if (gpu.bus_id.empty()) {
      gpu.bus_id = normalize_bus_id(gpu.nvml_bus_id).value_or(gpu.nvml_bus_id);
    }
  } else {
    gpu.calls.push_back({"pci_info", rc, error_text(api, rc)});
  }
  GpuQueries q(api, dev, out, gpu);
  q.all();
  // `before` now, so that the calls NVML declines go out with the GPU's facts.
  std::optional<NvmlTraffic> traffic;
  if (gate && gate->usable()) {
    traffic.emplace();
    traffic->before = q.counters();
  }
  say(out, Json{{"e", "gpu"}, {"gpu", nvml_gpu_json(gpu)}});
  if (traffic) {
    read_after(q, std::move(*traffic), *gate, give_up, out);
  }
}

void done(child::LineWriter& out) {
  say(out, Json{{"e", "done"}});
}

} // namespace

void system_child(const std::string& library, bool query_every_gpu, child::LineWriter& out) {
  auto nvml = load_and_init(library, out, true);
  if (nvml && query_every_gpu) {
    const NvmlApi& api = nvml->api;
    unsigned count = 0;
    if (api.nvmlDeviceGetCount_v2(&count) == 0) {
      for (unsigned i = 0; i < count; ++i) {
        NvmlGpu gpu;
        gpu.index = i;
        begin(out, fmt::format("handle {}", i));
        nvmlDevice_t dev = nullptr;
        const nvmlReturn_t rc = api.nvmlDeviceGetHandleByIndex_v2(i, &dev);
        if (rc != 0) {
          gpu.handle_error = NvmlCall{"handle", rc, error_text(api, rc)};
          say(out, Json{{"e", "gpu"}, {"gpu", nvml_gpu_json(gpu)}});
          continue;
        }
        query_and_report(api, dev, std::move(gpu), out);
      }
    }
  }
  done(out);
}

void gpu_child(const std::string& library, const std::string& bus_id, const child::Gate& gate,
               child::Clock::time_point give_up, child::LineWriter& out) {
  auto nvml = load_and_init(library, out, false);
  if (nvml) {
    const NvmlApi& api = nvml->api;
    NvmlGpu gpu;
    gpu.bus_id = bus_id;
    begin(out, "handle");
    nvmlDevice_t dev = nullptr;
    const nvmlReturn_t rc = api.nvmlDeviceGetHandleByPciBusId_v2(bus_id.c_str(), &dev);
    if (rc != 0) {
      gpu.handle_error = NvmlCall{"handle", rc, error_text(api, rc)};
      say(out, Json{{"e", "gpu"}, {"gpu", nvml_gpu_json(gpu)}});
    } else {
      query_and_report(api, dev, std::move(gpu), out, &gate, give_up);
    }
  }
  done(out);
}

} // namespace gpf::nvml
