#pragma once
// The CUDA driver API as the probe's children see it: the few types and entry points it uses,
// declared here (no CUDA headers needed to build), loaded at run time with dlopen. Symbol names
// and signatures: cuda.h and the CUDA Driver API reference, docs/sources.md#cuda-driver-api (the
// `_v2` names are asked for explicitly; the un-suffixed ones keep the old 32-bit ABI). Only
// child processes load this; the parent never calls CUDA.
#include "probes/child/library.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::cuda {

// Local declarations of the CUDA types the probe needs (ABI-compatible with cuda.h).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUstream_st;
using CUstream = CUstream_st*; // nullptr: the context's default (NULL) stream
struct CUevent_st;
using CUevent = CUevent_st*;
struct CUmod_st;
using CUmodule = CUmod_st*;
struct CUfunc_st;
using CUfunction = CUfunc_st*;
struct CUuuid {
  unsigned char bytes[16];
};
// The virtual memory management types of the fabric allocation probe, laid out as cuda.h
// declares them (CUmemAllocationProp_v1, CUmemLocation_v1; the CUDA Driver API's "Data types",
// https://docs.nvidia.com/cuda/cuda-driver-api/structCUmemAllocationProp__v1.html): the enums are
// C enums (int-sized), then a pointer, then four bytes of flags and four reserved, 32 bytes on a
// 64-bit host.
using CUmemGenericAllocationHandle = unsigned long long;
struct CUmemLocation {
  int type = 0; // CUmemLocationType
  int id = 0;
};
struct CUmemAllocationProp {
  int type = 0;                 // CUmemAllocationType
  int requestedHandleTypes = 0; // CUmemAllocationHandleType, a bit mask
  CUmemLocation location;
  void* win32HandleMetaData = nullptr;
  struct {
    unsigned char compressionType = 0;
    unsigned char gpuDirectRDMACapable = 0;
    unsigned short usage = 0;
    unsigned char reserved[4] = {};
  } allocFlags;
};
static_assert(sizeof(void*) != 8 || sizeof(CUmemAllocationProp) == 32,
              "CUmemAllocationProp must keep cuda.h's layout");

// CUresult values the probe names itself (cuda.h, docs/sources.md#cuda-driver-api).
inline constexpr CUresult k_success = 0;
inline constexpr CUresult k_error_stub_library = 34;
inline constexpr CUresult k_error_peer_access_already_enabled = 704;
inline constexpr CUresult k_error_system_driver_mismatch = 803;
inline constexpr CUresult k_error_compat_not_supported_on_device = 804;

// CUdevice_attribute values (cuda.h, docs/sources.md#cuda-driver-api).
inline constexpr int k_attr_compute_mode = 20;
inline constexpr int k_attr_cc_major = 75;
inline constexpr int k_attr_cc_minor = 76;
// Added in CUDA 12.3; an older driver answers CUDA_ERROR_INVALID_VALUE for it.
inline constexpr int k_attr_handle_type_fabric_supported = 128;

// The enum values the fabric allocation probe passes (cuda.h; CUmemAllocationType,
// CUmemLocationType, CUmemAllocationHandleType, CUmemAllocationGranularity_flags in
// https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html).
inline constexpr int k_mem_allocation_type_pinned = 0x1;  // CU_MEM_ALLOCATION_TYPE_PINNED
inline constexpr int k_mem_location_type_device = 0x1;    // CU_MEM_LOCATION_TYPE_DEVICE
inline constexpr int k_mem_handle_type_fabric = 0x8;      // CU_MEM_HANDLE_TYPE_FABRIC
inline constexpr int k_mem_alloc_granularity_minimum = 0; // CU_MEM_ALLOC_GRANULARITY_MINIMUM

// Typed pointers to the entry points; an optional one that the library lacks stays nullptr.
struct DriverApi {
  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int len, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetUuid_v2)(CUuuid* uuid, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetUuid)(CUuuid* uuid, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetPCIBusId)(char* bus_id, int len, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(std::size_t* bytes, CUdevice device) = nullptr; // _v2
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr; // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, std::size_t bytes) = nullptr;                     // _v2
  CUresult (*cuMemFree)(CUdeviceptr ptr) = nullptr;                                          // _v2
  CUresult (*cuMemsetD8)(CUdeviceptr ptr, unsigned char value, std::size_t count) = nullptr; // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, std::size_t bytes) = nullptr;   // _v2
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, std::size_t bytes) = nullptr;         // _v2
  CUresult (*cuDeviceCanAccessPeer)(int* can_access, CUdevice device, CUdevice peer) = nullptr;
  CUresult (*cuCtxEnablePeerAccess)(CUcontext peer, unsigned int flags) = nullptr;
  CUresult (*cuMemcpyPeer)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                           std::size_t bytes) = nullptr;
  // The bandwidth step (optional: without them only the bandwidth figures are lost).
  CUresult (*cuMemAllocHost)(void** ptr, std::size_t bytes) = nullptr; // _v2
  CUresult (*cuMemFreeHost)(void* ptr) = nullptr;
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, std::size_t bytes,
                                CUstream stream) = nullptr; // _v2
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, std::size_t bytes,
                                CUstream stream) = nullptr; // _v2
  CUresult (*cuMemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src,
                                CUcontext src_ctx, std::size_t bytes, CUstream stream) = nullptr;
  CUresult (*cuEventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr; // _v2
  // The active step (optional: without them the step is not checked, nothing else is lost).
  CUresult (*cuMemGetInfo)(std::size_t* free, std::size_t* total) = nullptr; // _v2
  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                             unsigned block_x, unsigned block_y, unsigned block_z,
                             unsigned shared_bytes, CUstream stream, void** params,
                             void** extra) = nullptr;
  // The fabric allocation probe (optional: without them it is not asked; CUDA 10.2 and later,
  // https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__VA.html).
  CUresult (*cuMemGetAllocationGranularity)(std::size_t* granularity,
                                            const CUmemAllocationProp* prop, int option) = nullptr;
  CUresult (*cuMemCreate)(CUmemGenericAllocationHandle* handle, std::size_t size,
                          const CUmemAllocationProp* prop, unsigned long long flags) = nullptr;
  CUresult (*cuMemRelease)(CUmemGenericAllocationHandle handle) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** text) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;

  // The UUID entry point to use: _v2 when present.
  CUresult get_uuid(CUuuid* uuid, CUdevice device) const;
  bool has_peer_entry_points() const {
    return cuDeviceCanAccessPeer && cuCtxEnablePeerAccess && cuMemcpyPeer;
  }
  // Events and the asynchronous copies every bandwidth measurement needs.
  bool has_timing_entry_points() const {
    return cuEventCreate && cuEventRecord && cuEventSynchronize && cuEventElapsedTime &&
           cuEventDestroy;
  }
  bool has_host_bandwidth_entry_points() const {
    return has_timing_entry_points() && cuMemAllocHost && cuMemFreeHost && cuMemcpyHtoDAsync &&
           cuMemcpyDtoHAsync;
  }
  // Module load, kernel launch and the free-memory query of the active step.
  bool has_active_entry_points() const {
    return cuMemGetInfo && cuModuleLoadData && cuModuleUnload && cuModuleGetFunction &&
           cuLaunchKernel;
  }
  // Granularity, create and release of the fabric allocation probe.
  bool has_fabric_entry_points() const {
    return cuMemGetAllocationGranularity && cuMemCreate && cuMemRelease;
  }
  bool has_peer_bandwidth_entry_points() const {
    return has_timing_entry_points() && cuMemcpyPeerAsync;
  }
};

using EntryPoint = child::EntryPoint<DriverApi>;
// The table, in the order of the struct above.
const std::vector<EntryPoint>& entry_points();

// An open libcuda and its resolved entry points. Closing is deliberately skipped: a driver's
// destructors may hang, and the child process exits right after with _exit.
using LoadedDriver = child::LoadedLibrary<DriverApi>;
using LoadResult = child::LoadResult<DriverApi>;

// dlopen(library) with the loader's normal search when library has no '/'. Never throws.
LoadResult load_driver(const std::string& library);

// "CUDA_ERROR_UNKNOWN" via cuGetErrorName, else from CUDA's enum (knowledge/cuda_errors.hpp);
// "CUresult <n>" for a code neither knows.
std::string error_name(const DriverApi& api, CUresult code);
// cuGetErrorString text, or "" when unavailable.
std::string error_text(const DriverApi& api, CUresult code);

// 16 UUID bytes -> "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (the form nvidia-smi -L prints).
std::string format_uuid(const CUuuid& uuid);

} // namespace gpf::cuda
