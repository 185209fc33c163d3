#pragma once
// NVIDIA's Xid catalog, one row per code, as data: NVIDIA's columns (mnemonic, description,
// immediate and investigatory action buckets) beside gpu-preflight's own judgement, with a note
// where the two differ. Source: k_xid_catalog_url; tests/data/xid-catalog.tsv is the code list.
#include <span>
#include <string_view>

namespace gpf {

constexpr std::string_view k_xid_catalog_url =
    "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html";
constexpr std::string_view k_xid_catalog_version = "Xid catalog as published 2025-10 (Xids 1-172)";

// gpu-preflight's judgement of an Xid for a job about to start.
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
  by_line_word,    // Xids 144-150: the line's Fatal (reset) / Nonfatal (warning) word decides
};

struct XidInfo {
  unsigned code;
  std::string_view mnemonic;      // NVIDIA's (nverror.h)
  std::string_view description;   // NVIDIA's ("Unused": not used on Ampere and newer)
  std::string_view immediate;     // NVIDIA's immediate action bucket ("" where none)
  std::string_view investigatory; // NVIDIA's investigatory action bucket
  XidClass cls;                   // gpu-preflight's judgement
  std::string_view meaning;       // our words
  std::string_view note;          // why our judgement differs from NVIDIA's ("" where it agrees)
  std::string_view source = k_xid_catalog_url;
};

std::span<const XidInfo> xid_table();
// nullptr for an Xid the tables do not list.
const XidInfo* find_xid(unsigned xid);
// "reset", "warn", ...: the judgement in one word, as docs/rules.md and explain show it.
std::string_view xid_class_word(XidClass c);

} // namespace gpf
