// Probe "firmware": the GSP firmware files of the loaded driver version
// (lib/firmware/nvidia/<version>/gsp_*.bin, also under lib/firmware/updates and the kernel's
// firmware_class.path). A directory is listed, never the files read. Without lib/firmware (inside
// most containers the host's firmware is not visible) the probe is skipped: absence there proves
// nothing. Facts:
// https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/common/inc/nv-firmware.h
// (NV_FIRMWARE_FOR_NAME = "nvidia/" NV_VERSION_STRING "/" name
// ".bin"); the driver logs RmInitAdapter failed (0x61:0x56) when the image is missing.
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"

#include <algorithm>

namespace gpf {

ProbeStatus probe_firmware(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  FirmwareFacts& firmware = facts.topology.firmware;
  const std::string& version = facts.driver.version_text;
  if (!facts.driver.loaded || version.empty() || facts.gpus.empty()) {
    return status.skip("no loaded driver version with GPUs to check firmware for");
  }
  if (!host.is_directory("lib/firmware")) {
    return status.skip(
        "lib/firmware does not exist (inside a container the host's firmware is not visible)");
  }
  firmware.ran = true;
  // the kernel's firmware search order (drivers/base/firmware_loader): firmware_class.path, then
  // updates/<release>, updates, <release>, the top directory
  std::vector<std::string> bases;
  const std::string& release = facts.kernel.release;
  const bool plain_release =
      !release.empty() && release.find('/') == std::string::npos && release != "..";
  if (plain_release) {
    bases.push_back("lib/firmware/updates/" + release);
  }
  bases.push_back("lib/firmware/updates");
  if (plain_release) {
    bases.push_back("lib/firmware/" + release);
  }
  bases.push_back("lib/firmware");
  if (auto custom = host.read_file("sys/module/firmware_class/parameters/path", 4096)) {
    auto path = trim(custom->data);
    while (!path.empty() && path.front() == '/') {
      path.remove_prefix(1);
    }
    if (!path.empty()) {
      bases.insert(bases.begin(), std::string(path));
    }
  }
  for (const auto& base : bases) {
    const std::string dir = base + "/nvidia/" + version;
    firmware.dirs_checked.push_back(dir);
    auto names = host.list_dir(dir);
    if (!names) {
      continue;
    }
    for (const auto& name : *names) {
      if (starts_with(name, "gsp_") && name.size() > 8 &&
          name.compare(name.size() - 4, 4, ".bin") == 0 &&
          std::find(firmware.files.begin(), firmware.files.end(), name) == firmware.files.end()) {
        firmware.files.push_back(name);
        if (firmware.found_in.empty()) {
          firmware.found_in = dir;
        }
      }
    }
  }
  std::sort(firmware.files.begin(), firmware.files.end());
  return status;
}

namespace {
const ProbeRegistration k_row{{"firmware", "GSP firmware files", 1100, probe_firmware}};
} // namespace

} // namespace gpf
