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

} // namespace

std::string render_prometheus(const Report& r) {
  const Assessment& a = r.assessment;
  const Facts& facts = r.facts;
  Exposition e;
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
    e.family(
        "gpu_preflight_primary_cause",
        "The finding that explains the verdict: its rule id and GPU bus id (empty: the node).");
    e.sample({{"id", primary->id}, {"gpu", primary->gpu.value_or("")}}, 1);
  }
  bool any_startup = false;
  for (const auto& d : facts.cuda.devices) {
    any_startup = any_startup || d.startup_ms.has_value();
  }
  if (any_startup) {
    e.family("gpu_preflight_cuda_startup_seconds",
             "Time from loading libcuda to a working CUDA context, per GPU.");
    // One series per bus id: CUDA devices that share one (a damaged cuda.json, a driver listing a
    // GPU twice) would repeat a series, which node_exporter drops; the slowest is the GPU's figure.
    std::map<std::string, double> slowest;
    for (const auto& d : facts.cuda.devices) {
      if (d.startup_ms) {
        auto [it, fresh] = slowest.emplace(d.bus_id, *d.startup_ms);
        it->second = fresh ? it->second : std::max(it->second, *d.startup_ms);
      }
    }
    for (const auto& [bus, ms] : slowest) {
      e.sample({{"bus_id", bus}}, ms / 1000.0);
    }
  }
  // Copy bandwidth per GPU and direction, and per ordered GPU pair; one series per bus id (the
  // lowest figure when a damaged cuda.json lists a bus id twice).
  std::map<std::pair<std::string, std::string>, double> host_bw;
  for (const auto& d : facts.cuda.devices) {
    for (const auto& [dir, v] : {std::pair("h2d", d.h2d_gbps), std::pair("d2h", d.d2h_gbps)}) {
      if (v) {
        auto [it, fresh] = host_bw.emplace(std::pair(d.bus_id, dir), *v);
        it->second = fresh ? it->second : std::min(it->second, *v);
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
      auto [it, fresh] = peer_bw.emplace(std::pair(from->bus_id, to->bus_id), *p.gbps);
      it->second = fresh ? it->second : std::min(it->second, *p.gbps);
    }
  }
  if (!peer_bw.empty()) {
    e.family("gpu_preflight_peer_bandwidth_gbps",
             "Peer copy bandwidth from one GPU to another, best of the timed copies, in GB/s.");
    for (const auto& [key, v] : peer_bw) {
      e.sample({{"from", key.first}, {"to", key.second}}, v);
    }
  }
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
