#pragma once
// Which processes hold a GPU: proc/<pid>/fd links to dev/nvidia<N>, read through the Host. NVIDIA's
// own management daemons (nvidia-persistenced, nv-fabricmanager, DCGM's nv-hostengine,
// dcgm-exporter, nvidia-smi) keep every GPU node open on an idle node and are not counted.
#include "gpf/host/host.hpp"

#include <map>
#include <string>
#include <vector>

namespace gpf::cuda {

// Device minor N of dev/nvidiaN -> "PID (comm)" of each holder. Processes whose fd directory
// cannot be listed (gone, or another user's without root) are not seen.
std::map<unsigned, std::vector<std::string>> gpu_holders(const Host& host);

} // namespace gpf::cuda
