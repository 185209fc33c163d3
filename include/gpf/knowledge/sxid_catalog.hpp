#pragma once
// NVIDIA's SXid catalog (Fabric Manager User Guide, appendix "NVSwitch SXid Errors"), one row per
// code: NVIDIA's name, class and recovery beside gpu-preflight's judgement, with a note where they
// differ. tests/data/sxid-catalog.tsv is the code list.
#include <span>
#include <string_view>

namespace gpf {

constexpr std::string_view k_sxid_catalog_url =
    "https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html";
constexpr std::string_view k_sxid_catalog_version =
    "Fabric Manager User Guide DU-09883-001 v1.3, SXid tables (93 codes)";

// The guide's table a code is in.
enum class SxidGuideClass { non_fatal, fatal, always_fatal, other };

// gpu-preflight's judgement of an SXid for a job, never the word the log line carries (that word
// decides only for a code the catalog does not list).
enum class SxidClass {
  harmless, // corrected by the hardware or "can be safely ignored" (logged at link training)
  degraded, // NVLink throughput may suffer (replays, thermal single-lane mode)
  stalled,  // NVLink traffic through the port stalls until a reset: jobs hang (Xid 45 on GPUs)
  fatal,    // fatal to the fabric (potentially or always): reset the GPUs and NVSwitches
};

struct SxidInfo {
  unsigned code;
  std::string_view name;     // the guide's
  SxidGuideClass guide;      // the guide's table
  std::string_view recovery; // the guide's recovery, in short
  SxidClass cls;             // gpu-preflight's judgement
  std::string_view note;     // why our judgement differs from the guide's ("" where it agrees)
  std::string_view source = k_sxid_catalog_url;
};

std::span<const SxidInfo> sxid_table();
// nullptr for an SXid the catalog does not list.
const SxidInfo* find_sxid(unsigned sxid);
std::string_view sxid_guide_word(SxidGuideClass c);
std::string_view sxid_class_word(SxidClass c);

} // namespace gpf
