// The GSP firmware table. File names: kernel-open/common/inc/nv-firmware.h of NVIDIA's open GPU
// kernel modules; the device-id families of NVIDIA GPUs: pci.ids (vendor 10de).
#include "gpf/knowledge/gsp_firmware.hpp"

#include <algorithm>

namespace gpf {
namespace {

constexpr std::string_view k_nv_firmware =
    "https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/common/inc/nv-firmware.h";
constexpr std::string_view k_pci_ids = "https://pci-ids.ucw.cz/read/PC/10de";

constexpr GspFirmwareRow k_rows[] = {
    {0x0000, 0x1DFF, "", "pre-Turing (Maxwell, Pascal, Volta): no GSP", k_pci_ids},
    {0x1E00, 0x1FFF, "gsp_tu10x.bin", "Turing TU10x", k_nv_firmware},
    {0x2000, 0x20FF, "gsp_tu10x.bin", "Ampere GA100", k_nv_firmware},
    {0x2100, 0x21FF, "gsp_tu10x.bin", "Turing TU11x", k_nv_firmware},
    {0x2200, 0x2FFF, "gsp_ga10x.bin",
     "Ampere GA10x, Hopper GH100, Ada AD10x, Blackwell GB1xx/GB20x", k_nv_firmware},
};

} // namespace

std::span<const GspFirmwareRow> gsp_firmware_table() {
  return k_rows;
}

std::optional<std::string> gsp_firmware_for_device(std::uint16_t device_id) {
  const auto* row = std::find_if(std::begin(k_rows), std::end(k_rows),
                                 [&](const GspFirmwareRow& r) { return device_id <= r.last; });
  if (row == std::end(k_rows)) {
    return std::nullopt;
  }
  return std::string(row->file);
}

} // namespace gpf
