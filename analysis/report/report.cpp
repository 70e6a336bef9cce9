#include "analysis/report/report.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "analysis/report/report_parts.h"
#include "common/schema/blocked.h"
#include "common/schema/placement.h"
#include "common/schema/registry.h"
#include "common/util/cpulist.h"
#include "common/util/text.h"

namespace wb {
namespace {

using namespace report_parts;

// ---- reading cases ----------------------------------------------------------------------------

std::string ns_text(const std::optional<double>& v) { return v ? fmt("%.0f", *v) : "-"; }

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
std::string main_class(const std::vector<std::pair<std::string, double>>& classes) {
  std::string best;
  double share = -1;
  for (const auto& [cls, v] : classes)
    if (v > share) {
      best = cls;
      share = v;
    }
  if (best.empty()) return "?";
  return share >= 0.995 ? best : best + " " + fmt("%.0f", 100 * share) + "%";
}

// The policies some entry predicts, in policy_order.
std::vector<std::string> predicted_policies(const std::vector<RecordedPrediction>& entries) {
  std::set<std::string> present;
  for (const RecordedPrediction& e : entries)
    for (const auto& [p, v] : e.policies) present.insert(p);
  return policy_order(present);
}

// A policy's placement in the table: its main class, "~" when the model calls it uncertain (the
// marker is its steady state, its range is in `wakebench predict`: policies.<id>.uncertain), then
// the predictor's word for the kernel's placements (docs/policy-model.md#verdicts); "-" when the
// entry has no classes for it.
std::string policy_placement(const RecordedPolicy& pol) {
  std::string cls = pol.has_classes ? main_class(pol.classes) + (pol.uncertain ? " ~" : "") : "-";
  if (!pol.verdict.empty()) cls += ", " + pol.verdict;
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
std::vector<PredictionRow> prediction_rows(const std::vector<RecordedPrediction>& entries,
                                           const std::vector<std::string>& policies) {
  std::vector<PredictionRow> rows;
  for (const RecordedPrediction& e : entries) {
    PredictionRow r{e.label, {}, {}, e.measured_rtt_ns};
    for (const std::string& p : policies) {
      RecordedPolicy pol;
      for (const auto& [id, v] : e.policies)
        if (id == p) pol = v;
      r.predicted.push_back(pol.predicted_rtt_ns);
      r.classes.push_back(policy_placement(pol));
    }
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
Part predictions(const std::vector<RecordedPrediction>& entries) {
  if (entries.empty())
    return not_drawn(
        "predicted vs measured RTT per policy: the result set has no predictions "
        "(`wakebench predict --results FILE --json` computes them)");
  const std::vector<std::string> policies = predicted_policies(entries);
  const std::vector<PredictionRow> rows = prediction_rows(entries, policies);
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

// The observed placement's gnuplot script: `classes` stacked columns of observed.dat, `width`
// pixels wide.
std::string observed_gp(std::size_t classes, int width) {
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
     << "plot for [col=2:" << classes + 1
     << "] 'observed.dat' using col:xtic(1) title columnheader(col)\n"
     << gp_end("observed", width, 520);
  return gp.str();
}

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
  const std::string gp = observed_gp(classes.size(), width);
  const Plot plot{"observed", "Observed placement of kernel cases",
                  "For each case run unpinned: the share of round trips in which the wakee ran on "
                  "the waker's CPU, its SMT sibling, the same LLC, and so on.",
                  dat.str(), gp};
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
  const std::vector<Part> parts = {heatmap(rs.views),           distributions(rs.views),
                                   predictions(rs.predictions), observed(rs.views),
                                   matrices(rs.views),          case_table(rs.views)};
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
