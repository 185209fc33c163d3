// Rules whose id starts with "ib.": the ports of the InfiniBand / RoCE devices a multi-node job
// uses. Which ports and rates a site expects is site policy (--rules, facts ib.ports.*). Port
// states: Linux ABI sysfs-class-infiniband.
#include "common.hpp"

namespace gpf {
namespace {

constexpr std::string_view k_ib_source =
    "https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband";

std::string state_text(std::optional<unsigned> code, const std::string& name) {
  return code ? fmt::format("{}: {}", *code, name) : (name.empty() ? "absent" : name);
}

std::string port_evidence(const RdmaDevice& d, const IbPort& p) {
  return fmt::format(
      "/sys/class/infiniband/{}/ports/{}: state {}, phys_state {}, rate {}, link_layer {}", d.name,
      p.port, state_text(p.state_code, p.state), state_text(p.phys_state_code, p.phys_state),
      p.rate_text.empty() ? "absent" : p.rate_text, p.link_layer.empty() ? "absent" : p.link_layer);
}

struct PortVerdict {
  std::string what;
  std::string remedy;
  bool disabled = false;
};

// What a port's two states together say, and the next step (port, device in the remedy).
PortVerdict judge_port(const RdmaDevice& d, const IbPort& p) {
  const std::string port = fmt::format("{} port {}", d.name, p.port);
  const bool ethernet = p.link_layer == "Ethernet";
  const auto phys = p.phys_state_code.value_or(0);
  const auto state = p.state_code.value_or(0);
  if (phys == 3) {
    return {"is administratively disabled (phys_state Disabled)",
            fmt::format("Nothing to do if {} is meant to be unused; otherwise enable it (e.g. "
                        "`ibportstate` or the switch/NIC configuration)",
                        port),
            true};
  }
  if (phys == 5 && !ethernet) {
    if (state == 1) {
      return {"has a physical link (LinkUp) but is DOWN: no subnet manager has configured it",
              fmt::format("Check that a subnet manager (opensm or the switch's) runs on the "
                          "fabric of {}; `sminfo` and `ibstat {}` show it",
                          port, d.name)};
    }
    if (state == 2 || state == 3) {
      return {fmt::format("has a physical link (LinkUp) but is {}: the subnet manager has not "
                          "activated it (yet)",
                          p.state),
              fmt::format("Wait a minute and run again; if {} stays {}, check the subnet manager "
                          "(`sminfo`, its log) for errors about this port",
                          port, p.state)};
    }
  }
  if (phys == 2) {
    return {"has no physical link (phys_state Polling): no cable, a bad cable or transceiver, or "
            "the switch port is down",
            fmt::format("Check the cable and transceiver of {} and the switch port it connects "
                        "to; `ibstat {}` / `mlxlink -d {}` show the link",
                        port, d.name, d.name)};
  }
  return {fmt::format("is {} with physical state {}", state_text(p.state_code, p.state),
                      state_text(p.phys_state_code, p.phys_state)),
          fmt::format("Check the cable, the switch port and (InfiniBand) the subnet manager of {}; "
                      "`ibstat {}` shows its state",
                      port, d.name)};
}

} // namespace

std::span<const Rule> ib_rules() {
  static const Rule rows[] = {
      {.id = "ib.port-not-active",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info for a port that is administratively disabled",
       .title = "Every InfiniBand / RoCE port is ACTIVE with a physical link (LinkUp)",
       .remedy = "Check the port's cable and switch port, and (InfiniBand) the subnet manager",
       .source = k_ib_source,
       .explanation =
           "A multi-node job's collectives run over the host's RDMA ports. A port that is not ACTIVE leaves NCCL with fewer rails (slower) or none (it falls back to TCP sockets, or the job hangs at its first collective). The port's logical state and its physical state are independent and together say why: DOWN with LinkUp means the cable is fine but no subnet manager configured the port; INIT or ARMED with LinkUp means the subnet manager has not activated it yet; Polling means there is no physical link at all (cable, transceiver, switch port). An administratively disabled port is reported as information. Which ports a site expects active, and at which rate, is site policy: see the ib.ports.* facts of --rules.",
       .evidence =
           "state, phys_state, rate and link_layer of each port under sys/class/infiniband/<device>/ports/.",
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& d : c.facts.topology.rdma.devices) {
           for (const auto& p : d.ports) {
             if (p.active() || (!p.state_code && !p.phys_state_code)) {
               continue;
             }
             const auto v = judge_port(d, p);
             Hit hit{fmt::format("{} port {}{} {}", d.name, p.port,
                                 d.bus_id.empty() ? "" : fmt::format(" ({})", d.bus_id), v.what),
                     {port_evidence(d, p)}};
             hit.remedy = v.remedy;
             if (v.disabled) {
               hit.severity = Severity::info;
             }
             hits.push_back(std::move(hit));
           }
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
