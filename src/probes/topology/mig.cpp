// Probe "mig": for each MIG-<GPU-UUID>/<gi>/<ci> entry of the job's CUDA_VISIBLE_DEVICES, whether
// that MIG instance exists: the driver creates proc/driver/nvidia/capabilities/gpu<minor>/mig/
// gi<gi>/ci<ci>/access for every compute instance (<minor> = the GPU's Device Minor). Nothing is
// read when the variable holds no such entry. Facts:
// https://docs.nvidia.com/cuda/cuda-programming-guide/05-appendices/environment-variables.html and
// https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-caps.c
// (capabilities).
#include "gpf/facts/visible_devices.hpp"
#include "gpf/probes/probes.hpp"
#include "gpf/util/text.hpp"
#include "gpf/util/uuid_index.hpp"

#include <fmt/format.h>

namespace gpf {

ProbeStatus probe_mig(const Host& host, const ProbeOptions&, Facts& facts) {
  ProbeStatus status;
  const auto value = facts.env.get("CUDA_VISIBLE_DEVICES");
  if (value) {
    UuidIndex uuids; // GPUs with a minor, by UUID: one index, not a scan per entry
    for (std::size_t i = 0; i < facts.gpus.size(); ++i) {
      if (facts.gpus[i].uuid && facts.gpus[i].device_minor) {
        uuids.add(*facts.gpus[i].uuid, i);
      }
    }
    uuids.build();
    for (auto entry : split(*value, ',')) {
      const auto ref = parse_mig_reference(entry);
      if (!ref) {
        continue;
      }
      MigEntry mig;
      mig.entry = to_valid_utf8(trim(entry));
      if (const auto at = uuids.first(ref->gpu_uuid)) {
        const auto& gpu = facts.gpus[*at];
        mig.bus_id = gpu.bus_id;
        mig.path = fmt::format("proc/driver/nvidia/capabilities/gpu{}/mig/gi{}/ci{}/access",
                               *gpu.device_minor, ref->gpu_instance, ref->compute_instance);
      }
      if (mig.bus_id) {
        const auto access = host.read_file(mig.path, 4096);
        if (access) {
          mig.exists = true;
        } else if (host.absent(mig.path)) {
          mig.exists = false;
        } else {
          status.fail(mig.path + ": " + access.error().message);
        }
      }
      facts.topology.mig_entries.push_back(std::move(mig));
    }
  }
  return status;
}

namespace {
const ProbeRegistration k_row{{"mig", "MIG instances", 1200, probe_mig}};
} // namespace

} // namespace gpf
