// libFuzzer target: a snapshot's environ file (KEY=VALUE lines).
// Properties: no crash; every parsed name can be looked up again.
#include "fuzz_support.hpp"

#include "gpf/host/host.hpp"

GPF_FUZZ_TARGET(environ) {
  const auto env = gpf::Environment::parse(gpf::fuzz::as_text(data, size));
  for (const auto& [name, value] : env.vars()) {
    gpf::fuzz::require(env.get(name) == value, "every parsed name can be looked up");
  }
  return 0;
}
