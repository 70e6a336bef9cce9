#include "analysis/report.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "analysis/predict_results.h"
#include "common/blocked.h"
#include "common/cpulist.h"
#include "common/histogram.h"
#include "common/output_file.h"
#include "common/placement.h"
#include "common/registry.h"
#include "common/sys.h"
#include "common/text.h"

extern char** environ;

namespace wb {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- reading cases ----------------------------------------------------------------------------

std::optional<double> num(const json& obj, const char* key) {
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

class OutDir {
 public:
  explicit OutDir(const std::string& dir) : dir_(dir) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) throw std::runtime_error("report: cannot create " + dir + ": " + ec.message());
  }
  // Atomic: a reader never sees half a file (common/output_file.h).
  void write(const std::string& name, const std::string& text) {
    try {
      write_file_atomic((dir_ / name).string(), text);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("report: ") + e.what());
    }
    written_.push_back(name);
  }
  const fs::path& path() const { return dir_; }
  const std::vector<std::string>& written() const { return written_; }

 private:
  fs::path dir_;
  std::vector<std::string> written_;
};

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

struct Plot {
  std::string stem, title, description;
};

struct Context {
  const ResultSet& rs;
  OutDir& out;
  std::vector<Plot> plots;
  std::vector<std::string> skipped;
  std::ostringstream tables;  // markdown summary tables for index.md

  // One plot: its data file and gnuplot script beside each other, listed in the index.
  void add_plot(const std::string& stem, const std::ostringstream& dat,
                const std::ostringstream& gp, std::string title, std::string caption) {
    out.write(stem + ".dat", dat.str());
    out.write(stem + ".gp", gp.str());
    plots.push_back({stem, std::move(title), std::move(caption)});
  }
};

// ---- heat map: median RTT by placement x mechanism/mode -----------------------------------------

void heatmap(Context& ctx) {
  const std::vector<CaseView>& cases = ctx.rs.views;
  const auto vary = varying_params(cases);
  std::vector<std::string> rows, cols;
  std::map<std::string, int> rank;                                    // column -> placement rank
  std::map<std::pair<std::string, std::string>, std::string> status;  // non-ok cells
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
  if (value.empty()) {
    ctx.skipped.push_back("heat map of median RTT: no ok case outside a matrix run");
    return;
  }
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
  ctx.add_plot("heatmap", dat, gp, "Median RTT by placement class and mechanism",
               "Each cell is the median round-trip time (ns) of one case; pinned classes "
               "from the nearest (same-cpu) to the farthest, then kernel placement.");

  ctx.tables << "\n### Median RTT (ns) by placement\n\n| mechanism/mode |";
  for (const std::string& c : cols) ctx.tables << " " << md_escape(c) << " |";
  ctx.tables << "\n|---|";
  for (std::size_t i = 0; i < cols.size(); ++i) ctx.tables << "--:|";
  ctx.tables << "\n";
  for (const std::string& r : rows) {
    ctx.tables << "| " << md_escape(r) << " |";
    for (const std::string& c : cols) {
      auto v = value.find({r, c});
      auto s = status.find({r, c});
      ctx.tables << " "
                 << (v != value.end() ? fmt("%.0f", v->second)
                                      : (s != status.end() ? s->second : "-"))
                 << " |";
    }
    ctx.tables << "\n";
  }
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

void distributions(Context& ctx) {
  const std::vector<CaseView>& cases = ctx.rs.views;
  const auto vary = varying_params(cases);
  std::vector<std::string> mechanisms;
  for (const CaseView& c : cases) {
    if (!c.ok() || is_matrix(c)) continue;
    if (std::find(mechanisms.begin(), mechanisms.end(), c.mechanism) == mechanisms.end())
      mechanisms.push_back(c.mechanism);
  }
  if (mechanisms.empty()) {
    ctx.skipped.push_back("RTT distributions: no ok case outside a matrix run");
    return;
  }
  for (const std::string& mech : mechanisms) {
    std::vector<const CaseView*> series;
    for (const CaseView& c : cases)
      if (c.ok() && !is_matrix(c) && c.mechanism == mech) series.push_back(&c);
    std::stable_sort(series.begin(), series.end(), [](const CaseView* a, const CaseView* b) {
      return std::make_pair(mode_id(a->mode), placement_rank(*a)) <
             std::make_pair(mode_id(b->mode), placement_rank(*b));
    });
    std::ostringstream cdf_dat, hist_dat, cdf_plot, hist_plot;
    const std::string cdf = "rtt-" + mech, hist = "hist-" + mech;
    cdf_dat << "# " << mech << ": CDF of the round-trip time per case, from the repetitions' "
            << "histograms\n# one block per case (gnuplot index); columns: rtt_ns nines, "
            << "nines = -log10(1 - F)\n";
    hist_dat << "# " << mech << ": share of round trips (%) per 1/" << kBinsPerOctave
             << "-octave bin, from the repetitions' histograms\n"
             << "# one block per case (gnuplot index); columns: bin_center_ns share_pct\n";
    int index = 0;
    double lo = INFINITY, hi = 0;  // the x range, for the tics
    for (const CaseView* c : series) {
      Histogram h;
      for (const Histogram& r : c->rtt_hist) h.merge(r);
      if (h.empty()) continue;
      lo = std::min(lo, static_cast<double>(Histogram::lower_bound(h.buckets().begin()->first)));
      hi = std::max(hi, static_cast<double>(Histogram::lower_bound(h.buckets().rbegin()->first)));
      std::string title = std::string(mode_id(c->mode)) + "/" + c->placement;
      const std::string label = row_label(*c, vary);
      const auto sp = label.find(' ');
      title += sp != std::string::npos ? label.substr(sp) : c->pair;
      const std::string sep = index ? "\n\n" : "";
      cdf_dat << sep << "# " << title << "\n" << cdf_block(h);
      hist_dat << sep << "# " << title << "\n" << histogram_block(h);
      cdf_plot << (index ? ", \\\n     " : "plot ") << gp_quote(cdf + ".dat") << " index " << index
               << " using 1:2 with lines lw 2 title " << gp_quote(title);
      hist_plot << (index ? ", \\\n     " : "plot ") << gp_quote(hist + ".dat") << " index "
                << index << " using 1:2 with histeps lw 2 title " << gp_quote(title);
      ++index;
    }
    if (index == 0) {
      ctx.skipped.push_back("RTT distribution of " + mech +
                            ": no case keeps histograms (a result set of schema 1)");
      continue;
    }
    std::ostringstream gp;
    gp << gp_begin(cdf, 1000, 600) << "set title "
       << gp_quote(mech + ": CDF of the round-trip time per placement") << "\n"
       << "set xlabel 'round-trip time (ns, log scale)'\n"
       << "set ylabel 'share of round trips at or below (percentile, log scale of the tail)'\n"
       << "set logscale x\nset grid\nset key outside right top\nset yrange [0:*]\n"
       << log_tics("x", lo, hi)
       << "set ytics ('0' 0, 'p50' 0.30103, 'p90' 1, 'p99' 2, 'p99.9' 3, 'p99.99' 4, "
          "'p99.999' 5)\n"
       << cdf_plot.str() << "\n"
       << gp_end(cdf, 1000, 600);
    ctx.add_plot(cdf, cdf_dat, gp, mech + ": RTT CDF per placement",
                 "Cumulative distribution of every round trip of each " + mech +
                     " case (all repetitions), from the log-linear histograms of the result set "
                     "(buckets <= 0.8 % wide); the y axis spaces p50, p90, p99, p99.9 evenly.");
    std::ostringstream hgp;
    hgp << gp_begin(hist, 1000, 600) << "set title "
        << gp_quote(mech + ": histogram of the round-trip time per placement") << "\n"
        << "set xlabel 'round-trip time (ns, log scale)'\n"
        << "set ylabel 'round trips per 1/" << kBinsPerOctave << "-octave bin (%)'\n"
        << "set logscale x\nset grid\nset key outside right top\nset yrange [0:*]\n"
        << log_tics("x", lo, hi) << hist_plot.str() << "\n"
        << gp_end(hist, 1000, 600);
    ctx.add_plot(hist, hist_dat, hgp, mech + ": RTT histogram per placement",
                 "Share of the round trips of each " + mech + " case in bins 9 % wide (1/" +
                     std::to_string(kBinsPerOctave) +
                     " of a power of two), from the result set's histograms.");
  }
}

// ---- predicted vs measured RTT per policy
// --------------------------------------------------------

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

// predictions.mechanisms[] as `wakebench predict --results` writes it: per mechanism, mode and
// kernel placement, each policy's predicted class distribution and RTT (the distribution costed
// with the pinned medians), and the measured kernel-placement RTT.
void predictions(Context& ctx) {
  const json& doc = ctx.rs.doc;
  const json* entries = nullptr;
  if (doc.contains("predictions") && doc["predictions"].is_object() &&
      doc["predictions"].contains("mechanisms") && doc["predictions"]["mechanisms"].is_array())
    entries = &doc["predictions"]["mechanisms"];
  if (!entries || entries->empty()) {
    ctx.skipped.push_back(
        "predicted vs measured RTT per policy: the result set has no predictions "
        "(`wakebench predict --results FILE --json` computes them)");
    return;
  }
  std::set<std::string> present;
  for (const json& e : *entries)
    if (e.contains("policies") && e["policies"].is_object())
      for (const auto& [p, v] : e["policies"].items()) present.insert(p);
  const std::vector<std::string> policies = policy_order(present);
  struct Row {
    std::string label;
    std::vector<std::optional<double>> predicted;
    std::vector<std::string> classes;
    std::optional<double> measured;
  };
  std::vector<Row> rows;
  for (const json& e : *entries) {
    Row r;
    r.label = entry_label(e);
    for (const std::string& p : policies) {
      const json pol = e.contains("policies") ? e["policies"].value(p, json()) : json();
      r.predicted.push_back(pol.is_object() ? num(pol, "predicted_rtt_ns") : std::nullopt);
      // "~": the model calls it uncertain; the marker is its steady state, its range is in
      // `wakebench predict` (policies.<id>.uncertain).
      std::string cls = pol.is_object() && pol.contains("classes")
                            ? main_class(pol["classes"]) + (pol.contains("uncertain") ? " ~" : "")
                            : "-";
      // The predictor's word for the kernel's placements (docs/policy-model.md#verdicts).
      if (pol.is_object() && pol.contains("verdict") && pol["verdict"].is_string())
        cls += ", " + pol["verdict"].get<std::string>();
      r.classes.push_back(cls);
    }
    if (e.contains("measured") && e["measured"].is_object())
      r.measured = num(e["measured"], "rtt_ns");
    bool any = r.measured.has_value();
    for (const auto& v : r.predicted) any = any || v.has_value();
    if (any) rows.push_back(std::move(r));
  }
  if (rows.empty()) {
    ctx.skipped.push_back(
        "predicted vs measured RTT per policy: no prediction could be costed (no ok pinned case "
        "of a predicted class) and no kernel case was measured");
    return;
  }
  std::ostringstream dat;
  dat << "# predicted RTT (ns) of each policy: its steady-state class distribution costed with "
         "the\n"
      << "# median RTT measured pinned on each class; last column: measured median RTT under\n"
      << "# kernel placement (this kernel's policy). NaN: not predictable or not measured.\n"
      << "row";
  for (const std::string& p : policies) dat << ' ' << dat_quote(p);
  dat << ' ' << dat_quote("measured: kernel placement") << "\n";
  ctx.tables << "\n### Predicted vs measured RTT (ns)\n\nPredicted = each policy's steady-state "
                "placement (class in brackets) costed with the median RTT measured pinned on that "
                "class with the case's own knobs; measured = the case itself. ~: the model "
                "calls the placement uncertain (other steady states are possible, each costed "
                "differently: `wakebench predict --results`); the figure is its steady state. "
                "After the class, the predictor's verdict on the kernel's placements (MATCH, "
                "EXPLAINED, NO-PREDICTION, MISS: docs/policy-model.md#verdicts)."
                "\n\n"
                "| kernel-placed case |";
  for (const std::string& p : policies) ctx.tables << " " << p << " |";
  ctx.tables << " measured (kernel) |\n|---|";
  for (std::size_t i = 0; i <= policies.size(); ++i) ctx.tables << "--:|";
  ctx.tables << "\n";
  for (const Row& r : rows) {
    dat << dat_quote(r.label);
    ctx.tables << "| " << md_escape(r.label) << " |";
    for (std::size_t i = 0; i < policies.size(); ++i) {
      dat << ' ' << (r.predicted[i] ? fmt("%.1f", *r.predicted[i]) : "NaN");
      ctx.tables << " " << (r.predicted[i] ? fmt("%.0f", *r.predicted[i]) : "n/a") << " ("
                 << md_escape(r.classes[i]) << ") |";
    }
    dat << ' ' << (r.measured ? fmt("%.1f", *r.measured) : "NaN") << "\n";
    ctx.tables << " " << (r.measured ? fmt("%.0f", *r.measured) : "not measured") << " |\n";
  }
  // A dot plot: one row per kernel-placed case, one marker per policy (offset a little so that
  // equal predictions stay visible), the measured RTT as a black diamond. Its height grows with the
  // rows, never its width, so it stays readable at the size it is rendered.
  const int columns = static_cast<int>(policies.size()) + 1;
  const int n = static_cast<int>(rows.size());
  double lo = INFINITY, hi = 0;
  for (const Row& r : rows) {
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
  ctx.add_plot("predicted", dat, gp, "Predicted vs measured RTT per policy",
               "For each kernel-placed case: one marker per policy at its predicted RTT (its "
               "steady-state placement costed with the pinned medians); the black diamond is "
               "the median RTT measured with kernel placement. Where the model calls a "
               "placement uncertain (~ in the table below) the kernel may settle in another "
               "steady state, so a diamond away from a policy's marker is not by itself a "
               "miss: `wakebench predict --results` gives the range.");
}

// ---- observed placement of kernel cases ---------------------------------------------------------

void observed(Context& ctx) {
  std::vector<const CaseView*> kcases;
  std::vector<std::string> classes;
  for (const CaseView& c : ctx.rs.views) {
    if (!c.observed.recorded) continue;
    kcases.push_back(&c);
    for (const auto& [cls, n] : c.observed.histogram)
      if (std::find(classes.begin(), classes.end(), cls) == classes.end()) classes.push_back(cls);
  }
  if (kcases.empty()) {
    ctx.skipped.push_back(
        "observed placement histogram: no case with kernel placement recorded "
        "an \"observed\" histogram");
    return;
  }
  std::stable_sort(classes.begin(), classes.end(), [](const std::string& a, const std::string& b) {
    return class_rank(a) < class_rank(b);
  });
  std::ostringstream dat;
  dat << "# share of round trips (%) by the wakee's CPU class relative to the waker's\ncase";
  for (const std::string& cls : classes) dat << ' ' << dat_quote(cls);
  dat << "\n";
  ctx.tables << "\n### Observed placement (kernel cases)\n\n| case | round trips |";
  for (const std::string& cls : classes) ctx.tables << " " << cls << " % |";
  ctx.tables << " migrations waker | migrations wakee |\n|---|--:|";
  for (std::size_t i = 0; i < classes.size() + 2; ++i) ctx.tables << "--:|";
  ctx.tables << "\n";
  for (const CaseView* c : kcases) {
    std::map<std::string, double> h(c->observed.histogram.begin(), c->observed.histogram.end());
    double total = 0;
    for (const auto& [cls, n] : h) total += n;
    dat << dat_quote(c->name);
    ctx.tables << "| " << md_escape(c->name) << " | " << fmt("%.0f", total) << " |";
    for (const std::string& cls : classes) {
      const double pct = total > 0 ? 100.0 * h[cls] / total : 0;
      dat << ' ' << fmt("%.3f", pct);
      ctx.tables << " " << fmt("%.1f", pct) << " |";
    }
    dat << "\n";
    for (const auto& v : c->observed.migrations)
      ctx.tables << " " << (v ? fmt("%.0f", *v) : "-") << " |";
    ctx.tables << "\n";
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
  ctx.add_plot("observed", dat, gp, "Observed placement of kernel cases",
               "For each case run unpinned: the share of round trips in which the wakee "
               "ran on the waker's CPU, its SMT sibling, the same LLC, and so on.");
}

// ---- CPU x CPU matrix ---------------------------------------------------------------------------

void matrices(Context& ctx) {
  std::map<std::string, std::vector<const CaseView*>> groups;  // mechanism/mode -> cells
  for (const CaseView& c : ctx.rs.views)
    if (is_matrix(c) && c.cpus) groups[c.mech_mode()].push_back(&c);
  if (groups.empty()) {
    ctx.skipped.push_back(
        "CPU x CPU heat map: not a matrix run (no \"<mechanism>/<mode>/matrix/"
        "<a>-<b>\" case)");
    return;
  }
  for (const auto& [mm, cells] : groups) {
    std::string stem = "matrix-" + mm;
    std::replace(stem.begin(), stem.end(), '/', '-');
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
      ctx.skipped.push_back("CPU x CPU heat map of " + mm + ": no ok cell");
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
    ctx.add_plot(stem, dat, gp, mm + ": CPU x CPU round-trip time",
                 "Median round-trip time for every ordered (waker, wakee) CPU pair of the "
                 "matrix run; blank cells were not measured or not ok.");
  }
}

// ---- summary of every case
// ------------------------------------------------------------------------

// The cases with marked repetitions (docs/result-set.md#blocked); nothing when none is marked.
void marked_list(Context& ctx) {
  std::string items;
  for (const CaseView& c : ctx.rs.views)
    if (const std::string t = marked_text(c); !t.empty()) items += "- " + md_escape(t) + "\n";
  if (items.empty()) return;
  ctx.tables << "\n### Marked repetitions\n\n"
             << items << "\nIn these a side blocked in its wait, or was preempted, in under "
             << fmt("%.0f", 100 * kMinBlockedShare)
             << "% of its round trips: they timed syscalls, not wakeups. The statistics above "
                "include them; `compare` leaves them out of its tests.\n";
}

void case_table(Context& ctx) {
  ctx.tables
      << "\n### Cases\n\n| case | status | cpus | median ns | p99 ns | p99.9 ns | "
         "wakeup median ns | MdAPE % | repetitions |\n|---|---|---|--:|--:|--:|--:|--:|--:|\n";
  for (const CaseView& c : ctx.rs.views) {
    std::string cpus = "-";
    if (c.kind == PlacementKind::kKernel && !c.cpuset.empty())
      cpus = "cpuset " + format_cpu_list(c.cpuset);
    else if (c.cpus)
      cpus = std::to_string(c.cpus->first) + " -> " + std::to_string(c.cpus->second);
    std::string status(status_id(c.status));
    if (!c.reason.empty()) status += ": " + c.reason;
    const auto mdape = c.rtt.get("mdape_pct");
    ctx.tables << "| " << md_escape(c.name) << " | " << md_escape(status) << " | " << cpus << " | "
               << ns_text(c.rtt.get("median")) << " | " << ns_text(c.rtt.get("p99")) << " | "
               << ns_text(c.rtt.get("p999")) << " | " << ns_text(c.wakeup.get("median")) << " | "
               << (mdape ? fmt("%.1f", *mdape) : "-") << " | " << c.repetitions.size() << " |\n";
  }
  marked_list(ctx);
}

// ---- rendering ----------------------------------------------------------------------------------

void run_gnuplot(const std::string& gnuplot, const fs::path& dir, const std::string& script) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Scripts name their files relative to their folder.
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  std::string arg0 = gnuplot, arg1 = script;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error("report: cannot run " + gnuplot + ": " + std::strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      throw std::runtime_error("report: waitpid on gnuplot: " + std::string(std::strerror(errno)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("report: gnuplot " + (dir / script).string() + " " +
                             describe_wait_status(status));
  }
}

}  // namespace

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::istringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / name;
    if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) {
      return candidate.string();
    }
  }
  return std::nullopt;
}

ReportOutput write_report(const ResultSet& rs, const ReportOptions& options) {
  OutDir out(options.out_dir);
  Context ctx{rs, out, {}, {}, {}};
  heatmap(ctx);
  distributions(ctx);
  predictions(ctx);
  observed(ctx);
  matrices(ctx);
  case_table(ctx);

  ReportOutput result;
  if (!options.gnuplot.empty()) {
    result.gnuplot = options.gnuplot;
  } else if (auto g = find_on_path("gnuplot")) {
    result.gnuplot = *g;
  }
  const std::string dir = out.path().string();
  result.render_command = "cd " + dir + " && for f in *.gp; do gnuplot \"$f\"; done";

  std::ostringstream index;
  index << "# wakebench report: " << rs.path << "\n\n"
        << "Machine: " << machine_line(rs.machine) << "  \n"
        << "Result set: `" << rs.path << "`" << (rs.complete ? "" : " (incomplete run)") << ", "
        << rs.views.size() << " cases.\n\n";
  if (result.gnuplot.empty()) {
    index << "**Images not rendered**: gnuplot was not found on PATH. The data (`.dat`) and "
             "scripts (`.gp`) are here; render them with `"
          << result.render_command << "` (Debian: `apt-get install gnuplot-nox`).\n\n";
  }
  index << "## Plots\n";
  for (const Plot& p : ctx.plots) {
    index << "\n### " << p.title << "\n\n"
          << p.description << "\n\n"
          << "![" << p.title << "](" << p.stem << ".png)\n\n"
          << "[SVG](" << p.stem << ".svg) · [data](" << p.stem << ".dat) · [gnuplot script]("
          << p.stem << ".gp)\n";
  }
  if (!ctx.skipped.empty()) {
    index << "\n## Not drawn\n\n";
    for (const std::string& s : ctx.skipped) index << "- " << s << "\n";
  }
  index << "\n## Summary tables\n" << ctx.tables.str();
  out.write("index.md", index.str());

  result.files = out.written();
  for (const std::string& f : result.files) {
    if (f.size() > 3 && f.compare(f.size() - 3, 3, ".gp") == 0) result.scripts.push_back(f);
  }
  result.skipped = ctx.skipped;
  if (!result.gnuplot.empty()) {
    for (const Plot& p : ctx.plots) {
      run_gnuplot(result.gnuplot, out.path(), p.stem + ".gp");
      result.images.push_back(p.stem + ".png");
      result.images.push_back(p.stem + ".svg");
    }
  }
  return result;
}

}  // namespace wb
