#pragma once
// Inputs of the compatibility rules (see the compatibility-matrix issue).
namespace gpf {
struct CompatFacts {
  bool ran = false;
};
} // namespace gpf
