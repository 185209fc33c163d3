#pragma once
// Inputs of the compatibility rules (probe "compat"): the CUDA version the job expects and where
// that came from, the driver libraries the dynamic loader would pick for the job, and the
// versions of the NVIDIA kernel modules. Facts: docs/sources.md#cuda-toolkit-and-driver-versions,
// #driver-files-under-proc-and-sys, #driver-and-library-version-mismatch.
#include "gpf/util/version.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpf {

// The CUDA version the job was built with.
struct ExpectedCuda {
  Version version;    // 12.4 or 12.4.1
  std::string text;   // as given / as read
  std::string source; // "--expect-cuda", "/usr/local/cuda/version.json", "CUDA_HOME=/opt/cuda:
                      // /opt/cuda/version.json"
};

// Where the loader's search looked for a library, in order.
struct LibrarySearchStep {
  std::string dir;    // absolute path as the loader sees it ("/usr/lib/x86_64-linux-gnu")
  std::string via;    // "LD_LIBRARY_PATH", "/etc/ld.so.cache", "default directory"
  std::string result; // "found", "not present", "dangling link", ...
};

// A driver library the dynamic loader would pick for the job ("libcuda.so.1").
struct DriverLibrary {
  std::string soname;
  std::optional<std::string>
      path; // where the loader finds the soname ("/usr/lib/x86_64-linux-gnu/libcuda.so.1")
  std::optional<std::string>
      resolved;    // after symbolic links ("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15")
  std::string via; // how the loader got there (see LibrarySearchStep::via)
  std::optional<Version> version; // from the resolved file name; nullopt when it carries none
  std::string version_text;       // "550.54.15"
  bool in_stubs = false;          // a path component is "stubs" (the toolkit's link-time stub)
  bool in_compat = false; // a path component is "compat" (cuda-compat forward compatibility)
  std::vector<LibrarySearchStep> searched;
};

// A kernel module's version from sys/module/<name>/version.
struct ModuleVersion {
  std::string name; // "nvidia_uvm"
  std::string path; // "/sys/module/nvidia_uvm/version"
  std::optional<Version> version;
  std::string text;  // as read (valid UTF-8, trimmed)
  std::string error; // could not be read although the module is loaded
};

struct CompatFacts {
  bool ran = false;
  std::optional<ExpectedCuda> expected_cuda;
  std::vector<std::string> expected_cuda_notes; // toolkit files that were looked at but not usable
  DriverLibrary libcuda;                        // libcuda.so.1
  DriverLibrary libnvidia_ml;                   // libnvidia-ml.so.1
  std::string ld_cache;  // what etc/ld.so.cache held: "new format, 642 entries", "absent", an error
  bool snapshot = false; // judged from --root (absence there is not evidence)
  std::optional<std::chrono::year_month_day>
      today; // for end-of-life dates; a snapshot's `date` file
  std::vector<ModuleVersion>
      modules; // nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm (those present)
};

} // namespace gpf
