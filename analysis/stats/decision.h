// compare's verdict on one case and metric (docs/cli.md#compare-the-verdict): SAME, DIFFERENT or
// UNKNOWN, with the numbers behind it. Pure: per-repetition values in, a Decision out.
//
// The values are on the effect scale: the logarithm of a metric (the effect is then the log of the
// ratio other / base), or a class share as it is (the effect is the difference in share).
// - DIFFERENT: the difference test's Benjamini-Hochberg q-value is below the level, both sides have
//   at least min_repetitions, and the effect lies beyond the case's A/A floor.
// - SAME: two one-sided tests at the level (Schuirmann 1987): the (1 - 2 level) interval of the
//   effect, widened on each side by the A/A floor, lies within [-margin, +margin].
// - UNKNOWN: neither. The smallest effect this comparison detects at the level and power, and the
//   repetitions a side that would decide it, follow from the observed spread (normal
//   approximations; the rank test's efficiency against the t test, 3 / pi, is divided out).
//
// Unpaired sets (two runs): the Mann-Whitney U test and the Hodges-Lehmann interval. Paired sets
// (`wakebench run --ab`: one value per round on each side): the t test and interval on the
// per-round differences. Class shares: Welch's t test and interval of the means. Several runs a
// side (analysis/stats/levels.h): Welch's t test and interval of the runs' means, the run the unit;
// no A/A floor (the runs measure what it stood for), DIFFERENT from 2 runs a side (the t interval
// is wide with few), and UNKNOWN's count is runs a side and repetitions a run.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stats/levels.h"

namespace wb {

enum class CompareVerdict { kSame, kDifferent, kUnknown };
std::string_view verdict_id(CompareVerdict v);  // "SAME" | "DIFFERENT" | "UNKNOWN"

struct DecisionRules {
  double alpha = 0.05;   // level of the difference test (after BH) and of each one-sided test
  double power = 0.80;   // of the detectable effect and the repetitions needed
  double margin = 0.05;  // SAME: the effect within +-margin (a ratio's margin is in ratio units)
  std::size_t min_repetitions = 5;  // DIFFERENT needs at least this many a side
};

// Per-repetition values of one case in two sets on the effect scale. Paired: base[i] and other[i]
// come from one round (equal sizes).
struct EffectSamples {
  std::vector<double> base, other;
  bool paired = false;
  // Unpaired, by the difference of the means (Welch's t test and interval) instead of ranks: for
  // values with many ties, such as a class's share of each repetition (often 0 or 1), whose
  // Hodges-Lehmann shift is 0 whatever the means do.
  bool means = false;
};

// The difference test and the effect's estimate and interval.
struct EffectTest {
  double p = 1;         // two-sided
  double estimate = 0;  // Hodges-Lehmann shift, or the mean paired difference
  double lo = 0, hi = 0;
  bool exact = false;  // exact null distribution (Mann-Whitney)
};
// Throws std::invalid_argument when a side has fewer than 2 values, or paired sizes differ.
EffectTest test_effect(const EffectSamples& s, double confidence);

// The sd of the effect's values: pooled over both sides, or of the paired differences.
double effect_spread(const EffectSamples& s);

struct Decision {
  CompareVerdict verdict = CompareVerdict::kUnknown;
  std::string why;  // UNKNOWN: the reason in words
  // The equivalence interval: the (1 - 2 level) interval widened by the floor (effect scale).
  double equiv_lo = 0, equiv_hi = 0;
  double spread = 0;                         // effect_spread()
  std::optional<double> detectable;          // smallest |effect| detected at level and power
  std::optional<std::size_t> needed;         // repetitions a side (equal sides) that decide it
  std::optional<CompareVerdict> needed_for;  // the verdict that count aims at
  std::optional<std::size_t> needed_base;    // the fixed baseline's count is the limit: this many
  // At the run level: `needed` is runs a side, and this the repetitions a run.
  std::optional<std::size_t> needed_per_run;
};

struct DecisionInput {
  EffectSamples samples;
  std::optional<double> q;  // BH q-value of the difference test (nullopt: not tested)
  double estimate = 0;      // the effect (log of the cases' ratio, or test_effect's estimate)
  // The case's A/A floor as a fraction (0.04: a 4 % change; 0: none): on the log scale the band
  // [log(1 - floor), log(1 + floor)], on the difference scale +-floor.
  double floor = 0;
  bool base_fixed = true;  // the base set gains no repetitions (compare; run --until-decided)
  // For a ratio the margin M means [log(1 - M), log(1 + M)] on the log scale.
  bool log_scale = true;
  // The run level: `samples` hold the runs' means (means = true), these the variances of both
  // levels; `floor` is not used.
  std::optional<LevelVariances> levels;
};

// `level`: the level this look spends (rules.alpha for a single comparison; alpha_spent_at() under
// repeated looks).
Decision decide(const DecisionInput& in, const DecisionRules& rules, double level);

// Repeated looks (wakebench run --until-decided): the level look k of at most `looks` may spend,
// from the Pocock-type spending function alpha ln(1 + (e - 1) t) (Lan & DeMets 1983), t = k /
// looks. Each look tests at its increment alone, so by the union bound the chance of any false
// verdict over all looks stays at most alpha whatever the looks' correlation.
double alpha_spent_at(std::size_t look, std::size_t looks, double alpha);

}  // namespace wb
