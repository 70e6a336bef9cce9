#include "analysis/stats/decision.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>

#include "analysis/stats/inference.h"
#include "analysis/stats/mann_whitney.h"
#include "common/util/text.h"

namespace wb {
namespace {

// More repetitions a side than this are "no count decides it" in practice.
constexpr double kMaxNeeded = 1e6;
// The Mann-Whitney test's asymptotic efficiency against the t test under normality.
constexpr double kRankEfficiency = 3.0 / std::numbers::pi;

double mean_of(std::span<const double> v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double sum_squares(std::span<const double> v) {
  const double m = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return ss;
}

std::vector<double> differences(const EffectSamples& s) {
  std::vector<double> d(s.base.size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = s.other[i] - s.base[i];
  return d;
}

void check_samples(const EffectSamples& s) {
  if (s.base.size() < 2 || s.other.size() < 2)
    throw std::invalid_argument("an effect needs at least 2 values a side");
  if (s.paired && s.base.size() != s.other.size())
    throw std::invalid_argument("paired samples of unequal size");
}

// A t test of `estimate` with standard error `se` and `dof` degrees of freedom, and its interval. A
// zero se (every difference equal) gives p 1 for no change, else 0.
EffectTest t_test(double estimate, double se, double dof, double confidence) {
  EffectTest r;
  r.estimate = r.lo = r.hi = estimate;
  if (se == 0) {
    r.p = estimate == 0 ? 1.0 : 0.0;
    return r;
  }
  const boost::math::students_t t(dof);
  r.p = 2 * boost::math::cdf(boost::math::complement(t, std::fabs(estimate) / se));
  const double half = boost::math::quantile(t, (1 + confidence) / 2) * se;
  r.lo = estimate - half;
  r.hi = estimate + half;
  return r;
}

EffectTest paired_t(const EffectSamples& s, double confidence) {
  const std::vector<double> d = differences(s);
  const double n = static_cast<double>(d.size());
  return t_test(mean_of(d), std::sqrt(sum_squares(d) / (n - 1) / n), n - 1, confidence);
}

// Welch's standard error of the difference of the means and its Welch-Satterthwaite degrees of
// freedom (any, when both variances are 0: se is 0 then).
std::pair<double, double> welch_se_dof(const EffectSamples& s) {
  const double n1 = static_cast<double>(s.base.size()), n2 = static_cast<double>(s.other.size());
  const double v1 = sum_squares(s.base) / (n1 - 1) / n1, v2 = sum_squares(s.other) / (n2 - 1) / n2;
  const double dof =
      v1 + v2 == 0 ? 1 : (v1 + v2) * (v1 + v2) / (v1 * v1 / (n1 - 1) + v2 * v2 / (n2 - 1));
  return {std::sqrt(v1 + v2), dof};
}

EffectTest welch_t(const EffectSamples& s, double confidence) {
  const auto [se, dof] = welch_se_dof(s);
  return t_test(mean_of(s.other) - mean_of(s.base), se, dof, confidence);
}

// The variance of the estimate per unit spread^2: 1/n1 + 1/n2 over the rank test's efficiency, or
// 1/n for paired differences.
double variance_factor(const EffectSamples& s) {
  if (s.paired) return 1.0 / static_cast<double>(s.base.size());
  const double sum =
      1.0 / static_cast<double>(s.base.size()) + 1.0 / static_cast<double>(s.other.size());
  return s.means ? sum : sum / kRankEfficiency;
}

struct Count {
  std::size_t needed = 0;
  std::optional<std::size_t> needed_base;
};

// Repetitions a side that shrink the estimate's sd to `target_sd` (> 0).
Count repetitions_for(const DecisionInput& in, double target_sd) {
  const EffectSamples& s = in.samples;
  const double spread = effect_spread(s);
  if (spread == 0) return {std::max(s.base.size(), s.other.size())};
  // The variance factor that reaches target_sd, in units of 1/n.
  const double v = std::pow(target_sd / spread, 2);
  const auto ceil_count = [](double x) {
    return static_cast<std::size_t>(std::ceil(std::min(x, kMaxNeeded)));
  };
  if (s.paired) return {ceil_count(1.0 / v)};
  const double unit = s.means ? v : v * kRankEfficiency;  // 1/n1 + 1/n2 must not exceed this
  const double n1 = static_cast<double>(s.base.size());
  Count c{ceil_count(2.0 / unit)};
  if (!in.base_fixed) return c;
  if (1.0 / n1 >= unit) {
    c.needed_base = c.needed;
    return c;
  }
  c.needed = ceil_count(1.0 / (unit - 1.0 / n1));
  return c;
}

// +-x on the effect scale: [log(1 - x), log(1 + x)] for a ratio, [-x, x] for a difference.
struct Band {
  double lo = 0, hi = 0;
};
Band band(const DecisionInput& in, double x) {
  if (!in.log_scale) return {-x, x};
  return {std::log(1 - std::min(x, 0.99)), std::log1p(x)};
}

// UNKNOWN at the run level: what the present runs detect (Welch's t), and the runs a side, and
// repetitions a run, that would decide it. UNKNOWN there means the runs have not shown a change, so
// "no change" is among what they admit, and advice planned on the change they show, as if it were
// real, falls short whenever that change is the drift between runs (an A/A pair advised toward
// DIFFERENT, docs/aa-benchmark.md#advice). So the advice is the runs whose interval would lie
// within the margin if nothing changed, both bounds with `power` (each (1 + power) / 2), which
// also detect a change of about the margin or more: they decide the case either way. It plans on
// the runs' variance at its upper bound (planning_variances()).
void explain_runs(const DecisionInput& in, const DecisionRules& rules, double level, Band margin,
                  Decision& d) {
  const auto [se, dof] = welch_se_dof(in.samples);
  const boost::math::students_t t(dof);
  d.detectable =
      (boost::math::quantile(t, 1 - level / 2) + boost::math::quantile(t, rules.power)) * se;
  const double room = std::min(margin.hi, -margin.lo);
  const LevelVariances v = planning_variances(*in.levels);
  if (const auto p = runs_for(v, room, level, (1 + rules.power) / 2, false)) {
    d.needed = p->runs;
    d.needed_per_run = p->repetitions;
  }
  d.why = "no clear change between the runs (q " + fmt("%.3f", in.q.value_or(1.0)) +
          ") and their interval reaches beyond the margin";
}

void explain_unknown(const DecisionInput& in, const DecisionRules& rules, double level, Band margin,
                     Band floor, Decision& d) {
  if (in.levels) return explain_runs(in, rules, level, margin, d);
  const double z_two = normal_quantile(1 - level / 2), z_one = normal_quantile(1 - level);
  const double z_power = normal_quantile(rules.power);
  const double se = d.spread * std::sqrt(variance_factor(in.samples));
  d.detectable = std::max((z_two + z_power) * se, floor.hi);
  const double effect = std::fabs(in.estimate);
  std::optional<Count> to_differ, to_match;
  if ((in.estimate < floor.lo || in.estimate > floor.hi) && effect > 0)
    to_differ = repetitions_for(in, effect / (z_two + z_power));
  const double room =
      std::min(margin.hi - floor.hi - in.estimate, in.estimate + floor.lo - margin.lo);
  if (room > 0) to_match = repetitions_for(in, room / (z_one + z_power));
  const bool match_first = to_match && (!to_differ || to_match->needed < to_differ->needed);
  if (const std::optional<Count>& c = match_first ? to_match : to_differ) {
    d.needed = c->needed;
    d.needed_base = c->needed_base;
    d.needed_for = match_first ? CompareVerdict::kSame : CompareVerdict::kDifferent;
  }
  const std::size_t n = std::min(in.samples.base.size(), in.samples.other.size());
  if (in.floor >= rules.margin)
    d.why = "the A/A floor exceeds the margin: SAME cannot be shown";
  else if (n < rules.min_repetitions && in.q && *in.q < level)
    d.why = "fewer than " + std::to_string(rules.min_repetitions) + " repetitions a side";
  else if (!d.needed)
    d.why = "the change is within the A/A floor, which leaves too little of the margin for SAME";
  else if (in.q && *in.q < level)
    d.why = "a change within the case's A/A floor, and the interval reaches beyond the margin";
  else
    d.why = "no clear change (q " + fmt("%.3f", in.q.value_or(1.0)) +
            ") and the interval reaches beyond the margin";
}

}  // namespace

std::string_view verdict_id(CompareVerdict v) {
  switch (v) {
    case CompareVerdict::kSame:
      return "SAME";
    case CompareVerdict::kDifferent:
      return "DIFFERENT";
    case CompareVerdict::kUnknown:
      break;
  }
  return "UNKNOWN";
}

EffectTest test_effect(const EffectSamples& s, double confidence) {
  check_samples(s);
  if (s.paired) return paired_t(s, confidence);
  if (s.means) return welch_t(s, confidence);
  const MannWhitneyResult mw = mann_whitney_u(s.base, s.other);
  const ShiftInterval hl = hodges_lehmann(s.base, s.other, confidence);
  return {mw.p_value, hl.estimate, hl.lo, hl.hi, mw.exact};
}

double effect_spread(const EffectSamples& s) {
  check_samples(s);
  if (s.paired) {
    const std::vector<double> d = differences(s);
    return std::sqrt(sum_squares(d) / static_cast<double>(d.size() - 1));
  }
  const double dof = static_cast<double>(s.base.size() + s.other.size() - 2);
  return std::sqrt((sum_squares(s.base) + sum_squares(s.other)) / dof);
}

Decision decide(const DecisionInput& in, const DecisionRules& rules, double level) {
  const Band margin = band(in, rules.margin), floor = band(in, in.levels ? 0.0 : in.floor);
  Decision d;
  const EffectTest eq = test_effect(in.samples, 1 - 2 * level);
  d.equiv_lo = eq.lo + floor.lo;
  d.equiv_hi = eq.hi + floor.hi;
  d.spread = effect_spread(in.samples);
  const std::size_t n = std::min(in.samples.base.size(), in.samples.other.size());
  const bool beyond_floor = in.estimate < floor.lo || in.estimate > floor.hi;
  // Runs: the t test holds from 2 a side, its width says how sure it is.
  const std::size_t least = in.levels ? 2 : rules.min_repetitions;
  if (n >= least && in.q && *in.q < level && beyond_floor) {
    d.verdict = CompareVerdict::kDifferent;
  } else if (d.equiv_lo >= margin.lo && d.equiv_hi <= margin.hi) {
    d.verdict = CompareVerdict::kSame;
  } else {
    explain_unknown(in, rules, level, margin, floor, d);
  }
  return d;
}

double alpha_spent_at(std::size_t look, std::size_t looks, double alpha) {
  if (looks == 0 || look == 0 || look > looks)
    throw std::invalid_argument("look " + std::to_string(look) + " of " + std::to_string(looks));
  const auto spent = [&](std::size_t k) {
    return alpha * std::log(1 + (std::numbers::e - 1) * static_cast<double>(k) /
                                    static_cast<double>(looks));
  };
  return spent(look) - spent(look - 1);
}

}  // namespace wb
