#pragma once
// Decode tables of the kernel-log scanner, as data with a source per row (Xid catalog and Xid 154
// recovery actions: docs/sources.md#xid-errors; RM_INIT_* and NV_STATUS:
// docs/sources.md#rminitadapter-failures). The scanner uses them for the decoded meaning; the log
// rules use the Xid class and the RM_INIT remedy.
#include <optional>
#include <span>
#include <string_view>

namespace gpf {

// What an Xid means for a job about to start (facts §3b "preflight class").
enum class XidClass {
  application,     // the application's fault; the GPU is fine (info)
  informational,   // informational or already handled (info)
  warning,         // the GPU works but needs attention (warn)
  reset,           // the GPU must be reset (or the driver reloaded) before reuse (GPU unusable)
  reboot,          // reboot the node / restart the VM (GPU unusable)
  fallen_off_bus,  // Xid 79: judged by the fallen-off-the-bus rule
  power,           // Xid 54: judged by the power-cables rule
  update_software, // update the driver / firmware (GPU unusable)
  recovery_action, // Xid 154: carries the recovery action for the GPU's other Xids
};

struct XidInfo {
  unsigned first;            // Xid number (first of a range)
  unsigned last;             // last of the range (= first for one code)
  std::string_view mnemonic; // nverror.h name
  XidClass cls;
  std::string_view meaning; // our words
  std::string_view source;
};

std::span<const XidInfo> xid_table();
// nullptr for an Xid the catalog does not list.
const XidInfo* find_xid(unsigned xid);

// A code with a name, its meaning and (for RM_INIT_*) what to do about it.
struct CodeInfo {
  unsigned value;
  std::string_view name;
  std::string_view meaning;
  std::string_view remedy; // empty where the table has none (NV_STATUS)
  std::string_view source;
};

std::span<const CodeInfo> rm_init_table();
std::span<const CodeInfo> nv_status_table();
const CodeInfo* find_rm_init(unsigned value);
const CodeInfo* find_nv_status(unsigned value);

// Xid 154 recovery actions by the name the driver prints (gpu.c _gpuRecoveryActionName).
enum class RecoveryEffect { none, reset, reboot, drain };

struct RecoveryActionInfo {
  std::string_view name; // as printed, e.g. "GPU Reset Required"
  RecoveryEffect effect;
  std::string_view remedy;
  std::string_view source;
};

std::span<const RecoveryActionInfo> recovery_action_table();
const RecoveryActionInfo* find_recovery_action(std::string_view name);

// What an NVSwitch SXid means for a job, by NVIDIA's SXid catalog (Fabric Manager User Guide,
// appendix "NVSwitch SXid Errors"), never by the word the log line carries.
enum class SxidClass {
  harmless, // corrected by the hardware or "can be safely ignored" (logged at link training)
  degraded, // NVLink throughput may suffer (replays, thermal single-lane mode)
  stalled,  // NVLink traffic through the port stalls until a reset: jobs hang (Xid 45 on GPUs)
  fatal,    // fatal to the fabric (potentially or always): reset the GPUs and NVSwitches
};

struct SxidInfo {
  unsigned first; // SXid (first of a range)
  unsigned last;
  std::string_view name; // the catalog's name
  SxidClass cls;
  std::string_view source;
};

// nullptr for an SXid the catalog does not list.
const SxidInfo* find_sxid(unsigned sxid);

} // namespace gpf
