// compare's machine formats: one CSV row per cell, and the JSON of the whole comparison
// (docs/cli.md#compare-the-verdict).
#include <cmath>
#include <sstream>

#include "analysis/compare/compare_render.h"
#include "common/util/text.h"

namespace wb {
namespace {

// ---- csv --------------------------------------------------------------------------------------

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string opt_number(const std::optional<double>& v) { return v ? fmt("%.6g", *v) : ""; }

// A cell's verdict and the numbers behind it in the metric's percent (+ = better).
struct VerdictFigures {
  std::string verdict, why, needed_for;  // "" when there is no verdict
  std::optional<std::pair<double, double>> equivalence_pct;
  std::optional<double> detectable_pct;
  std::optional<std::size_t> needed, needed_base, needed_per_run;
  std::string level;                                // "" when the cell was not tested
  std::optional<double> run_sd_pct, within_sd_pct;  // the run level's sd at each level
};

VerdictFigures figures_of(const CompareCell& c, const Metric& m) {
  VerdictFigures f;
  if (c.test) f.level = level_id(c.level);
  if (c.levels) {
    f.run_sd_pct = 100 * std::sqrt(c.levels->between);
    f.within_sd_pct = 100 * std::sqrt(c.levels->within);
  }
  if (!c.decision) return f;
  const Decision& d = *c.decision;
  f.verdict = verdict_id(d.verdict);
  f.why = d.why;
  f.equivalence_pct = change_pct_of(d.equiv_lo, d.equiv_hi, m);
  if (d.detectable) f.detectable_pct = std::expm1(*d.detectable) * 100;
  f.needed = d.needed;
  f.needed_base = d.needed_base;
  f.needed_per_run = d.needed_per_run;
  if (d.needed_for) f.needed_for = verdict_id(*d.needed_for);
  return f;
}

std::string test_name(const CompareCell& c) {
  if (!c.test) return "";
  switch (c.test->kind) {
    case CellTestKind::kPairedT:
      return "paired-t";
    case CellTestKind::kExact:
      return "exact";
    case CellTestKind::kNormal:
      return "normal";
    case CellTestKind::kWelchRuns:
      return "welch-runs";
  }
  return "";
}

}  // namespace

std::string format_csv(const Comparison& cmp) {
  std::ostringstream out;
  out << "mechanism,mode,placement,pair,params,metric,set,file,status,value,repetitions,marked,"
         "sd_pct,ratio,change_pct,change_lo_pct,change_hi_pct,p_value,q_value,test,aa_floor_pct,"
         "verdict,equivalence_lo_pct,equivalence_hi_pct,detectable_pct,needed,needed_for,"
         "needed_base,why,level,runs,run_sd_pct,within_run_sd_pct,needed_repetitions_per_run\n";
  const auto count = [](const std::optional<std::size_t>& v) {
    return v ? std::to_string(*v) : std::string();
  };
  const auto pair = [](const std::optional<std::pair<double, double>>& v) {
    return v ? fmt("%.6g", v->first) + "," + fmt("%.6g", v->second) : std::string(",");
  };
  for (const CompareRow& r : cmp.rows) {
    for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
      const CompareCell& c = r.cells[s];
      const VerdictFigures f = figures_of(c, cmp.options.metric);
      out << csv_field(r.mechanism) << ',' << csv_field(r.mode) << ',' << csv_field(r.placement)
          << ',' << csv_field(r.pair) << ',' << csv_field(format_params(r.params)) << ','
          << csv_field(cmp.options.metric.id) << ',' << csv_field(cmp.sets[s].label) << ','
          << csv_field(cmp.sets[s].path) << ',' << (c.present ? status_id(c.status) : "missing")
          << ',' << opt_number(c.value) << ',' << c.repetitions.size() << ',' << c.marked << ','
          << opt_number(c.sd_pct) << ',' << opt_number(c.ratio) << ',' << opt_number(c.change_pct)
          << ',' << pair(change_interval(c, cmp.options.metric)) << ','
          << (c.test ? fmt("%.6g", c.test->p_value) : "") << ',' << opt_number(c.q_value) << ','
          << test_name(c) << ',' << opt_number(c.aa_floor_pct) << ',' << f.verdict << ','
          << pair(f.equivalence_pct) << ',' << opt_number(f.detectable_pct) << ','
          << count(f.needed) << ',' << f.needed_for << ',' << count(f.needed_base) << ','
          << csv_field(f.why) << ',' << f.level << ',' << (c.present ? c.run_count : 0) << ','
          << opt_number(f.run_sd_pct) << ',' << opt_number(f.within_sd_pct) << ','
          << count(f.needed_per_run) << "\n";
    }
  }
  return out.str();
}

namespace {

// ---- json -------------------------------------------------------------------------------------

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json cell_json(const Comparison& cmp, const CompareCell& c, std::size_t s) {
  const Metric& m = cmp.options.metric;
  const VerdictFigures f = figures_of(c, m);
  const auto opt_count = [](const std::optional<std::size_t>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  const auto opt_text = [](const std::string& t) {
    return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t);
  };
  nlohmann::json cell = {
      {"set", cmp.sets[s].label},
      {"present", c.present},
      {"status", c.present ? nlohmann::json(status_id(c.status)) : nullptr},
      {"value", opt_json(c.value)},
      {"repetitions", c.repetitions},
      {"marked", c.marked},
      {"sd_pct", opt_json(c.sd_pct)},
      {"ratio", opt_json(c.ratio)},
      {"change_pct", opt_json(c.change_pct)},
      {"p_value", c.test ? nlohmann::json(c.test->p_value) : nullptr},
      {"test", opt_text(test_name(c))},
      {"q_value", opt_json(c.q_value)},
      {"change_interval_pct", nullptr},
      {"interval_confidence", c.interval ? nlohmann::json(c.interval->confidence) : nullptr},
      {"aa_floor_pct", opt_json(c.aa_floor_pct)},
      {"verdict", opt_text(f.verdict)},
      {"equivalence_interval_pct", nullptr},
      {"detectable_pct", opt_json(f.detectable_pct)},
      {"needed", opt_count(f.needed)},
      {"needed_for", opt_text(f.needed_for)},
      {"needed_base", opt_count(f.needed_base)},
      {"why", opt_text(f.why)},
      {"level", opt_text(f.level)},
      {"runs", c.present ? c.run_count : 0},
      {"run_sd_pct", opt_json(f.run_sd_pct)},
      {"within_run_sd_pct", opt_json(f.within_sd_pct)},
      {"needed_repetitions_per_run", opt_count(f.needed_per_run)}};
  if (const auto ci = change_interval(c, m)) cell["change_interval_pct"] = {ci->first, ci->second};
  if (f.equivalence_pct)
    cell["equivalence_interval_pct"] = {f.equivalence_pct->first, f.equivalence_pct->second};
  return cell;
}

nlohmann::json why_json(const Comparison& cmp) {
  nlohmann::json out = nlohmann::json::array();
  for (const WhyChanged& w : cmp.why) {
    const Decomposition& d = *w.parts;
    nlohmann::json classes = nlohmann::json::array(), sched = nlohmann::json::array();
    for (const ClassShift& c : d.classes) {
      nlohmann::json k = {{"class", c.cls},
                          {"share", {c.share_a, c.share_b}},
                          {"mean_ns", {c.mean_a, c.mean_b}},
                          {"median_ns", nullptr},
                          {"verdict", nullptr}};
      const auto& med = w.class_median_ns.at(c.cls);
      k["median_ns"] = {std::isnan(med.first) ? nlohmann::json() : nlohmann::json(med.first),
                        std::isnan(med.second) ? nlohmann::json() : nlohmann::json(med.second)};
      for (const ClassShareVerdict& v : w.shares)
        if (v.cls == c.cls) k["verdict"] = verdict_id(v.decision.verdict);
      classes.push_back(std::move(k));
    }
    for (const SchedstatRow& r : w.schedstat.rows)
      sched.push_back({{"domain", r.domain},
                       {"counter", r.counter},
                       {"per_round_trip", {opt_json(r.base), opt_json(r.other)}}});
    out.push_back({{"key", cmp.rows[w.row].key},
                   {"set", cmp.sets[w.set].label},
                   {"mean_ns", {d.mean_a, d.mean_b}},
                   {"placement_ns", d.placement},
                   {"placement_interval_ns", {d.placement_ci.lo, d.placement_ci.hi}},
                   {"cost_ns", d.cost},
                   {"cost_interval_ns", {d.cost_ci.lo, d.cost_ci.hi}},
                   {"confidence", d.confidence},
                   {"classes", classes},
                   {"schedstat", sched},
                   {"schedstat_off", {w.schedstat.base_off, w.schedstat.other_off}}});
  }
  return out;
}

nlohmann::json summary_json(const Comparison& cmp) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
    const auto n = cmp.counts(s);
    out.push_back({{"set", cmp.sets[s].label},
                   {"DIFFERENT", n.at(CompareVerdict::kDifferent)},
                   {"slower", cmp.slower(s)},
                   {"SAME", n.at(CompareVerdict::kSame)},
                   {"UNKNOWN", n.at(CompareVerdict::kUnknown)}});
  }
  return out;
}

}  // namespace

std::string format_json(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  const CompareOptions& o = cmp.options;
  nlohmann::json j = {{"schema", "wakebench-compare"},
                      {"schema_version", 2},
                      {"metric",
                       {{"id", m.id},
                        {"label", m.label},
                        {"unit", m.unit},
                        {"higher_is_better", m.higher_is_better}}},
                      {"alpha", o.alpha},
                      {"level", o.look_level()},
                      {"power", o.power},
                      {"margin", o.margin},
                      {"confidence", o.confidence},
                      {"noise", o.noise ? nlohmann::json(o.noise->path) : nlohmann::json(nullptr)},
                      {"min_repetitions", o.min_repetitions},
                      {"summary", summary_json(cmp)}};
  j["sets"] = nlohmann::json::array();
  for (const CompareSet& s : cmp.sets) {
    nlohmann::json machine = {{"hostname", s.machine.hostname},
                              {"cpu_model", s.machine.cpu_model},
                              {"kernel_release", s.machine.kernel_release},
                              {"topology_source", s.machine.topology_source},
                              {"counts", format_counts(s.machine)}};
    j["sets"].push_back({{"label", s.label},
                         {"path", s.path},
                         {"runs", s.runs},
                         {"complete", s.complete},
                         {"machine", machine}});
  }
  j["rows"] = nlohmann::json::array();
  j["one_sided"] = nlohmann::json::array();
  for (const CompareRow& r : cmp.rows) {
    nlohmann::json row = {{"key", r.key},         {"mechanism", r.mechanism},
                          {"mode", r.mode},       {"placement", r.placement},
                          {"pair", r.pair},       {"params", r.params},
                          {"in_all", r.in_all()}, {"cells", nlohmann::json::array()}};
    for (std::size_t s = 0; s < cmp.sets.size(); ++s)
      row["cells"].push_back(cell_json(cmp, r.cells[s], s));
    if (!r.in_all()) {
      nlohmann::json in = nlohmann::json::array(), out = nlohmann::json::array();
      for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
        (r.cells[s].present ? in : out).push_back(cmp.sets[s].label);
      }
      j["one_sided"].push_back({{"key", r.key}, {"present_in", in}, {"missing_from", out}});
    }
    j["rows"].push_back(std::move(row));
  }
  j["why"] = why_json(cmp);
  j["warnings"] = cmp.warnings;
  return j.dump(2) + "\n";
}

}  // namespace wb
