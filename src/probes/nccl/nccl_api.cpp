// Loading libnccl at run time: one {symbol, required} row per entry point, bound into typed
// pointers. Runs in the NCCL child only (nccl_child.cpp).
#include "probes/nccl/nccl_api.hpp"

#include <fmt/format.h>

namespace gpf::nccl {

const std::vector<EntryPoint>& entry_points() {
  // Required: the start-up test cannot run without them. Optional: only a detail of a message is
  // lost (the last error's text, an asynchronous error).
  static const std::vector<EntryPoint> table{
      {"ncclGetVersion", child::k_required, child::bind_entry<&NcclApi::ncclGetVersion>},
      {"ncclCommInitAll", child::k_required, child::bind_entry<&NcclApi::ncclCommInitAll>},
      {"ncclGroupStart", child::k_required, child::bind_entry<&NcclApi::ncclGroupStart>},
      {"ncclGroupEnd", child::k_required, child::bind_entry<&NcclApi::ncclGroupEnd>},
      {"ncclAllReduce", child::k_required, child::bind_entry<&NcclApi::ncclAllReduce>},
      {"ncclGetErrorString", child::k_required, child::bind_entry<&NcclApi::ncclGetErrorString>},
      {"ncclGetLastError", child::k_optional, child::bind_entry<&NcclApi::ncclGetLastError>},
      {"ncclCommGetAsyncError", child::k_optional,
       child::bind_entry<&NcclApi::ncclCommGetAsyncError>},
  };
  return table;
}

LoadResult load_nccl(const std::string& library) {
  return child::load_library(library, entry_points());
}

std::string result_name(ncclResult_t code) {
  // nccl.h's ncclResult_t enumerators, in value order.
  static constexpr std::string_view names[] = {
      "ncclSuccess",       "ncclUnhandledCudaError", "ncclSystemError",
      "ncclInternalError", "ncclInvalidArgument",    "ncclInvalidUsage",
      "ncclRemoteError",   "ncclInProgress",         "ncclTimeout"};
  if (code >= 0 && static_cast<std::size_t>(code) < std::size(names)) {
    return std::string(names[code]);
  }
  return fmt::format("ncclResult_t {}", code);
}

std::string version_text(int code) {
  // NCCL_VERSION(X,Y,Z): X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z from 2.9 on.
  if (code >= 10000) {
    return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
  }
  return fmt::format("{}.{}.{}", code / 1000, code / 100 % 10, code % 100);
}

} // namespace gpf::nccl
