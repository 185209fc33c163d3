// Loading libnvidia-ml at run time: one {symbol, required} row per entry point, bound into typed
// pointers. Runs in child processes only (probes/child/runner.hpp).
#include "probes/nvml/nvml_api.hpp"

#include "probes/child/runner.hpp"

#include <dlfcn.h>

#include <cstring>
#include <type_traits>

namespace gpf::nvml {

const std::vector<EntryPoint>& entry_points() {
  // Required: without them no GPU can be named at all. Optional: one measurement is skipped and
  // the facts say so (nvmlInitWithFlags and the clocks-event name are newer than some drivers).
  static const std::vector<EntryPoint> table{
      {"nvmlInit_v2", child::k_required, child::bind_entry<&NvmlApi::nvmlInit_v2>},
      {"nvmlInitWithFlags", child::k_optional, child::bind_entry<&NvmlApi::nvmlInitWithFlags>},
      {"nvmlErrorString", child::k_optional, child::bind_entry<&NvmlApi::nvmlErrorString>},
      {"nvmlSystemGetNVMLVersion", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlSystemGetNVMLVersion>},
      {"nvmlSystemGetDriverVersion", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlSystemGetDriverVersion>},
      {"nvmlDeviceGetCount_v2", child::k_required,
       child::bind_entry<&NvmlApi::nvmlDeviceGetCount_v2>},
      {"nvmlDeviceGetHandleByIndex_v2", child::k_required,
       child::bind_entry<&NvmlApi::nvmlDeviceGetHandleByIndex_v2>},
      {"nvmlDeviceGetHandleByPciBusId_v2", child::k_required,
       child::bind_entry<&NvmlApi::nvmlDeviceGetHandleByPciBusId_v2>},
      {"nvmlDeviceGetPciInfo_v3", child::k_required,
       child::bind_entry<&NvmlApi::nvmlDeviceGetPciInfo_v3>},
      {"nvmlDeviceGetName", child::k_optional, child::bind_entry<&NvmlApi::nvmlDeviceGetName>},
      {"nvmlDeviceGetUUID", child::k_optional, child::bind_entry<&NvmlApi::nvmlDeviceGetUUID>},
      {"nvmlDeviceGetMinorNumber", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetMinorNumber>},
      {"nvmlDeviceGetArchitecture", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetArchitecture>},
      {"nvmlDeviceGetEccMode", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetEccMode>},
      {"nvmlDeviceGetTotalEccErrors", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetTotalEccErrors>},
      {"nvmlDeviceGetRetiredPages", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetRetiredPages>},
      {"nvmlDeviceGetRetiredPagesPendingStatus", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetRetiredPagesPendingStatus>},
      {"nvmlDeviceGetRemappedRows", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetRemappedRows>},
      {"nvmlDeviceGetFieldValues", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetFieldValues>},
      {"nvmlDeviceGetCurrentClocksEventReasons", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetCurrentClocksEventReasons>},
      {"nvmlDeviceGetCurrentClocksThrottleReasons", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetCurrentClocksThrottleReasons>},
      {"nvmlDeviceGetTemperature", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetTemperature>},
      {"nvmlDeviceGetTemperatureThreshold", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetTemperatureThreshold>},
      {"nvmlDeviceGetPersistenceMode", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetPersistenceMode>},
      {"nvmlDeviceGetComputeMode", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetComputeMode>},
      {"nvmlDeviceGetMigMode", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetMigMode>},
      {"nvmlDeviceGetCurrPcieLinkGeneration", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetCurrPcieLinkGeneration>},
      {"nvmlDeviceGetMaxPcieLinkGeneration", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetMaxPcieLinkGeneration>},
      {"nvmlDeviceGetCurrPcieLinkWidth", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetCurrPcieLinkWidth>},
      {"nvmlDeviceGetMaxPcieLinkWidth", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetMaxPcieLinkWidth>},
      {"nvmlDeviceGetNvLinkState", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetNvLinkState>},
      {"nvmlDeviceGetGpuFabricInfo", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetGpuFabricInfo>},
      {"nvmlDeviceGetComputeRunningProcesses_v2", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetComputeRunningProcesses_v2>},
      {"nvmlDeviceGetNvLinkErrorCounter", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetNvLinkErrorCounter>},
      {"nvmlDeviceGetPcieReplayCounter", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetPcieReplayCounter>},
      {"nvmlDeviceGetSramEccErrorStatus", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetSramEccErrorStatus>},
      {"nvmlDeviceValidateInforom", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceValidateInforom>},
      {"nvmlDeviceGetClockInfo", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetClockInfo>},
      {"nvmlDeviceGetPowerUsage", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetPowerUsage>},
      {"nvmlDeviceGetMemoryInfo", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetMemoryInfo>},
      {"nvmlDeviceGetGpuInstanceProfileInfo", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetGpuInstanceProfileInfo>},
      {"nvmlDeviceGetGpuInstances", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlDeviceGetGpuInstances>},
      {"nvmlGpuInstanceGetInfo", child::k_optional,
       child::bind_entry<&NvmlApi::nvmlGpuInstanceGetInfo>},
  };
  return table;
}

LoadResult load_nvml(const std::string& library) {
  LoadResult result = child::load_library(library, entry_points());
  if (!result.loaded) {
    return result;
  }
  LoadedNvml* nvml = result.loaded.get();
  // The old clocks name answers the same question: missing only when both are.
  if (nvml->api.nvmlDeviceGetCurrentClocksThrottleReasons) {
    std::erase(nvml->missing_optional, "nvmlDeviceGetCurrentClocksEventReasons");
  }
  if (nvml->api.nvmlDeviceGetCurrentClocksEventReasons) {
    std::erase(nvml->missing_optional, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
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
