// The child -> parent line protocol (protocol.hpp) and the fold of a child's lines into steps.
#include "probes/cuda/protocol.hpp"

#include "gpf/facts/cuda_json.hpp"
#include "gpf/util/enum_names.hpp"
#include "gpf/util/json_read.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>

namespace gpf::cuda {
namespace {
using Json = nlohmann::ordered_json;

constexpr std::size_t k_text_cap = 2048;

constexpr auto k_event_names = enum_names<EventKind::invalid>(
    {"begin", "end", "library", "load_error", "missing_symbol", "driver_version", "device", "peer",
     "bandwidth", "active", "peer_bandwidth", "fabric", "done", "invalid"});

std::string_view kind_name(EventKind kind) {
  return k_event_names(kind);
}

std::optional<EventKind> kind_from(std::string_view name) {
  const auto kind = k_event_names.parse(name);
  return kind == EventKind::invalid ? std::nullopt : kind; // "invalid" is ours, never sent
}

std::string text(std::string_view s) {
  return quote_evidence(s, k_text_cap);
}

// Typed reads (json_read.hpp) that tolerate a missing or mistyped member (nullopt): a child's
// line is read as far as it goes.
template <class T> std::optional<T> get(const nlohmann::json& j, const char* key) {
  return JsonIn(j, "", k_text_cap)[key].lenient<T>();
}

std::optional<std::string> get_string(const nlohmann::json& j, const char* key) {
  return get<std::string>(j, key);
}

bool get_bool(const nlohmann::json& j, const char* key) {
  return get<bool>(j, key).value_or(false);
}

void put_error(Json& j, const std::optional<int>& code, const std::string& name,
               const std::string& what) {
  if (code) {
    j["code"] = *code;
  }
  if (!name.empty()) {
    j["error"] = text(name);
  }
  if (!what.empty()) {
    j["text"] = text(what);
  }
}

// The pair, its outcome and its rate: what a peer copy and a timed peer copy both say.
void put_pair(Json& j, const CudaPeerResult& p) {
  j["from"] = p.from;
  j["to"] = p.to;
  j["ok"] = p.ok;
  put_error(j, p.error_code, p.error_name, p.error_text);
  if (p.gbps) {
    j["gbps"] = *p.gbps;
  }
}

// A bandwidth figure: finite and above zero, else none.
std::optional<double> positive(std::optional<double> v) {
  return v && std::isfinite(*v) && *v > 0 ? v : std::nullopt;
}

// The members a peer copy and a timed peer copy share: the pair, its outcome, its figure. False
// when the pair is missing.
bool read_pair(const nlohmann::json& j, CudaPeerResult& peer) {
  const auto from = get<int>(j, "from");
  const auto to = get<int>(j, "to");
  if (!from || !to) {
    return false;
  }
  peer.from = *from;
  peer.to = *to;
  peer.ok = get_bool(j, "ok");
  peer.error_code = get<int>(j, "code");
  peer.error_name = get_string(j, "error").value_or("");
  peer.error_text = get_string(j, "text").value_or("");
  peer.gbps = positive(get<double>(j, "gbps"));
  return true;
}

Event invalid(std::string_view line) {
  Event e;
  e.kind = EventKind::invalid;
  e.text = quote_evidence(line, 200);
  return e;
}

std::string describe_end(const ChildEnd& end) {
  if (!end.protocol_error.empty()) {
    return "killed for a protocol error: " + end.protocol_error;
  }
  if (end.abandoned) {
    return "it did not die after SIGKILL (stuck in the kernel) and was abandoned";
  }
  if (end.killed_at_deadline) {
    return "killed at the deadline";
  }
  if (end.signal) {
    const char* name = ::strsignal(*end.signal);
    return fmt::format("killed by signal {} ({})", *end.signal, name ? name : "unknown");
  }
  if (end.exit_code) {
    return fmt::format("exited with status {}", *end.exit_code);
  }
  return "its pipe closed";
}

} // namespace

std::string encode_event(const Event& e) {
  Json j;
  j["event"] = kind_name(e.kind);
  switch (e.kind) {
  case EventKind::begin:
    j["step"] = text(e.step.name);
    if (e.pair) {
      j["from"] = e.pair->first;
      j["to"] = e.pair->second;
    }
    break;
  case EventKind::end:
    j["step"] = text(e.step.name);
    j["ok"] = e.step.ok;
    j["ms"] = e.step.duration_ms;
    put_error(j, e.step.error_code, e.step.error_name, e.step.error_text);
    break;
  case EventKind::library:
    j["path"] = text(e.text);
    break;
  case EventKind::load_error:
  case EventKind::invalid:
    j["text"] = text(e.text);
    break;
  case EventKind::missing_symbol:
    j["symbol"] = text(e.text);
    j["required"] = e.required;
    break;
  case EventKind::driver_version:
    j["value"] = e.value;
    break;
  case EventKind::device: {
    const CudaDevice& d = e.device;
    j["index"] = d.index;
    j["bus_id"] = text(d.bus_id);
    if (d.uuid) {
      j["uuid"] = text(*d.uuid);
    }
    if (d.name) {
      j["name"] = text(*d.name);
    }
    if (d.cc_major && d.cc_minor) {
      j["cc_major"] = *d.cc_major;
      j["cc_minor"] = *d.cc_minor;
    }
    if (d.total_mem_bytes) {
      j["total_mem_bytes"] = *d.total_mem_bytes;
    }
    if (d.compute_mode) {
      j["compute_mode"] = *d.compute_mode;
    }
    break;
  }
  case EventKind::peer:
    put_pair(j, e.peer);
    j["can_access"] = e.peer.can_access;
    j["ms"] = e.peer.duration_ms;
    break;
  case EventKind::bandwidth:
    if (e.h2d_gbps) {
      j["h2d_gbps"] = *e.h2d_gbps;
    }
    if (e.d2h_gbps) {
      j["d2h_gbps"] = *e.d2h_gbps;
    }
    if (!e.text.empty()) {
      j["text"] = text(e.text);
    }
    break;
  case EventKind::active:
    j["active"] = cuda_active_json(e.active);
    break;
  case EventKind::peer_bandwidth:
    put_pair(j, e.peer);
    if (!e.text.empty()) {
      j["why"] = text(e.text);
    }
    break;
  case EventKind::fabric:
    j["fabric"] = cuda_fabric_json(e.fabric);
    break;
  case EventKind::done:
    break;
  }
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Event decode_event(std::string_view line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return invalid(line);
  }
  const auto name = get_string(j, "event");
  const auto kind = name ? kind_from(*name) : std::nullopt;
  if (!kind) {
    return invalid(line);
  }
  Event e;
  e.kind = *kind;
  switch (e.kind) {
  case EventKind::begin: {
    auto step = get_string(j, "step");
    if (!step) {
      return invalid(line);
    }
    e.step.name = *step;
    auto from = get<int>(j, "from");
    auto to = get<int>(j, "to");
    if (from && to) {
      e.pair = std::pair(*from, *to);
    }
    break;
  }
  case EventKind::end: {
    auto step = get_string(j, "step");
    if (!step) {
      return invalid(line);
    }
    e.step.name = *step;
    e.step.ok = get_bool(j, "ok");
    e.step.duration_ms = std::max(0.0, get<double>(j, "ms").value_or(0));
    e.step.error_code = get<int>(j, "code");
    e.step.error_name = get_string(j, "error").value_or("");
    e.step.error_text = get_string(j, "text").value_or("");
    break;
  }
  case EventKind::library:
    e.text = get_string(j, "path").value_or("");
    break;
  case EventKind::load_error:
  case EventKind::invalid:
    e.text = get_string(j, "text").value_or("");
    break;
  case EventKind::missing_symbol:
    e.text = get_string(j, "symbol").value_or("");
    e.required = get_bool(j, "required");
    break;
  case EventKind::driver_version: {
    auto v = get<int>(j, "value");
    if (!v) {
      return invalid(line);
    }
    e.value = *v;
    break;
  }
  case EventKind::device: {
    CudaDevice& d = e.device;
    auto index = get<int>(j, "index");
    auto bus = get_string(j, "bus_id");
    if (!index || !bus) {
      return invalid(line);
    }
    d.index = *index;
    d.bus_id = normalize_bus_id(*bus).value_or(*bus);
    d.uuid = get_string(j, "uuid");
    d.name = get_string(j, "name");
    d.cc_major = get<int>(j, "cc_major");
    d.cc_minor = get<int>(j, "cc_minor");
    if (auto mem = get<long long>(j, "total_mem_bytes"); mem && *mem >= 0) {
      d.total_mem_bytes = static_cast<unsigned long long>(*mem);
    }
    d.compute_mode = get<int>(j, "compute_mode");
    break;
  }
  case EventKind::peer:
    if (!read_pair(j, e.peer)) {
      return invalid(line);
    }
    e.peer.can_access = get_bool(j, "can_access");
    e.peer.duration_ms = std::max(0.0, get<double>(j, "ms").value_or(0));
    break;
  case EventKind::bandwidth:
    e.h2d_gbps = positive(get<double>(j, "h2d_gbps"));
    e.d2h_gbps = positive(get<double>(j, "d2h_gbps"));
    e.text = get_string(j, "text").value_or("");
    break;
  case EventKind::active: {
    const auto a = j.find("active");
    if (a == j.end()) {
      return invalid(line);
    }
    auto parsed = parse_cuda_active_json(*a);
    if (!parsed) {
      return invalid(line);
    }
    e.active = std::move(parsed).value();
    break;
  }
  case EventKind::peer_bandwidth:
    if (!read_pair(j, e.peer)) {
      return invalid(line);
    }
    e.text = get_string(j, "why").value_or("");
    break;
  case EventKind::fabric: {
    const auto f = j.find("fabric");
    if (f == j.end()) {
      return invalid(line);
    }
    auto parsed = parse_cuda_fabric_json(*f);
    if (!parsed) {
      return invalid(line);
    }
    e.fabric = std::move(parsed).value();
    break;
  }
  case EventKind::done:
    break;
  }
  return e;
}

bool Transcript::all_steps_ok() const {
  return std::all_of(steps.begin(), steps.end(), [](const CudaStep& s) { return s.ok; });
}

const CudaStep* Transcript::failed_step() const {
  auto it = std::find_if(steps.begin(), steps.end(), [](const CudaStep& s) { return !s.ok; });
  return it == steps.end() ? nullptr : &*it;
}

void emit_event(LineWriter& out, const Event& event) {
  out.write_line(encode_event(event));
}

Transcript fold_transcript(const std::vector<TimedLine>& lines, const ChildEnd& end) {
  struct Open {
    std::string name;
    double begin_ms;
    std::optional<std::pair<int, int>> pair;
  };
  Transcript t;
  std::vector<Open> open; // several at once in the multi-GPU child (one thread per GPU)
  const auto close = [&](const std::string& name, const std::optional<std::pair<int, int>>& pair) {
    auto it = std::find_if(open.rbegin(), open.rend(),
                           [&](const Open& o) { return o.name == name && o.pair == pair; });
    if (it != open.rend()) {
      open.erase(std::next(it).base());
    }
  };
  for (const auto& line : lines) {
    Event e = decode_event(line.text);
    switch (e.kind) {
    case EventKind::begin:
      open.push_back({e.step.name, line.at_ms, e.pair});
      break;
    case EventKind::end:
      close(e.step.name, std::nullopt);
      t.steps.push_back(std::move(e.step));
      break;
    case EventKind::library:
      t.library_path = e.text;
      break;
    case EventKind::load_error:
      t.load_error = e.text;
      break;
    case EventKind::missing_symbol:
      (e.required ? t.missing_required : t.missing_optional).push_back(e.text);
      break;
    case EventKind::driver_version:
      t.driver_version = e.value;
      break;
    case EventKind::device:
      t.devices.push_back(std::move(e.device));
      break;
    case EventKind::peer:
      close("peer", std::pair(e.peer.from, e.peer.to));
      t.peers.push_back(std::move(e.peer));
      break;
    case EventKind::bandwidth:
      t.h2d_gbps = e.h2d_gbps;
      t.d2h_gbps = e.d2h_gbps;
      t.bandwidth_not_checked = e.text;
      break;
    case EventKind::active:
      t.active = std::move(e.active);
      break;
    case EventKind::fabric:
      t.fabric = std::move(e.fabric);
      break;
    case EventKind::peer_bandwidth:
      close("peer_timing", std::pair(e.peer.from, e.peer.to));
      for (auto& p : t.peers) {
        if (p.from == e.peer.from && p.to == e.peer.to) {
          p.gbps = e.peer.gbps;
          p.bandwidth_not_checked = e.text;
          if (!e.peer.ok) { // a timed copy that failed outright: the pair's failure
            p.ok = false;
            p.error_code = e.peer.error_code;
            p.error_name = e.peer.error_name;
            p.error_text = e.peer.error_text;
          }
        }
      }
      break;
    case EventKind::done:
      t.done = true;
      break;
    case EventKind::invalid:
      t.invalid_lines.push_back(e.text);
      break;
    }
  }
  if (t.done) {
    return t;
  }
  t.timed_out = end.killed_at_deadline;
  for (const auto& o : open) {
    const double elapsed = std::max(0.0, end.end_ms - o.begin_ms);
    if (o.pair && o.name == "peer_timing") {
      // Every pair was verified before any was timed: a child stopped here cut a measurement,
      // never a copy (the pairs not timed yet say so below).
      t.timing_cut = true;
      continue;
    }
    if (o.pair) {
      CudaPeerResult p;
      p.from = o.pair->first;
      p.to = o.pair->second;
      p.timed_out = end.killed_at_deadline;
      p.duration_ms = elapsed;
      if (!p.timed_out) {
        p.error_name = "CHILD_DIED";
        p.error_text = describe_end(end);
      }
      t.peers.push_back(std::move(p));
      continue;
    }
    CudaStep s;
    s.name = o.name;
    s.duration_ms = elapsed;
    s.timed_out = end.killed_at_deadline;
    if (!s.timed_out) {
      s.error_name = "CHILD_DIED";
      s.error_text = describe_end(end);
    }
    t.steps.push_back(std::move(s));
  }
  if (t.timing_cut) {
    for (auto& p : t.peers) {
      if (!p.gbps && p.bandwidth_not_checked.empty()) {
        p.bandwidth_not_checked = fmt::format(
            "bandwidth not measured: the child was stopped while timing peer copies ({})",
            describe_end(end));
      }
    }
  }
  if (open.empty() || t.timing_cut) {
    t.child_error = "the child ended before finishing: " + describe_end(end);
  }
  if (!t.invalid_lines.empty()) {
    t.child_error += (t.child_error.empty() ? "" : "; ") +
                     std::string("it wrote a line that is not an event: ") +
                     t.invalid_lines.front();
  }
  return t;
}

} // namespace gpf::cuda
