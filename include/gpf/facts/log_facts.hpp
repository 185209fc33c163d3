#pragma once
// Facts from the kernel-log scanner (docs/kernel-log.md). Plain data: the scanner
// (probes/kernel_log_scanner) fills it, the log rules read it, the JSON report prints it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

// How a line of the log was written; one log may mix several (docs/kernel-log.md "Formats").
enum class LogFormat {
  dmesg,         // [  123.456789] msg (also <6>[...] from klogctl / dmesg -r, and dmesg -x)
  dmesg_ctime,   // [Mon Nov 30 02:00:00 2026] msg (dmesg -T)
  dmesg_iso,     // 2026-11-30T02:00:00,123456+00:00 msg (dmesg --time-format iso)
  dmesg_reltime, // [Dec 1 10:00] / [  +0.000421] / [<  0.000421>] msg (dmesg -e, -H, delta)
  kmsg,          // 6,1234,5678901,-;msg (/dev/kmsg records)
  syslog,        // Nov 30 02:00:00 host kernel: msg (RFC 3164, journalctl -k short / short-precise)
  syslog_iso,    // 2026-11-30T02:00:00.123+00:00 host kernel: msg (rsyslog, journalctl short-iso)
  rfc5424,       // <4>1 2026-11-30T02:00:00Z host kernel - - - msg
  journal,       // journalctl markers: -- Boot <id> --, -- Reboot --, -- Logs begin at ...
  bare,          // NVRM: ... or kernel: NVRM: ... without any timestamp
};

enum class BootBoundaryKind { linux_version, journal_boot, journal_reboot, timestamp_reset };

// Where the current boot starts in the log.
struct BootBoundary {
  BootBoundaryKind kind = BootBoundaryKind::linux_version;
  std::string line;         // the line that starts the boot, verbatim (capped)
  std::uint64_t offset = 0; // its byte offset in the log
};

enum class LogEventKind {
  xid,                // NVRM: Xid (PCI:...): N, ...
  rm_init_failed,     // RmInitAdapter failed! (0xAA:0xBB:N)
  rm_init_minor,      // rm_init_adapter failed, device minor number N
  api_mismatch,       // NVRM: API mismatch: the client has the version ...
  fallen_off_bus,     // GPU has fallen off the bus (not the Xid 79 line itself)
  bar_invalid,        // This PCI I/O region assigned to your NVIDIA device is invalid / BAR1 is 0M
  probe_not_called,   // The NVIDIA probe routine was not called for N device(s)
  probe_failed,       // The NVIDIA probe routine failed / nvidia: probe of ... failed
  no_gpu_initialized, // None of the NVIDIA devices were initialized / No NVIDIA GPU found
  not_supported,      // GPU ... installed in this system is not supported by the NVIDIA ... driver
  not_supported_open, // ... not supported by open nvidia.ko (no GSP)
  power_cables,       // GPU does not have the necessary power cables connected
  gsp_firmware,       // GSP firmware missing or failed to boot
  crash_dump,         // A GPU crash dump has been created
  nouveau,            // nouveau dddd:bb:dd.f: ... (nouveau bound an NVIDIA GPU)
  // The device's BAR could not be reserved or assigned, or the IOMMU (DMAR, AMD-Vi) or vfio
  // faulted on it: why a DMA/BAR set-up failed. No finding of its own (any PCI device may be
  // named): evidence beside the GPU's RmInitAdapter failure. detail: "bar", "iommu" or "vfio".
  dma_setup,
  // nvidia-nvswitchN: SXid (PCI:dddd:bb:dd.f): NNNNN, ...: an NVSwitch error; one event per
  // three-line report (the Severity and Data lines are not events). bus_id stays empty (it names
  // a switch, not a GPU): detail holds the switch's address, sxid the code.
  sxid,
  // INFO: task <name>:<pid> blocked for more than N seconds, whose call trace names a function of
  // the NVIDIA modules: the driver has been stuck. detail: "<name>:<pid>"; meaning names the
  // function.
  hung_task,
  // The kernel refused to load a module: its signature is missing or made with a key the kernel
  // does not trust, under enforced module signatures (Secure Boot, module.sig_enforce) or
  // lockdown. The kernel's lines name no module; modprobe's names it (only nvidia* modules count).
  // No finding of its own: driver.not-loaded names it as the reason. detail: "unsigned",
  // "unavailable key", "unsupported crypto", "lockdown" or "rejected".
  module_refused,
  // The PCI core could not bring the device out of a low-power state ("Unable to change power
  // state from D3cold to D0, device inaccessible"): a cause beside the GPU's init failure.
  power_state,
  // The PCIe link to the device went down or retrained (Surprise Down, Link Down, a fatal AER
  // error): bus_id is the device the line names (a GPU or the port above it). detail: "surprise
  // down", "link down" or "aer fatal".
  link_down,
  // A module failed to link against the running kernel or its companion ("disagrees about
  // version of symbol X", "Unknown symbol X"): detail is the module's name, meaning names X.
  module_symbol,
  // A message of the driver's own catalogue whose family is a failure that no signature above
  // judges (include/gpf/knowledge/driver_messages.hpp, match_failure_message): meaning is the
  // family's with the source file, detail the row's format. Names no device (the line does).
  driver_failure,
};

// One decoded event; repeated lines with the same key are one event with a count.
struct LogEvent {
  LogEventKind kind = LogEventKind::xid;
  std::optional<std::string> bus_id; // normalised dddd:bb:dd.f; nullopt = names no device
  std::string meaning; // decoded, e.g. "Xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS): ..."
  std::vector<std::string> lines; // the first occurrence's line(s), verbatim (capped)
  std::string last_line;          // the last occurrence's first line when count > 1
  std::string first_time;         // timestamps as printed ("" when the line had none)
  std::string last_time;
  std::uint64_t count = 1;
  std::uint64_t first_seq = 0; // order of occurrence in the log
  std::uint64_t last_seq = 0;
  bool before_driver_load = false; // before the last `NVRM: loading` of its boot
  std::optional<unsigned> xid;
  std::optional<unsigned> sxid;               // NVSwitch error code
  std::optional<unsigned> gpu_instance;       // MIG GPU-I
  std::optional<unsigned> compute_instance;   // MIG GPU-CI
  std::optional<unsigned> caused_by_xid;      // "caused by previous Xid N" (575+)
  std::optional<std::string> recovery_action; // Xid 154: the action it changed to (last occurrence)
  std::optional<bool> line_fatal;             // the line's word: Fatal (true), Non-fatal (false)
  std::optional<unsigned> init_status;        // RmInitAdapter first field (RM_INIT_*)
  std::optional<unsigned> rm_status;          // RmInitAdapter second field (NV_STATUS)
  std::optional<unsigned> device_minor;       // rm_init_adapter ... minor number N
  std::string client_version;                 // API mismatch
  std::string kernel_version;                 // API mismatch
  std::string detail;                         // firmware file, device count, ...
  std::string legacy_branch; // not-supported: the legacy branch the message names ("580.xx")
};

// The last `NVRM: loading ...` line of the current boot: the driver as the log saw it.
struct LogDriverLoad {
  std::string version; // e.g. "550.54.14"
  std::string flavour; // "open", "proprietary" or ""
  std::string line;    // verbatim
  unsigned count = 0;  // loads in the current boot (more than one: reloaded)
};

// A kernel-log source the probe tried, in order (not filled for --dmesg FILE).
struct LogSourceTried {
  std::string source; // "/dev/kmsg", "systemd journal", "var/log/kern.log", ...
  std::string state;  // "used", "absent", "error", "passed over" (read but not chosen)
  std::string error;  // the OS reason when state is "error"
};

struct LogFacts {
  bool ran = false;   // a log was read (possibly with nothing in it)
  std::string source; // "/dev/kmsg", "klogctl", "dmesg.txt", "systemd journal", "var/log/kern.log",
                      // "--dmesg FILE", "stdin"
  std::vector<LogSourceTried> sources;  // every source tried, in order
  std::string read_error;               // non-empty: the log could not be read (the OS reason)
  std::vector<LogFormat> formats;       // formats seen, in first-seen order
  std::optional<BootBoundary> boundary; // start of the current boot; nullopt: one boot, no marker
  unsigned boots_seen = 0;              // boots in the log (0 for an empty log)
  std::uint64_t bytes = 0;
  std::uint64_t lines_cut = 0;      // lines longer than 64 KiB: the rest was not examined
  bool nul_bytes = false;           // NUL bytes were seen
  std::uint64_t events_dropped = 0; // occurrences past the cap on distinct events (counted only)
  std::map<std::string, std::vector<LogEvent>> gpu_events; // current boot, by bus id
  std::vector<LogEvent> host_events;                       // current boot, naming no device
  std::vector<LogEvent> earlier_boot_events;               // earlier boots (info only)
  std::map<std::string, std::string> gpu_uuids;            // bus id → UUID (NVRM: GPU at PCI:...)
  std::optional<LogDriverLoad> driver_load;
};

} // namespace gpf
