// Loading libcuda at run time: one {symbol, required} row per entry point, bound into typed
// pointers. Runs in child processes only (see runner.hpp).
#include "probes/cuda/driver_api.hpp"

#include "probes/child/runner.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <system_error>
#include <type_traits>

namespace gpf::cuda {
namespace {

// Stores a dlsym address in the typed member; memcpy because ISO C++ has no object-to-function
// pointer cast (POSIX guarantees the representation is the same).
template <auto Member> void bind_entry(DriverApi& api, void* address) {
  using Fn = std::remove_reference_t<decltype(api.*Member)>;
  static_assert(sizeof(Fn) == sizeof(void*));
  Fn fn = nullptr;
  std::memcpy(&fn, &address, sizeof fn);
  api.*Member = fn;
}

constexpr bool k_required = true;
constexpr bool k_optional = false;

} // namespace

const std::vector<EntryPoint>& entry_points() {
  // Required: the per-GPU test cannot run without them. Optional: only a measurement or a
  // nicer message is lost (names of errors, UUIDs, the multi-GPU test).
  static const std::vector<EntryPoint> table{
      {"cuInit", k_required, bind_entry<&DriverApi::cuInit>},
      {"cuDriverGetVersion", k_optional, bind_entry<&DriverApi::cuDriverGetVersion>},
      {"cuDeviceGetCount", k_required, bind_entry<&DriverApi::cuDeviceGetCount>},
      {"cuDeviceGet", k_required, bind_entry<&DriverApi::cuDeviceGet>},
      {"cuDeviceGetName", k_optional, bind_entry<&DriverApi::cuDeviceGetName>},
      {"cuDeviceGetUuid_v2", k_optional, bind_entry<&DriverApi::cuDeviceGetUuid_v2>},
      {"cuDeviceGetUuid", k_optional, bind_entry<&DriverApi::cuDeviceGetUuid>},
      {"cuDeviceGetPCIBusId", k_required, bind_entry<&DriverApi::cuDeviceGetPCIBusId>},
      {"cuDeviceTotalMem_v2", k_optional, bind_entry<&DriverApi::cuDeviceTotalMem>},
      {"cuDeviceGetAttribute", k_optional, bind_entry<&DriverApi::cuDeviceGetAttribute>},
      {"cuDevicePrimaryCtxRetain", k_required, bind_entry<&DriverApi::cuDevicePrimaryCtxRetain>},
      {"cuDevicePrimaryCtxRelease_v2", k_required,
       bind_entry<&DriverApi::cuDevicePrimaryCtxRelease>},
      {"cuCtxSetCurrent", k_required, bind_entry<&DriverApi::cuCtxSetCurrent>},
      {"cuCtxSynchronize", k_required, bind_entry<&DriverApi::cuCtxSynchronize>},
      {"cuMemAlloc_v2", k_required, bind_entry<&DriverApi::cuMemAlloc>},
      {"cuMemFree_v2", k_required, bind_entry<&DriverApi::cuMemFree>},
      {"cuMemsetD8_v2", k_required, bind_entry<&DriverApi::cuMemsetD8>},
      {"cuMemcpyHtoD_v2", k_required, bind_entry<&DriverApi::cuMemcpyHtoD>},
      {"cuMemcpyDtoH_v2", k_required, bind_entry<&DriverApi::cuMemcpyDtoH>},
      {"cuDeviceCanAccessPeer", k_optional, bind_entry<&DriverApi::cuDeviceCanAccessPeer>},
      {"cuCtxEnablePeerAccess", k_optional, bind_entry<&DriverApi::cuCtxEnablePeerAccess>},
      {"cuMemcpyPeer", k_optional, bind_entry<&DriverApi::cuMemcpyPeer>},
      {"cuGetErrorName", k_optional, bind_entry<&DriverApi::cuGetErrorName>},
      {"cuGetErrorString", k_optional, bind_entry<&DriverApi::cuGetErrorString>},
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
  LoadResult result;
  ::dlerror();
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    result.error = why ? why : library + ": dlopen failed";
    return result;
  }
  auto driver = std::make_unique<LoadedDriver>();
  driver->path = child::loaded_library_path(handle);
  for (const auto& entry : entry_points()) {
    void* address = ::dlsym(handle, std::string(entry.symbol).c_str());
    if (address == nullptr) {
      (entry.required ? driver->missing_required : driver->missing_optional)
          .emplace_back(entry.symbol);
      continue;
    }
    entry.bind(driver->api, address);
  }
  // Either UUID entry point will do; report them missing only when both are.
  if (driver->api.cuDeviceGetUuid_v2 || driver->api.cuDeviceGetUuid) {
    auto& opt = driver->missing_optional;
    opt.erase(
        std::remove_if(opt.begin(), opt.end(),
                       [](const std::string& s) { return s.rfind("cuDeviceGetUuid", 0) == 0; }),
        opt.end());
  }
  result.driver = std::move(driver);
  return result;
}

std::string error_name(const DriverApi& api, CUresult code) {
  const char* text = nullptr;
  if (api.cuGetErrorName && api.cuGetErrorName(code, &text) == k_success && text != nullptr) {
    return text;
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
