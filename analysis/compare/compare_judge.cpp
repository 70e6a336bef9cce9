// compare's verdict machinery on one family of cells (analysis/compare/compare.h, judge_family):
// the test of each cell against its base at the run level or the repetition level,
// Benjamini-Hochberg across the family, and the verdict (analysis/stats/decision.h).
#include <cmath>
#include <map>

#include "analysis/compare/compare.h"

namespace wb {
namespace {

bool logs_of(const std::vector<double>& v, std::vector<double>& out) {
  for (double x : v) {
    if (!(x > 0)) return false;
    out.push_back(std::log(x));
  }
  return true;
}

// The values of two cells on the log scale, paired by round when both come from one --ab run.
std::optional<EffectSamples> log_samples(const CompareCell& base, const CompareCell& c,
                                         bool paired) {
  EffectSamples s;
  s.paired = paired && !base.rounds.empty() && !c.rounds.empty();
  if (!s.paired) {
    if (!logs_of(base.repetitions, s.base) || !logs_of(c.repetitions, s.other)) return std::nullopt;
  } else {
    std::map<int, double> by_round;
    for (std::size_t i = 0; i < base.rounds.size(); ++i)
      by_round[base.rounds[i]] = base.repetitions[i];
    std::vector<double> a, b;
    for (std::size_t i = 0; i < c.rounds.size(); ++i)
      if (auto it = by_round.find(c.rounds[i]); it != by_round.end()) {
        a.push_back(it->second);
        b.push_back(c.repetitions[i]);
      }
    if (!logs_of(a, s.base) || !logs_of(b, s.other)) return std::nullopt;
  }
  if (s.base.size() < 2 || s.other.size() < 2) return std::nullopt;
  return s;
}

std::optional<SideRuns> log_runs(const CompareCell& c) {
  SideRuns out(c.runs.size());
  for (std::size_t k = 0; k < c.runs.size(); ++k)
    if (!logs_of(c.runs[k], out[k])) return std::nullopt;
  return out;
}

// What a cell is tested on: the runs' means with both levels' variances where both sides hold two
// or more runs, else the repetitions.
struct CellSamples {
  EffectSamples samples;
  std::optional<LevelVariances> levels;
};
std::optional<CellSamples> cell_samples(const CompareCell& base, const CompareCell& c,
                                        bool paired) {
  if (base.runs.size() >= 2 && c.runs.size() >= 2) {
    const auto a = log_runs(base), b = log_runs(c);
    if (a && b) {
      EffectSamples s{run_means(*a), run_means(*b)};
      s.means = true;
      return CellSamples{s, level_variances(*a, *b)};
    }
  }
  if (auto s = log_samples(base, c, paired)) return CellSamples{*s, std::nullopt};
  return std::nullopt;
}

CellTestKind kind_of(const CellSamples& s, const EffectTest& t) {
  if (s.levels) return CellTestKind::kWelchRuns;
  if (s.samples.paired) return CellTestKind::kPairedT;
  return t.exact ? CellTestKind::kExact : CellTestKind::kNormal;
}

// Ratio, change, the test and the interval of a cell against its base.
void test_cell(const CompareCell& base, CompareCell& c, const CompareOptions& o, bool paired) {
  if (!base.value || *base.value == 0 || !c.value) return;
  c.ratio = *c.value / *base.value;
  c.change_pct = (o.metric.higher_is_better ? *c.ratio - 1.0 : 1.0 - *c.ratio) * 100.0;
  const auto s = cell_samples(base, c, paired);
  if (!s) return;
  const EffectTest t = test_effect(s->samples, o.confidence);
  c.test = CellTest{t.p, kind_of(*s, t)};
  c.interval = ShiftInterval{std::exp(t.estimate), std::exp(t.lo), std::exp(t.hi), o.confidence};
  if (!s->levels) return;
  c.level = CompareLevel::kRuns;
  c.levels = s->levels;
  c.aa_floor_pct.reset();  // the runs measured what it stood for
}

// A cell with a value on both sides that could not be tested: UNKNOWN, and why.
Decision untested(const CompareCell& base, const CompareCell& c) {
  const auto side = [](const CompareCell& x) {
    return std::to_string(x.repetitions.size()) + " of " + std::to_string(x.repetitions_total) +
           (x.marked ? " (" + std::to_string(x.marked) + " did not sleep)" : "");
  };
  Decision d;
  d.why = "too few repetitions to test (at least 2 a side): base " + side(base) + ", this set " +
          side(c);
  return d;
}

}  // namespace

void judge_family(const std::vector<CellPair>& family, const CompareOptions& o, bool paired) {
  std::vector<const CellPair*> tested;
  std::vector<double> p;
  for (const CellPair& pair : family) {
    test_cell(*pair.base, *pair.other, o, paired);
    if (!pair.other->test) continue;
    tested.push_back(&pair);
    p.push_back(pair.other->test->p_value);
  }
  const std::vector<double> q = bh_qvalues(p);
  for (std::size_t i = 0; i < tested.size(); ++i) {
    CompareCell& c = *tested[i]->other;
    c.q_value = q[i];
    const CellSamples s = *cell_samples(*tested[i]->base, c, paired);
    // The floor holds the case's own change (its statistic over every repetition), as the A/A
    // sets measured it (analysis/compare/noise.h).
    DecisionInput in{s.samples, q[i], std::log(*c.ratio), c.aa_floor_pct.value_or(0.0) / 100,
                     o.base_fixed};
    in.levels = s.levels;
    c.decision = decide(in, o.rules(), o.look_level());
  }
  if (o.metric.counter) return;  // shown, never tested
  for (const CellPair& pair : family)
    if (CompareCell& c = *pair.other; c.ratio && !c.test) c.decision = untested(*pair.base, c);
}

}  // namespace wb
