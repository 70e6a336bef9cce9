#include "analysis/stats/levels.h"

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace wb {
namespace {

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

void check_side(const SideRuns& runs) {
  if (runs.size() < 2) throw std::invalid_argument("the run level needs at least 2 runs a side");
  for (const auto& r : runs)
    if (r.empty()) throw std::invalid_argument("a run without values");
}

// Adds one side's sums: within-run squares and dof, run-mean squares, sum of 1/n_j.
struct Sums {
  double within = 0, means = 0, inverse_n = 0;
  std::size_t within_dof = 0, runs = 0;
};
void add_side(const SideRuns& runs, Sums& s) {
  const std::vector<double> m = run_means(runs);
  const double side = mean_of(m);
  for (std::size_t j = 0; j < runs.size(); ++j) {
    for (double y : runs[j]) s.within += (y - m[j]) * (y - m[j]);
    s.within_dof += runs[j].size() - 1;
    s.means += (m[j] - side) * (m[j] - side);
    s.inverse_n += 1.0 / static_cast<double>(runs[j].size());
  }
  s.runs += runs.size();
}

double t_quantile(double p, double dof) {
  return boost::math::quantile(boost::math::students_t(dof), p);
}

}  // namespace

std::vector<double> run_means(const SideRuns& runs) {
  std::vector<double> m;
  for (const auto& r : runs) m.push_back(mean_of(r));
  return m;
}

LevelVariances level_variances(const SideRuns& base, const SideRuns& other) {
  check_side(base);
  check_side(other);
  Sums s;
  add_side(base, s);
  add_side(other, s);
  LevelVariances v;
  v.within_dof = s.within_dof;
  v.runs_dof = s.runs - 2;
  v.within = s.within_dof ? s.within / static_cast<double>(s.within_dof) : 0.0;
  v.run_means = s.means / static_cast<double>(v.runs_dof);
  v.repetitions = static_cast<double>(s.runs) / s.inverse_n;
  v.between = std::max(0.0, v.run_means - v.within / v.repetitions);
  v.runs_base = base.size();
  v.runs_other = other.size();
  return v;
}

LevelVariances planning_variances(const LevelVariances& v) {
  const double dof = static_cast<double>(v.runs_dof);
  const boost::math::chi_squared chi(dof);
  LevelVariances up = v;
  up.run_means = v.run_means * dof / boost::math::quantile(chi, 1 - kPlanVarianceConfidence);
  up.between = std::max(up.run_means - v.within / v.repetitions, v.within / v.repetitions);
  return up;
}

std::size_t repetitions_per_run(const LevelVariances& v) {
  double n = static_cast<double>(kMaxRepetitionsPerRun);
  if (v.between > 0) n = std::ceil(std::sqrt(kRunCostInRepetitions * v.within / v.between));
  return std::clamp(static_cast<std::size_t>(std::min(n, 1e9)), kMinRepetitionsPerRun,
                    kMaxRepetitionsPerRun);
}

std::optional<LevelPlan> runs_for(const LevelVariances& v, double target, double level,
                                  double power, bool two_sided) {
  const std::size_t n = repetitions_per_run(v);
  const double run_variance = v.between + v.within / static_cast<double>(n);
  // Whether r runs a side reach the power; monotone in r, so found by bisection.
  const auto enough = [&](std::size_t r) {
    const double dof = static_cast<double>(2 * r - 2);
    const double z = t_quantile(1 - (two_sided ? level / 2 : level), dof) + t_quantile(power, dof);
    return z * std::sqrt(2 * run_variance / static_cast<double>(r)) <= target;
  };
  if (!enough(kMaxRuns)) return std::nullopt;
  std::size_t lo = kMinPlannedRuns, hi = kMaxRuns;  // enough(hi)
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (enough(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return LevelPlan{hi, n};
}

}  // namespace wb
