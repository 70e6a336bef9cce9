// The two levels of variation (analysis/stats/levels.h): the variance within a run and between runs
// on a small exact example, and the runs and repetitions a run that the plan asks for.
#include "analysis/stats/levels.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace wb {
namespace {

TEST(Levels, VariancesOfEachLevelAndThePlan) {
  // Runs {0, 2}, {4, 6} against {1, 3}, {5, 7}: within a run 2 (4 dof), the runs' means 8 (2
  // dof), between runs 8 - 2 / 2 = 7.
  const LevelVariances v = level_variances({{0, 2}, {4, 6}}, {{1, 3}, {5, 7}});
  EXPECT_DOUBLE_EQ(v.within, 2);
  EXPECT_DOUBLE_EQ(v.run_means, 8);
  EXPECT_DOUBLE_EQ(v.between, 7);
  EXPECT_EQ(v.within_dof, 4u);
  EXPECT_EQ(v.runs_dof, 2u);
  EXPECT_EQ(repetitions_per_run(v), kMinRepetitionsPerRun);  // sqrt(30 x 2 / 7) = 2.9
  // Runs that differ no more than their repetitions explain: no variance between runs, and more
  // repetitions a run are the advice.
  const LevelVariances flat = level_variances({{0, 2}, {0, 2}}, {{0, 2}, {0, 2}});
  EXPECT_DOUBLE_EQ(flat.between, 0);
  EXPECT_EQ(repetitions_per_run(flat), kMaxRepetitionsPerRun);
  // A larger effect needs fewer runs; none past kMaxRuns.
  const auto small = runs_for(v, 1.0, 0.05, 0.8, true), large = runs_for(v, 4.0, 0.05, 0.8, true);
  ASSERT_TRUE(small && large);
  EXPECT_GT(small->runs, large->runs);
  EXPECT_GE(large->runs, kMinPlannedRuns);
  EXPECT_FALSE(runs_for(v, 1e-6, 0.05, 0.8, true));
  EXPECT_THROW(level_variances({{0, 2}}, {{1, 3}, {5, 7}}), std::invalid_argument);
  // The plan's variances: S_m^2 at its upper 80 % bound (2 dof: 8 x 2 / 0.446), sigma_b^2 from it;
  // where the runs show no variance of their own, sigma_b^2 is taken as S_w^2 / n.
  const LevelVariances up = planning_variances(v);
  EXPECT_NEAR(up.run_means, 8 * 2 / 0.44629, 1e-3);
  EXPECT_NEAR(up.between, up.run_means - 1, 1e-9);
  EXPECT_DOUBLE_EQ(planning_variances(flat).between, 2.0 / 2);
}

}  // namespace
}  // namespace wb
