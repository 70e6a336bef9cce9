#include "analysis/report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "analysis/predict_results.h"
#include "common/schema/blocked.h"
#include "common/schema/histogram.h"
#include "common/schema/placement.h"
#include "common/schema/registry.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {
namespace {

using nlohmann::json;

// ---- reading cases ----------------------------------------------------------------------------

std::optional<double> number_at(const json& obj, const char* key) {
  if (obj.is_object() && obj.contains(key) && obj[key].is_number()) return obj[key].get<double>();
  return std::nullopt;
}

bool is_matrix(const CaseView& c) { return c.kind == PlacementKind::kMatrix; }

// Params that differ between the non-matrix cases of each mechanism/mode, so that rows of a sweep
// (payload, work_ns, W x S) get distinct labels.
std::map<std::string, std::vector<std::string>> varying_params(const std::vector<CaseView>& cases) {
  std::map<std::string, std::vector<const json*>> params;
  for (const CaseView& c : cases)
    if (!is_matrix(c)) params[c.mech_mode()].push_back(&c.params_json);
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& [mm, ps] : params) out[mm] = wb::varying_params(ps);
  return out;
}

// "pipe/processes", "pipe/processes payload=64", "binder-like/processes s=4 w=2/pair1"
std::string row_label(const CaseView& c,
                      const std::map<std::string, std::vector<std::string>>& vary) {
  std::string label = c.mech_mode();
  // format_params prints every param when given no keys: only when some vary.
  if (auto it = vary.find(label); it != vary.end() && !it->second.empty())
    if (const std::string p = format_params(c.params_json, it->second); !p.empty())
      label += " " + p;
  return label + c.pair;
}

// ---- output helpers ---------------------------------------------------------------------------

std::string ns_text(const std::optional<double>& v) { return v ? fmt("%.0f", *v) : "-"; }

// A character of a name from a result set, in a gnuplot script or data file: control characters
// (a newline would start a command line, "!..." a shell) become '?'.
char gp_char(char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? '?' : ch; }

// A gnuplot string literal in a script: single-quoted, where gnuplot substitutes nothing (no
// backquoted command, no escape; a double-quoted string runs `...`); a quote is doubled.
std::string gp_quote(const std::string& s) {
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("''") : std::string(1, gp_char(ch));
  return out + "'";
}

// A string column of a data file: double-quoted (gnuplot reads nothing else as one column), with
// no double quote inside. gnuplot never evaluates data.
std::string dat_quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? '\'' : gp_char(ch);
  return out + "\"";
}

// Script preamble and trailer: PNG through pngcairo when this gnuplot has it (antialiased), else
// libgd's png; then the same plot as SVG. Every script is self-contained and runs from its folder.
std::string gp_begin(const std::string& stem, int width, int height) {
  std::ostringstream s;
  s << "# Rendered by wakebench report; run from this folder: gnuplot " << stem << ".gp\n"
    << "# Writes " << stem << ".png and " << stem << ".svg from " << stem << ".dat.\n"
    << "if (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {\n"
    << "  set terminal pngcairo size " << width << "," << height << " noenhanced font \"sans,10\"\n"
    << "} else {\n"
    << "  set terminal png size " << width << "," << height << " noenhanced\n"
    << "}\n"
    << "set output " << gp_quote(stem + ".png") << "\n"
    << "set datafile missing 'NaN'\n";
  return s.str();
}

std::string gp_end(const std::string& stem, int width, int height) {
  std::ostringstream s;
  s << "set terminal svg size " << width << "," << height << " noenhanced font \"sans,10\"\n"
    << "set output " << gp_quote(stem + ".svg") << "\n"
    << "replot\n"
    << "unset output\n";
  return s.str();
}

// Tics on a logarithmic axis from `lo` to `hi`: at 1, 2 and 5 times each power of ten when the
// data spans up to two of them (gnuplot would label only one or two), else at the powers of ten.
std::string log_tics(const char* axis, double lo, double hi) {
  std::ostringstream s;
  s << "set " << axis << "tics (";
  bool first = true;
  const std::vector<double> steps =
      hi / std::max(lo, 1.0) <= 300 ? std::vector<double>{1, 2, 5} : std::vector<double>{1};
  for (double decade = std::pow(10.0, std::floor(std::log10(std::max(lo, 1.0)))); decade <= hi * 10;
       decade *= 10)
    for (double m : steps)
      if (decade * m >= lo / 2 && decade * m <= hi * 2) {
        s << (first ? "" : ", ") << "'" << fmt("%.0f", decade * m) << "' "
          << fmt("%.0f", decade * m);
        first = false;
      }
  s << ")\n";
  return s.str();
}

// Blue (fast) to red (slow), readable in grey too.
constexpr const char* kPalette =
    "set palette defined (0 '#2c7bb6', 0.25 '#abd9e9', 0.5 '#ffffbf', 0.75 '#fdae61', 1 "
    "'#d7191c')\n";

// One plot: its data file and gnuplot script beside each other (stem.dat, stem.gp), listed in the
// index.
struct Plot {
  std::string stem, title, description, dat, gp;
};

// What one part of the report adds: its plots, the plots it could not draw (each with its reason)
// and its markdown summary tables for index.md.
struct Part {
  std::vector<Plot> plots;
  std::vector<std::string> skipped;
  std::string tables;
};

// The stems of one part's plots. A stem is a file name the report makes, never a string from the
// set: `prefix`, '-' and the name with '/' as '-' and every other character outside [A-Za-z0-9-]
// as '_' (so no '/' and no '.'), then "-2", "-3", ... where two names come out alike.
class Stems {
 public:
  std::string take(const std::string& prefix, const std::string& name) {
    std::string base = prefix + "-" + name;
    for (char& ch : base)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = ch == '/' ? '-' : '_';
    std::string stem = base;
    for (int n = 2; !taken_.insert(stem).second; ++n) stem = base + "-" + std::to_string(n);
    return stem;
  }

 private:
  std::set<std::string> taken_;
};

Part not_drawn(std::string reason) { return Part{{}, {std::move(reason)}, ""}; }

// ---- heat map: median RTT by placement x mechanism/mode -----------------------------------------

using Grid = std::map<std::pair<std::string, std::string>, std::string>;  // (row, column) -> text

// The heat map's numbers as a markdown table: the median, else the case's status, else "-".
std::string heatmap_table(const std::vector<std::string>& rows,
                          const std::vector<std::string>& cols,
                          const std::map<std::pair<std::string, std::string>, double>& value,
                          const Grid& status) {
  std::ostringstream t;
  t << "\n### Median RTT (ns) by placement\n\n| mechanism/mode |";
  for (const std::string& c : cols) t << " " << md_escape(c) << " |";
  t << "\n|---|";
  for (std::size_t i = 0; i < cols.size(); ++i) t << "--:|";
  t << "\n";
  for (const std::string& r : rows) {
    t << "| " << md_escape(r) << " |";
    for (const std::string& c : cols) {
      auto v = value.find({r, c});
      auto s = status.find({r, c});
      t << " "
        << (v != value.end() ? fmt("%.0f", v->second) : (s != status.end() ? s->second : "-"))
        << " |";
    }
    t << "\n";
  }
  return t.str();
}

Part heatmap(const std::vector<CaseView>& cases) {
  const auto vary = varying_params(cases);
  std::vector<std::string> rows, cols;
  std::map<std::string, int> rank;  // column -> placement rank
  Grid status;                      // non-ok cells
  std::map<std::pair<std::string, std::string>, double> value;
  for (const CaseView& c : cases) {
    if (is_matrix(c)) continue;
    const std::string row = row_label(c, vary), col = c.placement;
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
    if (std::find(cols.begin(), cols.end(), col) == cols.end()) cols.push_back(col);
    rank[col] = placement_rank(c);
    if (c.ok())
      value[{row, col}] = *c.rtt.get("median");
    else
      status[{row, col}] = status_id(c.status);
  }
  if (value.empty()) return not_drawn("heat map of median RTT: no ok case outside a matrix run");
  std::stable_sort(cols.begin(), cols.end(),
                   [&](const std::string& a, const std::string& b) { return rank[a] < rank[b]; });

  std::ostringstream dat;
  dat << "# median round-trip time (ns) by placement (x index) and mechanism/mode (y index)\n"
      << "# x y median_ns placement row\n";
  for (std::size_t y = 0; y < rows.size(); ++y) {
    for (std::size_t x = 0; x < cols.size(); ++x) {
      auto it = value.find({rows[y], cols[x]});
      if (it == value.end()) continue;
      dat << x << ' ' << y << ' ' << fmt("%.1f", it->second) << ' ' << dat_quote(cols[x]) << ' '
          << dat_quote(rows[y]) << "\n";
    }
  }
  const int width = std::max(700, 160 + 110 * static_cast<int>(cols.size()));
  const int height = std::max(400, 140 + 40 * static_cast<int>(rows.size()));
  std::ostringstream gp;
  gp << gp_begin("heatmap", width, height) << kPalette
     << "set title 'Median round-trip time by placement class (blank: not measured or not ok)'\n"
     << "set xlabel 'placement of the wakee relative to the waker (class; kernel = unpinned)'\n"
     << "set ylabel 'mechanism/mode'\n"
     << "set cblabel 'median RTT (ns)'\n"
     << "set xrange [-0.5:" << cols.size() - 0.5 << "]\n"
     << "set yrange [" << rows.size() - 0.5 << ":-0.5]\n"  // first row on top
     << "set xtics rotate by -30 (";
  for (std::size_t x = 0; x < cols.size(); ++x)
    gp << (x ? ", " : "") << gp_quote(cols[x]) << " " << x;
  gp << ")\nset ytics (";
  for (std::size_t y = 0; y < rows.size(); ++y)
    gp << (y ? ", " : "") << gp_quote(rows[y]) << " " << y;
  gp << ")\nset tics nomirror\nunset key\n"
     << "plot 'heatmap.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder "
        "lc palette, \\\n"
     << "     '' using 1:2:(sprintf('%.0f', $3)) with labels\n"
     << gp_end("heatmap", width, height);
  const Plot plot{"heatmap", "Median RTT by placement class and mechanism",
                  "Each cell is the median round-trip time (ns) of one case; pinned classes from "
                  "the nearest (same-cpu) to the farthest, then kernel placement.",
                  dat.str(), gp.str()};
  return Part{{plot}, {}, heatmap_table(rows, cols, value, status)};
}

// ---- RTT distributions per placement, from the histograms: CDF and histogram per mechanism ------

// 8 bins per power of two (9 % wide) for the drawn histogram: 1 % buckets would be noise.
constexpr int kBinsPerOctave = 8;

// "# title" blocks of the CDF on a "nines" axis, -log10(1 - F), so that p50, p90, p99 and p99.9
// are evenly spaced: one point at the upper end of each non-empty bucket (the last at
// 1 - F = 1 / count, the resolution of the sample).
std::string cdf_block(const Histogram& h) {
  std::ostringstream b;
  const double n = static_cast<double>(h.count());
  double below = 0;
  const int64_t first = h.buckets().begin()->first;
  b << Histogram::lower_bound(first) << " 0\n";
  for (auto [i, count] : h.buckets()) {
    below += static_cast<double>(count);
    const double tail = std::max(1.0 - below / n, 1.0 / n);
    b << Histogram::lower_bound(i) + Histogram::width(i) << ' ' << fmt("%.4f", -std::log10(tail))
      << "\n";
  }
  return b.str();
}

// Share of round trips (%) per 1/8-octave bin, empty bins between included (drawn as steps).
std::string histogram_block(const Histogram& h) {
  std::map<int, double> bins;
  for (auto [i, count] : h.buckets()) {
    const double mid = static_cast<double>(Histogram::lower_bound(i)) +
                       static_cast<double>(Histogram::width(i)) / 2.0;
    bins[static_cast<int>(std::floor(std::log2(std::max(mid, 1.0)) * kBinsPerOctave))] +=
        static_cast<double>(count);
  }
  std::ostringstream b;
  for (int k = bins.begin()->first; k <= bins.rbegin()->first; ++k) {
    const double share = bins.count(k) ? 100.0 * bins[k] / static_cast<double>(h.count()) : 0.0;
    b << fmt("%.1f", std::exp2((k + 0.5) / kBinsPerOctave)) << ' ' << fmt("%.4f", share) << "\n";
  }
  return b.str();
}

// The mechanisms of the ok cases outside a matrix run, in the order of their first case.
std::vector<std::string> distribution_mechanisms(const std::vector<CaseView>& cases) {
  std::vector<std::string> mechanisms;
  for (const CaseView& c : cases) {
    if (!c.ok() || is_matrix(c)) continue;
    if (std::find(mechanisms.begin(), mechanisms.end(), c.mechanism) == mechanisms.end())
      mechanisms.push_back(c.mechanism);
  }
  return mechanisms;
}

// One case in a distribution plot: its title and the histogram of all its repetitions.
struct Curve {
  std::string title;
  Histogram h;
};

// The curves of `mech`'s ok cases outside a matrix run, by mode then placement, titled
// "processes/llc" and the varying params or the pair; a case that keeps no histogram has none.
std::vector<Curve> distribution_curves(
    const std::vector<CaseView>& cases, const std::string& mech,
    const std::map<std::string, std::vector<std::string>>& vary) {
  std::vector<const CaseView*> series;
  for (const CaseView& c : cases)
    if (c.ok() && !is_matrix(c) && c.mechanism == mech) series.push_back(&c);
  std::stable_sort(series.begin(), series.end(), [](const CaseView* a, const CaseView* b) {
    return std::make_pair(mode_id(a->mode), placement_rank(*a)) <
           std::make_pair(mode_id(b->mode), placement_rank(*b));
  });
  std::vector<Curve> curves;
  for (const CaseView* c : series) {
    Histogram h;
    for (const Histogram& r : c->rtt_hist) h.merge(r);
    if (h.empty()) continue;
    std::string title = std::string(mode_id(c->mode)) + "/" + c->placement;
    const std::string label = row_label(*c, vary);
    const auto sp = label.find(' ');
    title += sp != std::string::npos ? label.substr(sp) : c->pair;
    curves.push_back({std::move(title), std::move(h)});
  }
  return curves;
}

// The x range of the curves, for the tics: the lowest and the highest bucket's lower bound.
std::pair<double, double> rtt_range(const std::vector<Curve>& curves) {
  double lo = INFINITY, hi = 0;
  for (const Curve& c : curves) {
    lo = std::min(lo, static_cast<double>(Histogram::lower_bound(c.h.buckets().begin()->first)));
    hi = std::max(hi, static_cast<double>(Histogram::lower_bound(c.h.buckets().rbegin()->first)));
  }
  return {lo, hi};
}

// A data file's blocks, one per curve under "# title", apart by two blank lines (gnuplot's index).
std::string curve_blocks(const std::vector<Curve>& curves, std::string (*block)(const Histogram&)) {
  std::string out;
  for (std::size_t i = 0; i < curves.size(); ++i)
    out += (i ? "\n\n# " : "# ") + curves[i].title + "\n" + block(curves[i].h);
  return out;
}

// The plot command that draws every block of `dat` with `style`, titled by its curve.
std::string curves_command(const std::string& dat, const std::vector<Curve>& curves,
                           const char* style) {
  std::ostringstream s;
  for (std::size_t i = 0; i < curves.size(); ++i)
    s << (i ? ", \\\n     " : "plot ") << gp_quote(dat) << " index " << i << " using 1:2 with "
      << style << " lw 2 title " << gp_quote(curves[i].title);
  return s.str();
}

Plot cdf_plot(const std::string& stem, const std::string& mech, const std::vector<Curve>& curves) {
  std::ostringstream dat;
  dat << "# " << mech << ": CDF of the round-trip time per case, from the repetitions' "
      << "histograms\n# one block per case (gnuplot index); columns: rtt_ns nines, "
      << "nines = -log10(1 - F)\n"
      << curve_blocks(curves, cdf_block);
  const auto [lo, hi] = rtt_range(curves);
  std::ostringstream gp;
  gp << gp_begin(stem, 1000, 600) << "set title "
     << gp_quote(mech + ": CDF of the round-trip time per placement") << "\n"
     << "set xlabel 'round-trip time (ns, log scale)'\n"
     << "set ylabel 'share of round trips at or below (percentile, log scale of the tail)'\n"
     << "set logscale x\nset grid\nset key outside right top\nset yrange [0:*]\n"
     << log_tics("x", lo, hi)
     << "set ytics ('0' 0, 'p50' 0.30103, 'p90' 1, 'p99' 2, 'p99.9' 3, 'p99.99' 4, "
        "'p99.999' 5)\n"
     << curves_command(stem + ".dat", curves, "lines") << "\n"
     << gp_end(stem, 1000, 600);
  return {stem, mech + ": RTT CDF per placement",
          "Cumulative distribution of every round trip of each " + mech +
              " case (all repetitions), from the log-linear histograms of the result set "
              "(buckets <= 0.8 % wide); the y axis spaces p50, p90, p99, p99.9 evenly.",
          dat.str(), gp.str()};
}

Plot histogram_plot(const std::string& stem, const std::string& mech,
                    const std::vector<Curve>& curves) {
  std::ostringstream dat;
  dat << "# " << mech << ": share of round trips (%) per 1/" << kBinsPerOctave
      << "-octave bin, from the repetitions' histograms\n"
      << "# one block per case (gnuplot index); columns: bin_center_ns share_pct\n"
      << curve_blocks(curves, histogram_block);
  const auto [lo, hi] = rtt_range(curves);
  std::ostringstream gp;
  gp << gp_begin(stem, 1000, 600) << "set title "
     << gp_quote(mech + ": histogram of the round-trip time per placement") << "\n"
     << "set xlabel 'round-trip time (ns, log scale)'\n"
     << "set ylabel 'round trips per 1/" << kBinsPerOctave << "-octave bin (%)'\n"
     << "set logscale x\nset grid\nset key outside right top\nset yrange [0:*]\n"
     << log_tics("x", lo, hi) << curves_command(stem + ".dat", curves, "histeps") << "\n"
     << gp_end(stem, 1000, 600);
  return {stem, mech + ": RTT histogram per placement",
          "Share of the round trips of each " + mech + " case in bins 9 % wide (1/" +
              std::to_string(kBinsPerOctave) +
              " of a power of two), from the result set's histograms.",
          dat.str(), gp.str()};
}

// Per mechanism, the CDF and the histogram of each case's round trips.
Part distributions(const std::vector<CaseView>& cases) {
  const std::vector<std::string> mechanisms = distribution_mechanisms(cases);
  if (mechanisms.empty()) return not_drawn("RTT distributions: no ok case outside a matrix run");
  const auto vary = varying_params(cases);
  Part part;
  Stems stems;
  for (const std::string& mech : mechanisms) {
    const std::vector<Curve> curves = distribution_curves(cases, mech, vary);
    if (curves.empty()) {
      part.skipped.push_back("RTT distribution of " + mech +
                             ": no case keeps histograms (a result set of schema 1)");
      continue;
    }
    part.plots.push_back(cdf_plot(stems.take("rtt", mech), mech, curves));
    part.plots.push_back(histogram_plot(stems.take("hist", mech), mech, curves));
  }
  return part;
}

// ---- predicted vs measured RTT per policy -------------------------------------------------------

// The mainline-first order of docs/result-set.md#policies; others after, by name.
std::vector<std::string> policy_order(const std::set<std::string>& present) {
  const std::vector<std::string> known = registry().policy_ids();
  std::vector<std::string> out;
  for (const std::string& p : known)
    if (present.count(p)) out.push_back(p);
  for (const std::string& p : present)
    if (std::find(known.begin(), known.end(), p) == known.end()) out.push_back(p);
  return out;
}

// The class a policy puts the wakee on most often, with its share when it is not all of them.
std::string main_class(const json& classes) {
  std::string best;
  double share = -1;
  for (const auto& [cls, v] : classes.items())
    if (v.is_number() && v.get<double>() > share) {
      best = cls;
      share = v.get<double>();
    }
  if (best.empty()) return "?";
  return share >= 0.995 ? best : best + " " + fmt("%.0f", 100 * share) + "%";
}

// predictions.cases[] as `wakebench predict --results` writes it: per mechanism, mode and
// kernel placement, each policy's predicted class distribution and RTT (the distribution costed
// with the pinned medians), and the measured kernel-placement RTT. Null when absent or empty.
// Read from the set's `predictions` as recorded (open JSON: older sets hold older fields).
const json* prediction_entries(const json& predictions) {
  const json* entries = prediction_cases(predictions);
  return entries && !entries->empty() ? entries : nullptr;
}

// The policies some entry predicts, in policy_order.
std::vector<std::string> predicted_policies(const json& entries) {
  std::set<std::string> present;
  for (const json& e : entries)
    if (e.contains("policies") && e["policies"].is_object())
      for (const auto& [p, v] : e["policies"].items()) present.insert(p);
  return policy_order(present);
}

// A policy's placement in the table: its main class, "~" when the model calls it uncertain (the
// marker is its steady state, its range is in `wakebench predict`: policies.<id>.uncertain), then
// the predictor's word for the kernel's placements (docs/policy-model.md#verdicts); "-" when the
// entry has no classes for it.
std::string policy_placement(const json& pol) {
  std::string cls = pol.is_object() && pol.contains("classes")
                        ? main_class(pol["classes"]) + (pol.contains("uncertain") ? " ~" : "")
                        : "-";
  if (pol.is_object() && pol.contains("verdict") && pol["verdict"].is_string())
    cls += ", " + pol["verdict"].get<std::string>();
  return cls;
}

// One kernel-placed case: per policy (in the order given) its predicted RTT and placement, and
// the measured RTT.
struct PredictionRow {
  std::string label;
  std::vector<std::optional<double>> predicted;
  std::vector<std::string> classes;
  std::optional<double> measured;
};

// The entries' rows; an entry with neither a predicted nor a measured RTT has none.
std::vector<PredictionRow> prediction_rows(const json& entries,
                                           const std::vector<std::string>& policies) {
  std::vector<PredictionRow> rows;
  for (const json& e : entries) {
    PredictionRow r;
    r.label = entry_label(e);
    for (const std::string& p : policies) {
      const json pol = e.contains("policies") ? e["policies"].value(p, json()) : json();
      r.predicted.push_back(pol.is_object() ? number_at(pol, "predicted_rtt_ns") : std::nullopt);
      r.classes.push_back(policy_placement(pol));
    }
    if (e.contains("measured") && e["measured"].is_object())
      r.measured = number_at(e["measured"], "rtt_ns");
    bool any = r.measured.has_value();
    for (const auto& v : r.predicted) any = any || v.has_value();
    if (any) rows.push_back(std::move(r));
  }
  return rows;
}

std::string predictions_dat(const std::vector<std::string>& policies,
                            const std::vector<PredictionRow>& rows) {
  std::ostringstream dat;
  dat << "# predicted RTT (ns) of each policy: its steady-state class distribution costed with "
         "the\n"
      << "# median RTT measured pinned on each class; last column: measured median RTT under\n"
      << "# kernel placement (this kernel's policy). NaN: not predictable or not measured.\n"
      << "row";
  for (const std::string& p : policies) dat << ' ' << dat_quote(p);
  dat << ' ' << dat_quote("measured: kernel placement") << "\n";
  for (const PredictionRow& r : rows) {
    dat << dat_quote(r.label);
    for (const auto& v : r.predicted) dat << ' ' << (v ? fmt("%.1f", *v) : "NaN");
    dat << ' ' << (r.measured ? fmt("%.1f", *r.measured) : "NaN") << "\n";
  }
  return dat.str();
}

std::string predictions_table(const std::vector<std::string>& policies,
                              const std::vector<PredictionRow>& rows) {
  std::ostringstream t;
  t << "\n### Predicted vs measured RTT (ns)\n\nPredicted = each policy's steady-state "
       "placement (class in brackets) costed with the median RTT measured pinned on that "
       "class with the case's own knobs; measured = the case itself. ~: the model "
       "calls the placement uncertain (other steady states are possible, each costed "
       "differently: `wakebench predict --results`); the figure is its steady state. "
       "After the class, the predictor's verdict on the kernel's placements (MATCH, "
       "EXPLAINED, NO-PREDICTION, MISS: docs/policy-model.md#verdicts)."
       "\n\n"
       "| kernel-placed case |";
  for (const std::string& p : policies) t << " " << p << " |";
  t << " measured (kernel) |\n|---|";
  for (std::size_t i = 0; i <= policies.size(); ++i) t << "--:|";
  t << "\n";
  for (const PredictionRow& r : rows) {
    t << "| " << md_escape(r.label) << " |";
    for (std::size_t i = 0; i < policies.size(); ++i)
      t << " " << (r.predicted[i] ? fmt("%.0f", *r.predicted[i]) : "n/a") << " ("
        << md_escape(r.classes[i]) << ") |";
    t << " " << (r.measured ? fmt("%.0f", *r.measured) : "not measured") << " |\n";
  }
  return t.str();
}

// A dot plot: one row per kernel-placed case, one marker per policy (offset a little so that
// equal predictions stay visible), the measured RTT as a black diamond. Its height grows with the
// rows, never its width, so it stays readable at the size it is rendered.
std::string predictions_gp(const std::vector<std::string>& policies,
                           const std::vector<PredictionRow>& rows) {
  const int columns = static_cast<int>(policies.size()) + 1;
  const int n = static_cast<int>(rows.size());
  double lo = INFINITY, hi = 0;
  for (const PredictionRow& r : rows) {
    std::vector<std::optional<double>> all = r.predicted;
    all.push_back(r.measured);
    for (const auto& v : all)
      if (v && *v > 0) lo = std::min(lo, *v), hi = std::max(hi, *v);
  }
  const int height = std::max(420, 150 + 34 * n);
  std::ostringstream gp;
  gp << gp_begin("predicted", 1100, height)
     << "set title 'Predicted (each policy, costed with the pinned RTT) vs measured RTT'\n"
     << "set xlabel 'median round-trip time (ns, log scale)'\n"
     << "set ylabel 'kernel-placed case'\n"
     << "set logscale x\nset grid xtics ytics\nset key outside right top\n"
     << (hi > 0 ? log_tics("x", lo, hi) : "") << "set yrange [" << n - 0.5
     << ":-0.5]\n"  // first row on top
     << "set ytics (";
  for (int y = 0; y < n; ++y) gp << (y ? ", " : "") << gp_quote(rows[y].label) << " " << y;
  gp << ")\n"
     << "plot for [col=2:" << columns << "] 'predicted.dat' using col:($0 + (col - "
     << (columns + 1) / 2.0 << ") * 0.07) "
     << "with points pt (col % 6 + 4) ps 1.6 lw 2 title columnheader(col), \\\n"
     << "     'predicted.dat' using " << columns + 1
     << ":0 with points pt 13 ps 2.4 lc rgb 'black' title columnheader(" << columns + 1 << ")\n"
     << gp_end("predicted", 1100, height);
  return gp.str();
}

// Each policy's predicted RTT of the kernel-placed cases next to the measured one.
Part predictions(const json& recorded) {
  const json* entries = prediction_entries(recorded);
  if (!entries)
    return not_drawn(
        "predicted vs measured RTT per policy: the result set has no predictions "
        "(`wakebench predict --results FILE --json` computes them)");
  const std::vector<std::string> policies = predicted_policies(*entries);
  const std::vector<PredictionRow> rows = prediction_rows(*entries, policies);
  if (rows.empty())
    return not_drawn(
        "predicted vs measured RTT per policy: no prediction could be costed (no ok pinned case "
        "of a predicted class) and no kernel case was measured");
  const Plot plot{"predicted", "Predicted vs measured RTT per policy",
                  "For each kernel-placed case: one marker per policy at its predicted RTT (its "
                  "steady-state placement costed with the pinned medians); the black diamond is "
                  "the median RTT measured with kernel placement. Where the model calls a "
                  "placement uncertain (~ in the table below) the kernel may settle in another "
                  "steady state, so a diamond away from a policy's marker is not by itself a "
                  "miss: `wakebench predict --results` gives the range.",
                  predictions_dat(policies, rows), predictions_gp(policies, rows)};
  return Part{{plot}, {}, predictions_table(policies, rows)};
}

// ---- observed placement of kernel cases ---------------------------------------------------------

Part observed(const std::vector<CaseView>& cases) {
  std::vector<const CaseView*> kcases;
  std::vector<std::string> classes;
  for (const CaseView& c : cases) {
    if (!c.observed.recorded) continue;
    kcases.push_back(&c);
    for (const auto& [cls, n] : c.observed.histogram)
      if (std::find(classes.begin(), classes.end(), cls) == classes.end()) classes.push_back(cls);
  }
  if (kcases.empty())
    return not_drawn(
        "observed placement histogram: no case with kernel placement recorded "
        "an \"observed\" histogram");
  std::stable_sort(classes.begin(), classes.end(), [](const std::string& a, const std::string& b) {
    return class_rank(a) < class_rank(b);
  });
  std::ostringstream dat, tables;
  dat << "# share of round trips (%) by the wakee's CPU class relative to the waker's\ncase";
  for (const std::string& cls : classes) dat << ' ' << dat_quote(cls);
  dat << "\n";
  tables << "\n### Observed placement (kernel cases)\n\n| case | round trips |";
  for (const std::string& cls : classes) tables << " " << cls << " % |";
  tables << " migrations waker | migrations wakee |\n|---|--:|";
  for (std::size_t i = 0; i < classes.size() + 2; ++i) tables << "--:|";
  tables << "\n";
  for (const CaseView* c : kcases) {
    std::map<std::string, double> h(c->observed.histogram.begin(), c->observed.histogram.end());
    double total = 0;
    for (const auto& [cls, n] : h) total += n;
    dat << dat_quote(c->name);
    tables << "| " << md_escape(c->name) << " | " << fmt("%.0f", total) << " |";
    for (const std::string& cls : classes) {
      const double pct = total > 0 ? 100.0 * h[cls] / total : 0;
      dat << ' ' << fmt("%.3f", pct);
      tables << " " << fmt("%.1f", pct) << " |";
    }
    dat << "\n";
    for (const auto& v : c->observed.migrations)
      tables << " " << (v ? fmt("%.0f", *v) : "-") << " |";
    tables << "\n";
  }
  const int width = std::max(700, 260 + 90 * static_cast<int>(kcases.size()));
  std::ostringstream gp;
  gp << gp_begin("observed", width, 520)
     << "set title 'Where the kernel put the wakee (kernel placement cases)'\n"
     << "set xlabel 'case'\n"
     << "set ylabel 'round trips (%)'\n"
     << "set style data histograms\nset style histogram rowstacked\n"
     << "set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
     << "set yrange [0:100]\nset grid ytics\n"
     << "set key outside right top title 'wakee CPU vs waker CPU'\n"
     << "set xtics rotate by -30\n"
     << "plot for [col=2:" << classes.size() + 1
     << "] 'observed.dat' using col:xtic(1) title columnheader(col)\n"
     << gp_end("observed", width, 520);
  const Plot plot{"observed", "Observed placement of kernel cases",
                  "For each case run unpinned: the share of round trips in which the wakee ran on "
                  "the waker's CPU, its SMT sibling, the same LLC, and so on.",
                  dat.str(), gp.str()};
  return Part{{plot}, {}, tables.str()};
}

// ---- CPU x CPU matrix ---------------------------------------------------------------------------

Part matrices(const std::vector<CaseView>& cases) {
  std::map<std::string, std::vector<const CaseView*>> groups;  // mechanism/mode -> cells
  for (const CaseView& c : cases)
    if (is_matrix(c) && c.cpus) groups[c.mech_mode()].push_back(&c);
  if (groups.empty())
    return not_drawn(
        "CPU x CPU heat map: not a matrix run (no \"<mechanism>/<mode>/matrix/"
        "<a>-<b>\" case)");
  Part part;
  Stems stems;
  for (const auto& [mm, cells] : groups) {
    const std::string stem = stems.take("matrix", mm);
    std::set<int> cpus;
    std::ostringstream dat;
    dat << "# " << mm << ": median round-trip time (ns) per ordered CPU pair\n"
        << "# wakee_cpu waker_cpu median_ns\n";
    int points = 0;
    for (const CaseView* c : cells) {
      const auto [waker, wakee] = *c->cpus;
      cpus.insert(waker);
      cpus.insert(wakee);
      if (!c->ok()) continue;
      dat << wakee << ' ' << waker << ' ' << fmt("%.1f", *c->rtt.get("median")) << "\n";
      ++points;
    }
    if (points == 0) {
      part.skipped.push_back("CPU x CPU heat map of " + mm + ": no ok cell");
      continue;
    }
    const int lo = *cpus.begin(), hi = *cpus.rbegin();
    const int n = hi - lo + 1;
    const int side = std::clamp(140 + 28 * n, 500, 1400);
    std::ostringstream gp;
    gp << gp_begin(stem, side + 160, side) << kPalette << "set title "
       << gp_quote(mm + ": median round-trip time per CPU pair") << "\n"
       << "set xlabel 'wakee CPU (OS index)'\nset ylabel 'waker CPU (OS index)'\n"
       << "set cblabel 'median RTT (ns)'\n"
       << "set xrange [" << lo - 0.5 << ":" << hi + 0.5 << "]\n"
       << "set yrange [" << hi + 0.5 << ":" << lo - 0.5 << "]\n"  // CPU 0 on top
       << "set size ratio -1\nset tics nomirror\nunset key\n"
       << (n > 16 ? "set xtics 0, " + std::to_string((n + 15) / 16) + "\n" : "set xtics 1\n")
       << (n > 16 ? "set ytics 0, " + std::to_string((n + 15) / 16) + "\n" : "set ytics 1\n")
       << "plot " << gp_quote(stem + ".dat")
       << " using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 "
       << "noborder lc palette"
       << (n <= 16 ? ", \\\n     '' using 1:2:(sprintf('%.0f', $3)) with labels" : "") << "\n"
       << gp_end(stem, side + 160, side);
    part.plots.push_back({stem, mm + ": CPU x CPU round-trip time",
                          "Median round-trip time for every ordered (waker, wakee) CPU pair of the "
                          "matrix run; blank cells were not measured or not ok.",
                          dat.str(), gp.str()});
  }
  return part;
}

// ---- summary of every case ----------------------------------------------------------------------

// The cases with marked repetitions (docs/result-set.md#blocked); "" when none is marked.
std::string marked_list(const std::vector<CaseView>& cases) {
  std::string items;
  for (const CaseView& c : cases)
    if (const std::string t = marked_text(c); !t.empty()) items += "- " + md_escape(t) + "\n";
  if (items.empty()) return "";
  return "\n### Marked repetitions\n\n" + items +
         "\nIn these a side blocked in its wait, or was "
         "preempted, in under " +
         fmt("%.0f", 100 * kMinBlockedShare) +
         "% of its round trips: they timed syscalls, not wakeups. The statistics above include "
         "them; `compare` leaves them out of its tests.\n";
}

Part case_table(const std::vector<CaseView>& cases) {
  std::ostringstream t;
  t << "\n### Cases\n\n| case | status | cpus | median ns | p99 ns | p99.9 ns | "
       "wakeup median ns | MdAPE % | repetitions |\n|---|---|---|--:|--:|--:|--:|--:|--:|\n";
  for (const CaseView& c : cases) {
    std::string cpus = "-";
    if (c.kind == PlacementKind::kKernel && !c.cpuset.empty())
      cpus = "cpuset " + format_cpu_list(c.cpuset);
    else if (c.cpus)
      cpus = std::to_string(c.cpus->first) + " -> " + std::to_string(c.cpus->second);
    std::string status(status_id(c.status));
    if (!c.reason.empty()) status += ": " + c.reason;
    const auto mdape = c.rtt.get("mdape_pct");
    t << "| " << md_escape(c.name) << " | " << md_escape(status) << " | " << cpus << " | "
      << ns_text(c.rtt.get("median")) << " | " << ns_text(c.rtt.get("p99")) << " | "
      << ns_text(c.rtt.get("p999")) << " | " << ns_text(c.wakeup.get("median")) << " | "
      << (mdape ? fmt("%.1f", *mdape) : "-") << " | " << c.repetitions.size() << " |\n";
  }
  return Part{{}, {}, t.str() + marked_list(cases)};
}

// ---- index.md -----------------------------------------------------------------------------------

std::string index_md(const ResultSet& rs, const std::vector<Part>& parts,
                     const std::string& render_later) {
  std::ostringstream index;
  index << "# wakebench report: " << md_escape(rs.path) << "\n\n"
        << "Machine: " << md_escape(machine_line(rs.machine)) << "  \n"
        << "Result set: " << md_escape(rs.path) << (rs.set.is_complete() ? "" : " (incomplete run)")
        << ", " << rs.views.size() << " cases.\n\n";
  if (!render_later.empty()) {
    index << "**Images not rendered**: gnuplot was not found on PATH. The data (`.dat`) and "
             "scripts (`.gp`) are here; render them with `"
          << render_later << "` (Debian: `apt-get install gnuplot-nox`).\n\n";
  }
  index << "## Plots\n";
  for (const Part& part : parts)
    for (const Plot& p : part.plots)
      index << "\n### " << p.title << "\n\n"
            << p.description << "\n\n"
            << "![" << p.title << "](" << p.stem << ".png)\n\n"
            << "[SVG](" << p.stem << ".svg) · [data](" << p.stem << ".dat) · [gnuplot script]("
            << p.stem << ".gp)\n";
  std::string skipped, tables;
  for (const Part& part : parts) {
    for (const std::string& s : part.skipped) skipped += "- " + s + "\n";
    tables += part.tables;
  }
  if (!skipped.empty()) index << "\n## Not drawn\n\n" << skipped;
  index << "\n## Summary tables\n" << tables;
  return index.str();
}

}  // namespace

ReportFiles report_files(const ResultSet& rs, const std::string& render_later) {
  const std::vector<Part> parts = {heatmap(rs.views),
                                   distributions(rs.views),
                                   predictions(json(rs.set.predictions.value_or(nullptr))),
                                   observed(rs.views),
                                   matrices(rs.views),
                                   case_table(rs.views)};
  ReportFiles out;
  for (const Part& part : parts) {
    for (const Plot& p : part.plots) {
      out.files.push_back({p.stem + ".dat", p.dat});
      out.files.push_back({p.stem + ".gp", p.gp});
      out.plots.push_back(p.stem);
    }
    out.skipped.insert(out.skipped.end(), part.skipped.begin(), part.skipped.end());
  }
  out.files.push_back({"index.md", index_md(rs, parts, render_later)});
  return out;
}

}  // namespace wb
