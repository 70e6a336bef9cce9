// compare --format mail: the table a patch mail carries, in the shape of mmtests' compare-kernels
// tables (as bin/lib/MMTests/Compare.pm and PrintGeneric.pm of gormanm/mmtests print them, read at
// commit 638401e07e70d67fa5a1e6295e1315ae0af831b2): two header rows of kernel names over each
// set's column, then one row per statistic and case, "Stat  case  value ( change%)", the change
// signed with + = better (mmtests' pdiff / pndiff), its parentheses turned into the verdict's
// marker. mmtests marks only significance (`*  9.18%*`); here the marker is compare's verdict,
// judged once in analysis/compare/compare.cpp for every format: `*` DIFFERENT, `(` `)` SAME, `?`
// UNKNOWN. Below the table: where the wakee ran in each set (kernel-placed cases), one environment
// line per set and how the sets were made. Every line is at most kMailWidth columns.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "analysis/compare/compare_render.h"
#include "analysis/stats/mix.h"
#include "common/util/text.h"

namespace wb {
namespace {

constexpr std::size_t kMailWidth = 72;     // a reviewer's mail
constexpr std::size_t kMinCaseWidth = 12;  // the case column never narrower: else refused
constexpr std::size_t kValueGap = 2;       // spaces before a column's widest value

// `text` wrapped to the mail's width; a word longer than a line is cut (in time linear in it).
std::string mail_wrap(const std::string& text, const std::string& indent) {
  std::string out;
  const std::string more = indent + "  ";
  std::istringstream lines(wrap(text, indent, kMailWidth));
  for (std::string l; std::getline(lines, l);) {
    std::size_t at = 0;
    for (std::size_t room = kMailWidth; l.size() - at > room; room = kMailWidth - more.size()) {
      out.append(at ? more : "").append(l, at, room).push_back('\n');
      at += room;
    }
    out.append(at ? more : "").append(l, at).push_back('\n');
  }
  return out;
}

// The statistic's row name, as mmtests names its (Amean, Min, Max; percentiles shortened).
std::string stat_name(const Metric& m) {
  if (m.counter) return "Count";
  static const std::vector<std::pair<std::string, std::string>> names = {
      {"mean", "Amean"}, {"median", "Median"}, {"min", "Min"},    {"max", "Max"},
      {"p90", "P90"},    {"p99", "P99"},       {"p999", "P99.9"}, {"tps", "Tps"}};
  std::string id = m.id, prefix;
  if (id.rfind("wakeup-", 0) == 0) {
    id = id.substr(7);
    prefix = "W";
  }
  for (const auto& [key, name] : names)
    if (key == id) return prefix + name;
  return m.id;
}

// The marks around a change: the verdict's (blank for a cell without one: a counter).
std::pair<char, char> markers(const CompareCell& c) {
  if (!c.decision) return {' ', ' '};
  switch (c.decision->verdict) {
    case CompareVerdict::kDifferent:
      return {'*', '*'};
    case CompareVerdict::kSame:
      return {'(', ')'};
    case CompareVerdict::kUnknown:
      return {'?', '?'};
  }
  return {' ', ' '};
}

// The change field: " (  -9.18%)" with the verdict's marker in place of the parentheses.
std::string change_field(const CompareCell& c, bool base) {
  if (base) return " (" + fmt("%7.2f", 0.0) + "%)";
  if (!c.change_pct) return "";
  const auto [open, close] = markers(c);
  return std::string(" ") + open + fmt("%7.2f", *c.change_pct) + "%" + close;
}

std::string absence_word(const CompareCell& c) {
  if (!c.present) return "missing";
  return c.status == CaseStatus::kOk ? "n/a" : std::string(status_id(c.status));
}

// One row of figures: per set a value and a change field (empty for the variation rows).
struct MailRow {
  std::string stat, name;
  std::vector<std::pair<std::string, std::string>> cells;
};

// A row's case inside its mechanism's table: "processes/llc/w2s4".
std::string row_name(const CompareRow& r) { return r.mode + "/" + r.placement + r.suffix + r.pair; }

MailRow metric_row(const std::string& stat, const CompareRow& r) {
  MailRow row{stat, row_name(r), {}};
  for (std::size_t s = 0; s < r.cells.size(); ++s) {
    const CompareCell& c = r.cells[s];
    const bool base = s == 0 && c.value;
    row.cells.push_back(
        {c.value ? format_value(*c.value) : absence_word(c), change_field(c, base)});
  }
  return row;
}

MailRow spread_row(const std::string& stat, const CompareRow& r,
                   std::optional<double> CompareCell::*field) {
  MailRow row{stat, row_name(r), {}};
  for (const CompareCell& c : r.cells)
    row.cells.push_back({c.*field ? fmt("%.2f", *(c.*field)) : "-", ""});
  return row;
}

bool several_runs(const Comparison& cmp) {
  return std::any_of(cmp.sets.begin(), cmp.sets.end(),
                     [](const CompareSet& s) { return s.runs.size() > 1; });
}

// mmtests' order: every case's metric row, then every case's CoeffVar, then (runs) RunCV.
std::vector<MailRow> mail_rows(const Comparison& cmp, const std::vector<const CompareRow*>& rows) {
  std::vector<MailRow> out;
  for (const CompareRow* r : rows) out.push_back(metric_row(stat_name(cmp.options.metric), *r));
  for (const CompareRow* r : rows) out.push_back(spread_row("CoeffVar", *r, &CompareCell::sd_pct));
  if (several_runs(cmp))
    for (const CompareRow* r : rows)
      out.push_back(spread_row("RunCV", *r, &CompareCell::run_sd_pct));
  return out;
}

// Column widths of one table: the statistic, the case, and per set its value field (the gap
// before it included, widened for the set's header where there is room) and the change field.
struct Layout {
  std::size_t stat = 0, name = 0, change = 0;
  std::vector<std::size_t> value;
  std::size_t column(std::size_t s) const { return value[s] + change; }
  std::size_t width() const {
    std::size_t w = stat + 1 + name;
    for (std::size_t v : value) w += v + change;
    return w;
  }
};

std::string header_text(const CompareSet& set, int row) {
  return row == 0 ? set.machine.kernel_release : set.label;
}

[[noreturn]] void refuse_width(const Comparison& cmp, std::size_t need) {
  throw std::invalid_argument("compare --format mail: " + std::to_string(cmp.sets.size()) +
                              " sets need " + std::to_string(need) + " columns, more than a " +
                              "mail's " + std::to_string(kMailWidth) +
                              ": compare fewer sets at a time, or use --format text");
}

// The case column gets up to its longest name, the headers what is left; refused when even the
// figures leave the case column fewer than kMinCaseWidth.
Layout layout_of(const Comparison& cmp, const std::vector<MailRow>& rows) {
  Layout l;
  l.value.assign(cmp.sets.size(), 0);
  std::size_t longest = 0;
  for (const MailRow& r : rows) {
    l.stat = std::max(l.stat, r.stat.size());
    longest = std::max(longest, r.name.size());
    for (std::size_t s = 0; s < r.cells.size(); ++s) {
      l.value[s] = std::max(l.value[s], r.cells[s].first.size() + kValueGap);
      l.change = std::max(l.change, r.cells[s].second.size());
    }
  }
  const std::size_t figures = l.width();
  if (figures + kMinCaseWidth > kMailWidth) refuse_width(cmp, figures + kMinCaseWidth);
  l.name = std::min(longest, kMailWidth - figures);
  for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
    const std::size_t want =
        std::max(header_text(cmp.sets[s], 0).size(), header_text(cmp.sets[s], 1).size()) + 1;
    if (want > l.column(s)) l.value[s] += std::min(want - l.column(s), kMailWidth - l.width());
  }
  return l;
}

std::string trimmed(std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

// A header cell: right-aligned in its column with a space before it, cut with '~' if longer.
std::string header_cell(const std::string& text, std::size_t width) {
  if (text.size() < width) return align_right(text, width);
  return " " + text.substr(0, width - 2) + "~";
}

std::string header_rows(const Comparison& cmp, const Layout& l) {
  std::string out;
  for (int row = 0; row < 2; ++row) {
    std::string line(l.stat + 1 + l.name, ' ');
    for (std::size_t s = 0; s < cmp.sets.size(); ++s)
      line += header_cell(header_text(cmp.sets[s], row), l.column(s));
    out += trimmed(line);
  }
  return out;
}

// A case name in the case column: broken before a '/' where it is too long, the rest on lines of
// its own below (indented), a piece longer than a line cut.
std::vector<std::string> name_lines(const std::string& name, std::size_t first, std::size_t rest) {
  std::vector<std::string> lines(1);
  std::size_t width = first;
  for (std::size_t at = 0; at < name.size();) {
    std::size_t end = name.find('/', at + 1);
    if (end == std::string::npos) end = name.size();
    std::string piece = name.substr(at, end - at);
    if (!lines.back().empty() && lines.back().size() + piece.size() > width) {
      lines.emplace_back();
      width = rest;
    }
    const std::size_t room = width - lines.back().size();
    lines.back() += piece.substr(0, room);
    at += std::min(piece.size(), room);
  }
  return lines;
}

std::string figure_row(const MailRow& r, const Layout& l) {
  const std::size_t indent = l.stat + 3;
  const std::vector<std::string> names = name_lines(r.name, l.name, kMailWidth - indent);
  std::string line = align_left(r.stat, l.stat) + " " + align_left(names[0], l.name);
  for (std::size_t s = 0; s < r.cells.size(); ++s)
    line += align_right(r.cells[s].first, l.value[s]) + align_left(r.cells[s].second, l.change);
  std::string out = trimmed(line);
  for (std::size_t k = 1; k < names.size(); ++k) out += std::string(indent, ' ') + names[k] + "\n";
  return out;
}

std::string mechanism_table(const Comparison& cmp, const std::string& mechanism,
                            const std::vector<const CompareRow*>& rows) {
  const std::vector<MailRow> mrows = mail_rows(cmp, rows);
  const Layout l = layout_of(cmp, mrows);
  std::string out = "\n" + mail_wrap(mechanism, "") + header_rows(cmp, l);
  for (const MailRow& r : mrows) out += figure_row(r, l);
  return out;
}

std::string legend(const Comparison& cmp) {
  const CompareOptions& o = cmp.options;
  std::string t = "*x%* DIFFERENT, (x%) SAME, ?x%? UNKNOWN against " + cmp.sets[0].label +
                  " (compare's verdicts at alpha " + fmt("%.2f", o.alpha) + ", margin +-" +
                  fmt("%.0f", o.margin * 100) + "%; --format text says what would decide each " +
                  "?); change: + = better; CoeffVar: sd / mean of the repetitions, %";
  if (several_runs(cmp)) t += "; RunCV: of the runs' values";
  if (o.metric.counter) t += "; a counter is counted once per case, never tested: no marker";
  return mail_wrap(t, "");
}

// ---- below the table ---------------------------------------------------------------------------

std::string share_text(double n, double total) {
  const double pct = 100 * n / total;
  return pct < 0.5 ? "<1%" : fmt("%.0f", pct) + "%";
}

// "llc 99%, same-cpu 1%": the classes a cell's wakee ran on, most round trips first.
std::string where_text(const CompareCell& c) {
  std::vector<std::pair<std::string, double>> seen;
  double total = 0;
  for (const auto& [cls, n] : c.wakee_ran)
    if (n > 0) {
      seen.emplace_back(cls, n);
      total += n;
    }
  if (seen.empty()) return "not recorded";
  std::stable_sort(seen.begin(), seen.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (const auto& [cls, n] : seen) parts.push_back(cls + " " + share_text(n, total));
  return join(parts, ", ");
}

// The cell's class shares (of its recorded round trips); empty where none were recorded.
ClassShares shares_of(const CompareCell& c) {
  ClassShares shares;
  double total = 0;
  for (const auto& [cls, n] : c.wakee_ran) total += n;
  if (total > 0)
    for (const auto& [cls, n] : c.wakee_ran) shares[cls] += n / total;
  return shares;
}

// " (TV 0.04)": how far a set's shares lie from the baseline's (total variation), "" where
// either recorded none.
std::string tv_text(const CompareCell& base, const CompareCell& c) {
  const ClassShares a = shares_of(base), b = shares_of(c);
  return a.empty() || b.empty() ? "" : " (TV " + fmt("%.2f", tv_distance(a, b)) + ")";
}

std::string wakee_lines(const Comparison& cmp) {
  std::string out;
  for (const auto& [mechanism, rows] : by_mechanism(cmp))
    for (const CompareRow* r : rows) {
      if (r->placement.rfind("kernel", 0) != 0) continue;
      std::vector<std::string> sets;
      for (std::size_t s = 0; s < cmp.sets.size(); ++s)
        sets.push_back(cmp.sets[s].label + " " + where_text(r->cells[s]) +
                       (s == 0 ? "" : tv_text(r->cells[0], r->cells[s])));
      out += mail_wrap(case_text(*r) + ": " + join(sets, "; "), "  ");
    }
  if (out.empty()) return "";
  return "\n" +
         wrap_hanging("",
                      "where the wakee ran (its CPU's class to the waker's; TV: the total "
                      "variation from the baseline's shares):",
                      "  ", kMailWidth) +
         out;
}

std::string plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "80 CPUs (80 cores, no SMT), 1 LLC, 1 NUMA node".
std::string topology_phrase(const EnvironmentView& m) {
  if (!m.counts) return "topology not recorded";
  const TopologyCounts& c = *m.counts;
  const std::string smt = m.smt_width > 1    ? ", SMT" + std::to_string(m.smt_width)
                          : m.smt_width == 1 ? ", no SMT"
                                             : "";
  return plural(c.pus, "CPU", "CPUs") + " (" + plural(c.cores, "core", "cores") + smt + "), " +
         plural(c.llcs, "LLC", "LLCs") + ", " + plural(c.numa_nodes, "NUMA node", "NUMA nodes");
}

// Kernel command-line parameters that change where and how fast a wakeup runs: CPU isolation and
// tick, idle states, frequency drivers, preemption, SMT and mitigations, and every sched* one.
bool sched_param(const std::string& key) {
  static const std::vector<std::string> keys = {"isolcpus",
                                                "nohz_full",
                                                "nohz",
                                                "rcu_nocbs",
                                                "irqaffinity",
                                                "nosmt",
                                                "mitigations",
                                                "idle",
                                                "cpuidle.off",
                                                "cpuidle.governor",
                                                "intel_idle.max_cstate",
                                                "processor.max_cstate",
                                                "intel_pstate",
                                                "amd_pstate",
                                                "cpufreq.default_governor",
                                                "preempt",
                                                "threadirqs",
                                                "numa_balancing",
                                                "relax_domain_level",
                                                "skew_tick"};
  return key.rfind("sched", 0) == 0 || std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string cmdline_phrase(const std::string& cmdline) {
  if (cmdline.empty()) return "kernel command line not recorded";
  std::vector<std::string> kept;
  std::istringstream words(cmdline);
  for (std::string w; words >> w;)
    if (sched_param(w.substr(0, w.find('=')))) kept.push_back(w);
  return "cmdline: " + (kept.empty() ? std::string("no scheduling parameters") : join(kept, " "));
}

std::string environment_lines(const Comparison& cmp) {
  std::string out = "\nenvironment:\n";
  for (const CompareSet& s : cmp.sets) {
    const EnvironmentView& m = s.machine;
    const std::string kernel =
        m.kernel_release.empty() ? "kernel not recorded" : "Linux " + m.kernel_release;
    const std::string host = (m.hostname.empty() ? "a host not recorded" : m.hostname) +
                             (m.cpu_model.empty() ? "" : " (" + m.cpu_model + ")");
    out += mail_wrap(s.label + ": " + kernel + " on " + host + ", " + topology_phrase(m) + "; " +
                         cmdline_phrase(m.kernel_cmdline),
                     "  ");
  }
  return out;
}

// How one side's runs were made, from what their sets record.
std::string origin_text(const CompareSet& set) {
  std::vector<std::string> configs, seeds, parts;
  for (const RunOrigin& o : set.origins) {
    const std::string c = o.config.empty() ? "config not recorded" : "config " + o.config;
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
    if (o.seed) seeds.push_back(std::to_string(*o.seed));
    if (!o.ab_label.empty())
      parts.push_back("--ab setting " + o.ab_label + " (" + std::to_string(o.ab_setting + 1) +
                      " of " + std::to_string(o.ab_settings) + ")");
    if (!o.until_decided_base.empty()) parts.push_back("--until-decided " + o.until_decided_base);
  }
  std::string t = set.label + ": " + (set.runs.size() > 1 ? runs_text(set) + " of " : "run of ") +
                  join(configs, ", ");
  if (!seeds.empty()) t += (seeds.size() == 1 ? ", seed " : ", seeds ") + join(seeds, ", ");
  if (!parts.empty()) t += ", " + join(parts, ", ");
  return t;
}

// An argument as a shell reads it back: as it is when it holds only such characters, else in
// single quotes.
std::string shell_word(const std::string& a) {
  const bool plain = !a.empty() && a.find_first_not_of(
                                       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"
                                       "OPQRSTUVWXYZ0123456789_./=:,+-@%") == std::string::npos;
  if (plain) return a;
  std::string q = "'";
  for (char ch : a) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// The command lines of a side's runs (run.command) as shell words, each once; empty when a run
// has none.
std::vector<std::vector<std::string>> commands_of(const CompareSet& set) {
  std::vector<std::vector<std::string>> out;
  for (const RunOrigin& o : set.origins) {
    if (o.command.empty()) return {};
    std::vector<std::string> words;
    for (const std::string& a : o.command) words.push_back(shell_word(a));
    if (std::find(out.begin(), out.end(), words) == out.end()) out.push_back(words);
  }
  return out;
}

// "  LABEL: " and a command that a shell reads back as it ran: its words wrapped at the mail's
// width, each continued line ending in a backslash; a word longer than a line stays whole (the
// command matters more than the width there).
std::string command_lines(const std::string& label, const std::vector<std::string>& words) {
  const std::string more = "    ";
  std::string out, line = "  " + label + ":";
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0 && line.size() + 1 + words[i].size() + 2 > kMailWidth) {
      out += line + " \\\n";
      line = more + words[i];
    } else {
      line += " " + words[i];
    }
  }
  return out + line + "\n";
}

// Each set's command lines where its runs recorded them, else what the set records of its run.
std::string origin_lines(const Comparison& cmp) {
  bool any = false;
  for (const CompareSet& s : cmp.sets) any = any || !commands_of(s).empty();
  if (!any) {
    std::string out = "\nmade by wakebench run (a result set does not record its command line):\n";
    for (const CompareSet& s : cmp.sets) out += mail_wrap(origin_text(s), "  ");
    return out;
  }
  std::string out = "\nmade by:\n";
  for (const CompareSet& s : cmp.sets) {
    const std::vector<std::vector<std::string>> commands = commands_of(s);
    if (commands.empty()) out += mail_wrap(origin_text(s) + " (no command line recorded)", "  ");
    for (const std::vector<std::string>& c : commands) out += command_lines(s.label, c);
  }
  return out;
}

std::string one_sided_line(const Comparison& cmp) {
  std::vector<std::string> parts;
  for (const CompareRow& r : cmp.rows) {
    if (r.in_all()) continue;
    std::vector<std::string> in;
    for (std::size_t s = 0; s < cmp.sets.size(); ++s)
      if (r.cells[s].present) in.push_back(cmp.sets[s].label);
    parts.push_back(case_text(r) + " (" + join(in, ", ") + ")");
  }
  return parts.empty() ? "" : "\n" + mail_wrap("not in every set: " + join(parts, "; "), "");
}

std::string notes(const Comparison& cmp) {
  if (cmp.warnings.empty()) return "";
  std::string out = "\nnotes:\n";
  for (const std::string& w : cmp.warnings) out += mail_wrap("- " + w, "  ");
  return out;
}

std::string verdict_lines(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  std::string out = mail_wrap("wakebench compare: " + m.label + " in " + m.unit + ", " +
                                  (m.higher_is_better ? "higher" : "lower") + " is better",
                              "");
  for (std::size_t s = 1; s < cmp.sets.size(); ++s)
    out += mail_wrap(summary_line(cmp, s), "") + mail_wrap(level_line(cmp, s), "  ");
  return out;
}

}  // namespace

std::string format_mail(const Comparison& cmp) {
  std::string tables;
  for (const auto& [mechanism, rows] : by_mechanism(cmp))
    tables += mechanism_table(cmp, mechanism, rows);
  return verdict_lines(cmp) + tables + "\n" + legend(cmp) + wakee_lines(cmp) +
         environment_lines(cmp) + origin_lines(cmp) + one_sided_line(cmp) + notes(cmp);
}

}  // namespace wb
