// The phrases and row groups compare's renderers share (analysis/compare/compare_render.h).
#include <algorithm>
#include <cmath>
#include <iterator>

#include "analysis/compare/compare_render.h"
#include "common/util/text.h"

namespace wb {

std::optional<std::pair<double, double>> change_interval(const CompareCell& c, const Metric& m) {
  if (!c.interval) return std::nullopt;
  const double lo = c.interval->lo, hi = c.interval->hi;
  if (m.higher_is_better) return std::pair{(lo - 1) * 100, (hi - 1) * 100};
  return std::pair{(1 - hi) * 100, (1 - lo) * 100};
}

std::pair<double, double> change_pct_of(double log_lo, double log_hi, const Metric& m) {
  const double lo = std::exp(log_lo), hi = std::exp(log_hi);
  if (m.higher_is_better) return {(lo - 1) * 100, (hi - 1) * 100};
  return {(1 - hi) * 100, (1 - lo) * 100};
}

std::string format_value(double v) {
  const double a = std::fabs(v);
  if (a >= 100) return fmt("%.0f", v);
  if (a >= 1) return fmt("%.2f", v);
  return fmt("%.3g", v);
}

std::string summary_line(const Comparison& cmp, std::size_t s) {
  const auto n = cmp.counts(s);
  return cmp.sets[s].label + " vs " + cmp.sets[0].label + ": " +
         std::to_string(n.at(CompareVerdict::kDifferent)) + " DIFFERENT (" +
         std::to_string(cmp.slower(s)) + " slower), " +
         std::to_string(n.at(CompareVerdict::kSame)) + " SAME, " +
         std::to_string(n.at(CompareVerdict::kUnknown)) + " UNKNOWN" +
         (std::count(cmp.moved_together.begin(), cmp.moved_together.end(), s)
              ? "; most cases moved one way (see the notes)"
              : "");
}

std::string runs_text(const CompareSet& set) {
  return std::to_string(set.runs.size()) + (set.runs.size() == 1 ? " run" : " runs");
}

std::string level_line(const Comparison& cmp, std::size_t s) {
  int runs = 0, reps = 0, paired = 0;
  for (const CompareRow& r : cmp.rows)
    if (const CompareCell& c = r.cells[s]; c.test)
      ++(c.level == CompareLevel::kRuns ? runs : c.paired() ? paired : reps);
  const std::string sides = runs_text(cmp.sets[0]) + " vs " + runs_text(cmp.sets[s]);
  const CompareOptions& o = cmp.options;
  const std::string floor =
      o.noise ? "the verdicts rest on the A/A floor of " +
                    (o.noise->path.empty() ? std::string("the noise floor") : o.noise->path)
              : "no A/A floor (--noise) stands for it";
  if (paired && !runs && !reps) return "level: the rounds of one run --ab run, paired";
  if (runs && !reps && !paired)
    return "level: runs (" + sides +
           "): each case's variance between runs, measured from them, "
           "replaces the A/A floor";
  const bool single = cmp.sets[0].runs.size() == 1 && cmp.sets[s].runs.size() == 1;
  if (!runs)
    return std::string("level: repetitions (") + sides +
           (single ? "): the variation between runs is unknown with one run a side; "
                   : "; the run level needs 2 or more a side): ") +
           floor;
  return "level: runs for " + std::to_string(runs) + " case(s), repetitions for " +
         std::to_string(reps + paired) + " (fewer than 2 runs a side held them; " + floor + ")";
}

std::string case_text(const CompareRow& r) {
  return r.mechanism + "/" + r.mode + "/" + r.placement + r.suffix + r.pair;
}

MechanismRows by_mechanism(const Comparison& cmp) {
  MechanismRows groups;
  for (const CompareRow& r : cmp.rows) {
    const bool compared =
        r.cells[0].present && std::any_of(r.cells.begin() + 1, r.cells.end(),
                                          [](const CompareCell& c) { return c.present; });
    const bool has_metric = std::any_of(r.cells.begin(), r.cells.end(), [](const CompareCell& c) {
      return c.value.has_value() || (c.present && c.status != CaseStatus::kOk);
    });
    if (!compared || !has_metric) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& g) { return g.first == r.mechanism; });
    if (it == groups.end()) {
      groups.push_back({r.mechanism, {}});
      it = std::prev(groups.end());
    }
    it->second.push_back(&r);
  }
  // A mechanism without the metric at all (tps of pipe cases) has nothing to show.
  std::erase_if(groups, [](const auto& g) {
    return std::none_of(g.second.begin(), g.second.end(), [](const CompareRow* r) {
      return std::any_of(r->cells.begin(), r->cells.end(),
                         [](const CompareCell& c) { return c.value.has_value(); });
    });
  });
  return groups;
}

}  // namespace wb
