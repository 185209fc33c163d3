// Loading libcuda at run time: one {symbol, required} row per entry point, bound into typed
// pointers. Runs in child processes only (see runner.hpp).
#include "probes/cuda/driver_api.hpp"

#include "gpf/knowledge/cuda_errors.hpp"
#include "probes/child/runner.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <system_error>
#include <type_traits>

namespace gpf::cuda {

const std::vector<EntryPoint>& entry_points() {
  // Required: the per-GPU test cannot run without them. Optional: only a measurement or a
  // nicer message is lost (names of errors, UUIDs, the multi-GPU test).
  static const std::vector<EntryPoint> table{
      {"cuInit", child::k_required, child::bind_entry<&DriverApi::cuInit>},
      {"cuDriverGetVersion", child::k_optional, child::bind_entry<&DriverApi::cuDriverGetVersion>},
      {"cuDeviceGetCount", child::k_required, child::bind_entry<&DriverApi::cuDeviceGetCount>},
      {"cuDeviceGet", child::k_required, child::bind_entry<&DriverApi::cuDeviceGet>},
      {"cuDeviceGetName", child::k_optional, child::bind_entry<&DriverApi::cuDeviceGetName>},
      {"cuDeviceGetUuid_v2", child::k_optional, child::bind_entry<&DriverApi::cuDeviceGetUuid_v2>},
      {"cuDeviceGetUuid", child::k_optional, child::bind_entry<&DriverApi::cuDeviceGetUuid>},
      {"cuDeviceGetPCIBusId", child::k_required,
       child::bind_entry<&DriverApi::cuDeviceGetPCIBusId>},
      {"cuDeviceTotalMem_v2", child::k_optional, child::bind_entry<&DriverApi::cuDeviceTotalMem>},
      {"cuDeviceGetAttribute", child::k_optional,
       child::bind_entry<&DriverApi::cuDeviceGetAttribute>},
      {"cuDevicePrimaryCtxRetain", child::k_required,
       child::bind_entry<&DriverApi::cuDevicePrimaryCtxRetain>},
      {"cuDevicePrimaryCtxRelease_v2", child::k_required,
       child::bind_entry<&DriverApi::cuDevicePrimaryCtxRelease>},
      {"cuCtxSetCurrent", child::k_required, child::bind_entry<&DriverApi::cuCtxSetCurrent>},
      {"cuCtxSynchronize", child::k_required, child::bind_entry<&DriverApi::cuCtxSynchronize>},
      {"cuMemAlloc_v2", child::k_required, child::bind_entry<&DriverApi::cuMemAlloc>},
      {"cuMemFree_v2", child::k_required, child::bind_entry<&DriverApi::cuMemFree>},
      {"cuMemsetD8_v2", child::k_required, child::bind_entry<&DriverApi::cuMemsetD8>},
      {"cuMemcpyHtoD_v2", child::k_required, child::bind_entry<&DriverApi::cuMemcpyHtoD>},
      {"cuMemcpyDtoH_v2", child::k_required, child::bind_entry<&DriverApi::cuMemcpyDtoH>},
      {"cuDeviceCanAccessPeer", child::k_optional,
       child::bind_entry<&DriverApi::cuDeviceCanAccessPeer>},
      {"cuCtxEnablePeerAccess", child::k_optional,
       child::bind_entry<&DriverApi::cuCtxEnablePeerAccess>},
      {"cuMemcpyPeer", child::k_optional, child::bind_entry<&DriverApi::cuMemcpyPeer>},
      {"cuMemAllocHost_v2", child::k_optional, child::bind_entry<&DriverApi::cuMemAllocHost>},
      {"cuMemFreeHost", child::k_optional, child::bind_entry<&DriverApi::cuMemFreeHost>},
      {"cuMemcpyHtoDAsync_v2", child::k_optional, child::bind_entry<&DriverApi::cuMemcpyHtoDAsync>},
      {"cuMemcpyDtoHAsync_v2", child::k_optional, child::bind_entry<&DriverApi::cuMemcpyDtoHAsync>},
      {"cuMemcpyPeerAsync", child::k_optional, child::bind_entry<&DriverApi::cuMemcpyPeerAsync>},
      {"cuEventCreate", child::k_optional, child::bind_entry<&DriverApi::cuEventCreate>},
      {"cuEventRecord", child::k_optional, child::bind_entry<&DriverApi::cuEventRecord>},
      {"cuEventSynchronize", child::k_optional, child::bind_entry<&DriverApi::cuEventSynchronize>},
      {"cuEventElapsedTime", child::k_optional, child::bind_entry<&DriverApi::cuEventElapsedTime>},
      {"cuEventDestroy_v2", child::k_optional, child::bind_entry<&DriverApi::cuEventDestroy>},
      {"cuMemGetInfo_v2", child::k_optional, child::bind_entry<&DriverApi::cuMemGetInfo>},
      {"cuModuleLoadData", child::k_optional, child::bind_entry<&DriverApi::cuModuleLoadData>},
      {"cuModuleUnload", child::k_optional, child::bind_entry<&DriverApi::cuModuleUnload>},
      {"cuModuleGetFunction", child::k_optional,
       child::bind_entry<&DriverApi::cuModuleGetFunction>},
      {"cuLaunchKernel", child::k_optional, child::bind_entry<&DriverApi::cuLaunchKernel>},
      {"cuMemGetAllocationGranularity", child::k_optional,
       child::bind_entry<&DriverApi::cuMemGetAllocationGranularity>},
      {"cuMemCreate", child::k_optional, child::bind_entry<&DriverApi::cuMemCreate>},
      {"cuMemRelease", child::k_optional, child::bind_entry<&DriverApi::cuMemRelease>},
      {"cuGetErrorName", child::k_optional, child::bind_entry<&DriverApi::cuGetErrorName>},
      {"cuGetErrorString", child::k_optional, child::bind_entry<&DriverApi::cuGetErrorString>},
  };
  return table;
}

CUresult DriverApi::get_uuid(CUuuid* uuid, CUdevice device) const {
  if (cuDeviceGetUuid_v2) {
    return cuDeviceGetUuid_v2(uuid, device);
  }
  return cuDeviceGetUuid(uuid, device);
}

LoadResult load_driver(const std::string& library) {
  LoadResult result = child::load_library(library, entry_points());
  if (!result.loaded) {
    return result;
  }
  LoadedDriver* driver = result.loaded.get();
  // Either UUID entry point will do; report them missing only when both are.
  if (driver->api.cuDeviceGetUuid_v2 || driver->api.cuDeviceGetUuid) {
    auto& opt = driver->missing_optional;
    opt.erase(
        std::remove_if(opt.begin(), opt.end(),
                       [](const std::string& s) { return s.rfind("cuDeviceGetUuid", 0) == 0; }),
        opt.end());
  }
  return result;
}

std::string error_name(const DriverApi& api, CUresult code) {
  const char* text = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(code, &text) == k_success && text != nullptr) {
    return text;
  }
  // A driver older than the code, or one that cannot name it: CUDA's own enum names it.
  if (const CudaError* known = find_cuda_error(static_cast<int>(code));
      known != nullptr && !known->driver.empty()) {
    return std::string(known->driver);
  }
  return fmt::format("CUresult {}", code);
}

std::string error_text(const DriverApi& api, CUresult code) {
  const char* text = nullptr;
  if (api.cuGetErrorString && api.cuGetErrorString(code, &text) == k_success && text != nullptr) {
    return text;
  }
  return {};
}

std::string format_uuid(const CUuuid& uuid) {
  std::string hex;
  for (std::size_t i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      hex += '-';
    }
    hex += fmt::format("{:02x}", uuid.bytes[i]);
  }
  return "GPU-" + hex;
}

} // namespace gpf::cuda
