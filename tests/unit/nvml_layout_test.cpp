// The probe's declarations of NVML's structs must match nvml.h byte for byte (x86-64 / LP64):
// sizes and offsets as NVIDIA's header lays them out.
#include "probes/nvml/nvml_api.hpp"

#include <catch2/catch.hpp>

#include <cstddef>

using namespace gpf::nvml;

static_assert(sizeof(nvmlDevice_t) == 8);
static_assert(sizeof(nvmlReturn_t) == 4 && sizeof(nvmlEnableState_t) == 4 &&
              sizeof(nvmlComputeMode_t) == 4);

static_assert(sizeof(nvmlPciInfo_t) == 68);
static_assert(offsetof(nvmlPciInfo_t, busIdLegacy) == 0);
static_assert(offsetof(nvmlPciInfo_t, domain) == 16);
static_assert(offsetof(nvmlPciInfo_t, bus) == 20);
static_assert(offsetof(nvmlPciInfo_t, device) == 24);
static_assert(offsetof(nvmlPciInfo_t, pciDeviceId) == 28);
static_assert(offsetof(nvmlPciInfo_t, pciSubSystemId) == 32);
static_assert(offsetof(nvmlPciInfo_t, busId) == 36);

static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);
static_assert(offsetof(nvmlProcessInfo_v2_t, pid) == 0);
static_assert(offsetof(nvmlProcessInfo_v2_t, usedGpuMemory) == 8);
static_assert(offsetof(nvmlProcessInfo_v2_t, gpuInstanceId) == 16);
static_assert(offsetof(nvmlProcessInfo_v2_t, computeInstanceId) == 20);

static_assert(sizeof(nvmlGpuFabricInfo_t) == 28);
static_assert(offsetof(nvmlGpuFabricInfo_t, clusterUuid) == 0);
static_assert(offsetof(nvmlGpuFabricInfo_t, status) == 16);
static_assert(offsetof(nvmlGpuFabricInfo_t, cliqueId) == 20);
static_assert(offsetof(nvmlGpuFabricInfo_t, state) == 24);

static_assert(sizeof(nvmlValue_t) == 8);
static_assert(sizeof(nvmlFieldValue_t) == 40);
static_assert(offsetof(nvmlFieldValue_t, fieldId) == 0);
static_assert(offsetof(nvmlFieldValue_t, scopeId) == 4);
static_assert(offsetof(nvmlFieldValue_t, timestamp) == 8);
static_assert(offsetof(nvmlFieldValue_t, latencyUsec) == 16);
static_assert(offsetof(nvmlFieldValue_t, valueType) == 24);
static_assert(offsetof(nvmlFieldValue_t, nvmlReturn) == 28);
static_assert(offsetof(nvmlFieldValue_t, value) == 32);

static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(offsetof(nvmlMemory_t, total) == 0);
static_assert(offsetof(nvmlMemory_t, free) == 8);
static_assert(offsetof(nvmlMemory_t, used) == 16);

static_assert(sizeof(nvmlGpuInstancePlacement_t) == 8);
static_assert(offsetof(nvmlGpuInstancePlacement_t, size) == 4);
static_assert(sizeof(nvmlGpuInstanceProfileInfo_t) == 48);
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, id) == 0);
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, sliceCount) == 8);
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, instanceCount) == 12);
static_assert(offsetof(nvmlGpuInstanceProfileInfo_t, memorySizeMB) == 40);
static_assert(sizeof(nvmlGpuInstanceInfo_t) == 24);
static_assert(offsetof(nvmlGpuInstanceInfo_t, device) == 0);
static_assert(offsetof(nvmlGpuInstanceInfo_t, id) == 8);
static_assert(offsetof(nvmlGpuInstanceInfo_t, profileId) == 12);
static_assert(offsetof(nvmlGpuInstanceInfo_t, placement) == 16);

// nvmlEccSramErrorStatus_v1_t: 104 bytes, so its version word is 104 | 1 << 24.
static_assert(sizeof(nvmlEccSramErrorStatus_t) == 104);
static_assert(offsetof(nvmlEccSramErrorStatus_t, aggregateUncParity) == 8);
static_assert(offsetof(nvmlEccSramErrorStatus_t, volatileCor) == 48);
static_assert(offsetof(nvmlEccSramErrorStatus_t, aggregateUncBucketOther) == 88);
static_assert(offsetof(nvmlEccSramErrorStatus_t, bThresholdExceeded) == 96);
static_assert(k_sram_status_version == 0x01000068U);

TEST_CASE("nvml layout: the entry-point table names every versioned symbol once") {
  const auto& table = entry_points();
  for (std::size_t i = 0; i < table.size(); ++i) {
    for (std::size_t j = i + 1; j < table.size(); ++j) {
      CHECK(table[i].symbol != table[j].symbol);
    }
  }
  // The un-suffixed names keep old layouts: only the versioned ones may be asked for.
  for (const auto& e : table) {
    CHECK(e.symbol != "nvmlInit");
    CHECK(e.symbol != "nvmlDeviceGetPciInfo");
    CHECK(e.symbol != "nvmlDeviceGetCount");
    CHECK(e.symbol != "nvmlDeviceGetHandleByIndex");
  }
}
