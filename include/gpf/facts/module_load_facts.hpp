#pragma once
// Facts of the "module-load" probe: what decides whether the kernel can load the NVIDIA module
// (docs/snapshot-format.md): Secure Boot and lockdown (the kernel then refuses a module whose
// signature it cannot verify), the module-signing certificates this host keeps, the NVIDIA
// module files under lib/modules/<release>/ and DKMS's record of its nvidia builds. Plain data;
// the field lists below write the report's facts.module_load block and read it back.
#include "gpf/util/json_fields.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpf {

// An NVIDIA kernel module file under lib/modules/<release>/ (names only: a snapshot keeps an
// empty stand-in at its path).
struct ModuleFile {
  std::string release; // the kernel release directory, e.g. "6.8.0-45-generic"
  std::string path; // root-relative, e.g. "lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst"
  std::string name; // the module, e.g. "nvidia", "nvidia-uvm"
};

// One DKMS build of the nvidia module: var/lib/dkms/nvidia/<version>/<kernel>/<arch>/.
struct DkmsBuild {
  std::string version;              // the driver version DKMS holds
  std::string kernel;               // the kernel release it was built for
  std::string arch;                 // "x86_64", ...
  bool built = false;               // module/ under it holds a module file
  std::vector<std::string> modules; // the module files it built (names)
};

// DKMS's last build log of a driver version: var/lib/dkms/nvidia/<version>/build/make.log.
struct DkmsLog {
  std::string version;
  std::string path;              // root-relative
  std::vector<std::string> tail; // its last lines, the error lines first when it has them
};

struct ModuleLoadFacts {
  bool ran = false;
  bool efi = false;                    // sys/firmware/efi exists: booted through UEFI
  std::optional<bool> secure_boot;     // the SecureBoot EFI variable's value byte; nullopt: unknown
  std::string secure_boot_evidence;    // "<path>: value 1 (enabled)" as read
  std::optional<std::string> lockdown; // the active lockdown mode: "none", "integrity", ...
  std::string lockdown_line;           // sys/kernel/security/lockdown as read
  std::vector<std::string> signing_keys; // module-signing certificates found (root-relative)
  std::vector<ModuleFile> module_files;  // NVIDIA modules under lib/modules/*/
  bool module_tree_listed = false;       // lib/modules was listed (module_files is the whole list)
  std::vector<DkmsBuild> dkms;           // DKMS's nvidia builds
  std::vector<DkmsLog> dkms_logs;        // DKMS's nvidia build logs
};

} // namespace gpf

namespace gpf::json_fields {

template <> struct List<ModuleFile> {
  static constexpr auto fields = std::to_array<Field<ModuleFile>>({
      member<&ModuleFile::release>("release"),
      member<&ModuleFile::path>("path"),
      member<&ModuleFile::name>("name"),
  });
};

template <> struct List<DkmsBuild> {
  static constexpr auto fields = std::to_array<Field<DkmsBuild>>({
      member<&DkmsBuild::version>("version"),
      member<&DkmsBuild::kernel>("kernel"),
      member<&DkmsBuild::arch>("arch"),
      member<&DkmsBuild::built>("built"),
      member<&DkmsBuild::modules>("modules"),
  });
};

template <> struct List<DkmsLog> {
  static constexpr auto fields = std::to_array<Field<DkmsLog>>({
      member<&DkmsLog::version>("version"),
      member<&DkmsLog::path>("path"),
      member<&DkmsLog::tail>("tail"),
  });
};

template <> struct List<ModuleLoadFacts> {
  static constexpr auto fields = std::to_array<Field<ModuleLoadFacts>>({
      member<&ModuleLoadFacts::ran>("ran"),
      member<&ModuleLoadFacts::efi>("efi"),
      member<&ModuleLoadFacts::secure_boot>("secure_boot"),
      member<&ModuleLoadFacts::secure_boot_evidence>("secure_boot_evidence"),
      member<&ModuleLoadFacts::lockdown>("lockdown"),
      member<&ModuleLoadFacts::lockdown_line>("lockdown_line"),
      member<&ModuleLoadFacts::signing_keys>("signing_keys"),
      member<&ModuleLoadFacts::module_files>("module_files"),
      member<&ModuleLoadFacts::module_tree_listed>("module_tree_listed"),
      member<&ModuleLoadFacts::dkms>("dkms"),
      member<&ModuleLoadFacts::dkms_logs>("dkms_logs"),
  });
};

} // namespace gpf::json_fields
