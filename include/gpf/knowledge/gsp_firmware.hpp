#pragma once
// Which GSP firmware file a GPU loads, by its PCI device id, as data with a source per row: the
// file names from nv-firmware.h, the device-id families from pci.ids
// (docs/sources.md#gsp-firmware). The gsp rules judge whether the file of the loaded driver version
// is there.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpf {

struct GspFirmwareRow {
  std::uint16_t first; // PCI device ids first..last, inclusive
  std::uint16_t last;
  std::string_view file;   // "" for GPUs without GSP (pre-Turing)
  std::string_view family; // the GPUs whose ids the range holds
  std::string_view source;
};

// Sorted by id, ranges adjoining from 0x0000 (a test checks).
std::span<const GspFirmwareRow> gsp_firmware_table();

// The GSP firmware file a GPU with this PCI device id loads: "gsp_tu10x.bin" for Turing and GA100,
// "gsp_ga10x.bin" for GA10x, Ada, Hopper and Blackwell; "" for pre-Turing GPUs (no GSP); nullopt
// when the id is beyond the NVIDIA GPU ids the table knows.
std::optional<std::string> gsp_firmware_for_device(std::uint16_t device_id);

} // namespace gpf
