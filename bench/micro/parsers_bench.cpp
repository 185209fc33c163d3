// Micro-benchmarks of the parsers and the kernel-log scanner (Google Benchmark), on inputs held in
// memory: what a check costs without the process start-up and the file reads around it. Built
// only by `make bench` (target gpf_micro_bench); numbers are per call and depend on the machine.
#include "gpf/probes/kernel_log_scanner.hpp"
#include "gpf/probes/parsers.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {

const std::string k_version =
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  "
    "(dvs-builder@U16-I3-B03-4-3)  Tue Feb 27 22:25:30 UTC 2024\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
const std::string k_information =
    "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 0\n"
    "GPU UUID: \t GPU-00000001-1111-2222-3333-444455550001\n"
    "Video BIOS: \t 96.00.89.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\n"
    "DMA Mask: \t 0xfffffffffffff\nBus Location: \t 0000:2a:00.0\nDevice Minor: \t 1\n"
    "GPU Firmware: \t 550.54.14\nGPU Excluded:\t No\n";

// About 1 MiB of ordinary chatter with an Xid every 4096 lines and a boot marker in the middle.
std::string chatter_log() {
  std::string log;
  for (int i = 0; log.size() < (1u << 20); ++i) {
    const double t = 10.0 + i * 0.001;
    if (i == 3000) {
      log +=
          "[    0.000000] Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) (x86_64-linux-gnu-gcc-13)\n";
    }
    if (i % 4096 == 4095) {
      log += "[" + std::to_string(t) +
             "] NVRM: Xid (PCI:0000:2a:00): 13, pid=4242, name=python3, Graphics "
             "Exception: ESR 0x405840=0x0\n";
    } else {
      log += "[" + std::to_string(t) + "] docker0: port 3(veth1a2b3c) entered forwarding state\n";
    }
  }
  return log;
}

void bm_driver_version(benchmark::State& state) {
  for (auto _ : state) {
    gpf::DriverFacts d;
    benchmark::DoNotOptimize(gpf::parse_driver_version_file(k_version, d));
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(bm_driver_version);

void bm_gpu_information(benchmark::State& state) {
  for (auto _ : state) {
    gpf::GpuFacts g;
    gpf::parse_gpu_information(k_information, g);
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(bm_gpu_information);

void bm_kernel_release(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(gpf::parse_kernel_release("5.15.0-91-generic"));
  }
}
BENCHMARK(bm_kernel_release);

void bm_log_scanner(benchmark::State& state) {
  const std::string log = chatter_log();
  for (auto _ : state) {
    gpf::KernelLogScanner scanner;
    scanner.feed(log);
    benchmark::DoNotOptimize(scanner.finish());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(log.size()));
}
BENCHMARK(bm_log_scanner)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
