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

// "mlx5_3 port 1 (0000:5d:00.0)"
std::string port_name(const RdmaDevice& d, const IbPort& p) {
  return fmt::format("{} port {}{}", d.name, p.port,
                     d.bus_id.empty() ? "" : fmt::format(" ({})", d.bus_id));
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
};

// phys_state 3: switched off by hand or by the NIC's configuration (ib.port-disabled judges it).
bool disabled(const IbPort& p) {
  return p.phys_state_code == 3u;
}

// What a port's two states together say, and the next step (port, device in the remedy).
PortVerdict judge_port(const RdmaDevice& d, const IbPort& p) {
  const std::string port = fmt::format("{} port {}", d.name, p.port);
  const bool ethernet = p.link_layer == "Ethernet";
  const auto phys = p.phys_state_code.value_or(0);
  const auto state = p.state_code.value_or(0);
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
       .title =
           "Every InfiniBand / RoCE port that is not switched off is ACTIVE with a physical link (LinkUp)",
       .remedy = "Check the port's cable and switch port, and (InfiniBand) the subnet manager",
       .source = k_ib_source,
       .explanation =
           "A multi-node job's collectives run over the host's RDMA ports. A port that is not ACTIVE leaves NCCL with fewer rails (slower) or none (it falls back to TCP sockets, or the job hangs at its first collective). The port's logical state and its physical state are independent and together say why: DOWN with LinkUp means the cable is fine but no subnet manager configured the port; INIT or ARMED with LinkUp means the subnet manager has not activated it yet; Polling means there is no physical link at all (cable, transceiver, switch port). A port switched off (phys_state Disabled) is ib.port-disabled's. Which ports a site expects active, and at which rate, is site policy: see the ib.ports.* facts of --rules.",
       .evidence =
           "state, phys_state, rate and link_layer of each port under sys/class/infiniband/<device>/ports/.",
       .reads = {ProbeId::rdma},
       .cases = {fires("ib-port-down"), silent("ib-port-disabled")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& d : c.facts.topology.rdma.devices) {
           for (const auto& p : d.ports) {
             if (p.active() || disabled(p) || (!p.state_code && !p.phys_state_code)) {
               continue;
             }
             const auto v = judge_port(d, p);
             Hit hit{fmt::format("{} {}", port_name(d, p), v.what), {port_evidence(d, p)}};
             hit.remedy = v.remedy;
             hits.push_back(std::move(hit));
           }
         }
         return hits;
       }},
      {.id = "ib.port-disabled",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from = "info when no other port of the node is active",
       .title = "No InfiniBand / RoCE port is switched off while the node's other ports are active",
       .remedy =
           "Enable the port, or, where it is meant to be off, keep it out of jobs (NCCL_IB_HCA) and tell this check with --severity ib.port-disabled=info",
       .source = k_ib_source,
       .explanation =
           "A port whose physical state is Disabled was switched off: by hand (`ibportstate ... disable`), by the NIC's configuration or by the switch. On a node whose other ports are active that is rarely meant: a job that spreads its traffic over every HCA (NCCL's default) runs with one rail less, and one whose NCCL_IB_HCA names the port fails to start its collectives. The finding names the GPUs whose nearest NIC it is, the ones whose GPUDirect traffic it should carry. Where ports are off by design (a spare rail, a management port), the site says so with --severity ib.port-disabled=info (or --disable). A node on which no port is active at all is information: nothing is lost against its siblings.",
       .evidence =
           "phys_state and state of each port under sys/class/infiniband/<device>/ports/, the other ports' states, and the nearest NIC of each GPU (PCIe topology).",
       .reads = {ProbeId::rdma},
       .cases = {fires("ib-port-disabled"), silent("ib-port-down")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& rdma = c.facts.topology.rdma;
         std::size_t active = 0;
         for (const auto& d : rdma.devices) {
           for (const auto& p : d.ports) {
             active += p.active() ? 1 : 0;
           }
         }
         std::vector<Hit> hits;
         for (const auto& d : rdma.devices) {
           std::vector<std::string> neighbours; // GPUs whose nearest NIC this is
           for (const auto& n : rdma.nearest) {
             if (n.nic == d.name) {
               neighbours.push_back(c.job.label(n.gpu));
             }
           }
           for (const auto& p : d.ports) {
             if (!disabled(p)) {
               continue;
             }
             const std::string name = port_name(d, p);
             std::string message =
                 active == 0
                     ? fmt::format(
                           "{} is switched off (phys_state Disabled), and no other port on this node is active",
                           name)
                     : fmt::format(
                           "{} is switched off (phys_state Disabled) while {} of this node {} active: a job that spreads over every HCA runs with one rail less, and one whose NCCL_IB_HCA names {} fails",
                           name, counted(active, "other port"), active == 1 ? "is" : "are", d.name);
             std::vector<std::string> evidence{port_evidence(d, p)};
             if (!neighbours.empty()) {
               message += fmt::format("; it is the nearest NIC of {}", join_some(neighbours));
               evidence.push_back(
                   fmt::format("nearest NIC of {}: {}", join_some(neighbours), d.name));
             }
             Hit hit{std::move(message), std::move(evidence)};
             hit.remedy = fmt::format(
                 "If {0} should carry traffic, enable it (the NIC's or the switch port's configuration, or `ibportstate` as root; `ibstat {1}` shows it). "
                 "If it is meant to be off, keep {1} out of jobs (NCCL_IB_HCA listing the other HCAs) and run this check with --severity ib.port-disabled=info",
                 name, d.name);
             if (active == 0) {
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
