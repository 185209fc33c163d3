// The reach of gpu-preflight's data (include/gpf/knowledge/data_age.hpp). The month below moves
// whenever data/ is brought up to date from NVIDIA's sources; the newest branch, CUDA release and
// compute capability come from the matrix itself, so they cannot disagree with it.
#include "gpf/knowledge/data_age.hpp"

#include "gpf/knowledge/matrix.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace gpf {
namespace {

constexpr std::string_view k_as_of = "2026-11";

// CUDA 13.5's release notes exist, but its Toolkit Driver Version was not read: the release is
// known (not "newer than the data") while the CUDA-to-driver table stops at 13.4.
constexpr unsigned long k_newest_cuda_major = 13;
constexpr unsigned long k_newest_cuda_minor = 5;
constexpr std::string_view k_newest_cuda_source =
    "https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/ (CUDA Toolkit 13.5 release notes)";

Version major_minor(const Version& v) {
  return Version({v.major(), v.minor()});
}

DataAge build() {
  const Matrix& m = Matrix::get();
  DataAge age;
  age.as_of = k_as_of;
  age.newest_cuda_source = k_newest_cuda_source;
  age.newest_cuda = Version({k_newest_cuda_major, k_newest_cuda_minor});
  for (const auto& row : m.toolkit_rows()) {
    if (age.newest_cuda < major_minor(row.cuda)) {
      age.newest_cuda = major_minor(row.cuda);
    }
  }
  for (const auto& row : m.branch_rows()) {
    age.newest_branch = std::max(age.newest_branch, row.branch);
  }
  for (const auto& row : m.cuda_arch_rows()) {
    for (const auto& cc : row.ccs) {
      if (age.newest_compute_capability < major_minor(cc)) {
        age.newest_compute_capability = major_minor(cc);
      }
    }
  }
  for (const auto& row : m.driver_arch_rows()) {
    if (age.newest_compute_capability < major_minor(row.cc_max)) {
      age.newest_compute_capability = major_minor(row.cc_max);
    }
  }
  const PciIdTable& pci = m.pci_ids();
  age.pci_release = pci.release;
  age.pci_released = pci.released;
  if (!pci.rows.empty()) { // ascending: the loader refuses any other order
    age.newest_pci_id = pci.rows.back().id;
    age.newest_pci_name = pci.rows.back().name;
  }
  return age;
}

} // namespace

const DataAge& data_age() {
  static const DataAge age = build();
  return age;
}

bool cuda_newer_than_data(const Version& cuda) {
  return data_age().newest_cuda < major_minor(cuda);
}

bool branch_newer_than_data(unsigned long branch) {
  return branch > data_age().newest_branch;
}

bool compute_capability_newer_than_data(const Version& cc) {
  return data_age().newest_compute_capability < major_minor(cc);
}

bool pci_id_newer_than_data(unsigned device_id) {
  return device_id > data_age().newest_pci_id;
}

std::string newer_than_data(std::string_view what, std::string_view known) {
  return fmt::format(
      "not judged: {} is newer than the data of {} (which knows up to {}) \u2014 update gpu-preflight",
      what, data_age().as_of, known);
}

} // namespace gpf
