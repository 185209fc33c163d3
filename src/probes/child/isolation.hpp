#pragma once
// Runs first in every driver child, before the library is loaded: shuts the doors through which
// NVIDIA's libraries change the host, and says whether it could (see isolation.cpp).
#include "gpf/facts/isolation.hpp"
#include "gpf/util/result.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace gpf::child {

ChildIsolation isolate_from_host();

} // namespace gpf::child
