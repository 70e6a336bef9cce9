#include "analysis/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

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
std::set<std::string> counter_names(const std::vector<const ResultSet*>& sets) {
  std::set<std::string> names;
  for (const ResultSet* rs : sets)
    for (const CaseView& c : rs->views)
      for (const auto& side : c.counters.side)
        for (const auto& [k, v] : side) names.insert(k);
  return names;
}

// The event of a counter metric ("waker:cycles" -> "cycles").
std::string event_of(const std::string& metric_id) {
  const auto colon = metric_id.find(':');
  return colon == std::string::npos ? metric_id : metric_id.substr(colon + 1);
}

// Why a result set has no such counter ("perf_event_open: ENOENT ..."), from the first case whose
// counters.unavailable names it; "" if none does.
std::string unavailable_reason(const ResultSet& rs, const std::string& metric_id) {
  const std::string event = event_of(metric_id);
  for (const CaseView& c : rs.views)
    if (auto it = c.counters.unavailable.find(event); it != c.counters.unavailable.end())
      return it->second;
  return "";
}

// What the sets' counter `metric_id` is when it is not the event it names (an emulated set's
// cycles: case_view.h's CounterView::notes), from the first case that notes it; "" if none does.
std::string counter_note(const std::vector<const ResultSet*>& sets, const std::string& metric_id) {
  const std::string event = event_of(metric_id);
  for (const ResultSet* rs : sets)
    for (const CaseView& c : rs->views)
      if (auto it = c.counters.notes.find(event); it != c.counters.notes.end()) return it->second;
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
    return {id, id.substr(colon + 1) + " per round trip (" + side + ")", "events", false, true};
  }
  return {id, id + " per round trip (waker + wakee)", "events", false, true};
}

bool CompareRow::in_all() const {
  return std::all_of(cells.begin(), cells.end(), [](const CompareCell& c) { return c.present; });
}

std::string_view level_id(CompareLevel level) {
  return level == CompareLevel::kRuns ? "runs" : "repetitions";
}

namespace {

using Runs = std::vector<const ResultSet*>;

Runs all_runs(const std::vector<CompareSide>& sides) {
  Runs out;
  for (const CompareSide& side : sides) out.insert(out.end(), side.runs.begin(), side.runs.end());
  return out;
}

// Without --noise, the floor the baseline set stored (`wakebench run --noise FILE`).
CompareOptions resolve_options(const ResultSet& base, const CompareOptions& given) {
  CompareOptions options = given;
  if (!options.noise && base.set.noise)
    options.noise =
        noise_from_json(nlohmann::json(*base.set.noise), "results " + base.path + ": noise");
  return options;
}

// Timings of the topology lab (qemu TCG) are emulated: never held against a real machine's.
void refuse_emulated_mix(const Runs& runs) {
  const auto emulated = [](const ResultSet* rs) { return rs->machine.emulated; };
  for (const ResultSet* other : runs)
    if (emulated(other) != emulated(runs[0])) {
      const ResultSet* e = emulated(other) ? other : runs[0];
      const ResultSet* r = emulated(other) ? runs[0] : other;
      throw std::runtime_error("compare: " + e->path +
                               " holds EMULATED timings (topology lab) and " + r->path +
                               " does not: not comparable");
    }
}

std::set<std::string> case_keys(const ResultSet& rs) {
  std::set<std::string> keys;
  for (const CaseView& c : rs.views) keys.insert(c.key());
  return keys;
}

// The runs of one side: one machine, one config, the same cases, no set twice.
void check_side(const CompareSide& side, std::size_t index) {
  const std::string where = "compare: side " + std::to_string(index + 1);
  if (side.runs.empty()) throw std::runtime_error(where + " has no result set");
  const ResultSet& a = *side.runs[0];
  for (std::size_t k = 1; k < side.runs.size(); ++k) {
    const ResultSet& b = *side.runs[k];
    const std::string pair = where + ": " + a.path + " and " + b.path;
    if (b.machine.hostname != a.machine.hostname)
      throw std::runtime_error(pair + " come from different machines (\"" + a.machine.hostname +
                               "\", \"" + b.machine.hostname + "\")");
    if (b.machine.config_hash != a.machine.config_hash)
      throw std::runtime_error(pair + " ran different configs (config_hash)");
    if (case_keys(b) != case_keys(a))
      throw std::runtime_error(pair + " hold different cases (a side's runs run one suite)");
    for (std::size_t j = 0; j < k; ++j)
      if (side.runs[j]->set == b.set)
        throw std::runtime_error(where + ": " + side.runs[j]->path + " and " + b.path +
                                 " are the same result set (a side's runs are separate runs)");
  }
}

// The runs' common file stem ("runs0-a" of runs0-a0, runs0-a1), else the first's and a count.
std::string runs_label(const CompareSide& side) {
  std::string common = stem_label(side.runs[0]->path);
  for (const ResultSet* rs : side.runs) {
    const std::string stem = stem_label(rs->path);
    std::size_t n = 0;
    while (n < common.size() && n < stem.size() && common[n] == stem[n]) ++n;
    common.resize(n);
  }
  while (!common.empty() && std::string("-_.").find(common.back()) != std::string::npos)
    common.pop_back();
  if (side.runs.size() == 1 || !common.empty())
    return side.runs.size() == 1 ? common : common + "*";
  return stem_label(side.runs[0]->path) + "+" + std::to_string(side.runs.size() - 1);
}

RunOrigin origin_of(const ResultSetDoc& doc) {
  RunOrigin o;
  if (doc.config) o.config = doc.config->path.value_or(doc.config->name.value_or(""));
  if (doc.run) {
    o.seed = doc.run->order_seed;
    o.command = doc.run->command;
  }
  if (doc.ab) {
    o.ab_label = doc.ab->label;
    o.ab_setting = doc.ab->setting;
    o.ab_settings = doc.ab->settings;
  }
  if (doc.until_decided) o.until_decided_base = doc.until_decided->base;
  return o;
}

CompareSet side_set(const CompareSide& side, const std::string& label) {
  CompareSet set{label, "", side.runs[0]->machine, true, {}};
  for (const ResultSet* rs : side.runs) {
    set.origins.push_back(origin_of(rs->set));
    set.runs.push_back(rs->path);
    set.path += (set.path.empty() ? "" : ", ") + rs->path;
    set.complete = set.complete && rs->set.is_complete();
  }
  return set;
}

void label_sets(const std::vector<CompareSide>& sides, Comparison& cmp) {
  std::map<std::string, int> label_uses;
  std::vector<std::string> labels;
  for (const CompareSide& side : sides) {
    labels.push_back(side.label.empty() ? runs_label(side) : side.label);
    ++label_uses[labels.back()];
  }
  for (std::size_t s = 0; s < sides.size(); ++s) {
    std::string label = labels[s];
    if (label_uses[label] > 1) label = "#" + std::to_string(s + 1) + ":" + label;
    cmp.sets.push_back(side_set(sides[s], label));
    if (!cmp.sets.back().complete) {
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
  cell.run_count = 1;
  Extracted e = extract(c, metric.id);
  cell.value = e.value;
  cell.repetitions_total = e.repetitions.size();
  cell.schedstat = c.schedstat;
  cell.wakee_ran = c.observed.histogram;
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

// The geometric mean of the runs' values (the arithmetic one when one is not > 0).
double mean_value(const std::vector<double>& v) {
  const bool positive = std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  double sum = 0;
  for (double x : v) sum += positive ? std::log(x) : x;
  sum /= static_cast<double>(v.size());
  return positive ? std::exp(sum) : sum;
}

// `from`'s round trips per class added to `to`'s, classes in first-appearance order.
void add_classes(const std::vector<std::pair<std::string, double>>& from,
                 std::vector<std::pair<std::string, double>>& to) {
  for (const auto& [cls, n] : from) {
    auto it = std::find_if(to.begin(), to.end(), [&](const auto& t) { return t.first == cls; });
    if (it == to.end())
      to.emplace_back(cls, n);
    else
      it->second += n;
  }
}

// One side's cell from its runs' cells: their repetitions together, each run's kept apart for
// the run level, the value the mean of the runs' (geometric), the first ok run's schedstat.
void merge_runs(const std::vector<CompareCell>& runs, CompareCell& cell) {
  cell.present = true;
  cell.status = runs.front().status;
  cell.run_count = 0;
  std::vector<double> values;
  for (const CompareCell& r : runs) {
    if (r.status != CaseStatus::kOk) continue;
    if (cell.run_count++ == 0) {
      cell.status = CaseStatus::kOk;
      cell.schedstat = r.schedstat;
      cell.schedstat_round_trips = r.schedstat_round_trips;
    }
    if (r.value) values.push_back(*r.value);
    cell.repetitions.insert(cell.repetitions.end(), r.repetitions.begin(), r.repetitions.end());
    cell.classes.insert(cell.classes.end(), r.classes.begin(), r.classes.end());
    add_classes(r.wakee_ran, cell.wakee_ran);
    cell.marked += r.marked;
    cell.repetitions_total += r.repetitions_total;
    if (!r.repetitions.empty()) cell.runs.push_back(r.repetitions);
  }
  if (!values.empty() && values.size() == cell.run_count) cell.value = mean_value(values);
  cell.run_sd_pct = sd_percent(values);
  if (cell.runs.size() < 2) cell.runs.clear();
  cell.sd_pct = sd_percent(cell.repetitions);
}

void fill_side_cell(const std::vector<const CaseView*>& views, const Metric& metric,
                    CompareCell& cell) {
  if (views.size() == 1) return fill_cell(*views[0], metric, cell);
  std::vector<CompareCell> per_run(views.size());
  for (std::size_t k = 0; k < views.size(); ++k) fill_cell(*views[k], metric, per_run[k]);
  merge_runs(per_run, cell);
}

std::size_t row_for(const CaseView& c, std::size_t sets, Comparison& cmp,
                    std::map<std::string, std::size_t>& row_of) {
  auto [it, inserted] = row_of.try_emplace(c.key(), cmp.rows.size());
  if (inserted) {
    cmp.rows.push_back({.key = c.key(),
                        .mechanism = c.mechanism,
                        .mode = std::string(mode_id(c.mode)),
                        .placement = c.placement,
                        .pair = c.pair,
                        .params = c.params_json,
                        .suffix = c.suffix,
                        .cells = std::vector<CompareCell>(sets)});
  }
  return it->second;
}

void collect_rows(const std::vector<CompareSide>& sides, Comparison& cmp) {
  std::map<std::string, std::size_t> row_of;
  for (std::size_t s = 0; s < sides.size(); ++s) {
    std::map<std::size_t, std::vector<const CaseView*>> of_row;
    for (const ResultSet* run : sides[s].runs) {
      std::set<std::string> seen;
      for (const CaseView& c : run->views) {
        if (!seen.insert(c.key()).second) {
          cmp.warnings.push_back(cmp.sets[s].label + ": case " + c.name +
                                 " occurs more than once with the same params in " + run->path +
                                 "; the first is used");
          continue;
        }
        of_row[row_for(c, sides.size(), cmp, row_of)].push_back(&c);
      }
    }
    for (const auto& [row, views] : of_row)
      fill_side_cell(views, cmp.options.metric, cmp.rows[row].cells[s]);
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

// Each other set against the base: its family of cells, with the A/A floors of the noise file.
void judge_sets(Comparison& cmp, bool paired) {
  const CompareOptions& o = cmp.options;
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
    std::vector<CellPair> family;
    for (CompareRow& row : cmp.rows) {
      CompareCell& c = row.cells[s];
      if (o.noise && c.value) c.aa_floor_pct = o.noise->floor(row.key, o.metric.id);
      family.push_back({&row.cells[0], &c});
    }
    judge_family(family, o, paired);
  }
}

void no_metric_error(const Runs& sets, const Metric& metric) {
  std::string msg = "metric \"" + metric.id + "\" occurs in no ok case of the result sets";
  if (kind_of(metric.id) == MetricKind::kCounter) {
    std::string list;
    for (const std::string& n : counter_names(sets)) list += (list.empty() ? "" : ", ") + n;
    msg += list.empty() ? " (they record no counters)" : " (counters recorded: " + list + ")";
    for (const ResultSet* rs : sets) {
      if (const std::string why = unavailable_reason(*rs, metric.id); !why.empty()) {
        msg += "; " + rs->path + ": " + why;
      }
    }
  }
  throw std::runtime_error(msg);
}

// Both sets come from one `wakebench run --ab` run, one run a side: their repetitions pair by
// round.
bool one_ab_run(const std::vector<CompareSide>& sides) {
  const ResultSet& first = *sides[0].runs[0];
  for (const CompareSide& side : sides)
    if (side.runs.size() != 1 || !side.runs[0]->set.ab ||
        side.runs[0]->set.ab->id != first.set.ab->id)
      return false;
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

CompareCell case_cell(const CaseView& c, const Metric& metric) {
  CompareCell cell;
  fill_cell(c, metric, cell);
  return cell;
}

Comparison compare_result_sets(const std::vector<ResultSet>& sets, const CompareOptions& given) {
  std::vector<CompareSide> sides;
  for (const ResultSet& rs : sets) sides.push_back({"", {&rs}});
  return compare_sides(sides, given);
}

namespace {

void metric_warnings(const Runs& runs, Comparison& cmp) {
  bool any_value = false, any_without_reps = false;
  for (const CompareRow& row : cmp.rows)
    for (const CompareCell& c : row.cells) {
      any_value = any_value || c.value.has_value();
      any_without_reps = any_without_reps || (c.value && c.repetitions_total < 2);
    }
  if (!any_value) no_metric_error(runs, cmp.options.metric);
  const std::string& id = cmp.options.metric.id;
  if (kind_of(id) == MetricKind::kCounter) {
    cmp.warnings.push_back("counters are counted in one pass of their own per case, so \"" + id +
                           "\" has no per-repetition values: shown, never tested");
    if (const std::string note = counter_note(runs, id); !note.empty())
      cmp.warnings.push_back(id + ": " + note);
  } else if (any_without_reps) {
    cmp.warnings.push_back("some cases have fewer than 2 per-repetition values of \"" + id +
                           "\" (result sets of schema 1 keep them for median, p99, mean and tps "
                           "only): no sd%, q-value, interval or verdict for them");
  }
}

}  // namespace

Comparison compare_sides(const std::vector<CompareSide>& sides, const CompareOptions& given) {
  if (sides.size() < 2) throw std::invalid_argument("compare needs at least two result sets");
  for (std::size_t s = 0; s < sides.size(); ++s) check_side(sides[s], s);
  const Runs runs = all_runs(sides);
  refuse_emulated_mix(runs);
  Comparison cmp;
  cmp.options = resolve_options(*sides[0].runs[0], given);
  label_sets(sides, cmp);
  collect_rows(sides, cmp);
  refuse_disjoint(cmp);
  const bool paired = one_ab_run(sides);
  judge_sets(cmp, paired);
  explain_kernel_cases(cmp);
  metric_warnings(runs, cmp);
  verdict_warnings(cmp, paired);
  return cmp;
}

}  // namespace wb
