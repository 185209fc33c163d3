#pragma once
// NCCL as the NCCL child sees it: the few types and entry points it calls, declared here (no NCCL
// headers needed to build), loaded at run time with dlopen. Names, values and signatures: NCCL's
// public nccl.h (docs/sources.md#nccl). Only the NCCL child process loads this; the parent never
// calls NCCL. The fake libnccl in tests/fake_nccl exports these same declarations.
#include "probes/child/library.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace gpf::nccl {

struct NcclCommSt; // opaque (nccl.h: typedef struct ncclComm* ncclComm_t)
using ncclComm_t = NcclCommSt*;
using ncclResult_t = int;   // an enum in nccl.h, int-sized
using ncclDataType_t = int; // an enum in nccl.h
using ncclRedOp_t = int;    // an enum in nccl.h
using cudaStream_t = void*; // CUstream_st*; nullptr is the legacy default stream

// ncclResult_t values (nccl.h); ncclGetErrorString gives the library's own words for each.
inline constexpr ncclResult_t k_success = 0;
inline constexpr ncclResult_t k_unhandled_cuda_error = 1;
inline constexpr ncclResult_t k_system_error = 2;
inline constexpr ncclResult_t k_internal_error = 3;
inline constexpr ncclResult_t k_invalid_argument = 4;
inline constexpr ncclResult_t k_invalid_usage = 5;
inline constexpr ncclResult_t k_remote_error = 6;
inline constexpr ncclResult_t k_in_progress = 7;
inline constexpr ncclResult_t k_timeout = 8;

// ncclDataType_t ncclInt32 and ncclRedOp_t ncclSum (nccl.h).
inline constexpr ncclDataType_t k_int32 = 2;
inline constexpr ncclRedOp_t k_sum = 0;

struct NcclApi {
  ncclResult_t (*ncclGetVersion)(int* version) = nullptr;
  ncclResult_t (*ncclCommInitAll)(ncclComm_t* comms, int ndev, const int* devlist) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
  ncclResult_t (*ncclAllReduce)(const void* send, void* recv, std::size_t count,
                                ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                                cudaStream_t stream) = nullptr;
  const char* (*ncclGetErrorString)(ncclResult_t result) = nullptr;
  // Optional: NCCL 2.13 and later.
  const char* (*ncclGetLastError)(ncclComm_t comm) = nullptr;
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t comm, ncclResult_t* error) = nullptr;
};

using EntryPoint = child::EntryPoint<NcclApi>;
const std::vector<EntryPoint>& entry_points();

using LoadedNccl = child::LoadedLibrary<NcclApi>;
using LoadResult = child::LoadResult<NcclApi>;

// dlopen(library) with the loader's normal search when library has no '/'. Never throws.
LoadResult load_nccl(const std::string& library);

// "ncclInvalidUsage" for 5 (nccl.h's enumerator); "ncclResult_t <n>" for a value nccl.h lacks.
std::string result_name(ncclResult_t code);

// "NCCL 2.21.5" style text of ncclGetVersion's code: X*10000 + Y*100 + Z since 2.9, X*1000 +
// Y*100 + Z before (nccl.h's NCCL_VERSION macro).
std::string version_text(int code);

} // namespace gpf::nccl
