#include "analysis/compare/compare_render.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "analysis/compare/compare.h"
#include "common/util/text.h"

// Renders a Comparison as text and markdown (CSV and JSON: analysis/compare/compare_data.cpp; the
// mail table: analysis/compare/compare_mail.cpp).
namespace wb {
namespace {

constexpr std::size_t kLabelWidth = 16;  // longest set label in text column headers

std::string format_p(double p) { return p < 0.001 ? "<0.001" : fmt("%.3f", p); }

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
  const std::string aim = d.needed_for ? " would show " + std::string(verdict_id(*d.needed_for))
                          : c.levels   ? " would decide it"
                                       : "";
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
