#include "analysis/compare_render.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/compare.h"
#include "common/util/text.h"

// Renders a Comparison as text, markdown, CSV and JSON (the mail table: analysis/compare_mail.cpp).
namespace wb {
namespace {

constexpr std::size_t kLabelWidth = 16;  // longest set label in text column headers

std::string format_p(double p) { return p < 0.001 ? "<0.001" : fmt("%.3f", p); }

// The change's interval in percent, + = better, from the interval of the ratio.
std::optional<std::pair<double, double>> change_interval(const CompareCell& c, const Metric& m) {
  if (!c.interval) return std::nullopt;
  const double lo = c.interval->lo, hi = c.interval->hi;
  if (m.higher_is_better) return std::pair{(lo - 1) * 100, (hi - 1) * 100};
  return std::pair{(1 - hi) * 100, (1 - lo) * 100};
}

// "0.89 +11.11% [+8.20, +13.90]": ratio, change (+ = better) and its interval.
std::string ratio_text(const CompareCell& c, const Metric& m) {
  std::string t = fmt("%.2f", *c.ratio) + " " + fmt("%+.2f", *c.change_pct) + "%";
  if (const auto ci = change_interval(c, m))
    t += " [" + fmt("%+.2f", ci->first) + ", " + fmt("%+.2f", ci->second) + "]";
  return t;
}

// The value shown for a cell that has no ratio: why not.
std::string absence(const CompareCell& c) {
  if (!c.present) return "missing";
  if (c.status != CaseStatus::kOk) return std::string(status_id(c.status));
  return c.value ? "no baseline" : "n/a";
}

// The run level's rule, said once where some case was judged at it.
std::string run_level_legend() {
  return ". At the run level (two or more runs a side) the test and both intervals are Welch's t "
         "on the runs' means of the log values, with no A/A floor: DIFFERENT from 2 runs a side, "
         "SAME when that interval lies within the margin";
}

bool has_run_level(const Comparison& cmp) {
  for (const CompareRow& r : cmp.rows)
    for (const CompareCell& c : r.cells)
      if (c.level == CompareLevel::kRuns) return true;
  return false;
}

std::string verdict_legend(const CompareOptions& o, bool any_run_level) {
  const std::string margin = fmt("%.0f", o.margin * 100) + "%";
  const std::string floor = o.noise
                                ? " and beyond the case's A/A floor in " +
                                      (o.noise->path.empty() ? "the noise floor" : o.noise->path)
                                : std::string();
  return "verdicts at alpha " + fmt("%.2f", o.alpha) + ", power " + fmt("%.0f", o.power * 100) +
         "%, margin +-" + margin + ": DIFFERENT = q < alpha" + floor +
         ", with >= " + std::to_string(o.min_repetitions) +
         " repetitions a side; SAME = two one-sided tests: the " +
         fmt("%.0f", (1 - 2 * o.look_level()) * 100) +
         "% interval of the change, widened by the A/A floor, within +-" + margin +
         "; UNKNOWN = neither (see \"undecided\"). [lo, hi] = " + fmt("%.0f", o.confidence * 100) +
         "% Hodges-Lehmann interval of the change over per-repetition values; q = Mann-Whitney U "
         "p-value, Benjamini-Hochberg-adjusted over the cases of the comparison" +
         (any_run_level ? run_level_legend() : "");
}

// A log-scale interval of the ratio as a change in percent, + = better.
std::pair<double, double> change_pct_of(double log_lo, double log_hi, const Metric& m) {
  const double lo = std::exp(log_lo), hi = std::exp(log_hi);
  if (m.higher_is_better) return {(lo - 1) * 100, (hi - 1) * 100};
  return {(1 - hi) * 100, (1 - lo) * 100};
}

std::string verdict_text(const CompareCell& c) {
  return c.decision ? std::string(verdict_id(c.decision->verdict)) : "-";
}

// Why a cell against set `label` is UNKNOWN and what would decide it, in one sentence.
std::string undecided_text(const CompareOptions& o, const CompareCell& base, const CompareCell& c,
                           const std::string& label) {
  const Decision& d = *c.decision;
  std::string t = d.why;
  if (c.levels)
    t += "; sd between runs " + fmt("%.1f", 100 * std::sqrt(c.levels->between)) +
         "%, within a run " + fmt("%.1f", 100 * std::sqrt(c.levels->within)) + "% (" +
         std::to_string(c.levels->runs_base) + " vs " + std::to_string(c.levels->runs_other) +
         " runs)";
  else if (!c.paired() && base.run_count <= 1 && c.run_count <= 1)
    t += "; the variation between runs is unknown (one run a side)";
  if (d.detectable)
    t += "; it detects changes beyond " + fmt("%.1f", std::expm1(*d.detectable) * 100) + "%";
  const std::string aim =
      d.needed_for ? " would show " + std::string(verdict_id(*d.needed_for)) : "";
  if (d.needed && d.needed_per_run)
    return t + "; " + std::to_string(*d.needed) + " runs a side of " +
           std::to_string(*d.needed_per_run) + " repetitions" + aim;
  if (!d.needed)
    return t + (c.levels ? "; no run count decides it" : "; no repetition count decides it");
  if (d.needed_base)
    return t + "; the baseline's " + std::to_string(base.repetitions.size()) +
           " repetitions limit this: " + std::to_string(*d.needed_base) + " a side" + aim;
  if (c.paired()) return t + "; " + std::to_string(*d.needed) + " rounds" + aim;
  if (o.base_fixed) return t + "; " + std::to_string(*d.needed) + " in " + label + aim;
  return t + "; " + std::to_string(*d.needed) + " a side" + aim;
}

// Params whose values differ between the rows (or that some lack), in key order.
std::vector<std::string> row_varying_params(const std::vector<const CompareRow*>& rows) {
  std::vector<const nlohmann::json*> params;
  for (const CompareRow* r : rows) params.push_back(&r->params);
  return varying_params(params);
}

std::vector<std::string> constant_params(const std::vector<const CompareRow*>& rows,
                                         const std::vector<std::string>& varying) {
  std::vector<std::string> out;
  if (rows.empty() || !rows.front()->params.is_object()) return out;
  // Knobs at their defaults are left out: the line names only what this group ran with.
  const nlohmann::json defaults = to_json(Params{});
  for (const auto& [k, v] : rows.front()->params.items()) {
    if (defaults.contains(k) && defaults[k] == v) continue;
    if (std::find(varying.begin(), varying.end(), k) == varying.end()) out.push_back(k);
  }
  return out;
}

std::string presence_text(const Comparison& cmp, const CompareRow& r) {
  std::string in, out;
  for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
    std::string& dst = r.cells[s].present ? in : out;
    dst += (dst.empty() ? "" : ", ") + cmp.sets[s].label;
  }
  return "only in " + in + " (missing from " + out + ")";
}

std::string indent_lines(const std::string& text, const std::string& indent) {
  std::string out;
  std::istringstream lines(text);
  for (std::string l; std::getline(lines, l);) out += indent + l + "\n";
  return out;
}

// ---- plain text -------------------------------------------------------------------------------

struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right;  // right-aligned columns
  std::vector<std::vector<std::string>> rows;

  std::vector<std::size_t> widths() const {
    std::vector<std::size_t> w(header.size());
    for (std::size_t i = 0; i < header.size(); ++i) w[i] = header[i].size();
    for (const auto& row : rows) {
      for (std::size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], row[i].size());
    }
    return w;
  }
  std::string markdown() const {
    const auto line = [](const std::vector<std::string>& cells) {
      std::string l = "|";
      for (const std::string& c : cells) l += " " + md_escape(c) + " |";
      return l + "\n";
    };
    std::string sep = "|";
    for (bool r : right) sep += r ? "--:|" : "---|";
    std::string out = line(header) + sep + "\n";
    for (const auto& row : rows) out += line(row);
    return out;
  }
  std::string render() const {
    const std::vector<std::size_t> w = widths();
    std::string out;
    auto line = [&](const std::vector<std::string>& cells) {
      std::string l;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        const std::string pad(w[i] - cells[i].size(), ' ');
        if (i > 0) l += "  ";
        l += right[i] ? pad + cells[i] : cells[i] + pad;
      }
      while (!l.empty() && l.back() == ' ') l.pop_back();
      out += l + "\n";
    };
    line(header);
    for (const auto& row : rows) line(row);
    return out;
  }
};

std::string short_label(const std::string& label) {
  return label.size() <= kLabelWidth ? label : label.substr(0, kLabelWidth - 1) + "~";
}

// One table of the rows of one mechanism for the baseline and the sets `others`.
TextTable text_table(const Comparison& cmp, const std::vector<const CompareRow*>& rows,
                     const std::vector<std::string>& load_keys,
                     const std::vector<std::size_t>& others) {
  TextTable t;
  const std::string base = short_label(cmp.sets[0].label);
  // The knobs column only when knobs vary between the rows.
  const bool knobs = !load_keys.empty();
  t.header = {"case", "knobs", base + " " + cmp.options.metric.unit, "sd%"};
  t.right = {false, false, true, true};
  if (!knobs) {
    t.header.erase(t.header.begin() + 1);
    t.right.erase(t.right.begin() + 1);
  }
  for (std::size_t s : others) {
    t.header.insert(t.header.end(), {short_label(cmp.sets[s].label), "verdict", "sd%", "q"});
    t.right.insert(t.right.end(), {false, false, true, true});
  }
  for (const CompareRow* r : rows) {
    const std::string load = load_keys.empty() ? "" : format_params(r->params, load_keys);
    const CompareCell& b = r->cells[0];
    std::vector<std::string> row = {
        r->mode + "/" + r->placement + r->pair, load.empty() ? "-" : load,
        b.value ? format_value(*b.value) : absence(b), b.sd_pct ? fmt("%.1f", *b.sd_pct) : "-"};
    for (std::size_t s : others) {
      const CompareCell& c = r->cells[s];
      row.push_back(c.ratio ? ratio_text(c, cmp.options.metric) : absence(c));
      row.push_back(verdict_text(c));
      row.push_back(c.sd_pct ? fmt("%.1f", *c.sd_pct) : "-");
      row.push_back(c.q_value ? format_p(*c.q_value) : "-");
    }
    if (!knobs) row.erase(row.begin() + 1);
    t.rows.push_back(std::move(row));
  }
  return t;
}

// ---- why kernel cases changed -----------------------------------------------------------------

std::string signed_us(double ns) { return (ns < 0 ? "-" : "+") + us_figure(std::fabs(ns)); }

std::string bounds_text(const Bounds& b) {
  return "[" + signed_us(b.lo) + ", " + signed_us(b.hi) + "]";
}

std::string share_pct(double share) { return fmt("%.0f", share * 100) + "%"; }

std::string median_text(double ns) { return std::isnan(ns) ? "-" : us_figure(ns); }

TextTable class_table(const WhyChanged& w, const std::string& a, const std::string& b) {
  TextTable t{{"class", "share " + a, b, "verdict", "median us " + a, b},
              {false, true, true, false, true, true}};
  for (const ClassShift& c : w.parts->classes) {
    const auto v = std::find_if(w.shares.begin(), w.shares.end(),
                                [&](const ClassShareVerdict& x) { return x.cls == c.cls; });
    const auto& med = w.class_median_ns.at(c.cls);
    t.rows.push_back({c.cls, share_pct(c.share_a), share_pct(c.share_b),
                      v == w.shares.end() ? "-" : std::string(verdict_id(v->decision.verdict)),
                      median_text(med.first), median_text(med.second)});
  }
  return t;
}

std::string schedstat_text(const SchedstatTable& st, const std::string& a, const std::string& b) {
  std::string out;
  if (!st.base_off.empty()) out += wrap("schedstat of " + a + ": " + st.base_off, "    ");
  if (!st.other_off.empty()) out += wrap("schedstat of " + b + ": " + st.other_off, "    ");
  if (st.rows.empty()) return out;
  TextTable t{{"per round trip", "counter", a, b, "delta"}, {false, false, true, true, true}};
  const auto num = [](const std::optional<double>& v) { return v ? fmt("%.3f", *v) : "-"; };
  for (const SchedstatRow& r : st.rows)
    t.rows.push_back({r.domain, r.counter, num(r.base), num(r.other),
                      r.base && r.other ? fmt("%+.3f", *r.other - *r.base) : "-"});
  return out + indent_lines(t.render(), "    ");
}

std::string why_legend(const CompareOptions& o) {
  return "mean RTT in us = placement (where the wakee ran) + cost (at equal placement), midpoint "
         "form; [" +
         fmt("%.0f", o.confidence * 100) +
         "% bootstrap interval over repetitions]; share verdicts at +-" +
         fmt("%.0f", o.margin * 100) + " share points";
}

// Each kernel-placed case's decomposition, class table and schedstat counters.
std::string why_body(const Comparison& cmp) {
  std::string out;
  const std::string a = short_label(cmp.sets[0].label);
  for (const WhyChanged& w : cmp.why) {
    const Decomposition& d = *w.parts;
    const std::string b = short_label(cmp.sets[w.set].label);
    out += wrap(case_text(cmp.rows[w.row]) + " in " + cmp.sets[w.set].label + ": " +
                    signed_us(d.mean_b - d.mean_a) + " = placement " + signed_us(d.placement) +
                    " " + bounds_text(d.placement_ci) + " + cost " + signed_us(d.cost) + " " +
                    bounds_text(d.cost_ci),
                "  ");
    out += indent_lines(class_table(w, a, b).render(), "    ");
    out += schedstat_text(w.schedstat, a, b);
  }
  return out;
}

std::string why_text(const Comparison& cmp) {
  if (cmp.why.empty()) return "";
  return "\n" + wrap("why kernel-placed cases changed: " + why_legend(cmp.options) + ":", "") +
         why_body(cmp);
}

// The other sets in chunks whose table stays within kTextWidth, at least one per chunk.
std::vector<std::vector<std::size_t>> table_chunks(const Comparison& cmp,
                                                   const std::vector<const CompareRow*>& rows,
                                                   const std::vector<std::string>& load_keys) {
  std::vector<std::vector<std::size_t>> chunks;
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
    if (!chunks.empty()) {
      std::vector<std::size_t> trial = chunks.back();
      trial.push_back(s);
      const auto w = text_table(cmp, rows, load_keys, trial).widths();
      std::size_t total = 2 * (w.size() - 1);
      for (std::size_t x : w) total += x;
      if (total <= kTextWidth) {
        chunks.back() = trial;
        continue;
      }
    }
    chunks.push_back({s});
  }
  return chunks;
}

std::string text_tables(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  std::ostringstream out;
  for (const auto& [mechanism, rows] : by_mechanism(cmp)) {
    const std::vector<std::string> load_keys = row_varying_params(rows);
    const std::vector<std::string> constants = constant_params(rows, load_keys);
    const std::string title = "[" + mechanism + "] (" + m.label + " in " + m.unit + ", " +
                              (m.higher_is_better ? "higher" : "lower") + " is better)";
    for (const auto& chunk : table_chunks(cmp, rows, load_keys)) {
      out << "\n" << title << "\n" << std::string(title.size(), '=') << "\n";
      if (!constants.empty()) {
        out << "params: " << format_params(rows.front()->params, constants) << "\n";
      }
      out << text_table(cmp, rows, load_keys, chunk).render();
    }
  }
  return out.str();
}

std::string text_undecided(const Comparison& cmp) {
  std::string out;
  for (const CompareRow& r : cmp.rows)
    for (std::size_t s = 1; s < r.cells.size(); ++s) {
      const CompareCell& c = r.cells[s];
      if (!c.decision || c.decision->verdict != CompareVerdict::kUnknown) continue;
      if (out.empty()) out = "\nundecided (UNKNOWN):\n";
      out += wrap(case_text(r) + " in " + cmp.sets[s].label + ": " +
                      undecided_text(cmp.options, r.cells[0], c, cmp.sets[s].label),
                  "  ");
    }
  return out;
}

std::string text_one_sided(const Comparison& cmp) {
  std::string out;
  for (const CompareRow& r : cmp.rows) {
    if (r.in_all()) continue;
    if (out.empty()) out = "\ncases not in every set:\n";
    out += wrap(case_text(r) + ": " + presence_text(cmp, r), "  ");
  }
  return out;
}

std::string format_text(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  std::ostringstream out;
  out << "wakebench compare: " << m.label << " in " << m.unit << ", "
      << (m.higher_is_better ? "higher" : "lower") << " is better\n";
  for (std::size_t s = 1; s < cmp.sets.size(); ++s)
    out << "  " << summary_line(cmp, s) << "\n" << wrap(level_line(cmp, s), "    ");
  for (const CompareSet& s : cmp.sets) {
    const std::string runs = s.runs.size() > 1 ? runs_text(s) + ": " : "";
    out << wrap(s.label + ": " + runs + s.path + (s.complete ? "" : " (incomplete run)"), "  ")
        << wrap(machine_line(s.machine), "    ");
  }
  out << wrap("ratio = set / " + cmp.sets[0].label + "; change: + = better; " +
                  verdict_legend(cmp.options, has_run_level(cmp)),
              "  ");
  out << text_tables(cmp) << text_undecided(cmp) << why_text(cmp) << text_one_sided(cmp);
  if (!cmp.warnings.empty()) {
    out << "\nnotes:\n";
    for (const std::string& w : cmp.warnings) out << wrap("- " + w, "  ");
  }
  return out.str();
}

// ---- markdown ---------------------------------------------------------------------------------

std::string format_markdown(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  std::ostringstream out;
  out << "## wakebench compare: " << m.label << " in " << m.unit << " ("
      << (m.higher_is_better ? "higher" : "lower") << " is better; change: + = better)\n\n";
  for (std::size_t s = 1; s < cmp.sets.size(); ++s)
    out << "- **" << md_escape(summary_line(cmp, s)) << "**; " << md_escape(level_line(cmp, s))
        << "\n";
  out << "\n| set | file | machine | complete |\n|---|---|---|---|\n";
  for (const CompareSet& s : cmp.sets) {
    out << "| " << md_escape(s.label) << " | " << md_escape(s.path) << " | "
        << md_escape(machine_line(s.machine)) << " | " << (s.complete ? "yes" : "no") << " |\n";
  }
  out << "\n" << verdict_legend(cmp.options, has_run_level(cmp)) << "\n";  // the program's own text
  std::vector<std::size_t> others;
  for (std::size_t s = 1; s < cmp.sets.size(); ++s) others.push_back(s);
  for (const auto& [mechanism, rows] : by_mechanism(cmp)) {
    const std::vector<std::string> load_keys = row_varying_params(rows);
    const std::vector<std::string> constants = constant_params(rows, load_keys);
    out << "\n### " << mechanism << "\n\n";
    if (!constants.empty()) {
      out << "params: `" << format_params(rows.front()->params, constants) << "`\n\n";
    }
    out << text_table(cmp, rows, load_keys, others).markdown();
  }
  const auto section = [&out](const std::string& title, const std::string& text) {
    if (text.empty()) return;
    out << "\n### " << title << "\n\n```\n" << text.substr(text.find('\n', 1) + 1) << "```\n";
  };
  section("undecided", text_undecided(cmp));
  if (!cmp.why.empty())
    out << "\n### why kernel-placed cases changed\n\n"
        << why_legend(cmp.options) << "\n\n```\n"
        << why_body(cmp) << "```\n";
  section("cases not in every set", text_one_sided(cmp));
  if (!cmp.warnings.empty()) {
    out << "\n### notes\n\n";
    for (const std::string& w : cmp.warnings) out << "- " << md_escape(w) << "\n";
  }
  return out.str();
}

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

}  // namespace

CompareFormat parse_compare_format(std::string_view name) {
  if (name == "text") return CompareFormat::kText;
  if (name == "markdown") return CompareFormat::kMarkdown;
  if (name == "csv") return CompareFormat::kCsv;
  if (name == "json") return CompareFormat::kJson;
  if (name == "mail") return CompareFormat::kMail;
  throw std::invalid_argument("unknown compare format \"" + std::string(name) +
                              "\" (text, markdown, csv, json, mail)");
}

std::string format_comparison(const Comparison& cmp, CompareFormat format) {
  switch (format) {
    case CompareFormat::kText:
      return format_text(cmp);
    case CompareFormat::kMarkdown:
      return format_markdown(cmp);
    case CompareFormat::kCsv:
      return format_csv(cmp);
    case CompareFormat::kJson:
      return format_json(cmp);
    case CompareFormat::kMail:
      return format_mail(cmp);
  }
  return "";
}

}  // namespace wb
