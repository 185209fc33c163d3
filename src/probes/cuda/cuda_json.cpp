// cuda.json (docs/cuda-json.md): the CUDA facts written as JSON, and read back for replay. The
// same object is the report's facts.cuda, so a report's member can be saved as a snapshot's file.
#include "gpf/probes/cuda_probe.hpp"

#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"
#include "probes/child/isolation.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

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

// Reading: a mistyped member is an error naming it; a missing one keeps the default.
struct BadMember {
  std::string what;
};

const Json* member(const Json& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void bad(const std::string& where, const char* key, const char* expected) {
  throw BadMember{fmt::format("{}{} is not {}", where, key, expected)};
}

void read(const Json& o, const char* key, std::string& out, const std::string& where) {
  if (const Json* v = member(o, key)) {
    if (!v->is_string()) {
      bad(where, key, "a string");
    }
    out = u8(v->get<std::string>());
  }
}

void read(const Json& o, const char* key, std::optional<std::string>& out,
          const std::string& where) {
  if (member(o, key)) {
    std::string s;
    read(o, key, s, where);
    out = s;
  }
}

void read(const Json& o, const char* key, bool& out, const std::string& where) {
  if (const Json* v = member(o, key)) {
    if (!v->is_boolean()) {
      bad(where, key, "true or false");
    }
    out = v->get<bool>();
  }
}

void read(const Json& o, const char* key, std::optional<bool>& out, const std::string& where) {
  if (member(o, key)) {
    bool b = false;
    read(o, key, b, where);
    out = b;
  }
}

void read(const Json& o, const char* key, std::optional<int>& out, const std::string& where) {
  if (const Json* v = member(o, key)) {
    if (!v->is_number_integer() || v->get<long long>() < std::numeric_limits<int>::min() ||
        v->get<long long>() > std::numeric_limits<int>::max()) {
      bad(where, key, "an integer");
    }
    out = v->get<int>();
  }
}

void read(const Json& o, const char* key, int& out, const std::string& where) {
  std::optional<int> v;
  read(o, key, v, where);
  out = v.value_or(out);
}

void read(const Json& o, const char* key, std::optional<unsigned long long>& out,
          const std::string& where) {
  if (const Json* v = member(o, key)) {
    if (!v->is_number_unsigned()) {
      bad(where, key, "a non-negative integer");
    }
    out = v->get<unsigned long long>();
  }
}

void read(const Json& o, const char* key, double& out, const std::string& where) {
  if (const Json* v = member(o, key)) {
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
      bad(where, key, "a non-negative number");
    }
    out = v->get<double>();
  }
}

const Json* array_member(const Json& o, const char* key, const std::string& where) {
  const Json* v = member(o, key);
  if (v && !v->is_array()) {
    bad(where, key, "an array");
  }
  return v;
}

void read(const Json& o, const char* key, std::vector<std::string>& out, const std::string& where) {
  if (const Json* arr = array_member(o, key, where)) {
    for (const auto& s : *arr) {
      if (!s.is_string()) {
        bad(where, key, "an array of strings");
      }
      out.push_back(u8(s.get<std::string>()));
    }
  }
}

void read(const Json& o, const char* key, std::vector<int>& out, const std::string& where) {
  if (const Json* arr = array_member(o, key, where)) {
    for (const auto& n : *arr) {
      if (!n.is_number_integer() || n.get<long long>() < 0 || n.get<long long>() > (1 << 20)) {
        bad(where, key, "an array of CUDA indices");
      }
      out.push_back(n.get<int>());
    }
  }
}

const Json& object_at(const Json& v, const std::string& where) {
  if (!v.is_object()) {
    throw BadMember{where + " is not an object"};
  }
  return v;
}

CudaStep read_step(const Json& v, const std::string& where) {
  const Json& o = object_at(v, where);
  const std::string at = where + ".";
  CudaStep s;
  read(o, "name", s.name, at);
  read(o, "ok", s.ok, at);
  read(o, "timed_out", s.timed_out, at);
  read(o, "duration_ms", s.duration_ms, at);
  read(o, "error_code", s.error_code, at);
  read(o, "error_name", s.error_name, at);
  read(o, "error_text", s.error_text, at);
  return s;
}

void read(const Json& o, const char* key, std::vector<CudaStep>& out, const std::string& where) {
  if (const Json* arr = array_member(o, key, where)) {
    for (std::size_t i = 0; i < arr->size(); ++i) {
      out.push_back(read_step((*arr)[i], fmt::format("{}{}[{}]", where, key, i)));
    }
  }
}

CudaDevice read_device(const Json& v, const std::string& where) {
  const Json& o = object_at(v, where);
  const std::string at = where + ".";
  CudaDevice d;
  read(o, "index", d.index, at);
  read(o, "bus_id", d.bus_id, at);
  d.bus_id = normalize_bus_id(d.bus_id).value_or(d.bus_id);
  read(o, "uuid", d.uuid, at);
  read(o, "name", d.name, at);
  read(o, "cc_major", d.cc_major, at);
  read(o, "cc_minor", d.cc_minor, at);
  read(o, "total_mem_bytes", d.total_mem_bytes, at);
  read(o, "compute_mode", d.compute_mode, at);
  read(o, "visible_as", d.visible_as, at);
  read(o, "usable", d.usable, at);
  read(o, "in_use", d.in_use, at);
  read(o, "holders", d.holders, at);
  read(o, "steps", d.steps, at);
  return d;
}

CudaPeerResult read_peer(const Json& v, const std::string& where) {
  const Json& o = object_at(v, where);
  const std::string at = where + ".";
  CudaPeerResult p;
  read(o, "from", p.from, at);
  read(o, "to", p.to, at);
  read(o, "can_access", p.can_access, at);
  read(o, "ok", p.ok, at);
  read(o, "timed_out", p.timed_out, at);
  read(o, "duration_ms", p.duration_ms, at);
  read(o, "error_code", p.error_code, at);
  read(o, "error_name", p.error_name, at);
  read(o, "error_text", p.error_text, at);
  return p;
}

CudaFacts read_facts(const Json& doc) {
  const Json& o = object_at(doc, "the document");
  CudaFacts c;
  c.ran = true; // a recorded file says the probe ran unless it says otherwise
  int version = k_cuda_json_version;
  read(o, "schema_version", version, "");
  if (version != k_cuda_json_version) {
    throw BadMember{fmt::format("schema_version {} is not supported (expected {})", version,
                                k_cuda_json_version)};
  }
  read(o, "ran", c.ran, "");
  read(o, "source", c.source, "");
  read(o, "library", c.library, "");
  read(o, "library_path", c.library_path, "");
  read(o, "load_error", c.load_error, "");
  read(o, "missing_symbols", c.missing_symbols, "");
  read(o, "missing_optional_symbols", c.missing_optional_symbols, "");
  read(o, "driver_version", c.driver_version, "");
  read(o, "device_order", c.device_order, "");
  read(o, "timeout_s", c.timeout_s, "");
  read(o, "wall_ms", c.wall_ms, "");
  read(o, "deadline_hit", c.deadline_hit, "");
  read(o, "child_error", c.child_error, "");
  auto isolation = child::isolation_from_json(o);
  if (!isolation) {
    throw BadMember{isolation.error().message};
  }
  c.isolation = *isolation;
  read(o, "enumeration_complete", c.enumeration_complete, "");
  if (const Json* init = member(o, "init")) {
    c.init = read_step(*init, "init");
  }
  read(o, "enumeration_steps", c.enumeration_steps, "");
  if (const Json* devices = array_member(o, "devices", "")) {
    for (std::size_t i = 0; i < devices->size(); ++i) {
      c.devices.push_back(read_device((*devices)[i], fmt::format("devices[{}]", i)));
      c.devices.back().index = static_cast<int>(i); // CUDA order is the array's order
    }
  }
  if (const Json* multi = member(o, "multi_gpu")) {
    const Json& m = object_at(*multi, "multi_gpu");
    read(m, "ran", c.multi_gpu_ran, "multi_gpu.");
    read(m, "ok", c.multi_gpu_ok, "multi_gpu.");
    read(m, "devices", c.multi_gpu_devices, "multi_gpu.");
    read(m, "steps", c.multi_gpu_steps, "multi_gpu.");
    if (const Json* peers = array_member(m, "peers", "multi_gpu.")) {
      for (std::size_t i = 0; i < peers->size(); ++i) {
        c.peers.push_back(read_peer((*peers)[i], fmt::format("multi_gpu.peers[{}]", i)));
      }
    }
  }
  for (int i : c.multi_gpu_devices) {
    if (i >= static_cast<int>(c.devices.size())) {
      throw BadMember{fmt::format("multi_gpu.devices names CUDA device {} but only {} are listed",
                                  i, c.devices.size())};
    }
  }
  return c;
}

} // namespace

std::string cuda_version_text(int version) {
  if (version <= 0) {
    return std::to_string(version);
  }
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
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
  const auto doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded()) {
    return Error{"not valid JSON"};
  }
  try {
    return read_facts(doc);
  } catch (const BadMember& e) {
    return Error{e.what};
  }
}

} // namespace gpf
