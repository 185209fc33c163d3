#pragma once
// How far gpu-preflight's knowledge reaches: the month its data was last brought up to date and the
// newest driver branch, CUDA release and compute capability it knows (the newest rows of the
// compatibility matrix, plus releases known to exist whose rows are not yet complete). A version
// beyond these is "newer than the data": the rules say so instead of guessing or passing it.
#include "gpf/util/version.hpp"

#include <string>
#include <string_view>

namespace gpf {

struct DataAge {
  std::string_view as_of;              // "2026-11": the month the tables were last updated
  Version newest_cuda;                 // major.minor of the newest CUDA release known
  unsigned long newest_branch = 0;     // the newest data-center driver branch known
  Version newest_compute_capability;   // major.minor
  std::string_view newest_cuda_source; // where the newest CUDA release was seen
  // The highest PCI device id in data/gpu_pci_ids.json, its product, and the driver release (and
  // month) whose table that is: older than as_of, as a driver's list trails its products.
  unsigned newest_pci_id = 0;
  std::string_view newest_pci_name;
  std::string_view pci_release;
  std::string_view pci_released;
};

// Built once from the compiled-in matrix; cannot fail.
const DataAge& data_age();

// Newer than every release, branch or compute capability the data knows (major.minor compared).
bool cuda_newer_than_data(const Version& cuda);
bool branch_newer_than_data(unsigned long branch);
bool compute_capability_newer_than_data(const Version& cc);
// Above every PCI device id of the table (NVIDIA numbers new products upwards; an id below the
// highest that the table lacks is an older or unlisted GPU, not a newer one).
bool pci_id_newer_than_data(unsigned device_id);

// "not judged: <what> is newer than the data of 2026-11 (which knows up to <known>) - update
// gpu-preflight": the one wording every such finding uses.
std::string newer_than_data(std::string_view what, std::string_view known);

} // namespace gpf
