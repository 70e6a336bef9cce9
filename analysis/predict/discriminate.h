// Whether an experiment can tell two policies apart (docs/policy-model.md#discriminating): their
// steady states on it are far apart, and neither lies within the consistency threshold of the
// other's range (its steady state, its alternatives and every mix of them), so whichever the kernel
// runs, the placements it makes cannot be read as the other's. The same rule decides which cases
// `wakebench search` writes and which cases `predict --results` says a set discriminates.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "analysis/predict/predict.h"

namespace wb {

// The least total-variation distance between two steady states for a case to discriminate them.
inline constexpr double kDiscriminateTv = 0.5;

struct Separation {
  double tv = 0;        // tv_distance(steady a, steady b)
  double a_from_b = 0;  // a's steady state from b's range (closest_in_range().best)
  double b_from_a = 0;  // b's from a's
  // The causes of the alternatives that bring one steady state within kMatchDistance of the other's
  // range (cause_kind_id, each once); empty when neither does.
  std::vector<std::string> blocking;
  // tv >= kDiscriminateTv and both distances > kMatchDistance.
  bool discriminates() const;
  // The smallest of (tv - kDiscriminateTv) and the two distances less kMatchDistance: how far the
  // case is from not discriminating (negative when it does not).
  double margin() const;
};

Separation separation(const SteadyResult& a, const SteadyResult& b);

// The pairs (i, j), i < j, of `results` (one per policy, in policy order) that a case with these
// steady states discriminates.
std::vector<std::pair<std::size_t, std::size_t>> discriminated_pairs(
    const std::vector<SteadyResult>& results);

}  // namespace wb
