// Loading libnvidia-ml at run time: one {symbol, required} row per entry point, bound into typed
// pointers. Runs in child processes only (probes/child/runner.hpp).
#include "probes/nvml/nvml_api.hpp"

#include "probes/child/runner.hpp"

#include <dlfcn.h>

#include <cstring>
#include <type_traits>

namespace gpf::nvml {
namespace {

// memcpy: ISO C++ has no object-to-function pointer cast (POSIX guarantees the representation).
template <auto Member> void bind_entry(NvmlApi& api, void* address) {
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
  // Required: without them no GPU can be named at all. Optional: one measurement is skipped and
  // the facts say so (nvmlInitWithFlags and the clocks-event name are newer than some drivers).
  static const std::vector<EntryPoint> table{
      {"nvmlInit_v2", k_required, bind_entry<&NvmlApi::nvmlInit_v2>},
      {"nvmlInitWithFlags", k_optional, bind_entry<&NvmlApi::nvmlInitWithFlags>},
      {"nvmlErrorString", k_optional, bind_entry<&NvmlApi::nvmlErrorString>},
      {"nvmlSystemGetNVMLVersion", k_optional, bind_entry<&NvmlApi::nvmlSystemGetNVMLVersion>},
      {"nvmlSystemGetDriverVersion", k_optional, bind_entry<&NvmlApi::nvmlSystemGetDriverVersion>},
      {"nvmlDeviceGetCount_v2", k_required, bind_entry<&NvmlApi::nvmlDeviceGetCount_v2>},
      {"nvmlDeviceGetHandleByIndex_v2", k_required,
       bind_entry<&NvmlApi::nvmlDeviceGetHandleByIndex_v2>},
      {"nvmlDeviceGetHandleByPciBusId_v2", k_required,
       bind_entry<&NvmlApi::nvmlDeviceGetHandleByPciBusId_v2>},
      {"nvmlDeviceGetPciInfo_v3", k_required, bind_entry<&NvmlApi::nvmlDeviceGetPciInfo_v3>},
      {"nvmlDeviceGetName", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetName>},
      {"nvmlDeviceGetUUID", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetUUID>},
      {"nvmlDeviceGetMinorNumber", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetMinorNumber>},
      {"nvmlDeviceGetArchitecture", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetArchitecture>},
      {"nvmlDeviceGetEccMode", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetEccMode>},
      {"nvmlDeviceGetTotalEccErrors", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetTotalEccErrors>},
      {"nvmlDeviceGetRetiredPages", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetRetiredPages>},
      {"nvmlDeviceGetRetiredPagesPendingStatus", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetRetiredPagesPendingStatus>},
      {"nvmlDeviceGetRemappedRows", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetRemappedRows>},
      {"nvmlDeviceGetFieldValues", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetFieldValues>},
      {"nvmlDeviceGetCurrentClocksEventReasons", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetCurrentClocksEventReasons>},
      {"nvmlDeviceGetCurrentClocksThrottleReasons", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetCurrentClocksThrottleReasons>},
      {"nvmlDeviceGetTemperature", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetTemperature>},
      {"nvmlDeviceGetTemperatureThreshold", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetTemperatureThreshold>},
      {"nvmlDeviceGetPersistenceMode", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetPersistenceMode>},
      {"nvmlDeviceGetComputeMode", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetComputeMode>},
      {"nvmlDeviceGetMigMode", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetMigMode>},
      {"nvmlDeviceGetCurrPcieLinkGeneration", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetCurrPcieLinkGeneration>},
      {"nvmlDeviceGetMaxPcieLinkGeneration", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetMaxPcieLinkGeneration>},
      {"nvmlDeviceGetCurrPcieLinkWidth", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetCurrPcieLinkWidth>},
      {"nvmlDeviceGetMaxPcieLinkWidth", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetMaxPcieLinkWidth>},
      {"nvmlDeviceGetNvLinkState", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetNvLinkState>},
      {"nvmlDeviceGetGpuFabricInfo", k_optional, bind_entry<&NvmlApi::nvmlDeviceGetGpuFabricInfo>},
      {"nvmlDeviceGetComputeRunningProcesses_v2", k_optional,
       bind_entry<&NvmlApi::nvmlDeviceGetComputeRunningProcesses_v2>},
  };
  return table;
}

LoadResult load_nvml(const std::string& library) {
  LoadResult result;
  ::dlerror();
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    result.error = why ? why : library + ": dlopen failed";
    return result;
  }
  auto nvml = std::make_unique<LoadedNvml>();
  nvml->path = child::loaded_library_path(handle);
  for (const auto& entry : entry_points()) {
    void* address = ::dlsym(handle, std::string(entry.symbol).c_str());
    if (address == nullptr) {
      (entry.required ? nvml->missing_required : nvml->missing_optional).emplace_back(entry.symbol);
      continue;
    }
    entry.bind(nvml->api, address);
  }
  // The old clocks name answers the same question: missing only when both are.
  if (nvml->api.nvmlDeviceGetCurrentClocksThrottleReasons) {
    std::erase(nvml->missing_optional, "nvmlDeviceGetCurrentClocksEventReasons");
  }
  if (nvml->api.nvmlDeviceGetCurrentClocksEventReasons) {
    std::erase(nvml->missing_optional, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  result.nvml = std::move(nvml);
  return result;
}

std::string error_text(const NvmlApi& api, nvmlReturn_t code) {
  if (api.nvmlErrorString == nullptr) {
    return {};
  }
  const char* text = api.nvmlErrorString(code);
  return text ? text : "";
}

} // namespace gpf::nvml
