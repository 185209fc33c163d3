// The Prometheus text exposition format (--format prometheus), for node_exporter's textfile
// collector: https://prometheus.io/docs/instrumenting/exposition_formats/ (escaping) and
// https://prometheus.io/docs/practices/naming/ (base units, a `gpu_preflight_` prefix). Every
// series is a gauge; no sample carries a timestamp (the textfile collector refuses them).
#include "gpf/report/report.hpp"
#include "gpf/util/text.hpp"
#include "gpf/version_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <utility>

namespace gpf {
namespace {

// A label value: valid UTF-8, with backslash, double quote and line feed escaped.
std::string label_value(std::string_view raw) {
  const std::string s = to_valid_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

using Labels = std::vector<std::pair<std::string_view, std::string>>;

class Exposition {
public:
  // Starts a metric family: HELP and TYPE once, before its samples.
  void family(std::string_view name, std::string_view help) {
    m_name = name;
    m_out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  }
  void sample(const Labels& labels, double value) {
    m_out += m_name;
    if (!labels.empty()) {
      m_out += '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        m_out += fmt::format("{}{}=\"{}\"", i == 0 ? "" : ",", labels[i].first,
                             label_value(labels[i].second));
      }
      m_out += '}';
    }
    m_out += ' ';
    m_out += fmt::format("{}", value);
    m_out += '\n';
  }
  std::string take() { return std::move(m_out); }

private:
  std::string m_name;
  std::string m_out;
};

// One series per key: a damaged cuda.json or nvml.json listing a bus id twice would repeat a
// series, which node_exporter drops; the worse of the two (`better` says which is better) counts.
template <typename Key, typename Better>
void keep_worst(std::map<Key, double>& figures, Key key, double value, Better better) {
  const auto [it, fresh] = figures.emplace(std::move(key), value);
  if (!fresh && better(it->second, value)) {
    it->second = value;
  }
}

} // namespace

std::string render_prometheus(const Report& r) {
  const Assessment& a = r.assessment;
  const Facts& facts = r.facts;
  Exposition e;
  // A family of one figure per GPU, by bus id; none when no GPU has the figure.
  const auto per_gpu = [&e](std::string_view name, std::string_view help,
                            const std::map<std::string, double>& figures) {
    if (!figures.empty()) {
      e.family(name, help);
      for (const auto& [bus, v] : figures) {
        e.sample({{"bus_id", bus}}, v);
      }
    }
  };
  e.family("gpu_preflight_info",
           "The checker's version and what it found on the node, as labels (value always 1).");
  e.sample({{"version", std::string(k_tool_version)},
            {"driver_version", facts.driver.version ? facts.driver.version_text : ""},
            {"kernel_release", facts.kernel.release}},
           1);
  e.family("gpu_preflight_ready",
           "1 when the node is ready for a GPU job (the exit code is 0), else 0.");
  e.sample({}, r.exit_code == 0 ? 1 : 0);
  e.family("gpu_preflight_verdict", "The verdict: 1 for the one that holds, 0 for the others.");
  for (const Verdict v : {Verdict::pass, Verdict::warn, Verdict::fail}) {
    e.sample({{"verdict", std::string(verdict_name(v))}}, a.verdict == v ? 1 : 0);
  }
  e.family("gpu_preflight_gpus",
           "GPUs found (total), passing their checks (usable) and given to the job (recommended).");
  e.sample({{"state", "total"}}, static_cast<double>(a.gpus.size()));
  e.sample({{"state", "usable"}}, a.usable_count());
  e.sample({{"state", "recommended"}}, a.recommendation.devices);
  e.family("gpu_preflight_gpu_usable", "1 when this GPU passed its checks, else 0.");
  for (const auto& g : a.gpus) {
    e.sample({{"bus_id", g.bus_id}, {"uuid", g.uuid.value_or("")}, {"model", g.model.value_or("")}},
             g.usable ? 1 : 0);
  }
  // One series per finding; two findings of one id on one GPU (or on the host) share a series,
  // whose value counts them.
  std::map<std::array<std::string, 3>, int> findings;
  for (const auto& f : a.findings) {
    ++findings[{f.id, std::string(severity_name(f.severity)), f.gpu.value_or("")}];
  }
  e.family("gpu_preflight_finding",
           "Findings of the last check by rule id, severity and GPU bus id (empty: the node).");
  for (const auto& [key, count] : findings) {
    e.sample({{"id", key[0]}, {"severity", key[1]}, {"gpu", key[2]}}, count);
  }
  // The one finding that explains the verdict (the JSON report's primary_cause): an alert or a
  // dashboard names it without reading every finding series. Absent on a ready node without one.
  if (const Finding* primary = a.primary_cause()) {
    e.family("gpu_preflight_primary_cause",
             "The finding that explains the verdict: its rule id, GPU bus id (empty: the node) and "
             "the part of the node that causes it when that is no GPU (empty: none named).");
    e.sample({{"id", primary->id}, {"gpu", primary->gpu.value_or("")}, {"where", primary->where}},
             1);
  }
  std::map<std::string, double> slowest;
  for (const auto& d : facts.cuda.devices) {
    if (d.startup_ms) {
      keep_worst(slowest, d.bus_id, *d.startup_ms / 1000.0, std::less<>());
    }
  }
  per_gpu("gpu_preflight_cuda_startup_seconds",
          "Time from loading libcuda to a working CUDA context, per GPU.", slowest);
  // Copy bandwidth per GPU and direction, and per ordered GPU pair.
  std::map<std::pair<std::string, std::string>, double> host_bw;
  for (const auto& d : facts.cuda.devices) {
    for (const auto& [dir, v] : {std::pair("h2d", d.h2d_gbps), std::pair("d2h", d.d2h_gbps)}) {
      if (v) {
        keep_worst(host_bw, std::pair<std::string, std::string>(d.bus_id, dir), *v,
                   std::greater<>());
      }
    }
  }
  if (!host_bw.empty()) {
    e.family("gpu_preflight_copy_bandwidth_gbps",
             "Copy bandwidth between pinned host memory and each GPU, best of the timed copies, "
             "in GB/s (direction h2d: host to GPU, d2h: GPU to host).");
    for (const auto& [key, v] : host_bw) {
      e.sample({{"bus_id", key.first}, {"direction", key.second}}, v);
    }
  }
  std::map<std::pair<std::string, std::string>, double> peer_bw;
  for (const auto& p : facts.cuda.peers) {
    const CudaDevice* from = nullptr;
    const CudaDevice* to = nullptr;
    for (const auto& d : facts.cuda.devices) {
      from = d.index == p.from ? &d : from;
      to = d.index == p.to ? &d : to;
    }
    if (p.gbps && from && to) {
      keep_worst(peer_bw, std::pair(from->bus_id, to->bus_id), *p.gbps, std::greater<>());
    }
  }
  if (!peer_bw.empty()) {
    e.family("gpu_preflight_peer_bandwidth_gbps",
             "Peer copy bandwidth from one GPU to another, best of the timed copies, in GB/s.");
    for (const auto& [key, v] : peer_bw) {
      e.sample({{"from", key.first}, {"to", key.second}}, v);
    }
  }
  // The active step's figures per GPU where it ran (docs/cuda-probe.md#active-step): the findings
  // judge them; these let a dashboard follow a GPU whose memory test starts to fail.
  std::map<std::string, double> tested;
  std::map<std::string, double> memory_errors;
  std::map<std::string, double> compute_errors;
  for (const auto& d : facts.cuda.devices) {
    if (d.active.ran) {
      keep_worst(tested, d.bus_id, static_cast<double>(d.active.memory_bytes), std::greater<>());
      keep_worst(memory_errors, d.bus_id, static_cast<double>(d.active.memory_mismatches),
                 std::less<>());
      keep_worst(compute_errors, d.bus_id, static_cast<double>(d.active.integer_mismatches),
                 std::less<>());
    }
  }
  // Clocks and power the NVML child sampled while the CUDA stage loaded the GPU.
  std::map<std::string, double> clock;
  std::map<std::string, double> power;
  for (const auto& g : facts.nvml.gpus) {
    const NvmlSamples* during = g.traffic ? &g.traffic->during : nullptr;
    if (during && during->sm_clock_max_mhz) {
      keep_worst(clock, g.bus_id, *during->sm_clock_max_mhz * 1e6, std::greater<>());
    }
    if (during && during->power_max_mw) {
      keep_worst(power, g.bus_id, *during->power_max_mw / 1000.0, std::greater<>());
    }
  }
  per_gpu("gpu_preflight_active_memory_tested_bytes",
          "GPU memory the active step wrote and verified, in bytes.", tested);
  per_gpu("gpu_preflight_active_memory_errors",
          "Words of GPU memory that read back wrong in the active step.", memory_errors);
  per_gpu("gpu_preflight_active_compute_errors",
          "Integer words of the active step's compute kernel that differ from the host's.",
          compute_errors);
  per_gpu("gpu_preflight_sm_clock_under_load_hertz",
          "The highest SM clock NVML sampled while the CUDA stage ran on the GPU, in hertz.",
          clock);
  per_gpu("gpu_preflight_power_under_load_watts",
          "The highest power draw NVML sampled while the CUDA stage ran on the GPU, in watts.",
          power);
  e.family("gpu_preflight_probe_duration_seconds", "How long each probe of the last check took.");
  for (const auto& p : facts.probes) {
    e.sample({{"probe", p.name}}, p.duration_ms / 1000.0);
  }
  e.family(
      "gpu_preflight_probe_status",
      "Each probe's outcome: 1 for the one that holds (ok, skipped, error), 0 for the others.");
  for (const auto& p : facts.probes) {
    for (const auto s : {ProbeState::ok, ProbeState::skipped, ProbeState::error}) {
      const std::string_view word = s == ProbeState::ok        ? "ok"
                                    : s == ProbeState::skipped ? "skipped"
                                                               : "error";
      e.sample({{"probe", p.name}, {"status", std::string(word)}}, p.state == s ? 1 : 0);
    }
  }
  e.family("gpu_preflight_rules_not_checked",
           "Rules that found nothing because a probe they read did not give its facts, by that "
           "probe (not passes).");
  for (const auto& [probe, count] : rules_not_checked_by_probe(r.assessment)) {
    e.sample({{"probe", probe}}, count);
  }
  e.family("gpu_preflight_last_check_timestamp_seconds",
           "When the last check ran, in seconds since the Unix epoch.");
  e.sample({}, static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(
                                       r.run.checked_at.time_since_epoch())
                                       .count()));
  return e.take();
}

} // namespace gpf
