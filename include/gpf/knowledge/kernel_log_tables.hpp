#pragma once
// Decode tables of the kernel-log scanner, as data with a source per row (Xid 154 recovery
// actions: docs/sources.md#xid-errors; RM_INIT_* and NV_STATUS:
// docs/sources.md#rminitadapter-failures); the Xid and SXid catalogs are in their own files.
#include "gpf/knowledge/sxid_catalog.hpp"
#include "gpf/knowledge/xid_catalog.hpp"

#include <optional>
#include <span>
#include <string_view>

namespace gpf {

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

} // namespace gpf
