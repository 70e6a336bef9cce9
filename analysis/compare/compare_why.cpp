// Why a kernel-placed case changed (docs/cli.md#compare-why): the decomposition of its mean RTT
// (analysis/stats/decompose.h), a verdict on each observed class's share, the medians per class,
// and the sched domains' wakeup counters of the two sets.
#include <algorithm>
#include <cmath>
#include <set>

#include "analysis/compare/compare.h"
#include "analysis/stats/inference.h"

namespace wb {
namespace {

// Each kept repetition's share of class `cls` of its round trips.
std::vector<double> shares_of(const std::vector<RepetitionTally>& reps, const std::string& cls) {
  std::vector<double> out;
  for (const RepetitionTally& r : reps) {
    double all = 0, mine = 0;
    for (const ClassTally& t : r) {
      all += t.round_trips;
      if (t.cls == cls) mine += t.round_trips;
    }
    if (all > 0) out.push_back(mine / all);
  }
  return out;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size();
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2.0;
}

// The median over repetitions of a class's per-repetition median (NaN when never seen).
double class_median(const std::vector<RepetitionTally>& reps, const std::string& cls) {
  std::vector<double> v;
  for (const RepetitionTally& r : reps)
    for (const ClassTally& t : r)
      if (t.cls == cls && t.round_trips > 0) v.push_back(t.median_ns);
  return v.empty() ? std::nan("") : median_of(v);
}

SchedstatTable schedstat_table(const CompareCell& a, const CompareCell& b) {
  SchedstatTable t{{}, a.schedstat.off, b.schedstat.off};
  const auto &ca = a.schedstat.domain_counts, &cb = b.schedstat.domain_counts;
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& m : {ca, cb})
    for (const auto& [k, v] : m) keys.insert(k);
  const auto per_rt = [](const auto& m, const auto& k, double rts) -> std::optional<double> {
    const auto it = m.find(k);
    if (it == m.end() || rts <= 0) return std::nullopt;
    return it->second / rts;
  };
  for (const auto& k : keys)
    t.rows.push_back({k.first, k.second, per_rt(ca, k, a.schedstat_round_trips),
                      per_rt(cb, k, b.schedstat_round_trips)});
  return t;
}

std::vector<std::string> classes_of(const CompareCell& a, const CompareCell& b) {
  std::vector<std::string> out;
  for (const CompareCell* c : {&a, &b})
    for (const RepetitionTally& r : c->classes)
      for (const ClassTally& t : r)
        if (std::find(out.begin(), out.end(), t.cls) == out.end()) out.push_back(t.cls);
  return out;
}

WhyChanged why_of(const Comparison& cmp, std::size_t row, std::size_t set) {
  const CompareCell &a = cmp.rows[row].cells[0], &b = cmp.rows[row].cells[set];
  WhyChanged w{row, set};
  w.parts = decompose(a.classes, b.classes);
  for (const std::string& cls : classes_of(a, b)) {
    w.class_median_ns[cls] = {class_median(a.classes, cls), class_median(b.classes, cls)};
    EffectSamples s{shares_of(a.classes, cls), shares_of(b.classes, cls), false, true};
    if (s.base.size() < 2 || s.other.size() < 2) continue;
    w.shares.push_back({cls, {}, test_effect(s, cmp.options.confidence).p});
  }
  w.schedstat = schedstat_table(a, b);
  return w;
}

// BH over the share tests of one set, then each share's verdict (difference scale).
void decide_shares(Comparison& cmp, std::size_t set) {
  std::vector<std::pair<const CompareRow*, ClassShareVerdict*>> all;
  std::vector<double> p;
  for (WhyChanged& w : cmp.why)
    for (ClassShareVerdict& v : w.shares)
      if (w.set == set) {
        all.push_back({&cmp.rows[w.row], &v});
        p.push_back(*v.q);
      }
  const std::vector<double> q = bh_qvalues(p);
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto [row, v] = all[i];
    v->q = q[i];
    EffectSamples s{shares_of(row->cells[0].classes, v->cls),
                    shares_of(row->cells[set].classes, v->cls), false, true};
    const double estimate = test_effect(s, cmp.options.confidence).estimate;
    DecisionInput in{s, q[i], estimate, 0.0, cmp.options.base_fixed, false};
    v->decision = decide(in, cmp.options.rules(), cmp.options.look_level());
  }
}

}  // namespace

void explain_kernel_cases(Comparison& cmp) {
  for (std::size_t r = 0; r < cmp.rows.size(); ++r) {
    const CompareRow& row = cmp.rows[r];
    if (row.placement.rfind("kernel", 0) != 0 || row.cells[0].classes.empty()) continue;
    for (std::size_t s = 1; s < row.cells.size(); ++s)
      if (!row.cells[s].classes.empty()) cmp.why.push_back(why_of(cmp, r, s));
  }
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) decide_shares(cmp, s);
}

}  // namespace wb
