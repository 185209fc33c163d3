// nvml.json (docs/snapshot-format.md): the NVML facts as JSON, and read back for replay. The same
// object is the report's facts.nvml; the GPU objects are also the children's "gpu" events.
#include "gpf/probes/nvml_probe.hpp"

#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"
#include "probes/child/isolation.hpp"

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

// A type error names the member; the caller adds the context.
struct BadMember {
  std::string what;
};

template <class T> void read_opt(const Json& j, const char* key, std::optional<T>& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return;
  }
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) {
      throw BadMember{fmt::format("{}: expected a string", key)};
    }
    out = to_valid_utf8(it->get<std::string>());
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!it->is_boolean()) {
      throw BadMember{fmt::format("{}: expected true or false", key)};
    }
    out = it->get<bool>();
  } else {
    if (!it->is_number_integer()) {
      throw BadMember{fmt::format("{}: expected an integer", key)};
    }
    if (std::is_unsigned_v<T> && !it->is_number_unsigned()) {
      throw BadMember{fmt::format("{}: expected a non-negative integer", key)};
    }
    out = it->get<T>();
  }
}

std::string read_string(const Json& j, const char* key) {
  std::optional<std::string> v;
  read_opt(j, key, v);
  return v.value_or("");
}

NvmlCall read_call(const Json& j) {
  if (!j.is_object()) {
    throw BadMember{"a call: expected an object"};
  }
  NvmlCall c;
  c.name = read_string(j, "name");
  std::optional<int> code;
  read_opt(j, "code", code);
  c.code = code.value_or(0);
  c.text = read_string(j, "text");
  return c;
}

std::optional<NvmlHang> read_hang(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return std::nullopt;
  }
  if (!it->is_object()) {
    throw BadMember{fmt::format("{}: expected an object", key)};
  }
  NvmlHang h;
  h.step = read_string(*it, "step");
  const auto at = it->find("after_ms");
  if (at != it->end() && at->is_number()) {
    h.after_ms = at->get<double>();
  }
  return h;
}

const Json* array_member(const Json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return nullptr;
  }
  if (!it->is_array()) {
    throw BadMember{fmt::format("{}: expected an array", key)};
  }
  return &*it;
}

NvmlGpu read_gpu(const Json& j) {
  if (!j.is_object()) {
    throw BadMember{"expected an object"};
  }
  NvmlGpu g;
  gpu_scalars(g, [&](const char* key, auto& member) { read_opt(j, key, member); });
  g.nvml_bus_id = read_string(j, "nvml_bus_id");
  g.bus_id = read_string(j, "bus_id");
  if (auto norm = normalize_bus_id(g.bus_id)) {
    g.bus_id = *norm;
  }
  if (const auto* links = array_member(j, "nvlink_active")) {
    for (const auto& l : *links) {
      if (!l.is_boolean()) {
        throw BadMember{"nvlink_active: expected true or false"};
      }
      g.nvlink_active.push_back(l.get<bool>());
    }
  }
  if (const auto* procs = array_member(j, "processes")) {
    g.processes.emplace();
    for (const auto& p : *procs) {
      NvmlProcess proc;
      std::optional<unsigned> pid;
      read_opt(p, "pid", pid);
      proc.pid = pid.value_or(0);
      read_opt(p, "used_bytes", proc.used_bytes);
      g.processes->push_back(proc);
    }
  }
  if (const auto* calls = array_member(j, "calls")) {
    for (const auto& c : *calls) {
      g.calls.push_back(read_call(c));
    }
  }
  const auto he = j.find("handle_error");
  if (he != j.end() && !he->is_null()) {
    g.handle_error = read_call(*he);
  }
  g.hang = read_hang(j, "hang");
  g.child_error = read_string(j, "child_error");
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
  try {
    return read_gpu(j);
  } catch (const BadMember& bad) {
    return Error{bad.what};
  } catch (const Json::exception& e) {
    return Error{e.what()};
  }
}

Result<NvmlFacts> parse_nvml_json(std::string_view text) {
  if (!json_depth_within(text)) {
    return Error{fmt::format("nested deeper than {} levels", k_json_max_depth)};
  }
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    return Error{"not valid JSON"};
  }
  if (!j.is_object()) {
    return Error{"expected a JSON object"};
  }
  try {
    NvmlFacts n;
    std::optional<bool> ran;
    read_opt(j, "ran", ran);
    n.ran = ran.value_or(false);
    n.library = read_string(j, "library");
    n.library_path = read_string(j, "library_path");
    n.load_error = read_string(j, "load_error");
    for (const char* key : {"missing_symbols", "missing_optional_symbols"}) {
      if (const auto* arr = array_member(j, key)) {
        for (const auto& s : *arr) {
          if (!s.is_string()) {
            throw BadMember{fmt::format("{}: expected strings", key)};
          }
          (std::string_view(key) == "missing_symbols" ? n.missing_symbols
                                                      : n.missing_optional_symbols)
              .push_back(to_valid_utf8(s.get<std::string>()));
        }
      }
    }
    n.nvml_version = read_string(j, "nvml_version");
    n.driver_version = read_string(j, "driver_version");
    n.init_call = read_string(j, "init_call");
    read_opt(j, "init_code", n.init_code);
    n.init_text = read_string(j, "init_text");
    n.init_hang = read_hang(j, "init_hang");
    read_opt(j, "device_count", n.device_count);
    if (const auto* gpus = array_member(j, "gpus")) {
      for (std::size_t i = 0; i < gpus->size(); ++i) {
        try {
          n.gpus.push_back(read_gpu((*gpus)[i]));
        } catch (const BadMember& bad) {
          throw BadMember{fmt::format("gpus[{}].{}", i, bad.what)};
        }
      }
    }
    std::optional<bool> hit;
    read_opt(j, "deadline_hit", hit);
    n.deadline_hit = hit.value_or(false);
    for (auto [key, out] :
         {std::pair{"timeout_s", &n.timeout_s}, std::pair{"wall_ms", &n.wall_ms}}) {
      const auto it = j.find(key);
      if (it != j.end() && it->is_number()) {
        *out = it->get<double>();
      }
    }
    n.child_error = read_string(j, "child_error");
    auto isolation = child::isolation_from_json(j);
    if (!isolation) {
      return Error{isolation.error().message};
    }
    n.isolation = *isolation;
    return n;
  } catch (const BadMember& bad) {
    return Error{bad.what};
  } catch (const Json::exception& e) {
    return Error{e.what()};
  }
}

} // namespace gpf
