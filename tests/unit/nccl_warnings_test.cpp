// NCCL's WARN families: each names existing node rules and its NCCL source at the tag; public WARN
// lines land in their family, by what the message starts with, never by a word in its middle.
#include "gpf/knowledge/log_patterns.hpp"
#include "gpf/rules/rule.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <sstream>
#include <string>

using namespace gpf;

TEST_CASE("NCCL WARN families: sourced at the tag, naming rules that exist") {
  std::set<std::string_view> ids;
  for (const auto& f : nccl_warn_families()) {
    INFO(f.id);
    CHECK(ids.insert(f.id).second);
    CHECK(f.source.find("https://github.com/NVIDIA/nccl/") == 0);
    CHECK(f.source.find(k_nccl_warn_tag) != std::string_view::npos);
    CHECK_FALSE(f.meaning.empty());
    CHECK_FALSE(f.starts[0].empty());
    std::istringstream rules{std::string(f.rules)};
    std::string id;
    int named = 0;
    while (rules >> id) {
      ++named;
      INFO(id);
      CHECK(find_rule(id) != nullptr);
    }
    CHECK(named >= 1);
  }
  CHECK(ids.size() == 7);
}

TEST_CASE("NCCL WARN families: public WARN lines land in their family") {
  const struct {
    const char* line;
    const char* family;
  } cases[] = {
      // https://github.com/NVIDIA/nccl/issues/1405
      {"kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from "
       "peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
       "ib-verbs"},
      // https://github.com/NVIDIA/nccl-tests/issues/206
      {"misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate "
       "memory",
       "ib-verbs"},
      {"node:1:2 [0] NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc "
       "(size 9637888)",
       "shared-memory"},
      {"node:1:2 [0] NCCL WARN NET/Socket : No usable listening interface found", "sockets"},
      {"node:1:2 [1] NCCL WARN Cuda failure 'peer access is not supported between these two "
       "devices'",
       "cuda-calls"},
      {"node:1:2 [0] NCCL WARN Failed to initialize any NET plugin", "plugins"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    const auto* f = nccl_warn_family(c.line);
    REQUIRE(f != nullptr);
    CHECK(f->id == c.family);
  }
  // anchored at the message's start: a family word in the middle names nothing
  CHECK(nccl_warn_family("node:1:2 [0] NCCL WARN rank 3 saw NET/IB late") == nullptr);
  CHECK(nccl_warn_family("NET/IB : Got completion from peer (no WARN marker)") == nullptr);
  CHECK(nccl_warn_family("node:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB") == nullptr);
}
