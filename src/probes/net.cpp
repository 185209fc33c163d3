// Probe "net": the network interfaces in sys/class/net, with each one's operational state
// (`operstate`) and link speed (`speed`, Mb/s). Reads sys/class/net/<if>/operstate and speed.
// Facts: Linux ABI sysfs-class-net,
// https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-class-net
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"

#include <fmt/format.h>

namespace gpf {
namespace {

constexpr std::string_view k_class = "sys/class/net";
constexpr std::size_t k_attr_cap = 64;

ProbeStatus probe_net(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  if (host.absent(k_class)) {
    return status.skip(std::string(k_class) + " does not exist");
  }
  auto names = host.list_dir(k_class);
  if (!names) {
    return status.fail(std::string(k_class) + ": " + names.error().message);
  }
  facts.net.ran = true;
  std::vector<std::string> problems;
  for (const auto& name : *names) {
    const std::string dir = std::string(k_class) + "/" + name;
    NetInterface nic;
    nic.name = to_valid_utf8(name);
    if (auto state = host.read_attribute(dir + "/operstate", k_attr_cap); !state) {
      problems.push_back(dir + "/operstate: " + state.error().message);
    } else if (*state) {
      nic.operstate = to_valid_utf8(**state);
    }
    // A link that is down answers its speed with EINVAL: unknown, not a failure.
    if (auto speed = host.read_attribute(dir + "/speed", k_attr_cap); speed && *speed) {
      nic.speed_mbps = parse_uint(**speed);
    }
    facts.net.interfaces.push_back(std::move(nic));
  }
  if (!problems.empty()) {
    status.fail(fmt::format("{}", fmt::join(problems, "; ")));
  }
  return status;
}

const ProbeRegistration k_row{{"net", "network interfaces", 1350, probe_net}};

} // namespace
} // namespace gpf
