// Why a kernel-placed case's mean RTT changed between two sets (docs/cli.md#compare-why): the
// change split into the part from where the wakee ran (the shares of the observed classes moved)
// and the part from what each placement cost (the mean RTT of a class moved), in the midpoint form
//   delta = sum_c (s_c^B - s_c^A) (m_c^A + m_c^B) / 2   [placement]
//         + sum_c (m_c^B - m_c^A) (s_c^A + s_c^B) / 2   [cost at equal placement]
// so that the parts add up to the change exactly. A class seen on one side only has no cost change
// (its mean is taken as the one side's), so its whole contribution is placement. The intervals are
// percentile bootstrap intervals over repetitions, each set resampled on its own. Pure.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace wb {

// One repetition's round trips of one observed class.
struct ClassTally {
  std::string cls;  // "same-cpu", "llc", ...
  double round_trips = 0;
  double mean_ns = 0;
  double median_ns = 0;  // shown per class by compare, not decomposed
};
using RepetitionTally = std::vector<ClassTally>;

struct Bounds {
  double lo = 0, hi = 0;
};

struct ClassShift {
  std::string cls;
  double share_a = 0, share_b = 0;  // of the round trips, 0..1
  double mean_a = 0, mean_b = 0;    // ns; a class absent from a side takes the other's
  bool in_a = false, in_b = false;
};

struct Decomposition {
  double mean_a = 0, mean_b = 0;   // ns, over every round trip of the repetitions given
  double placement = 0, cost = 0;  // ns; placement + cost == mean_b - mean_a
  Bounds placement_ci, cost_ci, delta_ci;
  double confidence = 0;
  std::vector<ClassShift> classes;  // in the order first seen (a, then b)
};

struct DecomposeOptions {
  int resamples = 2000;
  double confidence = 0.95;
  uint64_t seed = 1;  // fixed: the same sets give the same intervals
};

// Throws std::invalid_argument when a side has no repetition or no round trip.
Decomposition decompose(std::span<const RepetitionTally> a, std::span<const RepetitionTally> b,
                        const DecomposeOptions& options = {});

}  // namespace wb
