// How far an observed placement-class distribution is from a prediction, and from an uncertain
// prediction's range (docs/policy-model.md#results): the total-variation distance to the
// undisturbed steady state ("strict"), and the minimum over every mix of that steady state and its
// alternatives (the pair in one until a disturbed wake moves it to another, at a time the model
// cannot know).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace wb {

// Class id -> share; a class not listed has share 0.
using ClassShares = std::map<std::string, double>;

// Total-variation distance: 1/2 sum over the classes of either |p_c - q_c|.
double tv_distance(const ClassShares& p, const ClassShares& q);

struct MixFit {
  double distance = 0;  // tv_distance(obs, (1 - share) p + share a)
  double share = 0;     // a's weight in the closest mix, in [0, 1]; the smallest where tied
};

// The exact minimum over w in [0, 1] of tv_distance(obs, (1 - w) p + w a). The distance is convex
// and piecewise linear in w, so the minimum is at w = 0, w = 1 or a breakpoint
// w = (obs_c - p_c) / (a_c - p_c) inside (0, 1); all of them are evaluated.
MixFit closest_mix(const ClassShares& obs, const ClassShares& p, const ClassShares& a);

struct RangeFit {
  double strict = 0;  // tv_distance(obs, steady)
  double best = 0;    // the smallest distance to a mix of steady and its alternatives (<= strict)
  double share = 0;   // the alternatives' total weight in the best mix (0: steady alone)
  std::optional<size_t> alternative;  // the heaviest alternative in it; nullopt: steady alone
  std::vector<double> weights;        // each alternative's weight in it (all 0: steady alone)
};

// The best fit over every mix of the steady state and its alternatives (each repetition may
// settle in any of them, and move between them at times the model cannot know), i.e. the distance
// from `obs` to their convex hull. With one alternative it is closest_mix(), exact; with more, the
// best point of a grid over the weights is polished by exact line searches that move weight from
// one state to another until none helps. The steady state alone wins ties.
RangeFit closest_in_range(const ClassShares& obs, const ClassShares& steady,
                          const std::vector<ClassShares>& alternatives);

// How much of what could be observed a range admits: the share of the simplex of `classes` (every
// distribution over them, uniformly) within `distance` of the range of `steady` and
// `alternatives`. 1 means no observation over these classes could contradict the range. Estimated
// from kCoverageSamples points of a fixed pseudo-random sequence (the same answer every run; its
// standard error is at most 0.5 / sqrt(kCoverageSamples)); exact for a single class.
inline constexpr int kCoverageSamples = 400;
double range_coverage(const ClassShares& steady, const std::vector<ClassShares>& alternatives,
                      const std::vector<std::string>& classes, double distance);

}  // namespace wb
