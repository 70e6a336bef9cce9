#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "analysis/report/report_parts.h"
#include "common/schema/histogram.h"
#include "common/util/text.h"

namespace wb::report_parts {
namespace {

using nlohmann::json;

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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace wb::report_parts
