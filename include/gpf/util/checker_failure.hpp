#pragma once
// The checker itself cannot run (no fork, no pipe, no thread): never a verdict about the node.
// Thrown, and caught once in run_cli, which exits 2.
#include <stdexcept>

namespace gpf {

struct CheckerFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace gpf
