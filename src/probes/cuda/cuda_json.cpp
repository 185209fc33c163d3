// cuda.json (docs/cuda-json.md): the CUDA facts written as JSON, and read back for replay. The
// same object is the report's facts.cuda, so a report's member can be saved as a snapshot's file.
#include "gpf/probes/cuda_probe.hpp"

#include "gpf/util/json_read.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"
#include "gpf/util/version.hpp"
#include "probes/child/isolation.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {
using Ordered = nlohmann::ordered_json;
using Json = nlohmann::json;

constexpr int k_cuda_json_version = 1;
constexpr std::size_t k_string_cap = 4096;

std::string u8(std::string_view s) {
  return json_text(s, k_string_cap);
}

template <class T> Ordered opt(const std::optional<T>& v) {
  return json_opt(v, k_string_cap);
}

Ordered step_json(const CudaStep& s) {
  Ordered j;
  j["name"] = u8(s.name);
  j["ok"] = s.ok;
  j["duration_ms"] = s.duration_ms;
  if (s.timed_out) {
    j["timed_out"] = true;
  }
  if (!s.ok) {
    j["error_code"] = opt(s.error_code);
    j["error_name"] = u8(s.error_name);
    j["error_text"] = u8(s.error_text);
  }
  return j;
}

Ordered steps_json(const std::vector<CudaStep>& steps) {
  Ordered arr = Ordered::array();
  for (const auto& s : steps) {
    arr.push_back(step_json(s));
  }
  return arr;
}

Ordered strings_json(const std::vector<std::string>& v) {
  Ordered arr = Ordered::array();
  for (const auto& s : v) {
    arr.push_back(u8(s));
  }
  return arr;
}

Ordered device_json(const CudaDevice& d) {
  Ordered j;
  j["index"] = d.index;
  j["bus_id"] = u8(d.bus_id);
  j["uuid"] = opt(d.uuid);
  j["name"] = opt(d.name);
  j["compute_capability"] = d.cc_major && d.cc_minor
                                ? Ordered(fmt::format("{}.{}", *d.cc_major, *d.cc_minor))
                                : Ordered(nullptr);
  j["cc_major"] = opt(d.cc_major);
  j["cc_minor"] = opt(d.cc_minor);
  j["total_mem_bytes"] = opt(d.total_mem_bytes);
  j["compute_mode"] = opt(d.compute_mode);
  j["visible_as"] = u8(d.visible_as);
  j["usable"] = d.usable;
  if (d.in_use) { // only when set, so that reports of idle GPUs keep their shape
    j["in_use"] = true;
  }
  if (!d.holders.empty()) {
    j["holders"] = nlohmann::ordered_json::array();
    for (const auto& h : d.holders) {
      j["holders"].push_back(u8(h));
    }
  }
  // Derived from steps (CudaDevice::derive_timing): written for readers of the report, recomputed
  // when a cuda.json is read back.
  j["init_ms"] = opt(d.init_ms);
  j["startup_ms"] = opt(d.startup_ms);
  j["steps"] = steps_json(d.steps);
  return j;
}

Ordered peer_json(const CudaPeerResult& p) {
  Ordered j;
  j["from"] = p.from;
  j["to"] = p.to;
  j["can_access"] = p.can_access;
  j["ok"] = p.ok;
  j["duration_ms"] = p.duration_ms;
  if (p.timed_out) {
    j["timed_out"] = true;
  }
  if (!p.ok) {
    j["error_code"] = opt(p.error_code);
    j["error_name"] = u8(p.error_name);
    j["error_text"] = u8(p.error_text);
  }
  return j;
}

// Rows "from", columns "to", over the multi-GPU child's devices: "ok", "failed", "hung",
// "not-run" ("-" on the diagonal). Derived from peers; ignored when read back.
Ordered matrix_json(const CudaFacts& c) {
  Ordered rows = Ordered::array();
  for (int from : c.multi_gpu_devices) {
    Ordered row = Ordered::array();
    for (int to : c.multi_gpu_devices) {
      std::string cell = from == to ? "-" : "not-run";
      for (const auto& p : c.peers) {
        if (p.from == from && p.to == to) {
          cell = p.ok ? "ok" : p.timed_out ? "hung" : "failed";
        }
      }
      row.push_back(cell);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

// Reading (json_read.hpp): a mistyped member is an error naming it; a missing one keeps the
// default.
constexpr int k_max_cuda_index = 1 << 20;

Result<CudaStep> read_step(const JsonIn& o) {
  TRY(o.object());
  CudaStep s;
  TRY(o["name"].get(s.name));
  TRY(o["ok"].get(s.ok));
  TRY(o["timed_out"].get(s.timed_out));
  TRY(o["duration_ms"].get(s.duration_ms));
  TRY(o["error_code"].get(s.error_code));
  TRY(o["error_name"].get(s.error_name));
  TRY(o["error_text"].get(s.error_text));
  return s;
}

Result<void> read_steps(const JsonIn& arr, std::vector<CudaStep>& out) {
  return arr.each([&out](const JsonIn& e) -> Result<void> {
    TRY_ASSIGN(out.emplace_back(), read_step(e));
    return {};
  });
}

Result<CudaDevice> read_device(const JsonIn& o) {
  TRY(o.object());
  CudaDevice d;
  TRY(o["index"].get(d.index));
  TRY(o["bus_id"].get(d.bus_id));
  d.bus_id = normalize_bus_id(d.bus_id).value_or(d.bus_id);
  TRY(o["uuid"].get(d.uuid));
  TRY(o["name"].get(d.name));
  TRY(o["cc_major"].get(d.cc_major));
  TRY(o["cc_minor"].get(d.cc_minor));
  TRY(o["total_mem_bytes"].get(d.total_mem_bytes));
  TRY(o["compute_mode"].get(d.compute_mode));
  TRY(o["visible_as"].get(d.visible_as));
  TRY(o["usable"].get(d.usable));
  TRY(o["in_use"].get(d.in_use));
  TRY(o["holders"].get(d.holders));
  TRY(read_steps(o["steps"], d.steps));
  d.derive_timing();
  return d;
}

Result<CudaPeerResult> read_peer(const JsonIn& o) {
  TRY(o.object());
  CudaPeerResult p;
  TRY(o["from"].get(p.from));
  TRY(o["to"].get(p.to));
  TRY(o["can_access"].get(p.can_access));
  TRY(o["ok"].get(p.ok));
  TRY(o["timed_out"].get(p.timed_out));
  TRY(o["duration_ms"].get(p.duration_ms));
  TRY(o["error_code"].get(p.error_code));
  TRY(o["error_name"].get(p.error_name));
  TRY(o["error_text"].get(p.error_text));
  return p;
}

Result<CudaFacts> read_facts(const JsonIn& o) {
  TRY(o.object());
  CudaFacts c;
  c.ran = true; // a recorded file says the probe ran unless it says otherwise
  int version = k_cuda_json_version;
  TRY(o["schema_version"].get(version));
  if (version != k_cuda_json_version) {
    return Error{fmt::format("schema_version {} is not supported (expected {})", version,
                             k_cuda_json_version)};
  }
  TRY(o["ran"].get(c.ran));
  TRY(o["source"].get(c.source));
  TRY(o["library"].get(c.library));
  TRY(o["library_path"].get(c.library_path));
  TRY(o["load_error"].get(c.load_error));
  TRY(o["missing_symbols"].get(c.missing_symbols));
  TRY(o["missing_optional_symbols"].get(c.missing_optional_symbols));
  TRY(o["driver_version"].get(c.driver_version));
  TRY(o["device_order"].get(c.device_order));
  TRY(o["timeout_s"].get(c.timeout_s));
  TRY(o["wall_ms"].get(c.wall_ms));
  TRY(o["deadline_hit"].get(c.deadline_hit));
  TRY(o["child_error"].get(c.child_error));
  TRY_ASSIGN(c.isolation, child::isolation_from_json(o.json()));
  TRY(o["enumeration_complete"].get(c.enumeration_complete));
  if (const JsonIn init = o["init"]; !init.absent()) {
    TRY_ASSIGN(c.init, read_step(init));
  }
  TRY(read_steps(o["enumeration_steps"], c.enumeration_steps));
  TRY(o["devices"].each([&c](const JsonIn& e) -> Result<void> {
    TRY_ASSIGN(c.devices.emplace_back(), read_device(e));
    c.devices.back().index = static_cast<int>(c.devices.size() - 1); // CUDA order: the array's
    return {};
  }));
  if (const JsonIn m = o["multi_gpu"]; !m.absent()) {
    TRY(m.object());
    TRY(m["ran"].get(c.multi_gpu_ran));
    TRY(m["ok"].get(c.multi_gpu_ok));
    TRY(m["devices"].each([&c](const JsonIn& e) -> Result<void> {
      int i = -1;
      TRY(e.get(i));
      if (i < 0 || i > k_max_cuda_index) {
        return e.not_a("a CUDA index");
      }
      c.multi_gpu_devices.push_back(i);
      return {};
    }));
    TRY(read_steps(m["steps"], c.multi_gpu_steps));
    TRY(m["peers"].each([&c](const JsonIn& e) -> Result<void> {
      TRY_ASSIGN(c.peers.emplace_back(), read_peer(e));
      return {};
    }));
  }
  for (int i : c.multi_gpu_devices) {
    if (i >= static_cast<int>(c.devices.size())) {
      return Error{fmt::format("multi_gpu.devices names CUDA device {} but only {} are listed", i,
                               c.devices.size())};
    }
  }
  return c;
}

} // namespace

std::string cuda_version_text(int version) {
  if (version <= 0) {
    return std::to_string(version);
  }
  return Version::from_cuda_number(version).str();
}

Ordered cuda_facts_json(const CudaFacts& c) {
  Ordered j;
  j["schema_version"] = k_cuda_json_version;
  j["ran"] = c.ran;
  j["source"] = u8(c.source);
  j["library"] = u8(c.library);
  j["library_path"] = u8(c.library_path);
  j["load_error"] = u8(c.load_error);
  j["missing_symbols"] = strings_json(c.missing_symbols);
  j["missing_optional_symbols"] = strings_json(c.missing_optional_symbols);
  j["driver_version"] = opt(c.driver_version);
  j["driver_cuda_version"] =
      c.driver_version ? Ordered(cuda_version_text(*c.driver_version)) : Ordered(nullptr);
  j["device_order"] = u8(c.device_order);
  j["timeout_s"] = c.timeout_s;
  j["wall_ms"] = c.wall_ms;
  j["deadline_hit"] = c.deadline_hit;
  j["child_error"] = u8(c.child_error);
  j["isolation"] = child::isolation_json(c.isolation);
  j["enumeration_complete"] = c.enumeration_complete;
  j["init"] = step_json(c.init);
  j["enumeration_steps"] = steps_json(c.enumeration_steps);
  Ordered devices = Ordered::array();
  for (const auto& d : c.devices) {
    devices.push_back(device_json(d));
  }
  j["devices"] = std::move(devices);
  Ordered multi;
  multi["ran"] = c.multi_gpu_ran;
  multi["ok"] = opt(c.multi_gpu_ok);
  multi["devices"] = c.multi_gpu_devices;
  multi["steps"] = steps_json(c.multi_gpu_steps);
  Ordered peers = Ordered::array();
  for (const auto& p : c.peers) {
    peers.push_back(peer_json(p));
  }
  multi["peers"] = std::move(peers);
  multi["matrix"] = matrix_json(c);
  j["multi_gpu"] = std::move(multi);
  return j;
}

Result<CudaFacts> parse_cuda_json(std::string_view text) {
  if (!json_depth_within(text)) {
    return Error{fmt::format("nested deeper than {} levels", k_json_max_depth)};
  }
  // Step lists are cut while parsing, so a padded file never becomes a large document: the
  // first k_max_replayed_steps of each list are kept, then only the first failed step.
  std::vector<std::string> key_at(k_json_max_depth + 2);
  std::vector<std::size_t> kept_at(k_json_max_depth + 2);
  std::vector<bool> failure_kept_at(k_json_max_depth + 2);
  std::size_t not_kept = 0;
  const Json::parser_callback_t cut_steps = [&](int depth, Json::parse_event_t event,
                                                Json& parsed) {
    const auto d = static_cast<std::size_t>(depth);
    if (d >= key_at.size()) {
      return true; // deeper than json_depth_within allows: not reached
    }
    if (event == Json::parse_event_t::key) {
      key_at[d] = parsed.is_string() ? parsed.get<std::string>() : std::string();
    } else if (event == Json::parse_event_t::array_start) {
      kept_at[d] = 0;
      failure_kept_at[d] = false;
    } else if (event == Json::parse_event_t::object_end && d > 0) {
      const auto list = d - 1; // the array holding this object, named by the key at its depth
      if (key_at[list] != "steps" && key_at[list] != "enumeration_steps") {
        return true;
      }
      const auto ok = parsed.find("ok");
      const bool failed = ok != parsed.end() && *ok == false;
      if (kept_at[list] < k_max_replayed_steps || (failed && !failure_kept_at[list])) {
        ++kept_at[list];
        failure_kept_at[list] = failure_kept_at[list] || failed;
        return true;
      }
      ++not_kept;
      return false;
    }
    return true;
  };
  const auto doc = Json::parse(text, cut_steps, false);
  if (doc.is_discarded()) {
    return Error{"not valid JSON"};
  }
  CudaFacts facts;
  TRY_ASSIGN(facts, read_facts(JsonIn(doc, "", k_string_cap)));
  facts.steps_not_kept = not_kept;
  return facts;
}

} // namespace gpf
