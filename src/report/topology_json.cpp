// JSON of the topology facts. Key order is fixed (ordered_json); host strings pass to_valid_utf8.
#include "gpf/report/topology_json.hpp"
#include "gpf/util/enum_names.hpp"

#include "gpf/facts/topology_names.hpp"
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

Json tenths_json(const std::optional<unsigned>& v) {
  return v ? Json(static_cast<double>(*v) / 10.0) : Json(nullptr);
}

Json link_json(const PciLinkState& l) {
  Json j;
  j["width"] = opt(l.width);
  j["max_width"] = opt(l.max_width);
  j["speed_gts"] = tenths_json(l.speed);
  j["max_speed_gts"] = tenths_json(l.max_speed);
  j["speed_text"] = to_valid_utf8(l.speed_text);
  j["max_speed_text"] = to_valid_utf8(l.max_speed_text);
  return j;
}

Json aer_json(const AerCounts& a) {
  Json j;
  j["fatal"] = opt(a.fatal);
  j["nonfatal"] = opt(a.nonfatal);
  j["correctable"] = opt(a.correctable);
  return j;
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
    gj["link"] = link_json(g.link);
    gj["aer"] = aer_json(g.aer);
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
    bj["link"] = link_json(b.link);
    bj["aer"] = aer_json(b.aer);
    bridges.push_back(std::move(bj));
  }
  j["bridges"] = std::move(bridges);
  j["nvswitches"] = strings(p.nvswitches);
  j["nvidia_devices"] = strings(p.nvidia_devices);
  j["vendor_unreadable"] = strings(p.vendor_unreadable);
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

// rdma: the RDMA devices, for which the memlock limit matters (the rdma probe's fact, kept in
// this block where the report has always shown it).
Json shm_json(const ShmFacts& s, const RdmaFacts& rdma) {
  Json j;
  j["ran"] = s.ran;
  j["exists"] = s.exists;
  j["size_bytes"] = opt(s.size_bytes);
  j["available_bytes"] = opt(s.available_bytes);
  j["mount"] = opt(s.mount_line);
  j["memlock"] = opt(s.memlock_line);
  j["memlock_bytes"] = opt(s.memlock_soft);
  j["memlock_unlimited"] = s.memlock_unlimited;
  j["rdma_devices"] = strings(rdma.device_names());
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
  j["imex"] = processes(s.imex);
  j["imex_device"] = opt(s.imex_devices_line);
  j["imex_channels"] = strings(s.imex_channels);
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

Json rdma_json(const RdmaFacts& r) {
  Json j;
  j["ran"] = r.ran;
  Json devices = Json::array();
  for (const auto& d : r.devices) {
    Json dj;
    dj["name"] = to_valid_utf8(d.name);
    dj["path"] = to_valid_utf8(d.path);
    dj["bus_id"] = to_valid_utf8(d.bus_id);
    dj["numa_node"] = opt(d.numa_node);
    Json ports = Json::array();
    for (const auto& p : d.ports) {
      Json pj;
      pj["port"] = p.port;
      pj["state"] = to_valid_utf8(p.state);
      pj["phys_state"] = to_valid_utf8(p.phys_state);
      pj["active"] = p.active();
      pj["rate_gbps"] = tenths_json(p.rate);
      pj["rate"] = to_valid_utf8(p.rate_text);
      pj["link_layer"] = to_valid_utf8(p.link_layer);
      pj["error"] = to_valid_utf8(p.error);
      ports.push_back(std::move(pj));
    }
    dj["ports"] = std::move(ports);
    devices.push_back(std::move(dj));
  }
  j["devices"] = std::move(devices);
  Json nearest = Json::array();
  for (const auto& n : r.nearest) {
    nearest.push_back(Json{{"gpu", n.gpu},
                           {"nic", to_valid_utf8(n.nic)},
                           {"nic_bus_id", to_valid_utf8(n.nic_bus_id)},
                           {"distance", pci_distance_name(n.distance)},
                           {"gpu_numa_node", opt(n.gpu_numa_node)},
                           {"nic_numa_node", opt(n.nic_numa_node)}});
  }
  j["nearest_nic"] = std::move(nearest);
  return j;
}

Json gpu_processes_json(const GpuProcessFacts& g) {
  Json j;
  j["ran"] = g.ran;
  j["processes"] = g.processes;
  j["unreadable"] = g.unreadable;
  Json holders = Json::array();
  for (const auto& h : g.holders) {
    Json hj;
    hj["pid"] = h.pid;
    hj["comm"] = to_valid_utf8(h.comm);
    hj["state"] = std::string(1, h.state >= 'A' && h.state <= 'Z' ? h.state : '?');
    hj["gpu_minors"] = h.minors;
    hj["fds"] = strings(h.fds);
    holders.push_back(std::move(hj));
  }
  j["holders"] = std::move(holders);
  return j;
}

} // namespace

Json topology_json(const TopologyFacts& t) {
  Json j;
  j["pcie"] = pcie_json(t.pcie);
  j["iommu"] = iommu_json(t.iommu);
  j["shm"] = shm_json(t.shm, t.rdma);
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
  j["rdma"] = rdma_json(t.rdma);
  j["gpu_processes"] = gpu_processes_json(t.gpu_processes);
  return j;
}

} // namespace gpf
