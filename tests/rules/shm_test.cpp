// The shm.* rows (src/rules/shm.cpp) on facts built in code: the size of /dev/shm.
#include "support/topology_rule_facts.hpp"

#include <catch2/catch.hpp>

using namespace gpf;
using namespace gpf::test::topology_rule_facts;

TEST_CASE("/dev/shm: below 1 GiB with two GPUs, or missing") {
  auto f = two_gpus(std::nullopt);
  f.topology.shm.ran = true;
  f.topology.shm.size_bytes = 64u << 20;
  f.topology.shm.available_bytes = 60u << 20;
  f.topology.shm.mount_line = "shm /dev/shm tmpfs rw,size=65536k 0 0";
  auto hits = run_rule("shm.too-small", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("/dev/shm is 64 MiB and the job would use 2 GPUs together") == 0);
  CHECK(hits[0].evidence ==
        std::vector<std::string>{"statvfs(/dev/shm): size 67108864 bytes, 62914560 bytes available",
                                 "/proc/mounts: shm /dev/shm tmpfs rw,size=65536k 0 0"});
  CHECK(run_rule("shm.too-small", f, {k_a}).empty());
  f.topology.shm.size_bytes = 1ull << 30;
  CHECK(run_rule("shm.too-small", f).empty());
  f.topology.shm.size_bytes.reset(); // not measured
  CHECK(run_rule("shm.too-small", f).empty());
  f.topology.shm.exists = false;
  hits = run_rule("shm.too-small", f);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].message.find("does not exist") != std::string::npos);
}
