// compare's warnings beside its verdicts, which they never change (analysis/compare/compare.h,
// verdict_warnings): cases without an A/A floor and a floor from another machine, tests with too
// few repetitions to decide, repetitions that did not sleep, a set whose cases mostly moved one
// way, and paired rounds.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analysis/compare/compare.h"
#include "analysis/stats/inference.h"
#include "analysis/stats/mann_whitney.h"
#include "common/util/text.h"

namespace wb {
namespace {

// Cells tested at the repetition level with fewer than compare's minimum a side: (n base, n
// other) -> cells.
std::map<std::pair<std::size_t, std::size_t>, int> too_few_counts(const Comparison& cmp,
                                                                  bool paired) {
  std::map<std::pair<std::size_t, std::size_t>, int> too_few;
  const std::size_t least = cmp.options.min_repetitions;
  for (const CompareRow& row : cmp.rows)
    for (std::size_t s = 1; s < row.cells.size(); ++s) {
      const CompareCell& c = row.cells[s];
      if (!c.test || c.level == CompareLevel::kRuns) continue;
      std::size_t a = row.cells[0].repetitions.size(), b = c.repetitions.size();
      if (paired && c.paired()) a = b = std::min(a, b);
      if (a < least || b < least) ++too_few[{a, b}];
    }
  return too_few;
}

// Tested cases the noise file has no A/A floor for, and a floor measured on another machine.
void noise_warnings(Comparison& cmp) {
  const CompareOptions& o = cmp.options;
  int without = 0;
  for (const CompareRow& row : cmp.rows)
    for (std::size_t s = 1; s < row.cells.size(); ++s) {
      const CompareCell& c = row.cells[s];
      without += c.ratio && !c.aa_floor_pct && c.level == CompareLevel::kRepetitions;
    }
  if (without > 0)
    cmp.warnings.push_back(std::to_string(without) +
                           " compared case(s) have no A/A noise floor of \"" + o.metric.id +
                           "\" in " + o.noise->path + ": only their test bounds what is DIFFERENT");
  for (const CompareSet& set : cmp.sets)
    if (!o.noise->hostname.empty() && !set.machine.hostname.empty() &&
        set.machine.hostname != o.noise->hostname) {
      cmp.warnings.push_back("the noise floor was measured on " + o.noise->hostname + ", " +
                             set.label + " ran on " + set.machine.hostname);
      break;
    }
}

void too_few_warnings(Comparison& cmp,
                      const std::map<std::pair<std::size_t, std::size_t>, int>& too_few) {
  const CompareOptions& o = cmp.options;
  for (const auto& [sizes, count] : too_few) {
    const double covers = hodges_lehmann(std::vector<double>(sizes.first, 1.0),
                                         std::vector<double>(sizes.second, 1.0), o.confidence)
                              .confidence;
    cmp.warnings.push_back(
        std::to_string(count) + " comparison(s) with " + std::to_string(sizes.first) + " vs " +
        std::to_string(sizes.second) + " repetitions: the smallest two-sided p the test can give " +
        "is " + fmt("%.4f", mann_whitney_min_p(sizes.first, sizes.second)) +
        " and their interval covers " + fmt("%.0f", 100 * covers) +
        " %; nothing is DIFFERENT below " + std::to_string(o.min_repetitions) +
        " per side (run with --benchmark_repetitions=" + std::to_string(o.min_repetitions) +
        " or more)");
  }
}

// Most cases moving one way by much alike is what a shift of the whole machine between two runs
// looks like (host load, frequency): on the 2-vCPU VM of
// docs/aa-benchmark.md#aa-benchmark-of-compare, 2 of 10 A/A pairs moved every case by 10-18 % one
// way. Said beside the verdicts, which it does not change: a patch may also slow every case.
void common_mode_warnings(Comparison& cmp) {
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
    std::vector<double> changes;
    int different = 0, up = 0, down = 0;
    for (const CompareRow& row : cmp.rows) {
      const CompareCell& c = row.cells[s];
      // The run level measured what varies between runs: its verdicts hold that already.
      if (!c.decision || !c.change_pct || c.level == CompareLevel::kRuns) continue;
      changes.push_back(*c.change_pct);
      if (c.decision->verdict != CompareVerdict::kDifferent) continue;
      ++different;
      (*c.change_pct > 0 ? up : down) += 1;
    }
    const auto n = static_cast<int>(changes.size());
    const bool better = up > down;
    const int same_way = static_cast<int>(std::count_if(
        changes.begin(), changes.end(), [&](double x) { return better ? x > 0 : x < 0; }));
    if (different < 3 || (up > 0 && down > 0) || 4 * same_way < 3 * n) continue;
    std::sort(changes.begin(), changes.end());
    cmp.moved_together.push_back(s);
    cmp.warnings.push_back(
        cmp.sets[s].label + ": all " + std::to_string(different) + " DIFFERENT cases and " +
        std::to_string(same_way) + " of " + std::to_string(n) + " tested moved one way (median " +
        fmt("%+.1f", changes[changes.size() / 2]) +
        "%): a shift of the whole machine between the runs looks like this; A/A runs of one "
        "kernel (wakebench noise) or one run --ab tell it from a kernel's change");
  }
}

// Repetitions left out because a task did not sleep: per set, and where A and B differ.
void marked_warnings(Comparison& cmp) {
  for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
    std::size_t marked = 0, total = 0, cases = 0;
    for (const CompareRow& row : cmp.rows) {
      marked += row.cells[s].marked;
      total += row.cells[s].repetitions_total;
      cases += row.cells[s].marked > 0;
    }
    if (marked > 0)
      cmp.warnings.push_back(cmp.sets[s].label + ": " + std::to_string(marked) + " of " +
                             std::to_string(total) + " repetitions in " + std::to_string(cases) +
                             " case(s) did not sleep (a task blocked in fewer than 0.9 of its "
                             "round trips): left out of the tests");
  }
  for (const CompareRow& row : cmp.rows)
    for (std::size_t s = 1; s < row.cells.size(); ++s) {
      const CompareCell &a = row.cells[0], &b = row.cells[s];
      if (a.marked == b.marked || !a.repetitions_total || !b.repetitions_total) continue;
      cmp.warnings.push_back(row.mechanism + "/" + row.mode + "/" + row.placement + row.pair +
                             ": repetitions that did not sleep " + std::to_string(a.marked) +
                             " of " + std::to_string(a.repetitions_total) + " in " +
                             cmp.sets[0].label + ", " + std::to_string(b.marked) + " of " +
                             std::to_string(b.repetitions_total) + " in " + cmp.sets[s].label);
    }
}

}  // namespace

void verdict_warnings(Comparison& cmp, bool paired) {
  if (cmp.options.noise) noise_warnings(cmp);
  too_few_warnings(cmp, too_few_counts(cmp, paired));
  marked_warnings(cmp);
  common_mode_warnings(cmp);
  if (paired)
    cmp.warnings.push_back(
        "the sets come from one run --ab run: each case is tested on its "
        "per-round differences (paired t test and interval)");
}

}  // namespace wb
