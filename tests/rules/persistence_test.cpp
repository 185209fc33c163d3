// The persistence.* rows (src/rules/persistence.cpp) on facts built in code: the persistence
// daemon, judged only with a slow CUDA start measured.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("persistence: only with a slow CUDA start measured and no daemon on the host") {
  auto f = two_gpus(std::nullopt);
  auto& s = f.topology.services;
  s.ran = true;
  s.process_table = true;
  s.init_comm = "systemd";
  CHECK(run_rule("persistence.not-running", f).empty()); // the CUDA probe did not run
  f.cuda.ran = true;
  f.cuda.init.name = "cuInit";
  f.cuda.init.ok = true;
  f.cuda.init.duration_ms = 250;
  CHECK(run_rule("persistence.not-running", f).empty()); // fast
  CudaDevice d;
  d.index = 0;
  d.bus_id = k_a;
  d.steps = {{"cuInit", true, false, 2100, std::nullopt, "", ""},
             {"primary_context", true, false, 900, std::nullopt, "", ""}};
  d.derive_timing();
  f.cuda.devices.push_back(d);
  auto hits = run_rule("persistence.not-running", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].evidence.at(0) ==
        "GPU 0 (0000:18:00.0, NVIDIA H100 80GB HBM3): cuInit + primary context 3000 ms");
  s.persistenced = {{812, "nvidia-persiste"}};
  CHECK(run_rule("persistence.not-running", f).empty());
  s.persistenced.clear();
  s.init_comm = "python3"; // a container cannot see the host's daemons
  CHECK(run_rule("persistence.not-running", f).empty());
}
