// compare's advice at the run level (analysis/stats/decision.cpp, explain_runs) followed on
// simulated runs: two levels of noise as this VM's (docs/aa-benchmark.md: between runs 6-15 % sd,
// within a run 13-16 %), the first 3 runs a side of 10 repetitions, then, for each case UNKNOWN,
// the runs a side of the repetitions it names, drawn afresh, and compare's verdict on them. The
// advice must decide the way the truth is (issue 55's goal on the VM: >= 80 % of the followed A/A
// cases SAME,
// >= 80 % of the followed 10 % shifts DIFFERENT, slower). Shown failing: the same trials followed
// on half the advised runs. The advice as it was before this test (planned on the change the first
// runs showed as if it were real, and on their variance as measured) failed it: followed, 21-43 %
// of the A/A cases SAME and 59-69 % of the shifts DIFFERENT over the three noises (2026-12-06).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "analysis/stats/decision.h"
#include "analysis/stats/levels.h"

namespace wb {
namespace {

struct Noise {
  double between = 0.08, within = 0.15;  // sd of the log values
};

// `runs` runs of `reps` log values around `effect`, each run moved by its own draw. A run is drawn
// by what the run level reads of it, its mean (normal) and its squares about it (w^2 chi^2 of
// reps - 1 degrees of freedom), laid on a fixed pattern: the same distribution as `reps` normal
// draws for compare, in a fraction of the time.
SideRuns draw_runs(std::mt19937_64& rng, const Noise& noise, double effect, std::size_t runs,
                   std::size_t reps) {
  std::vector<double> pattern(reps);  // mean 0, squares summing to 1
  double ss = 0;
  for (std::size_t i = 0; i < reps; ++i) {
    pattern[i] = static_cast<double>(i) - static_cast<double>(reps - 1) / 2;
    ss += pattern[i] * pattern[i];
  }
  for (double& p : pattern) p /= std::sqrt(ss);
  std::normal_distribution<double> unit;
  std::chi_squared_distribution<double> squares(static_cast<double>(reps - 1));
  SideRuns out(runs);
  for (auto& r : out) {
    const double mean = effect + noise.between * unit(rng) +
                        noise.within / std::sqrt(static_cast<double>(reps)) * unit(rng);
    const double spread = noise.within * std::sqrt(squares(rng));
    for (double p : pattern) r.push_back(mean + spread * p);
  }
  return out;
}

// compare's run-level decision on one case, as analysis/compare/compare_judge.cpp builds it, and
// whether b is slower (its runs' mean above a's).
struct Judged {
  Decision decision;
  bool slower = false;
};
Judged judge(const SideRuns& a, const SideRuns& b) {
  EffectSamples s{run_means(a), run_means(b)};
  s.means = true;
  const EffectTest t = test_effect(s, 0.95);
  DecisionInput in{s, t.p, t.estimate};
  in.levels = level_variances(a, b);
  return {decide(in, {}, 0.05), t.estimate > 0};
}

struct Followed {
  int unknown = 0, cases = 0, right = 0;
  double share() const { return cases ? static_cast<double>(right) / cases : 0; }
};

// `trials` cases of true `effect`: those UNKNOWN on their first runs are followed on `fraction`
// of their advised runs a side (all of it: at most kMaxRuns), and counted right when
// SAME (no effect) or DIFFERENT and slower (an effect).
Followed follow(std::uint64_t seed, const Noise& noise, double effect, int trials,
                double fraction = 1.0) {
  std::mt19937_64 rng(seed);
  Followed f;
  for (int i = 0; i < trials; ++i) {
    const SideRuns a0 = draw_runs(rng, noise, 0, 3, 10), b0 = draw_runs(rng, noise, effect, 3, 10);
    const Decision first = judge(a0, b0).decision;
    if (first.verdict != CompareVerdict::kUnknown) continue;
    ++f.unknown;
    if (!first.needed || !first.needed_per_run || *first.needed > kMaxRuns) continue;
    const auto runs = std::max<std::size_t>(2, static_cast<std::size_t>(*first.needed * fraction));
    const std::size_t reps = *first.needed_per_run;
    const Judged after =
        judge(draw_runs(rng, noise, 0, runs, reps), draw_runs(rng, noise, effect, runs, reps));
    ++f.cases;
    const CompareVerdict v = after.decision.verdict;
    if (effect == 0 ? v == CompareVerdict::kSame : v == CompareVerdict::kDifferent && after.slower)
      ++f.right;
  }
  return f;
}

const double kShift = std::log(1.10);

TEST(RunAdvice, FollowedItDecidesTheWayTheTruthIs) {
  for (const Noise noise : {Noise{0.08, 0.15}, Noise{0.12, 0.15}, Noise{0.06, 0.40}}) {
    const Followed aa = follow(1, noise, 0, 300), shift = follow(2, noise, kShift, 300);
    SCOPED_TRACE(testing::Message() << "between " << noise.between << ", within " << noise.within);
    EXPECT_GE(aa.cases, 100);  // most first comparisons are UNKNOWN here, and followed
    EXPECT_GE(shift.cases, 20);
    EXPECT_GE(aa.share(), 0.80) << aa.right << " of " << aa.cases;
    EXPECT_GE(shift.share(), 0.80) << shift.right << " of " << shift.cases;
  }
}

// Contradicting input: the same trials followed on half their advised runs fall short.
TEST(RunAdvice, HalfTheAdvisedRunsDoNotDecide) {
  const Noise noise{0.08, 0.15};
  const Followed aa = follow(1, noise, 0, 300, 0.5);
  EXPECT_GE(aa.cases, 100);
  EXPECT_LT(aa.share(), 0.80) << aa.right << " of " << aa.cases;
}

}  // namespace
}  // namespace wb
