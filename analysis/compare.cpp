#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/mann_whitney.h"
#include "common/util/text.h"

namespace wb {
namespace {

const std::vector<std::string> kRttStats = {"min", "mean", "median", "p90", "p99", "p999", "max"};

enum class MetricKind { kRtt, kWakeup, kTps, kCounter };

MetricKind kind_of(const std::string& id) {
  if (std::find(kRttStats.begin(), kRttStats.end(), id) != kRttStats.end()) return MetricKind::kRtt;
  if (id.rfind("wakeup-", 0) == 0 &&
      std::find(kRttStats.begin(), kRttStats.end(), id.substr(7)) != kRttStats.end())
    return MetricKind::kWakeup;
  if (id == "tps") return MetricKind::kTps;
  return MetricKind::kCounter;
}

// Per-repetition values under `key`, or empty unless every repetition has one.
std::vector<double> repetitions_of(const CaseView& c, const std::string& key) {
  std::vector<double> out;
  for (const Stats& r : c.repetitions) {
    const auto v = r.get(key);
    if (!v) return {};
    out.push_back(*v);
  }
  return out;
}

struct Extracted {
  std::optional<double> value;
  std::vector<double> repetitions;
};

Extracted extract(const CaseView& c, const std::string& id) {
  Extracted e;
  e.repetitions = repetitions_of(c, id);
  switch (kind_of(id)) {
    case MetricKind::kRtt:
      e.value = c.rtt.get(id);
      break;
    case MetricKind::kWakeup:
      e.value = c.wakeup.get(id.substr(std::string("wakeup-").size()));
      break;
    case MetricKind::kTps:
      e.value = c.tps;
      break;
    case MetricKind::kCounter: {
      const auto side = [&](int s, const std::string& event) -> std::optional<double> {
        auto it = c.counters.side[s].find(event);
        return it == c.counters.side[s].end() ? std::nullopt : it->second;
      };
      const auto colon = id.find(':');
      if (colon != std::string::npos) {
        const std::string who = id.substr(0, colon);
        e.value = side(who == "waker" ? 0 : 1, id.substr(colon + 1));
      } else if (const auto waker = side(0, id), wakee = side(1, id); waker && wakee) {
        e.value = *waker + *wakee;
      }
      break;
    }
  }
  return e;
}

std::optional<double> sd_percent(const std::vector<double>& v) {
  if (v.size() < 2) return std::nullopt;
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  if (mean == 0) return std::nullopt;
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(v.size() - 1)) / std::fabs(mean) * 100.0;
}

std::string stem_label(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? path : stem;
}

// Events that occur as counters anywhere, for the "no such metric" message.
std::set<std::string> counter_names(const std::vector<ResultSet>& sets) {
  std::set<std::string> names;
  for (const ResultSet& rs : sets)
    for (const CaseView& c : rs.views)
      for (const auto& side : c.counters.side)
        for (const auto& [k, v] : side) names.insert(k);
  return names;
}

// Why a result set has no such counter ("perf_event_open: ENOENT ..."), from the first case whose
// counters.unavailable names it; "" if none does.
std::string unavailable_reason(const ResultSet& rs, const std::string& metric_id) {
  const auto colon = metric_id.find(':');
  const std::string event = colon == std::string::npos ? metric_id : metric_id.substr(colon + 1);
  for (const CaseView& c : rs.views)
    if (auto it = c.counters.unavailable.find(event); it != c.counters.unavailable.end())
      return it->second;
  return "";
}

}  // namespace

Metric parse_metric(std::string_view id_view) {
  const std::string id(id_view);
  if (id.empty()) throw std::invalid_argument("empty metric name");
  switch (kind_of(id)) {
    case MetricKind::kRtt:
      return {id, id + " RTT", "ns", false};
    case MetricKind::kWakeup:
      return {id, "one-way wakeup " + id.substr(7), "ns", false};
    case MetricKind::kTps:
      return {id, "transactions per second", "tx/s", true};
    case MetricKind::kCounter:
      break;
  }
  const auto colon = id.find(':');
  if (colon != std::string::npos) {
    const std::string side = id.substr(0, colon);
    if ((side != "waker" && side != "wakee") || colon + 1 == id.size()) {
      throw std::invalid_argument("metric \"" + id + "\": a side prefix is waker: or wakee:");
    }
    return {id, id.substr(colon + 1) + " per round trip (" + side + ")", "events", false};
  }
  return {id, id + " per round trip (waker + wakee)", "events", false};
}

bool CompareRow::in_all() const {
  return std::all_of(cells.begin(), cells.end(), [](const CompareCell& c) { return c.present; });
}

namespace {

// Without --noise, the floor the baseline set stored (`wakebench run --noise FILE`).
CompareOptions resolve_options(const std::vector<ResultSet>& sets, const CompareOptions& given) {
  CompareOptions options = given;
  if (!options.noise && sets[0].set.noise)
    options.noise =
        noise_from_json(nlohmann::json(*sets[0].set.noise), "results " + sets[0].path + ": noise");
  return options;
}

// Timings of the topology lab (qemu TCG) are emulated: never held against a real machine's.
void refuse_emulated_mix(const std::vector<ResultSet>& sets) {
  const auto emulated = [](const ResultSet& rs) { return is_emulated(rs.set); };
  for (std::size_t s = 1; s < sets.size(); ++s)
    if (emulated(sets[s]) != emulated(sets[0])) {
      const ResultSet& e = emulated(sets[s]) ? sets[s] : sets[0];
      const ResultSet& r = emulated(sets[s]) ? sets[0] : sets[s];
      throw std::runtime_error("compare: " + e.path +
                               " holds EMULATED timings (topology lab) and " + r.path +
                               " does not: not comparable");
    }
}

void label_sets(const std::vector<ResultSet>& sets, Comparison& cmp) {
  std::map<std::string, int> label_uses;
  for (const ResultSet& rs : sets) ++label_uses[stem_label(rs.path)];
  for (std::size_t s = 0; s < sets.size(); ++s) {
    std::string label = stem_label(sets[s].path);
    if (label_uses[label] > 1) label = "#" + std::to_string(s + 1) + ":" + label;
    const bool complete = sets[s].set.is_complete();
    cmp.sets.push_back({label, sets[s].path, sets[s].machine, complete});
    if (!complete) {
      cmp.warnings.push_back(label +
                             " is an incomplete run (\"complete\": false): its missing "
                             "cases show as one-sided");
    }
  }
}

// The cell of case `c`: the metric, its per-repetition values without the repetitions that did
// not sleep, and a kernel case's rounds by observed class.
void fill_cell(const CaseView& c, const Metric& metric, CompareCell& cell) {
  cell.present = true;
  cell.status = c.status;
  if (!c.ok()) return;
  Extracted e = extract(c, metric.id);
  cell.value = e.value;
  cell.repetitions_total = e.repetitions.size();
  cell.schedstat = c.schedstat;
  cell.schedstat_round_trips =
      static_cast<double>(c.repetitions.size()) * static_cast<double>(c.round_trips + c.warmup);
  for (std::size_t i = 0; i < e.repetitions.size(); ++i) {
    const RepetitionView* info = i < c.rep_info.size() ? &c.rep_info[i] : nullptr;
    if (info && info->marked) {
      ++cell.marked;
      continue;
    }
    cell.repetitions.push_back(e.repetitions[i]);
    if (i < c.ab_round.size()) cell.rounds.push_back(c.ab_round[i]);
    if (!info || info->classes.empty()) continue;
    RepetitionTally tally;
    for (const ClassSample& k : info->classes)
      tally.push_back({k.cls, k.round_trips, k.mean_ns, k.median_ns});
    cell.classes.push_back(std::move(tally));
  }
  if (cell.rounds.size() != cell.repetitions.size()) cell.rounds.clear();
  cell.sd_pct = sd_percent(cell.repetitions);
}

void collect_rows(const std::vector<ResultSet>& sets, Comparison& cmp) {
  std::map<std::string, std::size_t> row_of;
  for (std::size_t s = 0; s < sets.size(); ++s) {
    std::set<std::string> seen;
    for (const CaseView& c : sets[s].views) {
      const std::string key = c.key();
      if (!seen.insert(key).second) {
        cmp.warnings.push_back(cmp.sets[s].label + ": case " + c.name +
                               " occurs more than once with the same params; the first is used");
        continue;
      }
      auto [it, inserted] = row_of.try_emplace(key, cmp.rows.size());
      if (inserted) {
        cmp.rows.push_back({.key = key,
                            .mechanism = c.mechanism,
                            .mode = std::string(mode_id(c.mode)),
                            .placement = c.placement,
                            .pair = c.pair,
                            .params = c.params_json,
                            .suffix = c.suffix,
                            .cells = std::vector<CompareCell>(sets.size())});
      }
      fill_cell(c, cmp.options.metric, cmp.rows[it->second].cells[s]);
    }
  }
}

// The values of two cells on the log scale, paired by round when both come from one --ab run.
std::optional<EffectSamples> log_samples(const CompareCell& base, const CompareCell& c,
                                         bool paired) {
  EffectSamples s;
  s.paired = paired && !base.rounds.empty() && !c.rounds.empty();
  const auto logs = [](const std::vector<double>& v, std::vector<double>& out) {
    for (double x : v) {
      if (!(x > 0)) return false;
      out.push_back(std::log(x));
    }
    return true;
  };
  if (!s.paired) {
    if (!logs(base.repetitions, s.base) || !logs(c.repetitions, s.other)) return std::nullopt;
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
    if (!logs(a, s.base) || !logs(b, s.other)) return std::nullopt;
  }
  if (s.base.size() < 2 || s.other.size() < 2) return std::nullopt;
  return s;
}

// Ratio, change, the test and the interval of every cell against the base.
void test_cells(Comparison& cmp, bool paired,
                std::map<std::pair<std::size_t, std::size_t>, int>& too_few) {
  const CompareOptions& o = cmp.options;
  for (CompareRow& row : cmp.rows) {
    const CompareCell& base = row.cells[0];
    if (!base.value || *base.value == 0) continue;
    for (std::size_t s = 1; s < row.cells.size(); ++s) {
      CompareCell& c = row.cells[s];
      if (!c.value) continue;
      c.ratio = *c.value / *base.value;
      c.change_pct = (o.metric.higher_is_better ? *c.ratio - 1.0 : 1.0 - *c.ratio) * 100.0;
      if (o.noise) c.aa_floor_pct = o.noise->floor(row.key, o.metric.id);
      const auto samples = log_samples(base, c, paired);
      if (!samples) continue;
      const EffectTest t = test_effect(*samples, o.confidence);
      c.test = CellTest{t.p, samples->paired ? CellTestKind::kPairedT
                             : t.exact       ? CellTestKind::kExact
                                             : CellTestKind::kNormal};
      c.interval =
          ShiftInterval{std::exp(t.estimate), std::exp(t.lo), std::exp(t.hi), o.confidence};
      if (samples->base.size() < o.min_repetitions || samples->other.size() < o.min_repetitions)
        ++too_few[{samples->base.size(), samples->other.size()}];
    }
  }
}

// A set with cases that shares none with the baseline compares nothing: refused in one line. (A
// set with no case yet, as run --until-decided's before its first case, is not refused.)
void refuse_disjoint(const Comparison& cmp) {
  // Some row holds a case of set a and one of set b (a == b: set a holds a case).
  const auto some_row_holds = [&](std::size_t a, std::size_t b) {
    return std::any_of(cmp.rows.begin(), cmp.rows.end(), [&](const CompareRow& r) {
      return r.cells[a].present && r.cells[b].present;
    });
  };
  for (std::size_t s = 1; s < cmp.sets.size(); ++s)
    if (some_row_holds(s, s) && !some_row_holds(0, s))
      throw std::runtime_error("compare: " + cmp.sets[s].path +
                               " shares no case with the baseline " + cmp.sets[0].path +
                               " (case names, params and placements differ)");
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

// BH over the tested cases of one set against the base, then each cell's verdict.
void decide_cells(Comparison& cmp, bool paired) {
  const CompareOptions& o = cmp.options;
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
    std::vector<CompareRow*> tested;
    std::vector<double> p;
    for (CompareRow& row : cmp.rows)
      if (row.cells[s].test) {
        tested.push_back(&row);
        p.push_back(row.cells[s].test->p_value);
      }
    const std::vector<double> q = bh_qvalues(p);
    for (std::size_t i = 0; i < tested.size(); ++i) {
      CompareCell& c = tested[i]->cells[s];
      c.q_value = q[i];
      // The floor holds the case's own change (its statistic over every repetition), as the A/A
      // sets measured it (analysis/noise.h).
      DecisionInput in{*log_samples(tested[i]->cells[0], c, paired), q[i], std::log(*c.ratio),
                       c.aa_floor_pct.value_or(0.0) / 100, o.base_fixed};
      c.decision = decide(in, o.rules(), o.look_level());
    }
    if (kind_of(o.metric.id) == MetricKind::kCounter) continue;  // shown, never tested
    for (CompareRow& row : cmp.rows)
      if (CompareCell& c = row.cells[s]; c.ratio && !c.test) c.decision = untested(row.cells[0], c);
  }
}

void no_metric_error(const std::vector<ResultSet>& sets, const Metric& metric) {
  std::string msg = "metric \"" + metric.id + "\" occurs in no ok case of the result sets";
  if (kind_of(metric.id) == MetricKind::kCounter) {
    std::string names;
    for (const std::string& n : counter_names(sets)) names += (names.empty() ? "" : ", ") + n;
    msg += names.empty() ? " (they record no counters)" : " (counters recorded: " + names + ")";
    for (const ResultSet& rs : sets) {
      if (const std::string why = unavailable_reason(rs, metric.id); !why.empty()) {
        msg += "; " + rs.path + ": " + why;
      }
    }
  }
  throw std::runtime_error(msg);
}

void noise_warnings(Comparison& cmp) {
  const CompareOptions& o = cmp.options;
  int without = 0;
  for (const CompareRow& row : cmp.rows)
    for (std::size_t s = 1; s < row.cells.size(); ++s)
      without += row.cells[s].ratio && !row.cells[s].aa_floor_pct;
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
// looks like (host load, frequency): on the 2-vCPU VM of README.md#aa-benchmark-of-compare, 2 of
// 10 A/A pairs moved every case by 10-18 % one way. Said beside the verdicts, which it does not
// change: a patch may also slow every case.
void common_mode_warnings(Comparison& cmp) {
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
    std::vector<double> changes;
    int different = 0, up = 0, down = 0;
    for (const CompareRow& row : cmp.rows) {
      const CompareCell& c = row.cells[s];
      if (!c.decision || !c.change_pct) continue;
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

// Both sets come from one `wakebench run --ab` run: their repetitions pair by round.
bool one_ab_run(const std::vector<ResultSet>& sets) {
  for (const ResultSet& rs : sets)
    if (!rs.set.ab || rs.set.ab->id != sets[0].set.ab->id) return false;
  return true;
}

}  // namespace

bool CompareCell::slower() const {
  return decision && decision->verdict == CompareVerdict::kDifferent && change_pct &&
         *change_pct < 0;
}

std::map<CompareVerdict, int> Comparison::counts(std::size_t set) const {
  std::map<CompareVerdict, int> n{
      {CompareVerdict::kDifferent, 0}, {CompareVerdict::kSame, 0}, {CompareVerdict::kUnknown, 0}};
  for (const CompareRow& row : rows)
    if (const auto& d = row.cells[set].decision) ++n[d->verdict];
  return n;
}

int Comparison::slower(std::size_t set) const {
  int n = 0;
  for (const CompareRow& row : rows) n += row.cells[set].slower();
  return n;
}

Comparison compare_result_sets(const std::vector<ResultSet>& sets, const CompareOptions& given) {
  if (sets.size() < 2) throw std::invalid_argument("compare needs at least two result sets");
  refuse_emulated_mix(sets);
  Comparison cmp;
  cmp.options = resolve_options(sets, given);
  label_sets(sets, cmp);
  collect_rows(sets, cmp);
  refuse_disjoint(cmp);
  const bool paired = one_ab_run(sets);
  std::map<std::pair<std::size_t, std::size_t>, int> too_few;  // (n base, n other) -> cases
  test_cells(cmp, paired, too_few);
  decide_cells(cmp, paired);
  explain_kernel_cases(cmp);
  bool any_value = false, any_without_reps = false;
  for (const CompareRow& row : cmp.rows)
    for (const CompareCell& c : row.cells) {
      any_value = any_value || c.value.has_value();
      any_without_reps = any_without_reps || (c.value && c.repetitions_total < 2);
    }
  if (!any_value) no_metric_error(sets, cmp.options.metric);
  const std::string& id = cmp.options.metric.id;
  if (kind_of(id) == MetricKind::kCounter) {
    cmp.warnings.push_back("counters are counted in one pass of their own per case, so \"" + id +
                           "\" has no per-repetition values: shown, never tested");
  } else if (any_without_reps) {
    cmp.warnings.push_back("some cases have fewer than 2 per-repetition values of \"" + id +
                           "\" (result sets of schema 1 keep them for median, p99, mean and tps "
                           "only): no sd%, q-value, interval or verdict for them");
  }
  if (cmp.options.noise) noise_warnings(cmp);
  too_few_warnings(cmp, too_few);
  marked_warnings(cmp);
  common_mode_warnings(cmp);
  if (paired)
    cmp.warnings.push_back(
        "the sets come from one run --ab run: each case is tested on its "
        "per-round differences (paired t test and interval)");
  return cmp;
}

}  // namespace wb
