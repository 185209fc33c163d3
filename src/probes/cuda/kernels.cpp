// The active step's PTX and its host reference (kernels.hpp). PTX: NVIDIA's PTX ISA reference
// (https://docs.nvidia.com/cuda/parallel-thread-execution/). ISA 6.0 (CUDA 9.0) and target sm_30
// (Kepler) are low enough that every driver of the compatibility data JITs them for every
// architecture it supports (data/cuda_architectures.json: Fermi left with CUDA 9.0).
// tests/unit/cuda_kernels_test.cpp assembles the text with ptxas where NVIDIA's compiler is at
// hand.
#include "probes/cuda/kernels.hpp"

#include <fmt/format.h>

namespace gpf::cuda {
namespace {

// The PTX is laid out one instruction per line.
// clang-format off
// The pattern word of index %rd3 under pattern %r1 and seed %r2, into %r7 (temporaries %r8-%r12,
// %rd8, %p2-%p6). Shared by gpf_fill and gpf_check; pattern_word() below is the same arithmetic.
#define GPF_PATTERN_WORD                                                                           \
  "  mov.u32 %r7, 0;\n"                                                                            \
  "  cvt.u32.u64 %r8, %rd3;\n"                                                                     \
  "  setp.eq.u32 %p2, %r1, 0;\n"                                                                   \
  "  @%p2 mov.u32 %r7, %r8;\n"                                                                     \
  "  setp.eq.u32 %p3, %r1, 1;\n"                                                                   \
  "  @%p3 not.b32 %r7, %r8;\n"                                                                     \
  "  and.b32 %r9, %r8, 31;\n"                                                                      \
  "  shl.b32 %r10, 1, %r9;\n"                                                                      \
  "  setp.eq.u32 %p4, %r1, 2;\n"                                                                   \
  "  @%p4 mov.u32 %r7, %r10;\n"                                                                    \
  "  setp.eq.u32 %p5, %r1, 3;\n"                                                                   \
  "  @%p5 not.b32 %r7, %r10;\n"                                                                    \
  "  shr.u64 %rd8, %rd3, 32;\n"                                                                    \
  "  cvt.u32.u64 %r11, %rd8;\n"                                                                    \
  "  xor.b32 %r11, %r11, %r2;\n"                                                                   \
  "  mad.lo.u32 %r11, %r8, -1640531535, %r11;\n"                                                   \
  "  shr.u32 %r12, %r11, 16;\n"                                                                    \
  "  xor.b32 %r11, %r11, %r12;\n"                                                                  \
  "  mul.lo.u32 %r11, %r11, -2048144789;\n"                                                        \
  "  shr.u32 %r12, %r11, 13;\n"                                                                    \
  "  xor.b32 %r11, %r11, %r12;\n"                                                                  \
  "  setp.eq.u32 %p6, %r1, 4;\n"                                                                   \
  "  @%p6 mov.u32 %r7, %r11;\n"

// Thread index %rd3 and grid stride %rd5 of a grid-stride loop.
#define GPF_GRID_STRIDE                                                                            \
  "  mov.u32 %r3, %ctaid.x;\n"                                                                     \
  "  mov.u32 %r4, %ntid.x;\n"                                                                      \
  "  mov.u32 %r5, %tid.x;\n"                                                                       \
  "  mov.u32 %r6, %nctaid.x;\n"                                                                    \
  "  mul.wide.u32 %rd3, %r3, %r4;\n"                                                               \
  "  cvt.u64.u32 %rd4, %r5;\n"                                                                     \
  "  add.u64 %rd3, %rd3, %rd4;\n"                                                                  \
  "  mul.wide.u32 %rd5, %r6, %r4;\n"

constexpr char k_ptx[] =
    "// gpu-preflight active step (docs/cuda-probe.md#active-step)\n"
    ".version 6.0\n"
    ".target sm_30\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry gpf_fill(\n"
    "  .param .u64 gpf_fill_buf,\n"
    "  .param .u64 gpf_fill_words,\n"
    "  .param .u32 gpf_fill_pattern,\n"
    "  .param .u32 gpf_fill_seed)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  ld.param.u64 %rd1, [gpf_fill_buf];\n"
    "  ld.param.u64 %rd2, [gpf_fill_words];\n"
    "  ld.param.u32 %r1, [gpf_fill_pattern];\n"
    "  ld.param.u32 %r2, [gpf_fill_seed];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n" GPF_GRID_STRIDE "FILL_LOOP:\n"
    "  setp.ge.u64 %p1, %rd3, %rd2;\n"
    "  @%p1 bra FILL_DONE;\n" GPF_PATTERN_WORD "  shl.b64 %rd6, %rd3, 2;\n"
    "  add.u64 %rd7, %rd1, %rd6;\n"
    "  st.global.u32 [%rd7], %r7;\n"
    "  add.u64 %rd3, %rd3, %rd5;\n"
    "  bra.uni FILL_LOOP;\n"
    "FILL_DONE:\n"
    "  ret;\n"
    "}\n"
    "\n"
    ".visible .entry gpf_check(\n"
    "  .param .u64 gpf_check_buf,\n"
    "  .param .u64 gpf_check_words,\n"
    "  .param .u32 gpf_check_pattern,\n"
    "  .param .u32 gpf_check_seed,\n"
    "  .param .u64 gpf_check_result)\n"
    "{\n"
    "  .reg .pred %p<8>;\n"
    "  .reg .b32 %r<16>;\n"
    "  .reg .b64 %rd<12>;\n"
    "  ld.param.u64 %rd1, [gpf_check_buf];\n"
    "  ld.param.u64 %rd2, [gpf_check_words];\n"
    "  ld.param.u32 %r1, [gpf_check_pattern];\n"
    "  ld.param.u32 %r2, [gpf_check_seed];\n"
    "  ld.param.u64 %rd9, [gpf_check_result];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  cvta.to.global.u64 %rd9, %rd9;\n" GPF_GRID_STRIDE "CHECK_LOOP:\n"
    "  setp.ge.u64 %p1, %rd3, %rd2;\n"
    "  @%p1 bra CHECK_DONE;\n" GPF_PATTERN_WORD "  shl.b64 %rd6, %rd3, 2;\n"
    "  add.u64 %rd7, %rd1, %rd6;\n"
    "  ld.global.cv.u32 %r13, [%rd7];\n"
    "  setp.eq.u32 %p7, %r13, %r7;\n"
    "  @%p7 bra CHECK_NEXT;\n"
    "  atom.global.add.u32 %r14, [%rd9], 1;\n"
    "  setp.ge.u32 %p7, %r14, 8;\n"
    "  @%p7 bra CHECK_NEXT;\n"
    "  mul.wide.u32 %rd10, %r14, 16;\n"
    "  add.u64 %rd10, %rd10, %rd9;\n"
    "  st.global.u64 [%rd10+8], %rd3;\n"
    "  st.global.u32 [%rd10+16], %r7;\n"
    "  st.global.u32 [%rd10+20], %r13;\n"
    "CHECK_NEXT:\n"
    "  add.u64 %rd3, %rd3, %rd5;\n"
    "  bra.uni CHECK_LOOP;\n"
    "CHECK_DONE:\n"
    "  ret;\n"
    "}\n"
    "\n"
    ".visible .entry gpf_compute(\n"
    "  .param .u64 gpf_compute_out,\n"
    "  .param .u32 gpf_compute_iterations)\n"
    "{\n"
    "  .reg .pred %p<4>;\n"
    "  .reg .b32 %r<24>;\n"
    "  .reg .f32 %f<16>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [gpf_compute_out];\n"
    "  ld.param.u32 %r1, [gpf_compute_iterations];\n"
    "  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.u32 %r5, %r2, %r3, %r4;\n"
    "  add.u32 %r6, %r5, 1;\n"
    "  and.b32 %r7, %r5, 1023;\n"
    "  cvt.rn.f32.u32 %f1, %r7;\n"
    "  mul.rn.f32 %f1, %f1, 0f3A800000;\n"
    "  mov.u32 %r8, 0;\n"
    "CHAIN:\n"
    "  setp.ge.u32 %p1, %r8, %r1;\n"
    "  @%p1 bra CHAIN_DONE;\n"
    "  mad.lo.u32 %r6, %r6, 1664525, 1013904223;\n"
    "  shr.u32 %r9, %r6, 15;\n"
    "  xor.b32 %r6, %r6, %r9;\n"
    "  and.b32 %r10, %r6, 65535;\n"
    "  cvt.rn.f32.u32 %f2, %r10;\n"
    "  mul.rn.f32 %f2, %f2, 0f35800000;\n"
    "  fma.rn.f32 %f1, %f1, 0f3F7FC000, %f2;\n"
    "  add.u32 %r8, %r8, 1;\n"
    "  bra.uni CHAIN;\n"
    "CHAIN_DONE:\n"
    // matrix element (row, col) = (tid / 16 % 16, tid % 16) of A x B, A and B generated from the
    // indices and the block: a = ((row*37 + k*101 + block*13) & 1023) / 128,
    // b = ((k*53 + col*29 + 7) & 1023) / 512.
    "  shr.u32 %r11, %r4, 4;\n"
    "  and.b32 %r11, %r11, 15;\n"
    "  and.b32 %r12, %r4, 15;\n"
    "  mov.f32 %f3, 0f00000000;\n"
    "  mov.u32 %r13, 0;\n"
    "MATRIX:\n"
    "  setp.ge.u32 %p2, %r13, 16;\n"
    "  @%p2 bra MATRIX_DONE;\n"
    "  mul.lo.u32 %r14, %r11, 37;\n"
    "  mad.lo.u32 %r14, %r13, 101, %r14;\n"
    "  mad.lo.u32 %r14, %r2, 13, %r14;\n"
    "  and.b32 %r14, %r14, 1023;\n"
    "  cvt.rn.f32.u32 %f4, %r14;\n"
    "  mul.rn.f32 %f4, %f4, 0f3C000000;\n"
    "  mul.lo.u32 %r15, %r13, 53;\n"
    "  mad.lo.u32 %r15, %r12, 29, %r15;\n"
    "  add.u32 %r15, %r15, 7;\n"
    "  and.b32 %r15, %r15, 1023;\n"
    "  cvt.rn.f32.u32 %f5, %r15;\n"
    "  mul.rn.f32 %f5, %f5, 0f3B000000;\n"
    "  fma.rn.f32 %f3, %f4, %f5, %f3;\n"
    "  add.u32 %r13, %r13, 1;\n"
    "  bra.uni MATRIX;\n"
    "MATRIX_DONE:\n"
    "  mul.wide.u32 %rd2, %r5, 12;\n"
    "  add.u64 %rd3, %rd1, %rd2;\n"
    "  st.global.u32 [%rd3], %r6;\n"
    "  st.global.f32 [%rd3+4], %f1;\n"
    "  st.global.f32 [%rd3+8], %f3;\n"
    "  ret;\n"
    "}\n";

// clang-format on
#undef GPF_PATTERN_WORD
#undef GPF_GRID_STRIDE

constexpr std::array<std::string_view, k_memory_patterns> k_pattern_names{
    "address", "address-inverse", "walking-one", "walking-zero", "random"};

} // namespace

std::string_view kernels_ptx() {
  return {k_ptx, sizeof k_ptx}; // with the NUL
}

std::string_view pattern_name(std::uint32_t pattern) {
  return pattern < k_pattern_names.size() ? k_pattern_names[pattern] : "unknown";
}

std::uint32_t pattern_word(std::uint64_t index, std::uint32_t pattern, std::uint32_t seed) {
  const auto lo = static_cast<std::uint32_t>(index);
  const std::uint32_t walking = 1u << (lo & 31);
  switch (static_cast<MemoryPattern>(pattern)) {
  case MemoryPattern::address:
    return lo;
  case MemoryPattern::address_inverse:
    return ~lo;
  case MemoryPattern::walking_one:
    return walking;
  case MemoryPattern::walking_zero:
    return ~walking;
  case MemoryPattern::random: {
    std::uint32_t x = lo * 0x9E3779B1u + (static_cast<std::uint32_t>(index >> 32) ^ seed);
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    return x;
  }
  }
  return 0;
}

std::uint32_t compute_integer(std::uint32_t gid, std::uint32_t iterations) {
  std::uint32_t x = gid + 1;
  for (std::uint32_t k = 0; k < iterations; ++k) {
    x = x * 1664525u + 1013904223u;
    x ^= x >> 15;
  }
  return x;
}

std::string compute_checksum(const std::vector<std::uint32_t>& words) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::uint32_t w : words) {
    for (int b = 0; b < 4; ++b) {
      h ^= (w >> (8 * b)) & 0xffu;
      h *= 0x100000001b3ull;
    }
  }
  return fmt::format("{:016x}", h);
}

} // namespace gpf::cuda
