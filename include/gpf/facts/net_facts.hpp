#pragma once
// Facts of the network-interface probe (sys/class/net): each interface's state and link speed.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

// One interface: sys/class/net/<name>/operstate ("up", "down", "dormant", "unknown", ...) and
// speed (Mb/s; the kernel gives none for a link that is down). Facts: Linux ABI sysfs-class-net.
struct NetInterface {
  std::string name;
  std::string operstate;
  std::optional<std::uint64_t> speed_mbps;
  template <class V> void fields(V& v) const {
    v("name", name);
    v("operstate", operstate);
    v("speed_mbps", speed_mbps);
  }
};

struct NetFacts {
  bool ran = false;
  std::vector<NetInterface> interfaces; // sorted by name
  template <class V> void fields(V& v) const {
    v("ran", ran);
    v("interfaces", interfaces);
  }
};

} // namespace gpf
