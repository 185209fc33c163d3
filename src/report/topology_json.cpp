// JSON of the topology facts. Key order is fixed (ordered_json); host strings pass to_valid_utf8.
#include "gpf/report/topology_json.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/rules/topology.hpp"
#include "gpf/util/json_value.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {
using Json = nlohmann::ordered_json;

Json strings(const std::vector<std::string>& items) {
  Json arr = Json::array();
  for (const auto& s : items) {
    arr.push_back(to_valid_utf8(s));
  }
  return arr;
}

template <class T> Json opt(const std::optional<T>& v) {
  return json_opt(v);
}

std::string_view acs_state_name(AcsState s) {
  static constexpr auto k_names = enum_names<AcsState::present>({"unknown", "absent", "present"});
  return k_names(s);
}

Json pcie_json(const PcieFacts& p) {
  Json j;
  j["ran"] = p.ran;
  j["devices_seen"] = p.devices_seen;
  Json gpus = Json::array();
  for (const auto& g : p.gpus) {
    Json gj;
    gj["bus_id"] = g.bus_id;
    gj["path"] = to_valid_utf8(g.path);
    gj["root"] = to_valid_utf8(g.root);
    gj["bridges"] = strings(g.bridges);
    gj["device_id"] = g.device_id ? Json(fmt::format("0x{:04x}", *g.device_id)) : Json(nullptr);
    gj["iommu_group"] = opt(g.iommu_group);
    gj["error"] = to_valid_utf8(g.error);
    gpus.push_back(std::move(gj));
  }
  j["gpus"] = std::move(gpus);
  Json bridges = Json::array();
  for (const auto& [bus, b] : p.bridges) {
    Json bj;
    bj["bus_id"] = bus;
    bj["path"] = to_valid_utf8(b.path);
    bj["kind"] = port_kind(b);
    bj["config_bytes"] = b.config.size;
    bj["acs"] = acs_state_name(b.config.acs_state);
    bj["acs_control"] =
        b.config.acs ? Json(fmt::format("0x{:04x}", b.config.acs->control)) : Json(nullptr);
    bj["redirects_p2p"] = b.config.acs ? Json(b.config.acs->redirects_p2p()) : Json(nullptr);
    bj["note"] = to_valid_utf8(b.config.note);
    bj["error"] = to_valid_utf8(b.error);
    bridges.push_back(std::move(bj));
  }
  j["bridges"] = std::move(bridges);
  j["nvswitches"] = strings(p.nvswitches);
  return j;
}

Json iommu_json(const IommuFacts& i) {
  Json j;
  j["ran"] = i.ran;
  j["groups"] = opt(i.groups);
  j["units"] = strings(i.units);
  Json types = Json::object();
  for (const auto& [group, type] : i.group_type) {
    types[to_valid_utf8(group)] = to_valid_utf8(type);
  }
  j["group_types"] = std::move(types);
  j["cmdline_options"] = strings(i.cmdline_options);
  j["cmdline_passthrough"] = i.cmdline_passthrough;
  j["cmdline_off"] = i.cmdline_off;
  j["hypervisor"] = opt(i.hypervisor);
  return j;
}

Json shm_json(const ShmFacts& s) {
  Json j;
  j["ran"] = s.ran;
  j["exists"] = s.exists;
  j["size_bytes"] = opt(s.size_bytes);
  j["available_bytes"] = opt(s.available_bytes);
  j["mount"] = opt(s.mount_line);
  j["memlock"] = opt(s.memlock_line);
  j["memlock_bytes"] = opt(s.memlock_soft);
  j["memlock_unlimited"] = s.memlock_unlimited;
  j["rdma_devices"] = strings(s.rdma_devices);
  return j;
}

Json processes(const std::vector<ProcessSeen>& list) {
  Json arr = Json::array();
  for (const auto& p : list) {
    arr.push_back(Json{{"pid", p.pid}, {"comm", to_valid_utf8(p.comm)}});
  }
  return arr;
}

Json services_json(const ServiceFacts& s) {
  Json j;
  j["ran"] = s.ran;
  j["process_table"] = s.process_table;
  j["init"] = opt(s.init_comm);
  j["fabric_manager"] = processes(s.fabric_manager);
  j["persistenced"] = processes(s.persistenced);
  j["fabric_manager_version"] = opt(s.fabric_manager_version);
  j["nvswitch_nodes"] = strings(s.nvswitch_nodes);
  return j;
}

Json firmware_json(const FirmwareFacts& f) {
  Json j;
  j["ran"] = f.ran;
  j["dirs_checked"] = strings(f.dirs_checked);
  j["gsp_files"] = strings(f.files);
  j["found_in"] = to_valid_utf8(f.found_in);
  return j;
}

} // namespace

Json topology_json(const TopologyFacts& t) {
  Json j;
  j["pcie"] = pcie_json(t.pcie);
  j["iommu"] = iommu_json(t.iommu);
  j["shm"] = shm_json(t.shm);
  j["services"] = services_json(t.services);
  j["firmware"] = firmware_json(t.firmware);
  Json mig = Json::array();
  for (const auto& m : t.mig_entries) {
    mig.push_back(Json{{"entry", to_valid_utf8(m.entry)},
                       {"gpu", opt(m.bus_id)},
                       {"path", to_valid_utf8(m.path)},
                       {"exists", opt(m.exists)}});
  }
  j["mig_entries"] = std::move(mig);
  return j;
}

} // namespace gpf
