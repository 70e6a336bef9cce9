// Distances from an observed class distribution to a prediction and to its uncertain range.
#include "analysis/mix.h"

#include <cmath>
#include <set>

namespace wb {

namespace {

double share_of(const ClassShares& m, const std::string& c) {
  auto it = m.find(c);
  return it == m.end() ? 0.0 : it->second;
}

// A smaller distance must beat the current best by more than rounding noise, so ties keep the
// steady state alone, then the smallest share.
constexpr double kTie = 1e-12;

}  // namespace

double tv_distance(const ClassShares& p, const ClassShares& q) {
  std::set<std::string> classes;
  for (const auto& [c, f] : p) classes.insert(c);
  for (const auto& [c, f] : q) classes.insert(c);
  double d = 0;
  for (const auto& c : classes) d += std::fabs(share_of(p, c) - share_of(q, c));
  return d / 2;
}

MixFit closest_mix(const ClassShares& obs, const ClassShares& p, const ClassShares& a) {
  std::set<std::string> classes;
  for (const auto* m : {&obs, &p, &a})
    for (const auto& [c, f] : *m) classes.insert(c);
  std::set<double> candidates = {0.0, 1.0};
  for (const auto& c : classes) {
    const double slope = share_of(a, c) - share_of(p, c);
    if (slope == 0) continue;
    const double w = (share_of(obs, c) - share_of(p, c)) / slope;
    if (w > 0 && w < 1) candidates.insert(w);
  }
  MixFit best{tv_distance(obs, p), 0.0};
  for (double w : candidates) {  // ascending: the smallest share wins a tie
    ClassShares mix;
    for (const auto& c : classes) mix[c] = (1 - w) * share_of(p, c) + w * share_of(a, c);
    const double d = tv_distance(obs, mix);
    if (d < best.distance - kTie) best = {d, w};
  }
  return best;
}

RangeFit closest_in_range(const ClassShares& obs, const ClassShares& steady,
                          const std::vector<ClassShares>& alternatives) {
  RangeFit fit;
  fit.strict = fit.best = tv_distance(obs, steady);
  for (size_t i = 0; i < alternatives.size(); ++i) {
    const MixFit m = closest_mix(obs, steady, alternatives[i]);
    if (m.distance < fit.best - kTie) {
      fit.best = m.distance;
      fit.share = m.share;
      fit.alternative = i;
    }
  }
  return fit;
}

}  // namespace wb
