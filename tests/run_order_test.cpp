// The interleaved order of `wakebench run` (common/schema/run_order.h).
#include "common/schema/run_order.h"

#include <gtest/gtest.h>

#include <set>

namespace wb {
namespace {

TEST(RunOrder, EveryRoundRunsEachCaseThatHasARepetitionLeftOnce) {
  const std::vector<int> reps = {3, 0, 1, 3, 2};
  const std::vector<size_t> order = interleaved_order(reps, 42);
  ASSERT_EQ(order.size(), 9u);
  // Round r holds the cases with more than r repetitions, each once: 4 cases, then 3, then 2.
  const std::vector<std::set<size_t>> rounds = {{0, 2, 3, 4}, {0, 3, 4}, {0, 3}};
  size_t at = 0;
  for (const auto& want : rounds) {
    const std::set<size_t> got(order.begin() + at, order.begin() + at + want.size());
    EXPECT_EQ(got, want) << "round starting at " << at;
    at += want.size();
  }
}

TEST(RunOrder, TheSeedAloneFixesTheOrder) {
  const std::vector<int> reps(20, 5);
  EXPECT_EQ(interleaved_order(reps, 7), interleaved_order(reps, 7));
  EXPECT_NE(interleaved_order(reps, 7), interleaved_order(reps, 8));
  // Shuffled afresh each round, not one permutation repeated.
  const auto order = interleaved_order(reps, 7);
  EXPECT_NE(std::vector<size_t>(order.begin(), order.begin() + 20),
            std::vector<size_t>(order.begin() + 20, order.begin() + 40));
  // mt19937_64 and the shuffle are ours, not the standard library's: a seed recorded in a result
  // set gives this order with any compiler and on any machine.
  EXPECT_EQ(interleaved_order({2, 1, 3, 2}, 2026), (std::vector<size_t>{2, 3, 0, 1, 2, 0, 3, 2}));
}

TEST(RunOrder, NoCasesNoOrder) { EXPECT_TRUE(interleaved_order({}, 1).empty()); }

}  // namespace
}  // namespace wb
