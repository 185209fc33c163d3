#pragma once
// Facts from the CUDA probe (see the CUDA-probe issue). Filled in by probes/cuda.
namespace gpf {
struct CudaFacts {
  bool ran = false;
};
} // namespace gpf
