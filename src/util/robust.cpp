// Median and scaled MAD (robust.hpp).
#include "gpf/util/robust.hpp"

#include <algorithm>
#include <cmath>

namespace gpf {

double median_of(std::vector<double> values) {
  if (values.empty()) {
    return 0;
  }
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 == 1 ? values[m] : (values[m - 1] + values[m]) / 2;
}

double median_without(const std::vector<double>& sorted, double value) {
  const auto p = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), value) -
                                          sorted.begin());
  const auto at = [&](std::size_t k) { return k < p ? sorted[k] : sorted[k + 1]; };
  const auto m = sorted.size() - 1;
  return m % 2 ? at(m / 2) : (at(m / 2 - 1) + at(m / 2)) / 2;
}

RobustSpread robust_spread(const std::vector<double>& values, double floor_fraction) {
  RobustSpread r;
  r.median = median_of(values);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (const double v : values) {
    deviations.push_back(std::abs(v - r.median));
  }
  r.mad = median_of(std::move(deviations));
  r.spread = std::max(k_mad_scale * r.mad, floor_fraction * std::abs(r.median));
  return r;
}

} // namespace gpf
