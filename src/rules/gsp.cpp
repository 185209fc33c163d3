// Rules whose id starts with "gsp.": GSP firmware: load failures in the kernel log and firmware
// files missing on disk.
#include "common.hpp"
#include "gpf/knowledge/gsp_firmware.hpp"

namespace gpf {
namespace {

bool gsp_in_use(const GpuFacts& g) {
  return g.firmware && !g.firmware->empty() && *g.firmware != "N/A";
}

} // namespace

std::span<const Rule> gsp_rules() {
  static const Rule rows[] = {
      {.id = "gsp.firmware-load-failed",
       .stage = Stage::gpu,
       .severity = Severity::fail,
       .severity_from =
           "warn when the log names no GPU (the GPUs' own findings decide); info before the last driver reload",
       .title = "The GSP firmware loads and boots",
       .remedy =
           "Install the GSP firmware files for exactly the loaded driver version (/lib/firmware/nvidia/<version>/gsp_*.bin, from the driver or the distribution's firmware package), then reload the driver; "
           "if the firmware is present and still fails to boot, reset or power-cycle the GPU",
       .source = "docs/sources.md#gsp-firmware",
       .explanation =
           "With GSP, the driver loads firmware files for its exact version (gsp_*.bin under "
           "/lib/firmware/nvidia/VERSION/) onto the GPU's GSP processor, which then runs most "
           "of the driver. If the file is missing, or the firmware fails to boot, the GPU is "
           "not initialised and CUDA does not see it. Confirm by hand: `ls "
           "/lib/firmware/nvidia/$(cat /sys/module/nvidia/version)/` and `dmesg | grep -i gsp`. "
           "The GPU is left out of the recommendation (warn when the log names no GPU; info "
           "before the last driver reload).",
       .evidence =
           "The current boot's kernel-log lines `NVRM: RmInitAdapter: Cannot initialize GSP "
           "firmware RM`, `GSP-RM proxy boot command failed`, `RmFetchGspRmImages: No firmware "
           "image found`, and the firmware loader's `nvidia <bus>: Direct firmware load for "
           "nvidia/<version>/gsp_*.bin failed with error -N` (gsp_log_*.bin is optional); the "
           "last `NVRM: loading` line.",
       .reads = {ProbeId::kernel_log},
       .events = log_events({LogEventKind::gsp_firmware}),
       .cases = {fires("log-gpu-bring-up", "0000:2a:00.0"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         auto hits = gpu_events_rule(c, {Effect::gpu_unusable, true});
         for (auto& hit : host_events_rule(c, true)) {
           hit.severity =
               hit.severity.value_or(Severity::warn); // names no GPU: the GPUs' own findings decide
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "gsp.firmware-files-missing",
       .stage = Stage::host,
       .severity = Severity::fail,
       .title = "The GSP firmware files of the loaded driver version exist",
       .remedy =
           "Reinstall the driver package that ships /lib/firmware/nvidia/<version>/gsp_*.bin for the loaded version, then reload the driver or reboot",
       .source = "docs/sources.md#gsp-firmware",
       .explanation =
           "GSP-based GPUs (Turing and later) load their GSP-RM firmware from /lib/firmware/nvidia/<driver version>/ whenever they initialise; without the file the driver logs 'RmInitAdapter failed! (0x61:0x56)' and the GPU is unusable. Judged with the open kernel module, or for a GPU whose information file shows GSP firmware in use. Without /lib/firmware at all (most containers) it is not judged.",
       .evidence =
           "The directories the kernel's firmware loader searches for nvidia/<version>/gsp_*.bin; each GPU's PCI device id (gsp_tu10x.bin for Turing and GA100, gsp_ga10x.bin for GA10x, Hopper, Ada, Blackwell).",
       .cases = {fires("topo-gsp-missing"), silent("topo-mig-uuid")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const auto& fw = c.facts.topology.firmware;
         const auto& driver = c.facts.driver;
         if (!fw.ran) {
           return {};
         }
         std::map<std::string, std::vector<std::string>>
             missing; // file ("" = any gsp_*.bin) -> GPUs
         std::vector<std::string> why;
         for (const auto& g : c.facts.gpus) {
           if (g.excluded == true || (driver.flavour != DriverFlavour::open && !gsp_in_use(g))) {
             continue;
           }
           std::optional<std::string> needed;
           const auto* path = find_gpu_path(c.facts.topology, g.bus_id);
           const bool id_known = path && path->device_id;
           const std::uint16_t device_id = id_known ? *path->device_id : 0;
           if (id_known) {
             needed = gsp_firmware_for_device(device_id);
             if (needed && needed->empty() && !gsp_in_use(g)) {
               continue; // pre-Turing: no GSP (the open module rejects it: another rule's finding)
             }
           }
           const std::string file = needed && !needed->empty() ? *needed : std::string();
           const bool present =
               file.empty() ? !fw.files.empty()
                            : std::find(fw.files.begin(), fw.files.end(), file) != fw.files.end();
           if (present) {
             continue;
           }
           missing[file].push_back(g.bus_id);
           if (id_known && why.size() < 4) {
             why.push_back(fmt::format("{}: PCI device 0x{:04x} loads {}", c.job.label(g.bus_id),
                                       device_id, file.empty() ? "a gsp_*.bin" : file));
           }
         }
         std::vector<Hit> hits;
         for (const auto& [file, gpus] : missing) {
           std::vector<std::string> evidence;
           evidence.push_back(fmt::format("looked in: /{}", fmt::join(fw.dirs_checked, ", /")));
           evidence.push_back(fw.files.empty() ? std::string("gsp_*.bin files found: none")
                                               : fmt::format("gsp_*.bin files found in /{}: {}",
                                                             fw.found_in, join(fw.files)));
           evidence.push_back(
               "/" + driver.version_source + ": " + driver.version_text +
               (driver.flavour == DriverFlavour::open ? " (open kernel module)" : ""));
           evidence.insert(evidence.end(), why.begin(), why.end());
           Hit hit{
               fmt::format(
                   "GSP firmware {} for driver {} is missing: {} {} load it whenever they initialise and fail without it (RmInitAdapter failed 0x61:0x56)",
                   file.empty() ? std::string("(gsp_*.bin)") : file, driver.version_text,
                   plural(gpus.size(), "GPU"), join(gpus)),
               std::move(evidence)};
           hit.remedy = fmt::format(
               "Reinstall the driver package that ships the firmware of {0} so that /lib/firmware/nvidia/{0}/{1} exists (the firmware must be the kernel module's exact version), then reload the driver or reboot",
               driver.version_text, file.empty() ? "gsp_*.bin" : file);
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
  };
  return rows;
}

} // namespace gpf
