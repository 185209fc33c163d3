#pragma once
// Why a GPU did not come up, linked as one mechanism: a table of the kernel-log events that
// explain a GPU's RmInitAdapter failure, its falling off the bus, or its absence from the driver,
// each row with its source and its cause and remedy by where the check runs (a virtual machine,
// bare metal, unknown). An event counts when it names the GPU's bus id — or, for a link event,
// a PCIe port above the GPU (the pcie probe's path) — in the same boot (the scanner keeps only the
// current boot's events). Internal to src/rules.
#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace gpf {

struct CauseRow {
  std::string_view name;
  bool (*matches)(const LogEvent&);
  bool on_port; // also counted when it names a PCIe port above the GPU
  // {where}: the GPU's bus id or the port's; {gpu}: the GPU's bus id.
  std::string_view cause_vm, cause_metal, cause_unknown;
  std::string_view remedy_vm, remedy_metal, remedy_unknown;
  std::string_view source;
};

// In order of precedence: a link that went down or a GPU that could not be powered up explains a
// DMA/BAR failure that follows, not the reverse.
inline const std::vector<CauseRow>& cause_table() {
  static const std::vector<CauseRow> rows{
      {"link", [](const LogEvent& e) { return e.kind == LogEventKind::link_down; }, true,
       "the PCIe link to the GPU went down ({detail} on {where}; in a virtual machine: on the "
       "host)",
       "the PCIe link to the GPU went down ({detail} on {where})",
       "the PCIe link to the GPU went down ({detail} on {where})",
       "The passed-through GPU's PCIe link went down on the host: on a cloud instance, stop and "
       "start it so it lands on other hardware and report the GPU to the provider",
       "Reseat the GPU and its riser or cable and check the slot (the link at {where} reported "
       "{detail}); power-cycle the node, since a reboot does not always retrain a dead link; if it "
       "recurs, move the GPU to another slot or have the board serviced",
       "Power-cycle the node; on bare metal reseat the GPU and its riser and check the slot (the "
       "link at {where} reported {detail}); on a cloud instance, stop and start it and report the "
       "GPU to the provider",
       "https://github.com/torvalds/linux/blob/master/drivers/pci/pcie/aer.c"},
      {"power-state", [](const LogEvent& e) { return e.kind == LogEventKind::power_state; }, false,
       "the GPU could not be brought out of D3cold: the PCI core found it inaccessible (in a "
       "virtual machine: on the host)",
       "the GPU could not be brought out of D3cold: the PCI core found it inaccessible",
       "the GPU could not be brought out of D3cold: the PCI core found it inaccessible",
       "The host could not wake the passed-through GPU from D3cold: on a cloud instance, stop and "
       "start it and report the GPU to the provider; on your own hypervisor keep the GPU out of "
       "D3cold on the host (vfio-pci disable_idle_d3=1) and power-cycle it",
       "Power-cycle the node (off, then on: a GPU stuck in D3cold does not wake on a warm "
       "reboot); keep it out of D3cold (`echo 0 | sudo tee "
       "/sys/bus/pci/devices/{gpu}/d3cold_allowed`, or NVreg_DynamicPowerManagement=0x00 in the "
       "nvidia module options) and update the system BIOS; if it recurs, reseat the GPU",
       "Power-cycle the node (a GPU stuck in D3cold does not wake on a warm reboot) and keep it "
       "out of D3cold (`echo 0 | sudo tee /sys/bus/pci/devices/{gpu}/d3cold_allowed`); in a "
       "virtual machine, report the GPU to the provider",
       "https://github.com/torvalds/linux/blob/master/drivers/pci/pci.c"},
      {"bar",
       [](const LogEvent& e) {
         return e.kind == LogEventKind::bar_invalid ||
                (e.kind == LogEventKind::dma_setup && e.detail != "iommu");
       },
       false,
       "the hypervisor's PCI pass-through did not map the GPU's BAR (this is a virtual machine: "
       "cpuinfo has the hypervisor flag)",
       "the firmware did not place the GPU's large BAR (bare metal)",
       "the GPU's PCI BAR was not mapped",
       "The GPU's PCI BAR was not mapped by the hypervisor's pass-through: on a cloud instance, "
       "stop and start it so it lands on other hardware and report the GPU to the provider; on "
       "your own hypervisor, give the VM a 64-bit MMIO window large enough for the GPU's BARs, "
       "then reboot the VM",
       "Enable \"Above 4G decoding\" (and Resizable BAR where offered) in the BIOS/UEFI set-up, "
       "or boot the kernel with pci=realloc, then reboot",
       "In a virtual machine, the hypervisor's PCI pass-through did not map the GPU's BAR (on a "
       "cloud instance, stop and start it and report the GPU to the provider); on bare metal, "
       "enable \"Above 4G decoding\" (and Resizable BAR) in the BIOS/UEFI set-up or boot with "
       "pci=realloc; then reboot",
       "https://github.com/torvalds/linux/blob/master/drivers/pci/setup-res.c"},
      {"iommu",
       [](const LogEvent& e) { return e.kind == LogEventKind::dma_setup && e.detail == "iommu"; },
       false,
       "the IOMMU blocked the GPU's DMA (in a virtual machine: the hypervisor's DMA remapping for "
       "the passed-through GPU)",
       "the IOMMU blocked the GPU's DMA", "the IOMMU blocked the GPU's DMA",
       "The hypervisor's DMA remapping for the passed-through GPU failed: on a cloud instance, "
       "stop and start it and report the GPU to the provider; on your own hypervisor, check the "
       "GPU's vfio/IOMMU group assignment",
       "The IOMMU faulted on the GPU's DMA: boot with iommu=pt (or check "
       "intel_iommu=/amd_iommu=), then reboot",
       "The IOMMU faulted on the GPU's DMA: boot with iommu=pt (or check "
       "intel_iommu=/amd_iommu=), then reboot",
       "https://github.com/torvalds/linux/blob/master/drivers/iommu/intel/dmar.c"},
  };
  return rows;
}

// The cause events of the GPU `bus`, in the table's order: its own events and, for rows that
// allow it, those of the PCIe ports above it.
struct FoundCause {
  const CauseRow* row;
  const LogEvent* event;
  std::string where; // the bus id the event names
};

inline std::vector<FoundCause> find_causes(const Facts& f, const std::string& bus) {
  std::vector<FoundCause> out;
  const GpuPciPath* path = find_gpu_path(f.topology, bus);
  for (const CauseRow& row : cause_table()) {
    std::vector<std::string> places{bus};
    if (row.on_port && path) {
      places.insert(places.end(), path->bridges.rbegin(), path->bridges.rend());
    }
    for (const auto& place : places) {
      const auto it = f.log.gpu_events.find(place);
      if (it == f.log.gpu_events.end()) {
        continue;
      }
      for (const auto& e : it->second) {
        if (row.matches(e)) {
          out.push_back({&row, &e, place});
        }
      }
    }
  }
  return out;
}

// Adds the GPU's cause events to the hit's evidence and, from the first of them, the likely cause
// to its message and the remedy for where the check runs. Nothing when no event explains it.
inline void link_causes(const Facts& f, Hit& hit, const std::string& bus) {
  const auto found = find_causes(f, bus);
  if (found.empty()) {
    return;
  }
  EventPtrs events;
  for (const auto& c : found) {
    if (std::find(events.begin(), events.end(), c.event) == events.end()) {
      events.push_back(c.event);
    }
  }
  for (auto& line : evidence_of(events)) {
    if (std::find(hit.evidence.begin(), hit.evidence.end(), line) == hit.evidence.end()) {
      hit.evidence.push_back(std::move(line));
    }
  }
  // The first row's most specific event: the AER driver logs the generic "severity=Uncorrected
  // (Fatal)" line before the error it names (Surprise Down).
  const FoundCause* pick_first = &found.front();
  for (const auto& c : found) {
    if (c.row == found.front().row && c.event->detail != "a fatal AER error") {
      pick_first = &c;
      break;
    }
  }
  const FoundCause& first = *pick_first;
  const std::optional<bool> vm = f.topology.iommu.hypervisor;
  const auto pick = [&vm](std::string_view in_vm, std::string_view metal, std::string_view other) {
    return vm == true ? in_vm : vm == false ? metal : other;
  };
  const auto fill = [&](std::string_view text) {
    return fmt::format(fmt::runtime(text), fmt::arg("where", first.where), fmt::arg("gpu", bus),
                       fmt::arg("detail", first.event->detail));
  };
  hit.message += fmt::format(
      " — likely cause: {}",
      fill(pick(first.row->cause_vm, first.row->cause_metal, first.row->cause_unknown)));
  hit.remedy = fill(pick(first.row->remedy_vm, first.row->remedy_metal, first.row->remedy_unknown));
}

} // namespace gpf
