// Rules whose id starts with "log.": the kernel log itself: readable, from this boot, well-formed,
// and GPUs it blames that the driver does not list.
#include "causes.hpp"
#include "common.hpp"

#include <algorithm>

namespace gpf {
namespace {

// The live probes saw every GPU the driver lists, and each one passed: CUDA started on it (or it
// is busy), the multi-GPU test (if run) passed, and NVML (if it ran) answered for it.
// What judged every GPU's health without the kernel log, or nullptr when nothing did: NVML
// answering for every GPU (its health queries stand in for the log's Xids), or the live CUDA
// probe passing every GPU with NVML not failing.
const char* gpu_health_judged_without_log(const Facts& f) {
  if (f.gpus.empty()) {
    return nullptr;
  }
  const bool nvml_ok = f.nvml.ran && f.nvml.init_ok();
  const bool nvml_every = nvml_ok && std::all_of(f.gpus.begin(), f.gpus.end(), [&](const auto& g) {
                            const NvmlGpu* n = f.nvml.gpu_by_bus(g.bus_id);
                            return n != nullptr && n->answered();
                          });
  if (nvml_every) {
    return "NVML answered for every GPU";
  }
  if ((f.nvml.ran && !nvml_ok) || !f.cuda.enumerated() ||
      (f.cuda.multi_gpu_ran && f.cuda.multi_gpu_ok != true)) {
    return nullptr;
  }
  const bool cuda_every = std::all_of(f.gpus.begin(), f.gpus.end(), [&](const auto& g) {
    const CudaDevice* d = f.cuda.device_by_bus(g.bus_id);
    return d != nullptr && (d->usable || d->in_use);
  });
  return cuda_every && !f.nvml.ran ? "the live CUDA probe reached every GPU and all passed"
                                   : nullptr;
}

} // namespace

std::span<const Rule> log_rules() {
  static const Rule rows[] = {
      // A PCI device the log blames but the driver does not list (it failed to probe or was never
      // bound).
      {.id = "log.gpu-missing-from-driver",
       .stage = Stage::host,
       .severity = Severity::warn,
       .title = "Every PCI device the kernel log blames is a GPU the driver lists",
       .remedy =
           "The GPU failed to come up: fix the cause in the finding, then reboot or reload the driver",
       .source = "docs/sources.md#rminitadapter-failures",
       .explanation =
           "The kernel log blames a PCI device (an Xid, an RmInitAdapter failure) that is not "
           "among the GPUs the driver lists now: a GPU that failed to come up and dropped out. "
           "The job will see fewer GPUs than the machine has. Confirm by hand: compare `lspci "
           "-d 10de:` with `nvidia-smi -L`. Warn: the recommendation covers the GPUs the driver "
           "lists, and --min-gpus fails the check when too few remain.",
       .evidence =
           "The current boot's kernel-log events that name a PCI bus id absent from "
           "proc/driver/nvidia/gpus/, such as Xids (not application or informational ones) and "
           "RmInitAdapter failures, with the PCIe link-down, D3cold and BAR lines that explain "
           "them and the cpuinfo hypervisor flag.",
       .cases = {fires("log-gpu-missing-from-driver", "0000:9a:00.0"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         std::vector<Hit> hits;
         for (const auto& [bus, events] : c.facts.log.gpu_events) {
           if (listed(c.facts, bus)) {
             continue;
           }
           EventPtrs serious;
           for (const auto& e : events) {
             // A BAR or IOMMU message may name any PCI device, not only a GPU: evidence only.
             const bool harmless = e.kind == LogEventKind::dma_setup ||
                                   e.kind == LogEventKind::power_state ||
                                   e.kind == LogEventKind::link_down ||
                                   (is_xid(e) && (xid_class(e) == XidClass::application ||
                                                  xid_class(e) == XidClass::informational ||
                                                  (*e.xid == 154 && e.recovery_action == "None")));
             if (!harmless) {
               serious.push_back(&e);
             }
           }
           if (serious.empty()) {
             continue;
           }
           Hit hit{
               fmt::format(
                   "{} is not listed by the NVIDIA driver (/proc/driver/nvidia/gpus); the kernel log says: {}",
                   c.job.label(bus), describe(serious)),
               evidence_of(serious), bus};
           if (const Rule* rule = find_rule(log_rule_id(*serious.front()))) {
             hit.remedy = serious.front()->kind == LogEventKind::rm_init_failed
                              ? rm_init_remedy(serious)
                              : std::string(rule->remedy);
           }
           link_causes(c.facts, hit, bus);
           hits.push_back(std::move(hit));
         }
         return hits;
       }},
      {.id = "log.not-readable",
       .stage = Stage::host,
       .severity = Severity::warn,
       .severity_from =
           "info when NVML answered for every GPU, or the live CUDA probe passed every GPU (NVML "
           "not run)",
       .title = "The kernel log was read",
       .remedy =
           "Add the user to the systemd-journal group (or adm, which can also read /var/log/kern.log): `usermod -aG systemd-journal USER`, then log in again; "
           "or run as root, or pass the log with --dmesg FILE (`journalctl -k -b > kern.txt` on the host); "
           "or, where the GPUs' own checks are enough, `--disable log.not-readable`",
       .source = "docs/kernel-log.md#sources",
       .explanation =
           "Every kernel-log source was tried in order — the ring buffer (/dev/kmsg, klogctl), the systemd journal's kernel messages of this boot, /var/log/kern.log, /var/log/messages, /var/log/syslog — and none could be read (an ordinary user on a default Debian or Ubuntu node: kernel.dmesg_restrict=1). Without the log, Xids, RmInitAdapter failures and GPUs that fell off the bus are unseen. When NVML answered for every GPU (its health queries: recovery action, ECC, remapping) or, without NVML, the live CUDA probe passed every GPU, the gap is small and it is information, so `--strict` does not block every ordinary user's launch; when nothing else judged the GPUs' health it warns.",
       .evidence = "each source tried and its OS error",
       .cases = {fires("log-not-readable"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const LogFacts& log = c.facts.log;
         if (log.read_error.empty()) {
           return {};
         }
         // The evidence names every source tried (/dev/kmsg and klogctl, the journal, the syslog
         // files; dmesg.txt; the --dmesg file) and why each could not be read.
         std::vector<std::string> evidence;
         for (const auto& s : log.sources) {
           if (s.state == "error") {
             evidence.push_back(s.error);
           } else if (s.state == "absent") {
             evidence.push_back(s.source + ": not present");
           }
         }
         if (evidence.empty()) {
           evidence.push_back(log.read_error);
         }
         Hit hit{fmt::format("Kernel log {}: {}",
                             log.ran ? "only partly checked, reading stopped" : "not checked",
                             log.read_error),
                 evidence};
         // The user who ran the check, where the environment names one, in place of "USER".
         const auto user = c.facts.env.get("USER");
         if (user && !user->empty() && user->find_first_of(" '\"`$;&|<>\\") == std::string::npos) {
           std::string remedy(c.rule->remedy);
           if (const auto at = remedy.find("systemd-journal USER`"); at != std::string::npos) {
             remedy.replace(at + 16, 4, *user);
             hit.remedy = std::move(remedy);
           }
         }
         if (const char* judged = log.ran ? nullptr : gpu_health_judged_without_log(c.facts)) {
           hit.severity = Severity::info;
           hit.message += fmt::format(" — {}, so the GPUs' health was judged without it", judged);
         }
         return {hit};
       }},
      {.id = "log.earlier-boot",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "Events from earlier boots in the log (not counted)",
       .remedy = "Nothing to do: only the current boot counts",
       .source = "docs/kernel-log.md#boot-rule",
       .explanation =
           "The log holds NVIDIA events from boots before the current one (a persistent "
           "journal, or a saved log). A reboot resets the GPUs, so these no longer describe "
           "their state; they are listed, not judged. Confirm by hand: `journalctl -k -b -1 | "
           "grep -i xid`. Info: no effect on the verdict or the recommendation.",
       .evidence =
           "The NVIDIA events of the kernel log before the current boot's start, and the line "
           "that starts it (the last `Linux version` line, a journal `-- Boot <id> --` or `-- "
           "Reboot --` marker, or a timestamp that went back).",
       .cases = {fires("log-earlier-boot-xid48"), silent("log-api-mismatch")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const LogFacts& log = c.facts.log;
         if (log.earlier_boot_events.empty()) {
           return {};
         }
         std::vector<std::string> what;
         EventPtrs events;
         for (const auto& e : log.earlier_boot_events) {
           what.push_back(fmt::format("{}{} ({}×)",
                                      e.xid ? fmt::format("Xid {}", *e.xid) : e.meaning,
                                      e.bus_id ? " on " + *e.bus_id : "", e.count));
           events.push_back(&e);
         }
         Hit hit{fmt::format("{} from {} ignored: {}",
                             counted(log.earlier_boot_events.size(), "event"),
                             counted(log.boots_seen > 0 ? log.boots_seen - 1 : 0, "earlier boot"),
                             fmt::join(what, ", ")),
                 {}};
         if (log.boundary) {
           hit.evidence.push_back(log.boundary->line);
         }
         for (auto& line : evidence_of(events)) {
           hit.evidence.push_back(std::move(line));
         }
         return {hit};
       }},
      {.id = "log.damaged-input",
       .stage = Stage::host,
       .severity = Severity::info,
       .title = "The kernel log is well-formed text",
       .remedy = "Nothing to do unless the log was expected to be clean; check how it was captured",
       .source = "docs/kernel-log.md#speed-and-memory",
       .explanation =
           "The kernel log had lines that are not valid text (invalid UTF-8, NUL bytes, lines "
           "past the length cap); they were repaired or cut and the rest was scanned. An event "
           "inside a damaged line may be missed. Confirm by hand: `dmesg > /tmp/kernel.log && "
           "file /tmp/kernel.log`. Info: no effect on the verdict or the recommendation.",
       .evidence =
           "The kernel log as the scanner read it: lines longer than 64 KiB (cut), NUL bytes, "
           "and occurrences past the cap on distinct events (only counted).",
       .cases = {fires("log-damaged-input"), silent("log-app-xids")},
       .check = [](const RuleContext& c) -> std::vector<Hit> {
         const LogFacts& log = c.facts.log;
         std::vector<std::string> what;
         if (log.lines_cut > 0) {
           what.push_back(
               fmt::format("{} longer than 64 KiB {} cut (the rest of each was not examined)",
                           counted(log.lines_cut, "line"), log.lines_cut == 1 ? "was" : "were"));
         }
         if (log.nul_bytes) {
           what.push_back("the log contains NUL bytes");
         }
         if (log.events_dropped > 0) {
           what.push_back(
               fmt::format("{} of events past the cap of distinct events {} only counted",
                           counted(log.events_dropped, "occurrence"),
                           log.events_dropped == 1 ? "was" : "were"));
         }
         if (what.empty()) {
           return {};
         }
         return {{fmt::format("The kernel log ({}) has damaged or unusual input: {}", log.source,
                              fmt::join(what, "; ")),
                  what}};
       }},
  };
  return rows;
}

} // namespace gpf
