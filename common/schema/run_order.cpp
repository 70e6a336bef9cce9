#include "common/schema/run_order.h"

#include <algorithm>
#include <random>

namespace wb {

std::vector<size_t> interleaved_order(const std::vector<int>& repetitions, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<size_t> order;
  const int rounds =
      repetitions.empty() ? 0 : *std::max_element(repetitions.begin(), repetitions.end());
  for (int r = 0; r < rounds; ++r) {
    std::vector<size_t> round;
    for (size_t i = 0; i < repetitions.size(); ++i)
      if (repetitions[i] > r) round.push_back(i);
    for (size_t k = round.size(); k > 1; --k) std::swap(round[k - 1], round[rng() % k]);
    order.insert(order.end(), round.begin(), round.end());
  }
  return order;
}

}  // namespace wb
