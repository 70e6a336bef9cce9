#include "analysis/predict/discriminate.h"

#include <algorithm>

#include "analysis/predict/predict_results.h"
#include "analysis/stats/mix.h"

namespace wb {

namespace {

// The distance of `from`'s steady state to `to`'s range; adds the cause of the heaviest
// alternative of `to` in the closest mix to `blocking` when that mix is within kMatchDistance.
double distance_to_range(const SteadyResult& from, const SteadyResult& to,
                         std::vector<std::string>& blocking) {
  const RangeFit fit =
      closest_in_range(class_shares(from.classes), class_shares(to.classes), alternatives_of(to));
  if (fit.best <= kMatchDistance && fit.alternative) {
    const std::string kind(cause_kind_id(to.alternatives[*fit.alternative].cause.kind));
    if (std::find(blocking.begin(), blocking.end(), kind) == blocking.end())
      blocking.push_back(kind);
  }
  return fit.best;
}

}  // namespace

bool Separation::discriminates() const {
  return tv >= kDiscriminateTv && a_from_b > kMatchDistance && b_from_a > kMatchDistance;
}

double Separation::margin() const {
  return std::min({tv - kDiscriminateTv, a_from_b - kMatchDistance, b_from_a - kMatchDistance});
}

Separation separation(const SteadyResult& a, const SteadyResult& b) {
  Separation s;
  s.tv = tv_distance(class_shares(a.classes), class_shares(b.classes));
  s.a_from_b = distance_to_range(a, b, s.blocking);
  s.b_from_a = distance_to_range(b, a, s.blocking);
  return s;
}

std::vector<std::pair<std::size_t, std::size_t>> discriminated_pairs(
    const std::vector<SteadyResult>& results) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t i = 0; i < results.size(); ++i)
    for (std::size_t j = i + 1; j < results.size(); ++j)
      if (separation(results[i], results[j]).discriminates()) out.emplace_back(i, j);
  return out;
}

}  // namespace wb
