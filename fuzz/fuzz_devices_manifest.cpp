// libFuzzer target: a snapshot's devices.json (device-node manifest), read the way the checker
// reads it: through Host::snapshot on a scratch root holding the input as devices.json.
// Properties: no crash; an unparseable manifest is reported (manifest_error), not ignored.
#include "fuzz_support.hpp"

#include "gpf/host/host.hpp"

#include <fstream>

GPF_FUZZ_TARGET(devices_manifest) {
  const auto& root = gpf::fuzz::scratch_root();
  {
    std::ofstream out(root / "devices.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto host = gpf::Host::snapshot(root);
  gpf::fuzz::require(host.ok(), "the scratch root opens");
  for (const char* path : {"dev/nvidiactl", "dev/nvidia0", "dev/nvidia-uvm", "/dev/nvidia1", ""}) {
    const auto node = host->stat_node(path);
    (void)gpf::node_type_word(node.type);
  }
  if (!host->manifest_error().empty()) {
    gpf::fuzz::require(gpf::fuzz::is_valid_utf8(host->manifest_error()),
                       "manifest error is valid UTF-8");
  }
  return 0;
}
