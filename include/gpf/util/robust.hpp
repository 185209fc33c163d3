#pragma once
// The robust spread of a set of figures: the median and the scaled median absolute deviation
// (https://en.wikipedia.org/wiki/Median_absolute_deviation). Shared by summarize's fleet outliers
// and the node's own bandwidth judgement, so that both call "standing out" the same thing. Pure.
#include <vector>

namespace gpf {

// The scale of a median absolute deviation that estimates a normal distribution's standard
// deviation.
inline constexpr double k_mad_scale = 1.4826;

// The median (the mean of the middle two for an even count); 0 for none.
double median_of(std::vector<double> values);

// The median of sorted (ascending, at least two values) without one occurrence of value, which it
// holds, in O(log n): "the median of the other GPUs" for each GPU without sorting the others once
// per GPU (quadratic at 2000 GPUs).
double median_without(const std::vector<double>& sorted, double value);

struct RobustSpread {
  double median = 0;
  double mad = 0;    // median absolute deviation from the median
  double spread = 0; // k_mad_scale * mad, at least floor_fraction * |median|

  // How many spreads value lies from the median (signed; 0 when the spread is 0).
  double deviations(double value) const { return spread > 0 ? (value - median) / spread : 0; }
};

// floor_fraction keeps identical figures from making every small difference stand out.
RobustSpread robust_spread(const std::vector<double>& values, double floor_fraction);

} // namespace gpf
