// The Slurm hostlist compressor summarize prints per cause (label fleet).
#include "gpf/util/hostlist.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>

#include <string>
#include <vector>

using gpf::hostlist;
using gpf::hostlist_terms;

TEST_CASE("hostlist: consecutive numbers become ranges, gaps separate them") {
  CHECK(hostlist({"node001", "node002", "node003", "node007"}) == "node[001-003,007]");
  CHECK(hostlist({"node007", "node001", "node003", "node002"}) == "node[001-003,007]");
  CHECK(hostlist({"gpu1", "gpu3", "gpu5"}) == "gpu[1,3,5]");
  CHECK(hostlist({"n1", "n1", "n2"}) == "n[1-2]"); // duplicates dropped
  CHECK(hostlist({"node007"}) == "node007");       // one name: no brackets
  CHECK(hostlist({}).empty());
}

TEST_CASE("hostlist: zero-padding is kept apart from unpadded numbers") {
  CHECK(hostlist({"node9", "node10", "node11"}) == "node[9-11]");
  CHECK(hostlist({"node01", "node1"}) == "node1,node01");
  CHECK(hostlist({"node099", "node100"}) == "node[099-100]"); // same width: one range
  CHECK(hostlist({"node008", "node009", "node010"}) == "node[008-010]");
}

TEST_CASE("hostlist: mixed names, prefixes and names without a number") {
  CHECK(hostlist({"gpu-a2", "node002", "gpu-a1", "login", "node001"}) ==
        "gpu-a[1-2],login,node[001-002]");
  CHECK(hostlist({"rack1-node2", "rack1-node3", "rack2-node2"}) == "rack1-node[2-3],rack2-node2");
  // names holding the syntax's own characters, or a number too long, stay as they are
  CHECK(hostlist({"a[1]", "b,2", "n12345678901234567890"}) == "a[1],b,2,n12345678901234567890");
}

TEST_CASE("hostlist: a long list is split into terms of at most N characters") {
  std::vector<std::string> names;
  for (int i = 1; i <= 200; i += 2) { // node001, node003, ...: 100 ranges of one
    names.push_back(fmt::format("node{:03}", i));
  }
  const auto terms = hostlist_terms(names, 40);
  REQUIRE(terms.size() > 1);
  std::size_t numbers = 0;
  for (const auto& t : terms) {
    INFO(t);
    CHECK(t.size() <= 40);
    CHECK(t.rfind("node[", 0) == 0);
    CHECK(t.back() == ']');
    numbers += static_cast<std::size_t>(std::count(t.begin(), t.end(), ',')) + 1;
  }
  CHECK(numbers == 100);
  CHECK(hostlist_terms(names).size() == 1); // unlimited: one term
}
