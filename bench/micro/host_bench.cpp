// The cost of a check's reads alone, without the process around them: the probes of a whole
// check of docs/examples/healthy-8gpu (no CUDA) in one process, and every read they made replayed
// through the Host with nothing parsed. With `--version` (process start-up), this is the floor a
// check of a snapshot cannot go below while it reads what it reads (docs/performance.md).
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

gpf::Host snapshot() {
  auto host = gpf::Host::snapshot(GPF_SOURCE_DIR "/docs/examples/healthy-8gpu");
  if (!host) {
    std::abort();
  }
  return std::move(host).value();
}

gpf::ProbeOptions options() {
  gpf::ProbeOptions o;
  o.no_cuda = true;
  return o;
}

void bm_probes(benchmark::State& state) {
  const auto host = snapshot();
  const auto o = options();
  for (auto _ : state) {
    benchmark::DoNotOptimize(gpf::collect_facts(host, o));
  }
}
BENCHMARK(bm_probes)->Unit(benchmark::kMicrosecond);

// One call per access the probes made, of the same kind, in the same order.
void bm_reads_replayed(benchmark::State& state) {
  auto host = snapshot();
  std::vector<gpf::HostAccess> log;
  host.record_into(&log);
  gpf::collect_facts(host, options());
  host.record_into(nullptr);
  for (auto _ : state) {
    for (const auto& a : log) {
      using Kind = gpf::HostAccess::Kind;
      switch (a.kind) {
      case Kind::file:
        benchmark::DoNotOptimize(host.read_file(a.path));
        break;
      case Kind::directory:
        benchmark::DoNotOptimize(host.list_dir(a.path));
        break;
      case Kind::node:
        benchmark::DoNotOptimize(host.stat_node(a.path));
        break;
      case Kind::link:
        benchmark::DoNotOptimize(host.read_link(a.path));
        break;
      case Kind::presence:
        benchmark::DoNotOptimize(host.has_file(a.path));
        break;
      case Kind::filesystem:
        benchmark::DoNotOptimize(host.filesystem_space(a.path));
        break;
      }
    }
  }
  // Answered "not there": a path the snapshot lacks or, asked for a link, one that is not a link
  // (HostAccess::found keeps no finer distinction).
  std::size_t not_found = 0;
  for (const auto& a : log) {
    not_found += a.found ? 0 : 1;
  }
  state.counters["accesses"] = static_cast<double>(log.size());
  state.counters["not_found"] = static_cast<double>(not_found);
}
BENCHMARK(bm_reads_replayed)->Unit(benchmark::kMicrosecond);

// One sysfs attribute of the snapshot, 9 components deep: the Host's safe read (O_PATH, fstat,
// reopen through /proc/self/fd, read, close) against a plain open/read/close of the same file,
// and a path the snapshot does not have.
constexpr const char* k_attribute =
    "sys/devices/pci0000:d8/0000:d8:01.0/0000:d9:00.0/0000:da:00.0/0000:db:00.0/vendor";

void bm_read_one_file(benchmark::State& state) {
  const auto host = snapshot();
  for (auto _ : state) {
    benchmark::DoNotOptimize(host.read_file(k_attribute));
  }
}
BENCHMARK(bm_read_one_file);

void bm_plain_open_read_close(benchmark::State& state) {
  const std::string path = GPF_SOURCE_DIR "/docs/examples/healthy-8gpu/" + std::string(k_attribute);
  char buf[4096];
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    benchmark::DoNotOptimize(::read(fd, buf, sizeof buf));
    ::close(fd);
  }
}
BENCHMARK(bm_plain_open_read_close);

void bm_absent_path(benchmark::State& state) {
  const auto host = snapshot();
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        host.read_attribute("sys/devices/pci0000:d8/0000:d8:01.0/0000:d9:00.0/aer_dev_fatal"));
  }
}
BENCHMARK(bm_absent_path);

} // namespace
