#pragma once
// What the compatibility rules derive from the facts before they judge: each GPU's compute
// capability (from the CUDA probe when it ran, else from the model name), and the driver the
// job's CUDA runtime will meet (the kernel module's, or a cuda-compat libcuda's).
#include "gpf/facts/facts.hpp"
#include "gpf/knowledge/matrix.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpf {

struct GpuArch {
  std::string bus_id;
  std::string model;                      // "" when unknown
  std::optional<Version> cc;              // compute capability
  std::string cc_evidence;                // where cc came from, verbatim
  const GpuModelRow* model_row = nullptr; // the model table's row, when the name matched
  const DriverArchRow* driver_row = nullptr;
  std::string arch; // architecture name, "" when unknown
};

// The host's GPUs (driver's list, plus CUDA devices the driver list lacks, as on WSL2).
std::vector<GpuArch> gpu_archs(const Facts& facts, const Matrix& matrix);

struct DriverView {
  std::optional<Version> kernel_module; // the loaded kernel module's version
  std::string kernel_module_text;
  std::string kernel_module_evidence; // "/proc/driver/nvidia/version: NVRM version: ..."
  bool forward_compat =
      false; // a cuda-compat libcuda newer than the kernel module is first in line
  std::optional<Version>
      effective; // what the CUDA runtime meets: the compat libcuda when forward_compat
  std::string effective_text;
  std::optional<Version>
      cuda_reported; // cuDriverGetVersion as a CUDA version, when the CUDA probe ran
};

DriverView driver_view(const Facts& facts);

// "libcuda.so.1 -> /usr/lib/.../libcuda.so.550.54.15 (via /etc/ld.so.cache)"
std::string library_evidence(const DriverLibrary& lib);

} // namespace gpf
