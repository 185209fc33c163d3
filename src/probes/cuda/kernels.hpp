#pragma once
// The active step's kernels: PTX text embedded in the binary, JIT-compiled by the driver in the
// per-GPU child (cuModuleLoadData), and what the host expects of them. Written for PTX ISA 6.0
// and target sm_30 so that every driver from CUDA 9.0 on can JIT them for every architecture it
// supports (docs/cuda-probe.md#active-step). Pure data and arithmetic: no CUDA call here.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpf::cuda {

// The module's text (NUL-terminated, as cuModuleLoadData wants it).
std::string_view kernels_ptx();

// Its entry points:
// gpf_fill(u32* buf, u64 words, u32 pattern, u32 seed): buf[i] = pattern_word(i, pattern, seed).
inline constexpr const char* k_kernel_fill = "gpf_fill";
// gpf_check(const u32* buf, u64 words, u32 pattern, u32 seed, MemoryCheckResult* result): counts
// the words that differ from pattern_word and records the first k_memory_slots of them.
inline constexpr const char* k_kernel_check = "gpf_check";
// gpf_compute(u32* out, u32 iterations): per thread, 3 words (ComputeWords).
inline constexpr const char* k_kernel_compute = "gpf_compute";
inline constexpr std::array<const char*, 3> k_kernel_names{k_kernel_fill, k_kernel_check,
                                                           k_kernel_compute};

// The memory patterns, in the order the step writes them.
enum class MemoryPattern : std::uint32_t {
  address = 0,         // each word holds its own index (address-in-word: address-line faults)
  address_inverse = 1, // its complement (every bit both ways)
  walking_one = 2,     // 1 << (index % 32)
  walking_zero = 3,    // its complement
  random = 4,          // a seeded hash of the index
};
inline constexpr std::uint32_t k_memory_patterns = 5;
std::string_view pattern_name(std::uint32_t pattern);
// The word pattern `pattern` puts at word `index` (as the kernels compute it).
std::uint32_t pattern_word(std::uint64_t index, std::uint32_t pattern, std::uint32_t seed);

// What gpf_check writes: the mismatch count, then the first k_memory_slots mismatches.
inline constexpr std::uint32_t k_memory_slots = 8;
struct MemorySlot {
  std::uint64_t index; // word index in the region
  std::uint32_t expected;
  std::uint32_t got;
};
struct MemoryCheckResult {
  std::uint32_t mismatches;
  std::uint32_t pad;
  MemorySlot slots[k_memory_slots];
};
static_assert(sizeof(MemorySlot) == 16 && sizeof(MemoryCheckResult) == 8 + 16 * k_memory_slots);

// The compute kernel's launch: blocks x threads, each thread `iterations` rounds of an integer
// chain (x = x * 1664525 + 1013904223; x ^= x >> 15) feeding a single-precision FMA chain, then one
// element of a 16 x 16 matrix product (FMA in order k = 0..15). Fixed inputs: the same words on
// every GPU that computes right.
inline constexpr std::uint32_t k_compute_blocks = 256;
inline constexpr std::uint32_t k_compute_threads = 256;
inline constexpr std::uint32_t k_compute_iterations = 256;
inline constexpr std::size_t k_compute_words_per_thread = 3; // integer, FMA chain, matrix element
inline constexpr std::size_t k_compute_words =
    std::size_t{k_compute_blocks} * k_compute_threads * k_compute_words_per_thread;

// The integer chain's result for thread `gid` (the host reference; the FMA parts are compared
// across the node's GPUs of one model, bit for bit).
std::uint32_t compute_integer(std::uint32_t gid, std::uint32_t iterations);
// FNV-1a (64 bits) of the compute kernel's output words, as 16 hex digits.
std::string compute_checksum(const std::vector<std::uint32_t>& words);

} // namespace gpf::cuda
