// The limits.* rows (src/rules/limits.cpp) on facts built in code: the memlock limit where RDMA
// devices exist.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("memlock matters only where RDMA devices exist") {
  auto f = two_gpus(std::nullopt);
  f.topology.shm.memlock_soft = 65536;
  f.topology.shm.memlock_line = "Max locked memory 65536 65536 bytes";
  CHECK(run_rule("limits.memlock-low", f).empty());
  f.topology.rdma.ran = true;
  RdmaDevice nic;
  nic.name = "mlx5_0";
  f.topology.rdma.devices.push_back(nic);
  const auto hits = run_rule("limits.memlock-low", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("64 KiB") != std::string::npos);
  f.topology.shm.memlock_soft.reset();
  f.topology.shm.memlock_unlimited = true;
  CHECK(run_rule("limits.memlock-low", f).empty());
}
