#pragma once
// CUDA's error codes, whole: every CUresult of the driver API (cuda.h, enum cudaError_enum) and
// every cudaError_t of the runtime API (driver_types.h, enum cudaError) of k_cuda_errors_version,
// one row per value with the name each enum gives it (the two enums share their numbers; each has
// codes the other lacks), our meaning, and whose fault the error is: the node's, the job's or
// either. tests/data/cuda-errors-<version>.tsv is the code list the table is checked against
// (written by scripts/extract-cuda-errors.py from the two headers).
#include <span>
#include <string_view>

namespace gpf {

inline constexpr std::string_view k_cuda_errors_version = "13.3";
inline constexpr std::string_view k_cuda_driver_errors_url =
    "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html";
inline constexpr std::string_view k_cuda_runtime_errors_url =
    "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html";

// Whose fault an error is, for a job that met it.
enum class CudaErrorClass {
  none,      // not a failure: success, or a query's "still running"
  node,      // a condition of the node (driver, device nodes, GPU health, daemons, licences)
  job,       // the job's own code, build or use of the API
  ambiguous, // either; the row's detail says what tells them apart
};

struct CudaError {
  int value;
  std::string_view driver;  // CUresult name; "" where cuda.h has none for this value
  std::string_view runtime; // cudaError_t name; "" where driver_types.h has none
  CudaErrorClass cls;
  std::string_view meaning; // our words, one short sentence
  // node: the node conditions that cause it; ambiguous: what tells node from job; otherwise "".
  std::string_view detail;
  // The text the runtime prints for the code, kept only where it is distinctive on its own and
  // public job logs show it without the code's name (explain-log matches it); "" otherwise.
  std::string_view printed = "";
};

// Every row, by ascending value.
std::span<const CudaError> cuda_errors();
// nullptr when neither enum has this value.
const CudaError* find_cuda_error(int value);
// By either enum's name, exactly as spelled ("CUDA_ERROR_NO_DEVICE", "cudaErrorNoDevice");
// nullptr when neither enum has it.
const CudaError* find_cuda_error(std::string_view name);
// "none", "node", "job", "ambiguous".
std::string_view cuda_error_class_word(CudaErrorClass c);

} // namespace gpf
