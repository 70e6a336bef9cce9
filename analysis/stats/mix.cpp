// Distances from an observed class distribution to a prediction and to its uncertain range.
#include "analysis/stats/mix.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
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

namespace {

using Dense = std::vector<double>;  // shares over a fixed class order

double tv(const Dense& a, const Dense& b) {
  double d = 0;
  for (size_t c = 0; c < a.size(); ++c) d += std::fabs(a[c] - b[c]);
  return d / 2;
}

Dense mix_of(const std::vector<Dense>& states, const std::vector<double>& w) {
  Dense m(states[0].size(), 0.0);
  for (size_t i = 0; i < states.size(); ++i)
    for (size_t c = 0; c < m.size(); ++c) m[c] += w[i] * states[i][c];
  return m;
}

// Every weight vector with entries in multiples of 1/n, summing to 1.
void for_each_grid_point(size_t k, int n,
                         const std::function<void(const std::vector<double>&)>& f) {
  std::vector<int> parts(k, 0);
  std::vector<double> w(k);
  std::function<void(size_t, int)> rec = [&](size_t i, int left) {
    if (i + 1 == k) {
      parts[i] = left;
      for (size_t j = 0; j < k; ++j) w[j] = static_cast<double>(parts[j]) / n;
      f(w);
      return;
    }
    for (int p = 0; p <= left; ++p) {
      parts[i] = p;
      rec(i + 1, left - p);
    }
  };
  rec(0, n);
}

// Moves weight from state i to state j while that brings the mix closer to obs: the distance is
// convex and piecewise linear in the amount moved, so its minimum is at an end or a breakpoint.
bool improve(const Dense& obs, const std::vector<Dense>& states, std::vector<double>& w,
             double& best) {
  bool any = false;
  for (size_t i = 0; i < states.size(); ++i) {
    for (size_t j = 0; j < states.size(); ++j) {
      if (i == j || w[i] <= 0) continue;
      const Dense m = mix_of(states, w);
      std::set<double> ts = {w[i]};
      for (size_t c = 0; c < obs.size(); ++c) {
        const double slope = states[j][c] - states[i][c];
        if (slope == 0) continue;
        const double t = (obs[c] - m[c]) / slope;
        if (t > 0 && t < w[i]) ts.insert(t);
      }
      for (double t : ts) {
        Dense moved = m;
        for (size_t c = 0; c < obs.size(); ++c) moved[c] += t * (states[j][c] - states[i][c]);
        const double d = tv(obs, moved);
        if (d < best - kTie) {
          best = d;
          w[i] -= t;
          w[j] += t;
          any = true;
          break;
        }
      }
    }
  }
  return any;
}

}  // namespace

RangeFit closest_in_range(const ClassShares& obs, const ClassShares& steady,
                          const std::vector<ClassShares>& alternatives) {
  RangeFit fit;
  fit.strict = fit.best = tv_distance(obs, steady);
  fit.weights.assign(alternatives.size(), 0.0);
  if (alternatives.empty()) return fit;
  if (alternatives.size() == 1) {
    const MixFit m = closest_mix(obs, steady, alternatives[0]);
    if (m.distance < fit.best - kTie) {
      fit.best = m.distance;
      fit.share = fit.weights[0] = m.share;
      fit.alternative = 0;
    }
    return fit;
  }
  std::set<std::string> classes;
  for (const auto& [c, f] : obs) classes.insert(c);
  for (const auto& [c, f] : steady) classes.insert(c);
  for (const auto& a : alternatives)
    for (const auto& [c, f] : a) classes.insert(c);
  auto dense = [&](const ClassShares& m) {
    Dense d;
    for (const auto& c : classes) d.push_back(share_of(m, c));
    return d;
  };
  const Dense o = dense(obs);
  std::vector<Dense> states = {dense(steady)};
  for (const auto& a : alternatives) states.push_back(dense(a));
  const size_t k = states.size();
  // A grid of a few thousand points whatever k, then the polish.
  const int n = k <= 3 ? 100 : k == 4 ? 40 : k == 5 ? 20 : k == 6 ? 12 : 8;
  std::vector<double> w(k, 0.0);
  w[0] = 1;
  double best = fit.strict;
  for_each_grid_point(k, n, [&](const std::vector<double>& g) {
    const double d = tv(o, mix_of(states, g));
    if (d < best - kTie) {
      best = d;
      w = g;
    }
  });
  for (int round = 0; round < 200 && improve(o, states, w, best); ++round) {
  }
  if (best < fit.strict - kTie) {
    fit.best = best;
    fit.share = 1 - w[0];
    for (size_t i = 1; i < k; ++i) fit.weights[i - 1] = w[i];
    fit.alternative = static_cast<size_t>(std::max_element(fit.weights.begin(), fit.weights.end()) -
                                          fit.weights.begin());
  }
  return fit;
}

double range_coverage(const ClassShares& steady, const std::vector<ClassShares>& alternatives,
                      const std::vector<std::string>& classes, double distance) {
  if (classes.size() <= 1) {
    const ClassShares only = classes.empty() ? ClassShares{} : ClassShares{{classes[0], 1.0}};
    return closest_in_range(only, steady, alternatives).best <= distance ? 1.0 : 0.0;
  }
  // Uniform on the simplex: normalised exponential draws (-log u), u from a fixed mt19937_64,
  // whose output the standard defines (its distributions it does not).
  std::mt19937_64 gen(20261201);
  int within = 0;
  for (int i = 0; i < kCoverageSamples; ++i) {
    ClassShares point;
    double total = 0;
    for (const auto& c : classes) {
      const double u = (static_cast<double>(gen() >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
      total += point[c] = -std::log(u);
    }
    for (auto& [c, f] : point) f /= total;
    within += closest_in_range(point, steady, alternatives).best <= distance;
  }
  return static_cast<double>(within) / kCoverageSamples;
}

}  // namespace wb
