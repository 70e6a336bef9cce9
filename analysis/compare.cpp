#include "analysis/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/text.h"

namespace wb {
namespace {

constexpr std::size_t kTextWidth = 100;  // pasteable into a mail
constexpr std::size_t kLabelWidth = 16;  // longest set label in text column headers

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

// Absolute values: ns and tps as integers, small counters with decimals.
std::string format_value(double v) {
  const double a = std::fabs(v);
  if (a >= 100) return fmt("%.0f", v);
  if (a >= 1) return fmt("%.2f", v);
  return fmt("%.3g", v);
}

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

std::string significance_legend(const CompareOptions& o, const std::string& marker) {
  const std::string floor =
      o.noise ? " and a change larger than the A/A noise of the case in " +
                    (o.noise->path.empty() ? std::string("the noise floor") : o.noise->path)
              : std::string();
  return "[lo, hi] = " + fmt("%.0f", o.confidence * 100) +
         "% Hodges-Lehmann interval of the change over per-repetition values; q = Mann-Whitney U "
         "p-value, Benjamini-Hochberg-adjusted over the cases of the comparison; " +
         marker + " = q < " + fmt("%.2f", o.alpha) + floor +
         " (needs >= " + std::to_string(o.min_repetitions) + " repetitions per side)";
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

// Rows in the baseline and at least one other set that have the metric or a status saying why not,
// per mechanism, in first-appearance order.
std::vector<std::pair<std::string, std::vector<const CompareRow*>>> by_mechanism(
    const Comparison& cmp) {
  std::vector<std::pair<std::string, std::vector<const CompareRow*>>> groups;
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

std::string presence_text(const Comparison& cmp, const CompareRow& r) {
  std::string in, out;
  for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
    std::string& dst = r.cells[s].present ? in : out;
    dst += (dst.empty() ? "" : ", ") + cmp.sets[s].label;
  }
  return "only in " + in + " (missing from " + out + ")";
}

// `text` as lines of at most kTextWidth, each starting with `indent`, broken at spaces.
std::string wrap(const std::string& text, const std::string& indent) {
  std::string out, line = indent;
  std::istringstream words(text);
  for (std::string w; words >> w;) {
    if (line.size() > indent.size() && line.size() + 1 + w.size() > kTextWidth) {
      out += line + "\n";
      line = indent + "  ";
    } else if (line.size() > indent.size()) {
      line += ' ';
    }
    line += w;
  }
  return out + line + "\n";
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
  t.header = {"case", "knobs", base + " " + cmp.options.metric.unit, base, "sd%"};
  t.right = {false, false, true, true, true};
  if (!knobs) {
    t.header.erase(t.header.begin() + 1);
    t.right.erase(t.right.begin() + 1);
  }
  for (std::size_t s : others) {
    t.header.insert(t.header.end(), {short_label(cmp.sets[s].label), "sd%", "q"});
    t.right.insert(t.right.end(), {false, true, true});
  }
  for (const CompareRow* r : rows) {
    const std::string load = load_keys.empty() ? "" : format_params(r->params, load_keys);
    const CompareCell& b = r->cells[0];
    std::vector<std::string> row = {
        r->mode + "/" + r->placement + r->pair, load.empty() ? "-" : load,
        b.value ? format_value(*b.value) : absence(b), b.value ? "1.00" : "-",
        b.sd_pct ? fmt("%.1f", *b.sd_pct) : "-"};
    for (std::size_t s : others) {
      const CompareCell& c = r->cells[s];
      row.push_back(c.ratio ? ratio_text(c, cmp.options.metric) + (c.significant ? " *" : "  ")
                            : absence(c));
      row.push_back(c.sd_pct ? fmt("%.1f", *c.sd_pct) : "-");
      row.push_back(c.q_value ? format_p(*c.q_value) : "-");
    }
    if (!knobs) row.erase(row.begin() + 1);
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string format_text(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  std::ostringstream out;
  out << "wakebench compare: " << m.label << " in " << m.unit << ", "
      << (m.higher_is_better ? "higher" : "lower") << " is better\n";
  for (const CompareSet& s : cmp.sets) {
    out << "  " << s.label << ": " << s.path << (s.complete ? "" : " (incomplete run)") << "\n"
        << wrap(machine_line(s.machine), "    ");
  }
  out << wrap("ratio = set / " + cmp.sets[0].label + " (1.00); change: + = better; " +
                  significance_legend(cmp.options, "*"),
              "  ");

  // Split the other sets into chunks whose table stays within kTextWidth, at least one per chunk.
  for (const auto& [mechanism, rows] : by_mechanism(cmp)) {
    const std::vector<std::string> load_keys = row_varying_params(rows);
    const std::vector<std::string> constants = constant_params(rows, load_keys);
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
    const std::string title = "[" + mechanism + "] (" + m.label + " in " + m.unit + ", " +
                              (m.higher_is_better ? "higher" : "lower") + " is better)";
    for (const auto& chunk : chunks) {
      out << "\n" << title << "\n" << std::string(title.size(), '=') << "\n";
      if (!constants.empty()) {
        out << "params: " << format_params(rows.front()->params, constants) << "\n";
      }
      out << text_table(cmp, rows, load_keys, chunk).render();
    }
  }
  bool header_done = false;
  for (const CompareRow& r : cmp.rows) {
    if (r.in_all()) continue;
    if (!header_done) out << "\ncases not in every set:\n";
    header_done = true;
    std::string line = r.mechanism + "/" + r.mode + "/" + r.placement + r.pair;
    if (const std::string p = format_params(r.params); !p.empty()) line += " [" + p + "]";
    out << wrap(line + ": " + presence_text(cmp, r), "  ");
  }
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
  out << "| set | file | machine | complete |\n|---|---|---|---|\n";
  for (const CompareSet& s : cmp.sets) {
    out << "| " << md_escape(s.label) << " | " << md_escape(s.path) << " | "
        << md_escape(machine_line(s.machine)) << " | " << (s.complete ? "yes" : "no") << " |\n";
  }
  out << "\n" << significance_legend(cmp.options, "**bold**") << "\n";
  for (const auto& [mechanism, rows] : by_mechanism(cmp)) {
    const std::vector<std::string> load_keys = row_varying_params(rows);
    const std::vector<std::string> constants = constant_params(rows, load_keys);
    out << "\n### " << mechanism << "\n\n";
    if (!constants.empty()) {
      out << "params: `" << format_params(rows.front()->params, constants) << "`\n\n";
    }
    out << "| case | knobs | " << md_escape(cmp.sets[0].label) << " " << m.unit << " | "
        << md_escape(cmp.sets[0].label) << " | sd% |";
    for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
      out << " " << md_escape(cmp.sets[s].label) << " | sd% | q |";
    }
    out << "\n|---|---|--:|--:|--:|";
    for (std::size_t s = 1; s < cmp.sets.size(); ++s) out << "--:|--:|--:|";
    out << "\n";
    for (const CompareRow* r : rows) {
      const CompareCell& b = r->cells[0];
      const std::string load = load_keys.empty() ? "" : format_params(r->params, load_keys);
      out << "| " << r->mode << "/" << r->placement << r->pair << " | "
          << md_escape(load.empty() ? "-" : load) << " | "
          << (b.value ? format_value(*b.value) : absence(b)) << " | " << (b.value ? "1.00" : "-")
          << " | " << (b.sd_pct ? fmt("%.1f", *b.sd_pct) : "-") << " |";
      for (std::size_t s = 1; s < cmp.sets.size(); ++s) {
        const CompareCell& c = r->cells[s];
        out << " "
            << (c.ratio ? (c.significant ? "**" + ratio_text(c, m) + "**" : ratio_text(c, m))
                        : absence(c))
            << " | " << (c.sd_pct ? fmt("%.1f", *c.sd_pct) : "-") << " | "
            << (c.q_value ? format_p(*c.q_value) : "-") << " |";
      }
      out << "\n";
    }
  }
  bool header_done = false;
  for (const CompareRow& r : cmp.rows) {
    if (r.in_all()) continue;
    if (!header_done) out << "\n### cases not in every set\n\n";
    header_done = true;
    out << "- `" << r.mechanism << "/" << r.mode << "/" << r.placement << r.pair;
    if (const std::string p = format_params(r.params); !p.empty()) out << " [" << p << "]";
    out << "`: " << presence_text(cmp, r) << "\n";
  }
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

std::string format_csv(const Comparison& cmp) {
  std::ostringstream out;
  out << "mechanism,mode,placement,pair,params,metric,set,file,status,value,repetitions,sd_pct,"
         "ratio,change_pct,change_lo_pct,change_hi_pct,p_value,q_value,test,aa_floor_pct,"
         "significant\n";
  for (const CompareRow& r : cmp.rows) {
    for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
      const CompareCell& c = r.cells[s];
      out << csv_field(r.mechanism) << ',' << csv_field(r.mode) << ',' << csv_field(r.placement)
          << ',' << csv_field(r.pair) << ',' << csv_field(format_params(r.params)) << ','
          << csv_field(cmp.options.metric.id) << ',' << csv_field(cmp.sets[s].label) << ','
          << csv_field(cmp.sets[s].path) << ',' << (c.present ? status_id(c.status) : "missing")
          << ',' << opt_number(c.value) << ',' << c.repetitions.size() << ','
          << opt_number(c.sd_pct) << ',' << opt_number(c.ratio) << ',' << opt_number(c.change_pct)
          << ',';
      const auto ci = change_interval(c, cmp.options.metric);
      out << (ci ? fmt("%.6g", ci->first) + "," + fmt("%.6g", ci->second) : ",") << ','
          << (c.test ? fmt("%.6g", c.test->p_value) : "") << ',' << opt_number(c.q_value) << ','
          << (c.test ? (c.test->exact ? "exact" : "normal") : "") << ','
          << opt_number(c.aa_floor_pct) << ',' << (s == 0 ? "" : (c.significant ? "yes" : "no"))
          << "\n";
    }
  }
  return out.str();
}

// ---- json -------------------------------------------------------------------------------------

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string format_json(const Comparison& cmp) {
  const Metric& m = cmp.options.metric;
  nlohmann::json j = {{"schema", "wakebench-compare"},
                      {"schema_version", 1},
                      {"metric",
                       {{"id", m.id},
                        {"label", m.label},
                        {"unit", m.unit},
                        {"higher_is_better", m.higher_is_better}}},
                      {"alpha", cmp.options.alpha},
                      {"confidence", cmp.options.confidence},
                      {"noise", cmp.options.noise ? nlohmann::json(cmp.options.noise->path)
                                                  : nlohmann::json(nullptr)},
                      {"min_repetitions", cmp.options.min_repetitions}};
  j["sets"] = nlohmann::json::array();
  for (const CompareSet& s : cmp.sets) {
    nlohmann::json machine = {{"hostname", s.machine.hostname},
                              {"cpu_model", s.machine.cpu_model},
                              {"kernel_release", s.machine.kernel_release},
                              {"topology_source", s.machine.topology_source},
                              {"counts", format_counts(s.machine)}};
    j["sets"].push_back(
        {{"label", s.label}, {"path", s.path}, {"complete", s.complete}, {"machine", machine}});
  }
  j["rows"] = nlohmann::json::array();
  j["one_sided"] = nlohmann::json::array();
  for (const CompareRow& r : cmp.rows) {
    nlohmann::json row = {{"key", r.key},         {"mechanism", r.mechanism},
                          {"mode", r.mode},       {"placement", r.placement},
                          {"pair", r.pair},       {"params", r.params},
                          {"in_all", r.in_all()}, {"cells", nlohmann::json::array()}};
    for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
      const CompareCell& c = r.cells[s];
      nlohmann::json cell = {
          {"set", cmp.sets[s].label},
          {"present", c.present},
          {"status", c.present ? nlohmann::json(status_id(c.status)) : nullptr},
          {"value", opt_json(c.value)},
          {"repetitions", c.repetitions},
          {"sd_pct", opt_json(c.sd_pct)},
          {"ratio", opt_json(c.ratio)},
          {"change_pct", opt_json(c.change_pct)},
          {"p_value", c.test ? nlohmann::json(c.test->p_value) : nullptr},
          {"test", c.test ? nlohmann::json(c.test->exact ? "exact" : "normal") : nullptr},
          {"q_value", opt_json(c.q_value)},
          {"change_interval_pct", nullptr},
          {"interval_confidence", c.interval ? nlohmann::json(c.interval->confidence) : nullptr},
          {"aa_floor_pct", opt_json(c.aa_floor_pct)},
          {"significant", c.significant}};
      if (const auto ci = change_interval(c, m))
        cell["change_interval_pct"] = {ci->first, ci->second};
      row["cells"].push_back(std::move(cell));
    }
    if (!r.in_all()) {
      nlohmann::json in = nlohmann::json::array(), out = nlohmann::json::array();
      for (std::size_t s = 0; s < cmp.sets.size(); ++s) {
        (r.cells[s].present ? in : out).push_back(cmp.sets[s].label);
      }
      j["one_sided"].push_back({{"key", r.key}, {"present_in", in}, {"missing_from", out}});
    }
    j["rows"].push_back(std::move(row));
  }
  j["warnings"] = cmp.warnings;
  return j.dump(2) + "\n";
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

CompareFormat parse_compare_format(std::string_view name) {
  if (name == "text") return CompareFormat::kText;
  if (name == "markdown") return CompareFormat::kMarkdown;
  if (name == "csv") return CompareFormat::kCsv;
  if (name == "json") return CompareFormat::kJson;
  throw std::invalid_argument("unknown compare format \"" + std::string(name) +
                              "\" (text, markdown, csv, json)");
}

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

Comparison compare_result_sets(const std::vector<ResultSet>& sets, const CompareOptions& given) {
  if (sets.size() < 2) throw std::invalid_argument("compare needs at least two result sets");
  // Without --noise, the floor the baseline set stored (`wakebench run --noise FILE`).
  CompareOptions options = given;
  if (!options.noise && sets[0].doc.contains("noise"))
    options.noise = noise_from_json(sets[0].doc["noise"], "results " + sets[0].path + ": noise");
  // Timings of the topology lab (qemu TCG) are emulated: never held against a real machine's.
  const auto emulated = [](const ResultSet& rs) {
    return rs.doc.value("/environment/emulated"_json_pointer, nlohmann::json(false)) == true;
  };
  for (std::size_t s = 1; s < sets.size(); ++s)
    if (emulated(sets[s]) != emulated(sets[0])) {
      const ResultSet& e = emulated(sets[s]) ? sets[s] : sets[0];
      const ResultSet& r = emulated(sets[s]) ? sets[0] : sets[s];
      throw std::runtime_error("compare: " + e.path +
                               " holds EMULATED timings (topology lab) and " + r.path +
                               " does not: not comparable");
    }
  Comparison cmp;
  cmp.options = options;
  const Metric& metric = options.metric;

  std::map<std::string, int> label_uses;
  for (const ResultSet& rs : sets) ++label_uses[stem_label(rs.path)];
  for (std::size_t s = 0; s < sets.size(); ++s) {
    std::string label = stem_label(sets[s].path);
    if (label_uses[label] > 1) label = "#" + std::to_string(s + 1) + ":" + label;
    cmp.sets.push_back({label, sets[s].path, sets[s].machine, sets[s].complete});
    if (!sets[s].complete) {
      cmp.warnings.push_back(label +
                             " is an incomplete run (\"complete\": false): its missing "
                             "cases show as one-sided");
    }
  }

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
        CompareRow row;
        row.key = key;
        row.mechanism = c.mechanism;
        row.mode = mode_id(c.mode);
        row.placement = c.placement;
        row.pair = c.pair;
        row.params = c.params_json;
        row.cells.resize(sets.size());
        cmp.rows.push_back(std::move(row));
      }
      CompareCell& cell = cmp.rows[it->second].cells[s];
      cell.present = true;
      cell.status = c.status;
      if (!c.ok()) continue;
      Extracted e = extract(c, metric.id);
      cell.value = e.value;
      cell.repetitions = std::move(e.repetitions);
      cell.sd_pct = sd_percent(cell.repetitions);
    }
  }

  bool any_value = false, any_without_reps = false;
  std::map<std::pair<std::size_t, std::size_t>, int> too_few;  // (n base, n other) -> cases
  for (CompareRow& row : cmp.rows) {
    const CompareCell& base = row.cells[0];
    for (const CompareCell& c : row.cells) {
      any_value = any_value || c.value.has_value();
      any_without_reps = any_without_reps || (c.value && c.repetitions.size() < 2);
    }
    if (!base.value || *base.value == 0) continue;
    for (std::size_t s = 1; s < row.cells.size(); ++s) {
      CompareCell& c = row.cells[s];
      if (!c.value) continue;
      c.ratio = *c.value / *base.value;
      c.change_pct = (metric.higher_is_better ? *c.ratio - 1.0 : 1.0 - *c.ratio) * 100.0;
      if (options.noise) c.aa_floor_pct = options.noise->floor(row.key, metric.id);
      if (base.repetitions.size() < 2 || c.repetitions.size() < 2) continue;
      c.test = mann_whitney_u(base.repetitions, c.repetitions);
      if (auto hl = hodges_lehmann_ratio(base.repetitions, c.repetitions, options.confidence))
        c.interval = *hl;
      if (base.repetitions.size() < options.min_repetitions ||
          c.repetitions.size() < options.min_repetitions)
        ++too_few[{base.repetitions.size(), c.repetitions.size()}];
    }
  }
  // Multiple comparisons: the q-values of one set against the base, over the cases tested there.
  for (std::size_t s = 1; s < sets.size(); ++s) {
    std::vector<CompareCell*> tested;
    std::vector<double> p;
    for (CompareRow& row : cmp.rows)
      if (row.cells[s].test) {
        tested.push_back(&row.cells[s]);
        p.push_back(row.cells[s].test->p_value);
      }
    const std::vector<double> q = bh_qvalues(p);
    for (std::size_t i = 0; i < tested.size(); ++i) tested[i]->q_value = q[i];
  }
  for (CompareRow& row : cmp.rows) {
    const CompareCell& base = row.cells[0];
    for (std::size_t s = 1; s < row.cells.size(); ++s) {
      CompareCell& c = row.cells[s];
      if (!c.q_value) continue;
      const bool enough = base.repetitions.size() >= options.min_repetitions &&
                          c.repetitions.size() >= options.min_repetitions;
      // The test already weighs the repetitions' spread; the sets' own sd% is no floor: it does
      // not shrink with more repetitions, so on a machine whose repetitions spread 10-20 % it hides
      // every 10 % change (README.md#compare-the-verdict). The machine's A/A change is.
      const double floor = c.aa_floor_pct.value_or(0.0);
      c.significant = enough && *c.q_value < options.alpha && std::fabs(*c.change_pct) > floor;
    }
  }
  if (!any_value) {
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
  if (kind_of(metric.id) == MetricKind::kCounter) {
    cmp.warnings.push_back("counters are counted in one pass of their own per case, so \"" +
                           metric.id + "\" has no per-repetition values: shown, never tested");
  } else if (any_without_reps) {
    cmp.warnings.push_back("some cases have fewer than 2 per-repetition values of \"" + metric.id +
                           "\" (result sets of schema 1 keep them for median, p99, mean and tps "
                           "only): no sd%, q-value, interval or significance for them");
  }
  if (options.noise) {
    int without = 0;
    for (const CompareRow& row : cmp.rows)
      for (std::size_t s = 1; s < row.cells.size(); ++s)
        without += row.cells[s].ratio && !row.cells[s].aa_floor_pct;
    if (without > 0)
      cmp.warnings.push_back(
          std::to_string(without) + " compared case(s) have no A/A noise floor of \"" + metric.id +
          "\" in " + options.noise->path + ": only their q-value bounds what is starred");
    for (const CompareSet& set : cmp.sets)
      if (!options.noise->hostname.empty() && !set.machine.hostname.empty() &&
          set.machine.hostname != options.noise->hostname) {
        cmp.warnings.push_back("the noise floor was measured on " + options.noise->hostname + ", " +
                               set.label + " ran on " + set.machine.hostname);
        break;
      }
  }
  for (const auto& [sizes, count] : too_few) {
    cmp.warnings.push_back(
        std::to_string(count) + " comparison(s) with " + std::to_string(sizes.first) + " vs " +
        std::to_string(sizes.second) + " repetitions: the smallest two-sided p the test can give " +
        "is " + fmt("%.4f", mann_whitney_min_p(sizes.first, sizes.second)) +
        " and their interval covers " +
        fmt("%.0f", 100 * hodges_lehmann(std::vector<double>(sizes.first, 1.0),
                                         std::vector<double>(sizes.second, 1.0), options.confidence)
                              .confidence) +
        " %; nothing is marked significant below " + std::to_string(options.min_repetitions) +
        " per side (run with --benchmark_repetitions=" + std::to_string(options.min_repetitions) +
        " or more)");
  }
  return cmp;
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
  }
  return "";
}

}  // namespace wb
