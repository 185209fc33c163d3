// The cost of a check's reads alone, without the process around them: the probes of a whole
// check of docs/examples/healthy-8gpu (no CUDA) in one process, and every read they made replayed
// through the Host with nothing parsed. With `--version` (process start-up), this is the floor a
// check of a snapshot cannot go below while it reads what it reads (docs/performance.md).
#include "gpf/host/host.hpp"
#include "gpf/probes/pipeline.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
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
  state.counters["accesses"] = static_cast<double>(log.size());
}
BENCHMARK(bm_reads_replayed)->Unit(benchmark::kMicrosecond);

} // namespace
