// JSON of the kernel-log facts. Every string passes through to_valid_utf8; keys keep their order.
#include "gpf/report/log_json.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/facts/log_names.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"

namespace gpf {
namespace {
using Json = nlohmann::ordered_json;

std::string_view boundary_name(BootBoundaryKind k) {
  static constexpr auto k_names = enum_names<BootBoundaryKind::timestamp_reset>(
      {"linux-version", "journal-boot", "journal-reboot", "timestamp-reset"});
  return k_names(k);
}

template <class T> Json opt(const std::optional<T>& v) {
  return json_opt(v);
}

Json event_json(const LogEvent& e) {
  Json j;
  j["kind"] = log_event_kind_name(e.kind);
  j["bus_id"] = e.bus_id ? Json(*e.bus_id) : Json(nullptr);
  j["meaning"] = to_valid_utf8(e.meaning);
  j["count"] = e.count;
  j["first_time"] = to_valid_utf8(e.first_time);
  j["last_time"] = to_valid_utf8(e.last_time);
  j["before_driver_load"] = e.before_driver_load;
  if (e.xid) {
    j["xid"] = *e.xid;
  }
  if (e.sxid) {
    j["sxid"] = *e.sxid;
  }
  if (e.gpu_instance || e.compute_instance) {
    j["gpu_instance"] = opt(e.gpu_instance);
    j["compute_instance"] = opt(e.compute_instance);
  }
  if (e.caused_by_xid) {
    j["caused_by_xid"] = *e.caused_by_xid;
  }
  if (e.recovery_action) {
    j["recovery_action"] = to_valid_utf8(*e.recovery_action);
  }
  if (e.init_status) {
    j["init_status"] = *e.init_status;
    j["rm_status"] = opt(e.rm_status);
  }
  if (e.device_minor) {
    j["device_minor"] = *e.device_minor;
  }
  if (!e.client_version.empty() || !e.kernel_version.empty()) {
    j["client_version"] = to_valid_utf8(e.client_version);
    j["kernel_version"] = to_valid_utf8(e.kernel_version);
  }
  if (!e.detail.empty()) {
    j["detail"] = to_valid_utf8(e.detail);
  }
  Json lines = Json::array();
  for (const auto& l : e.lines) {
    lines.push_back(to_valid_utf8(l));
  }
  j["lines"] = std::move(lines);
  if (!e.last_line.empty()) {
    j["last_line"] = to_valid_utf8(e.last_line);
  }
  return j;
}

Json events_json(const std::vector<LogEvent>& events) {
  Json arr = Json::array();
  for (const auto& e : events) {
    arr.push_back(event_json(e));
  }
  return arr;
}

} // namespace

Json log_facts_json(const LogFacts& log) {
  Json j;
  j["ran"] = log.ran;
  j["source"] = to_valid_utf8(log.source);
  j["read_error"] = log.read_error.empty() ? Json(nullptr) : Json(to_valid_utf8(log.read_error));
  Json sources = Json::array();
  for (const auto& s : log.sources) {
    sources.push_back(
        Json{{"source", to_valid_utf8(s.source)},
             {"state", s.state},
             {"error", s.error.empty() ? Json(nullptr) : Json(to_valid_utf8(s.error))}});
  }
  j["sources"] = std::move(sources);
  Json formats = Json::array();
  for (auto f : log.formats) {
    formats.push_back(log_format_name(f));
  }
  j["formats"] = std::move(formats);
  if (log.boundary) {
    j["boot_boundary"] = Json{{"kind", boundary_name(log.boundary->kind)},
                              {"offset", log.boundary->offset},
                              {"line", to_valid_utf8(log.boundary->line)}};
  } else {
    j["boot_boundary"] = nullptr;
  }
  j["boots_seen"] = log.boots_seen;
  j["bytes"] = log.bytes;
  j["lines_cut"] = log.lines_cut;
  j["nul_bytes"] = log.nul_bytes;
  j["events_dropped"] = log.events_dropped;
  if (log.driver_load) {
    j["driver_load"] = Json{{"version", to_valid_utf8(log.driver_load->version)},
                            {"flavour", log.driver_load->flavour},
                            {"loads", log.driver_load->count},
                            {"line", to_valid_utf8(log.driver_load->line)}};
  } else {
    j["driver_load"] = nullptr;
  }
  Json uuids = Json::object();
  for (const auto& [bus, uuid] : log.gpu_uuids) {
    uuids[bus] = to_valid_utf8(uuid);
  }
  j["gpu_uuids"] = std::move(uuids);
  Json gpus = Json::object();
  for (const auto& [bus, events] : log.gpu_events) {
    gpus[bus] = events_json(events);
  }
  j["gpu_events"] = std::move(gpus);
  j["host_events"] = events_json(log.host_events);
  j["earlier_boot_events"] = events_json(log.earlier_boot_events);
  return j;
}

} // namespace gpf
