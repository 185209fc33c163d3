// nvml.json (docs/snapshot-format.md): the NVML facts as JSON, and read back for replay. The same
// object is the report's facts.nvml; the GPU objects are also the children's "gpu" events.
#include "gpf/facts/nvml_json.hpp"

#include "gpf/facts/isolation_json.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

#include <tuple>

namespace gpf {
namespace {
using Ordered = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr int k_nvml_json_version = 1;
constexpr std::size_t k_string_cap = 4096;

std::string u8(std::string_view s) {
  return json_text(s, k_string_cap);
}

// The scalar members of NvmlGpu, by JSON name: one list for writing and reading.
// Every scalar member with its key, for writing (const) and reading alike.
template <class G, class F> void gpu_scalars(G& g, F&& f) {
  f("index", g.index);
  f("name", g.name);
  f("uuid", g.uuid);
  f("minor", g.minor);
  f("architecture", g.architecture);
  f("ecc_enabled", g.ecc_enabled);
  f("ecc_pending_enabled", g.ecc_pending_enabled);
  f("ecc_volatile_uncorrected", g.ecc_volatile_uncorrected);
  f("ecc_aggregate_uncorrected", g.ecc_aggregate_uncorrected);
  f("retired_pages_sbe", g.retired_pages_sbe);
  f("retired_pages_dbe", g.retired_pages_dbe);
  f("retired_pages_pending", g.retired_pages_pending);
  f("remapped_correctable", g.remapped_correctable);
  f("remapped_uncorrectable", g.remapped_uncorrectable);
  f("remap_pending", g.remap_pending);
  f("remap_failure", g.remap_failure);
  f("recovery_action", g.recovery_action);
  f("clock_event_reasons", g.clock_event_reasons);
  f("temperature_c", g.temperature_c);
  f("slowdown_temperature_c", g.slowdown_temperature_c);
  f("persistence_mode", g.persistence_mode);
  f("compute_mode", g.compute_mode);
  f("mig_current", g.mig_current);
  f("mig_pending", g.mig_pending);
  f("pcie_gen", g.pcie_gen);
  f("pcie_gen_max", g.pcie_gen_max);
  f("pcie_width", g.pcie_width);
  f("pcie_width_max", g.pcie_width_max);
  f("fabric_state", g.fabric_state);
  f("fabric_status", g.fabric_status);
}

template <class T> Ordered opt(const std::optional<T>& v) {
  return json_opt(v, k_string_cap);
}

Ordered call_json(const NvmlCall& c) {
  return Ordered{{"name", u8(c.name)}, {"code", c.code}, {"text", u8(c.text)}};
}

Ordered hang_json(const std::optional<NvmlHang>& h) {
  if (!h) {
    return nullptr;
  }
  return Ordered{{"step", u8(h->step)}, {"after_ms", h->after_ms}};
}

// Reading (json_read.hpp): a mistyped member is an error naming its path; a missing one keeps
// the default.
Result<NvmlCall> read_call(const JsonIn& j) {
  TRY(j.object());
  NvmlCall c;
  TRY(j["name"].get(c.name));
  TRY(j["code"].get(c.code));
  TRY(j["text"].get(c.text));
  return c;
}

Result<void> read_hang(const JsonIn& j, std::optional<NvmlHang>& out) {
  if (j.absent()) {
    return {};
  }
  TRY(j.object());
  NvmlHang h;
  TRY(j["step"].get(h.step));
  TRY(j["after_ms"].get(h.after_ms));
  out = h;
  return {};
}

Result<NvmlGpu> read_gpu(const JsonIn& j) {
  TRY(j.object());
  NvmlGpu g;
  Result<void> scalars;
  gpu_scalars(g, [&](const char* key, auto& member) {
    if (scalars) {
      scalars = j[key].get(member);
    }
  });
  TRY(scalars);
  TRY(j["nvml_bus_id"].get(g.nvml_bus_id));
  TRY(j["bus_id"].get(g.bus_id));
  if (auto norm = normalize_bus_id(g.bus_id)) {
    g.bus_id = *norm;
  }
  TRY(j["nvlink_active"].get(g.nvlink_active));
  if (const JsonIn procs = j["processes"]; !procs.absent()) {
    g.processes.emplace();
    TRY(procs.each([&g](const JsonIn& p) -> Result<void> {
      NvmlProcess proc;
      TRY(p["pid"].get(proc.pid));
      TRY(p["used_bytes"].get(proc.used_bytes));
      g.processes->push_back(proc);
      return {};
    }));
  }
  TRY(j["calls"].each([&g](const JsonIn& c) -> Result<void> {
    TRY_ASSIGN(g.calls.emplace_back(), read_call(c));
    return {};
  }));
  if (const JsonIn he = j["handle_error"]; !he.absent()) {
    TRY_ASSIGN(g.handle_error, read_call(he));
  }
  TRY(read_hang(j["hang"], g.hang));
  TRY(j["child_error"].get(g.child_error));
  return g;
}

} // namespace

Ordered nvml_gpu_json(const NvmlGpu& gpu) {
  const NvmlGpu& g = gpu;
  Ordered j;
  j["bus_id"] = u8(g.bus_id);
  j["nvml_bus_id"] = u8(g.nvml_bus_id);
  gpu_scalars(g, [&](const char* key, const auto& member) { j[key] = opt(member); });
  j["nvlink_active"] = g.nvlink_active;
  if (g.processes) {
    Ordered procs = Ordered::array();
    for (const auto& p : *g.processes) {
      procs.push_back(Ordered{{"pid", p.pid}, {"used_bytes", opt(p.used_bytes)}});
    }
    j["processes"] = procs;
  } else {
    j["processes"] = nullptr;
  }
  Ordered calls = Ordered::array();
  for (const auto& c : g.calls) {
    calls.push_back(call_json(c));
  }
  j["calls"] = calls;
  j["handle_error"] = g.handle_error ? call_json(*g.handle_error) : Ordered(nullptr);
  j["hang"] = hang_json(g.hang);
  j["child_error"] = u8(g.child_error);
  return j;
}

Ordered nvml_facts_json(const NvmlFacts& n) {
  Ordered j;
  j["nvml_json_version"] = k_nvml_json_version;
  j["ran"] = n.ran;
  j["library"] = u8(n.library);
  j["library_path"] = u8(n.library_path);
  j["load_error"] = u8(n.load_error);
  j["missing_symbols"] = n.missing_symbols;
  j["missing_optional_symbols"] = n.missing_optional_symbols;
  j["nvml_version"] = u8(n.nvml_version);
  j["driver_version"] = u8(n.driver_version);
  j["init_call"] = u8(n.init_call);
  j["init_code"] = opt(n.init_code);
  j["init_text"] = u8(n.init_text);
  j["init_hang"] = hang_json(n.init_hang);
  j["device_count"] = opt(n.device_count);
  Ordered gpus = Ordered::array();
  for (const auto& g : n.gpus) {
    gpus.push_back(nvml_gpu_json(g));
  }
  j["gpus"] = gpus;
  j["deadline_hit"] = n.deadline_hit;
  j["timeout_s"] = n.timeout_s;
  j["wall_ms"] = n.wall_ms;
  j["child_error"] = u8(n.child_error);
  j["isolation"] = child::isolation_json(n.isolation);
  return j;
}

Result<NvmlGpu> nvml_gpu_from_json(const Json& j) {
  return read_gpu(JsonIn(j, "gpu"));
}

Result<NvmlFacts> parse_nvml_json(std::string_view text) {
  if (!json_depth_within(text)) {
    return Error{fmt::format("nested deeper than {} levels", k_json_max_depth)};
  }
  const Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    return Error{"not valid JSON"};
  }
  const JsonIn j(doc);
  TRY(j.object());
  NvmlFacts n;
  TRY(j["ran"].get(n.ran));
  TRY(j["library"].get(n.library));
  TRY(j["library_path"].get(n.library_path));
  TRY(j["load_error"].get(n.load_error));
  TRY(j["missing_symbols"].get(n.missing_symbols));
  TRY(j["missing_optional_symbols"].get(n.missing_optional_symbols));
  TRY(j["nvml_version"].get(n.nvml_version));
  TRY(j["driver_version"].get(n.driver_version));
  TRY(j["init_call"].get(n.init_call));
  TRY(j["init_code"].get(n.init_code));
  TRY(j["init_text"].get(n.init_text));
  TRY(read_hang(j["init_hang"], n.init_hang));
  TRY(j["device_count"].get(n.device_count));
  TRY(j["gpus"].each([&n](const JsonIn& g) -> Result<void> {
    TRY_ASSIGN(n.gpus.emplace_back(), read_gpu(g));
    return {};
  }));
  TRY(j["deadline_hit"].get(n.deadline_hit));
  TRY(j["timeout_s"].get(n.timeout_s));
  TRY(j["wall_ms"].get(n.wall_ms));
  TRY(j["child_error"].get(n.child_error));
  TRY_ASSIGN(n.isolation, child::isolation_from_json(doc));
  return n;
}

} // namespace gpf
