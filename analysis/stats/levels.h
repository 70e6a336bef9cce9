// Two levels of variation: the run (a separate `wakebench run`, with a reboot between two kernels)
// and the repetition within a run. Between separate runs this VM moves every case by 10-18 % one
// way now and then (docs/aa-benchmark.md#aa-benchmark-of-compare), which no count of repetitions
// inside one run estimates. Kalibera and Jones, "Rigorous benchmarking in reasonable time" (ISMM
// 2013): take the experimental unit at the highest level that varies, measure the variance at each
// level, and choose the repetitions at each level from those variances.
//
// Nested one-way ANOVA on the effect scale (the logarithms), the runs of both sides pooled:
// - within a run:   S_w^2 = sum over runs of sum_i (y_i - run mean)^2 / sum over runs (n_j - 1)
// - the run means:  S_m^2 = sum over sides of sum_j (run mean_j - side mean)^2 / (r_A + r_B - 2)
// - between runs:   sigma_b^2 = max(0, S_m^2 - S_w^2 / n), 1/n the mean of 1/n_j (Kalibera and
//   Jones' T_2: a run mean holds sigma_b^2 + sigma_w^2 / n_j)
// The test and interval take the run as the unit: Welch's t on the runs' means (decision.h,
// EffectSamples::means), so with few runs its degrees of freedom, and its interval, say so.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace wb {

// One side's runs: each run's values (effect scale) of one case.
using SideRuns = std::vector<std::vector<double>>;

struct LevelVariances {
  double within = 0;       // S_w^2
  double run_means = 0;    // S_m^2
  double between = 0;      // sigma_b^2 (>= 0)
  double repetitions = 0;  // n: the harmonic mean of the repetitions a run
  std::size_t within_dof = 0, runs_dof = 0;
  std::size_t runs_base = 0, runs_other = 0;
};

// Needs at least 2 runs a side, each with at least one value (std::invalid_argument otherwise).
LevelVariances level_variances(const SideRuns& base, const SideRuns& other);

// The runs' means of one side.
std::vector<double> run_means(const SideRuns& runs);

// A run costs about this many repetitions of a case (a round of every case of the suite): the
// reboot into the kernel and the run's start, about a minute, against about 2 s a round of
// configs/power.json on the 2-vCPU VM of docs/aa-benchmark.md. Only the repetitions-per-run advice
// depends on it (Kalibera and Jones: n = sqrt(cost of a run / cost of a repetition x S_w^2 /
// sigma_b^2)).
inline constexpr double kRunCostInRepetitions = 30;
// The advice's bounds on repetitions per run: at least compare's minimum a side, at most about 7
// minutes of rounds of configs/power.json here (where the runs showed no variance of their own,
// the optimum has no bound, and that estimate rests on a few runs).
inline constexpr std::size_t kMinRepetitionsPerRun = 5, kMaxRepetitionsPerRun = 200;
// The advice's runs a side: at least 3 (with 2, the variance between runs has one degree of
// freedom a side), and more than kMaxRuns are "no count decides it".
inline constexpr std::size_t kMinPlannedRuns = 3, kMaxRuns = 1000;

struct LevelPlan {
  std::size_t runs = 0;         // a side
  std::size_t repetitions = 0;  // a run
};

// The variances an advice plans on: the runs' means' variance S_m^2 at the upper
// kPlanVarianceConfidence bound of its runs_dof degrees of freedom (S_m^2 x dof / chi^2 quantile
// at 1 - that confidence), and sigma_b^2 from it. From 2-6 runs a side S_m^2 is as often far below
// the true variance as above it, and runs planned on it fall short of their power about half the
// time; planned on this bound they reach it at least that often (Browne, "On the use of a pilot
// sample for sample size determination", Statistics in Medicine 14, 1995).
inline constexpr double kPlanVarianceConfidence = 0.80;
LevelVariances planning_variances(const LevelVariances& v);

// Repetitions a run at Kalibera and Jones' optimum for kRunCostInRepetitions, within the bounds.
std::size_t repetitions_per_run(const LevelVariances& v);

// The fewest runs a side, at least kMinPlannedRuns, of repetitions_per_run each, whose run-level
// test at `level` (two-sided, or one-sided for an equivalence bound) has `power` against an effect
// of `target` (> 0), with the t quantiles of 2 r - 2 degrees of freedom; nullopt past kMaxRuns.
std::optional<LevelPlan> runs_for(const LevelVariances& v, double target, double level,
                                  double power, bool two_sided);

}  // namespace wb
